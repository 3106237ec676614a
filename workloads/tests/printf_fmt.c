/* The runtime's printf: every conversion, length modifier, width and flag it supports, plus snprintf's
 * truncation and return value. A wrong instruction anywhere in formatting (division, shifts, loads of bytes,
 * va_arg) changes the text. */
#include "common.h"

int main(void) {
    long vals[] = {0, 1, -1, 42, -42, 2147483647L, -2147483648L, 4294967295L, 0x7fffffffffffffffL,
                   (long)0x8000000000000000ull, 1234567890123L, -987654321098L};
    for (unsigned i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        long v = OPAQUE(vals[i]);
        printf("[%d] [%i] [%u] [%x] [%X] [%o]\n", (int)v, (int)v, (unsigned)v, (unsigned)v, (unsigned)v,
               (unsigned)v);
        printf("[%ld] [%lu] [%lx] [%lld] [%llu] [%llx]\n", v, (unsigned long)v, (unsigned long)v, (long long)v,
               (unsigned long long)v, (unsigned long long)v);
        printf("[%8d] [%-8d] [%08d] [%016lx] [%4x] [%hd] [%hhu] [%zu]\n", (int)v, (int)v, (int)v,
               (unsigned long)v, (unsigned)v & 0xfff, (short)v, (unsigned char)v, (size_t)v);
    }
    printf("[%s] [%10s] [%-10s] [%c] [%3c] [%%] [%p] [%p]\n", "hello", "right", "left", 'x', 'y',
           (void *)0x1234abcdUL, (void *)0);
    char buf[16];
    int n = snprintf(buf, sizeof buf, "%s-%d-%x", "truncate me please", 12345, 0xbeef);
    printf("snprintf n=%d buf=[%s] len=%zu\n", n, buf, strlen(buf));
    n = snprintf(buf, sizeof buf, "%05d|%-3d|", -42, 7);
    printf("snprintf n=%d buf=[%s]\n", n, buf);
    /* A line longer than printf's internal buffer. */
    char big[600];
    for (int i = 0; i < 599; i++)
        big[i] = (char)('a' + i % 26);
    big[599] = 0;
    n = printf("%s\n", big);
    printf("long line n=%d\n", n);
    dprintf(2, "to stderr: %d %s\n", -7, "ok");
    return 3;
}
