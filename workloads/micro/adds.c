/* Add chains: one dependent chain (each add needs the previous result: one per cycle at best), or eight
 * independent chains (as many adds per cycle as the core can issue).
 *   adds dep|indep [iterations (default 2000)]     (64 adds per iteration) */
#include "micro.h"

#define ADD8(r) "add " r ", " r ", a1\n\t" "add " r ", " r ", a1\n\t" "add " r ", " r ", a1\n\t" \
                "add " r ", " r ", a1\n\t" "add " r ", " r ", a1\n\t" "add " r ", " r ", a1\n\t" \
                "add " r ", " r ", a1\n\t" "add " r ", " r ", a1\n\t"

int main(int argc, char **argv) {
    int indep = argc > 1 && strcmp(argv[1], "indep") == 0;
    uint64_t iters = arg_size(argc, argv, 2, 2000);
    uint64_t result;
    measure_begin();
    if (!indep) {
        register uint64_t x __asm__("a0") = 0;
        register uint64_t one __asm__("a1") = 1;
        register uint64_t n __asm__("a2") = iters;
        __asm__ volatile("1:\n\t" ADD8("a0") ADD8("a0") ADD8("a0") ADD8("a0") ADD8("a0") ADD8("a0") ADD8("a0")
                         ADD8("a0") "addi a2, a2, -1\n\tbnez a2, 1b"
                         : "+r"(x), "+r"(n) : "r"(one));
        result = x;
    } else {
        register uint64_t one __asm__("a1") = 1;
        register uint64_t n __asm__("a2") = iters;
        register uint64_t r0 __asm__("t0") = 0, r1 __asm__("t1") = 0, r2 __asm__("t2") = 0, r3 __asm__("t3") = 0;
        register uint64_t r4 __asm__("t4") = 0, r5 __asm__("t5") = 0, r6 __asm__("t6") = 0, r7 __asm__("a3") = 0;
        /* 8 chains x 8 adds, interleaved so neighbours are independent. */
#define ROUND "add t0, t0, a1\n\tadd t1, t1, a1\n\tadd t2, t2, a1\n\tadd t3, t3, a1\n\t" \
              "add t4, t4, a1\n\tadd t5, t5, a1\n\tadd t6, t6, a1\n\tadd a3, a3, a1\n\t"
        __asm__ volatile("1:\n\t" ROUND ROUND ROUND ROUND ROUND ROUND ROUND ROUND
                         "addi a2, a2, -1\n\tbnez a2, 1b"
                         : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3), "+r"(r4), "+r"(r5), "+r"(r6), "+r"(r7),
                           "+r"(n)
                         : "r"(one));
        result = r0 + r1 + r2 + r3 + r4 + r5 + r6 + r7;
    }
    measure_end();
    printf("adds %s iters=%lu result=%lu\n", indep ? "indep" : "dep", (unsigned long)iters,
           (unsigned long)result);
    return result == iters * 64 ? 0 : 1;
}
