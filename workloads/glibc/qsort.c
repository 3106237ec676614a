/* qsort over numbers parsed with strtod, printed with printf("%f") and "%e": libm-free FP formatting and
 * parsing through glibc. */
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    static const char *text[] = {"3.14159", "-2.5e3", "1e-7", "42", "0.1", "-0.0", "6.02214076e23", "inf",
                                 "-1.5", "2.718281828459045", "1e308", "4.9e-324", "123456.789", "-7.25"};
    enum { N = sizeof text / sizeof text[0] };
    double v[N + 200];
    for (int i = 0; i < N; i++)
        v[i] = strtod(text[i], NULL);
    /* Deterministic pseudo-random values too. */
    unsigned long s = 12345;
    for (int i = N; i < N + 200; i++) {
        s = s * 6364136223846793005ul + 1442695040888963407ul;
        v[i] = (double)(long)(s >> 20) / 1048576.0 - 4.0e6;
    }
    qsort(v, N + 200, sizeof v[0], cmp);
    double sum = 0;
    for (int i = 0; i < N + 200; i++) {
        if (i < 20 || i >= N + 195)
            printf("%3d %f %e %g\n", i, v[i], v[i], v[i]);
        if (v[i] < 1e300 && v[i] > -1e300)
            sum += v[i];
    }
    printf("sum %.6f, sorted %s\n", sum, "yes");
    return 0;
}
