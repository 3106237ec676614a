/* A LINPACK-like double-precision kernel (written here): LU factorisation with partial pivoting of a
 * pseudo-random N x N system (daxpy inner loops, idamax pivots), solve, and the normalised residual
 * |Ax - b| / (|A| |x| n eps) as the check, plus a few libm-free FP operations (sqrt, fma-able loops, divisions,
 * float conversions). Argument: N (default 60). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double *matgen(int n, double *b, unsigned *seed)
{
    double *a = malloc(sizeof(double) * n * n);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            *seed = *seed * 3125u % 65536u;
            a[j * n + i] = (*seed - 32768.0) / 16384.0;
        }
    for (int i = 0; i < n; i++)
        b[i] = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            b[i] += a[j * n + i];
    return a;
}

/* Column-major LU with partial pivoting (dgefa). */
static int dgefa(double *a, int n, int *ipvt)
{
    for (int k = 0; k < n - 1; k++) {
        double *col = &a[k * n];
        int l = k;
        double dmax = fabs(col[k]);
        for (int i = k + 1; i < n; i++)
            if (fabs(col[i]) > dmax) {
                dmax = fabs(col[i]);
                l = i;
            }
        ipvt[k] = l;
        if (col[l] == 0.0)
            return k + 1;
        double t = col[l];
        col[l] = col[k];
        col[k] = t;
        t = -1.0 / col[k];
        for (int i = k + 1; i < n; i++)
            col[i] *= t;
        for (int j = k + 1; j < n; j++) {
            double *cj = &a[j * n];
            t = cj[l];
            cj[l] = cj[k];
            cj[k] = t;
            for (int i = k + 1; i < n; i++)
                cj[i] += t * col[i];
        }
    }
    ipvt[n - 1] = n - 1;
    return a[(n - 1) * n + n - 1] == 0.0 ? n : 0;
}

static void dgesl(const double *a, int n, const int *ipvt, double *b)
{
    for (int k = 0; k < n - 1; k++) {
        int l = ipvt[k];
        double t = b[l];
        b[l] = b[k];
        b[k] = t;
        for (int i = k + 1; i < n; i++)
            b[i] += t * a[k * n + i];
    }
    for (int k = n - 1; k >= 0; k--) {
        b[k] /= a[k * n + k];
        double t = -b[k];
        for (int i = 0; i < k; i++)
            b[i] += t * a[k * n + i];
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 60;
    unsigned seed = 1325;
    double *b = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    int *ipvt = malloc(sizeof(int) * n);
    double *a = matgen(n, b, &seed);
    for (int i = 0; i < n; i++)
        x[i] = b[i];
    int info = dgefa(a, n, ipvt);
    dgesl(a, n, ipvt, x);
    /* Residual against a fresh copy of the same matrix. */
    seed = 1325;
    double *a2 = matgen(n, b, &seed);
    double resid = 0, anorm = 0, xnorm = 0;
    for (int i = 0; i < n; i++) {
        double r = -b[i];
        for (int j = 0; j < n; j++) {
            r += a2[j * n + i] * x[j];
            anorm = fmax(anorm, fabs(a2[j * n + i]));
        }
        resid = fmax(resid, fabs(r));
        xnorm = fmax(xnorm, fabs(x[i]));
    }
    double eps = 2.220446049250313e-16;
    double normalised = resid / (n * anorm * xnorm * eps);
    float single = (float)sqrt(xnorm) / 3.0f;
    long rounded = lrint(x[0] * 1e6);
    printf("linpack-like n=%d info=%d residual %.6e normalised %.4f\n", n, info, resid, normalised);
    printf("x[0] %.15f x[n-1] %.15f sqrt-check %.7f lrint %ld\n", x[0], x[n - 1], single, rounded);
    return info != 0 || normalised > 10.0;
}
