/* Ping-pong: harts 0 and 1 pass one cache line back and forth N times (argv[1], default 2000). Each hart spins
 * reading the shared word until it holds its turn, then writes the next turn: every handoff is a write that
 * invalidates the other hart's copy and a read miss that the writer (the line's owner) answers, so the time per
 * handoff is the memory system's cache-to-cache (coherence) latency plus the loop's own few cycles. The measured
 * region is bracketed by hart 0. With one hart (qemu) there is nobody to pass to: it reports that and exits 0. */
#include "micro.h"

static volatile uint64_t turn __attribute__((aligned(64)));
static volatile uint64_t ready __attribute__((aligned(64)));

int main(int argc, char **argv) {
    uint64_t n = arg_size(argc, argv, 1, 2000);
    long me = kvsim_hart_id(), harts = kvsim_num_harts();
    if (harts < 2) {
        printf("pingpong: one hart, nothing to pass\n");
        return 0;
    }
    if (me >= 2)
        hart_exit(0);
    if (me == 1) {
        ready = 1;
        for (uint64_t i = 0; i < n; i++) {
            while (turn != 2 * i + 1)
                ;
            turn = 2 * i + 2;
        }
        hart_exit(0);
    }
    while (ready != 1)
        ;
    measure_begin();
    for (uint64_t i = 0; i < n; i++) {
        turn = 2 * i + 1;
        while (turn != 2 * i + 2)
            ;
    }
    measure_end();
    printf("pingpong: %lu round trips\n", (unsigned long)n);
    return 0;
}
