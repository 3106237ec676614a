/* Touches 64 MiB of .bss page by page; run with a small System.mem_limit it must stop with
 * MemoryLimitExceeded. */
#include "kvsim_libc.h"

#define SIZE (64L << 20)
static volatile char hog[SIZE];

int main(void) {
    for (long i = 0; i < SIZE; i += 4096)
        hog[i] = 1;
    printf("touched %ld MiB\n", SIZE >> 20);
    return 0;
}
