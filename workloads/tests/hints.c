/* Prefetch (Zicbop) and non-temporal (Zihintntl) hints are functional no-ops: interleaved with a computation
 * they change nothing, and a prefetch of an unmapped or null address does not fault. Covers prefetch.r/.w/.i
 * with offsets, NTL.P1/PALL/S1/ALL in 32-bit form and the compressed c.add x0, x2..x5 forms, and the raw
 * instruction words of riscv-notes.md. */
#include "common.h"

static uint64_t table[4096];

static uint64_t walk(int hinted) {
    uint64_t acc = 0;
    for (int i = 0; i < 4096; i++) {
        if (hinted) {
            KVSIM_PREFETCH_R(&table[(i + 64) & 4095]);
            KVSIM_PREFETCH_W_OFF(&table[(i + 32) & 4095], 64);
            KVSIM_PREFETCH_I_OFF(&table[i], -2048);
            switch (i & 3) {
            case 0: KVSIM_NTL_ALL(); break;
            case 1: KVSIM_NTL_PALL(); break;
            case 2: KVSIM_NTL_P1(); break;
            default: KVSIM_NTL_S1(); break;
            }
        }
        table[i] = table[i] * 6364136223846793005ull + (uint64_t)i;
        if (hinted)
            KVSIM_PREFETCH_NTA(&table[(i * 17) & 4095]);
        acc = mix64(acc ^ table[(i * 13) & 4095]);
    }
    return acc;
}

static long raw_words(long x) {
    /* The encodings from riscv-notes.md, as data words, then the compressed NTL hints (c.add x0, x2..x5), which
     * binutils will not assemble by name. Registers must be unchanged afterwards. */
    long before = x;
    __asm__ volatile(".option push\n.option norvc\n"
                     "mv a0, %0\n"
                     ".4byte 0x00156013\n"     /* prefetch.r 0(a0) */
                     ".4byte 0x0435e013\n"     /* prefetch.w 64(a1) */
                     ".4byte 0x00500033\n"     /* ntl.all */
                     ".4byte 0x00300033\n"     /* ntl.pall */
                     ".2byte 0x900a\n"         /* c.ntl.p1   = c.add x0, x2 */
                     ".2byte 0x900e\n"         /* c.ntl.pall = c.add x0, x3 */
                     ".2byte 0x9012\n"         /* c.ntl.s1   = c.add x0, x4 */
                     ".2byte 0x9016\n"         /* c.ntl.all  = c.add x0, x5 */
                     "ld %0, 0(%1)\n"
                     ".option pop\n"
                     : "+r"(x) : "r"(table) : "a0", "memory");
    return x ^ before;
}

int main(void) {
    for (int i = 0; i < 4096; i++)
        table[i] = (uint64_t)i * 0x9e3779b97f4a7c15ull;
    uint64_t plain = walk(0);
    for (int i = 0; i < 4096; i++)
        table[i] = (uint64_t)i * 0x9e3779b97f4a7c15ull;
    uint64_t hinted = walk(1);
    printf("walk plain  %016lx\nwalk hinted %016lx\nequal %d\n", plain, hinted, plain == hinted);
    /* Prefetches of addresses no one may touch: null, the top of the address space, the device range. */
    KVSIM_PREFETCH_R((void *)OPAQUE(0UL));
    KVSIM_PREFETCH_W((void *)OPAQUE(0xffffffffffffffc0UL));
    KVSIM_PREFETCH_I((void *)OPAQUE(0x3000000000UL));
    KVSIM_PREFETCH_NTA((void *)OPAQUE(0x1000UL));
    printf("prefetch of unmapped addresses: survived\n");
    printf("raw words: %lx\n", raw_words(OPAQUE(0x1234L)));
    return 0;
}
