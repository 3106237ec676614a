/* The smallest glibc program: stdio start-up, a formatted line, exit status 0. */
#include <stdio.h>

int main(int argc, char **argv)
{
    printf("hello, world from %s with %d argument(s)\n", argv[0] ? "a static glibc program" : "?", argc - 1);
    return 0;
}
