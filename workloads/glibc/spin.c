/* Computes for a long time (an argument of rounds), printing a line first: used to interrupt runs. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 1000000000L;
    printf("spinning %ld rounds\n", rounds);
    fflush(stdout);
    unsigned long x = 1;
    for (long i = 0; i < rounds; i++)
        x = x * 6364136223846793005ul + (unsigned long)i;
    printf("%lu\n", x);
    return 0;
}
