/* 100 MB through malloc/free: one large block (mmap'd by glibc), then many small ones (the brk heap), each
 * written and checked, freed in an interleaved order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (100u << 20)
#define SMALL_COUNT 20000

int main(void)
{
    unsigned char *big = malloc(BIG);
    if (!big) {
        puts("malloc of 100 MB failed");
        return 1;
    }
    memset(big, 0x5a, BIG);
    unsigned long sum = 0;
    for (size_t i = 0; i < BIG; i += 4096)
        sum += big[i] + (i & 0xff);
    big[BIG - 1] = 7;
    printf("100 MB block: page sum %lu, last byte %d\n", sum, big[BIG - 1]);
    free(big);

    static void *blocks[SMALL_COUNT];
    unsigned long total = 0;
    for (int i = 0; i < SMALL_COUNT; i++) {
        size_t n = 16 + (size_t)(i * 7919) % 2000;
        blocks[i] = malloc(n);
        if (!blocks[i]) {
            printf("small malloc %d failed\n", i);
            return 1;
        }
        memset(blocks[i], i & 0xff, n);
        total += n;
    }
    int bad = 0;
    for (int i = 0; i < SMALL_COUNT; i += 2)
        free(blocks[i]);
    for (int i = 1; i < SMALL_COUNT; i += 2)
        bad += ((unsigned char *)blocks[i])[0] != (i & 0xff);
    for (int i = 1; i < SMALL_COUNT; i += 2)
        free(blocks[i]);
    printf("%d small blocks, %lu bytes, %d corrupted\n", SMALL_COUNT, total, bad);
    return bad != 0;
}
