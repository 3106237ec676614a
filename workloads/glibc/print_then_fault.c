/* Prints a line, then stores to an unmapped address (SIGSEGV under Linux): a run must keep the line it printed
 * (tests/test_robust.py). Not compared with qemu. */
#include <stdio.h>

int main(int argc, char **argv)
{
    (void)argv;
    long argc_dummy = argc - 1; /* 0: keeps the compiler from proving the store undefined */
    printf("output before the fault\n");
    fflush(stdout);
    volatile int *nowhere = (volatile int *)(unsigned long)(argc_dummy + 16);
    *nowhere = 1;
    puts("not reached");
    return 0;
}
