/* Streaming read: every hart reads its own contiguous share of one array, one 8-byte word per 64-byte line
 * (each load brings a whole line from memory), 8 lines per loop iteration.
 *   stream [bytes (default 16M)]
 * Run on several harts to keep enough lines in flight to approach a DDR channel's peak (one core is bounded by
 * its L1D MSHRs). Hart 0 allocates and touches the array; the others wait for it. The harts' shares are 32 KB
 * apart beyond their size, so concurrent streams start in different DRAM banks (as an interleaved physical map
 * would place them) instead of conflicting in one. */

#define STAGGER (32u << 10)
#include "micro.h"

static volatile uint64_t *shared_array;
static volatile long ready, done;
static volatile uint64_t sink[64];

int main(int argc, char **argv) {
    uint64_t bytes = arg_size(argc, argv, 1, 16 << 20);
    long me = kvsim_hart_id(), harts = kvsim_num_harts();
    if (me == 0) {
        uint64_t total = bytes + (uint64_t)harts * STAGGER;
        uint64_t *a = (uint64_t *)kvsim_alloc_local(total, 4096);
        if (!a)
            return 2;
        for (uint64_t i = 0; i < total / 8; i += 8)
            a[i] = i;
        shared_array = a;
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
        ;
    /* volatile: the loads go out in address order (the compiler would interleave the lines of an iteration). */
    const volatile uint64_t *a = (const volatile uint64_t *)shared_array;
    uint64_t share = bytes / 8 / (uint64_t)harts;
    const volatile uint64_t *p = a + (share + STAGGER / 8) * (uint64_t)me, *end = p + share;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    measure_begin();
    for (; p + 64 <= end; p += 64) {
        s0 += p[0]; s1 += p[8]; s2 += p[16]; s3 += p[24];
        s0 += p[32]; s1 += p[40]; s2 += p[48]; s3 += p[56];
    }
    sink[me] = s0 + s1 + s2 + s3;
    if (__atomic_add_fetch(&done, 1, __ATOMIC_ACQ_REL) == harts) {
        measure_end();
        printf("stream bytes=%lu harts=%ld sum=%lu\n", (unsigned long)bytes, harts, (unsigned long)sink[0]);
        return 0;
    }
    hart_exit(0);
}
