/* Shared helpers of the timing microbenchmarks (workloads/micro/): argument parsing, a seeded generator, and the
 * measured-region markers. Every program brackets its measured region with measure_begin()/measure_end():
 * ROI_BEGIN (stats reset; detailed timing may start there), then ROI_END followed at once by STATS_DUMP, so the
 * last STATS_DUMP snapshot holds the region's cycles and counts (and nothing of the set-up or the report). */
#ifndef MICRO_H
#define MICRO_H

#include "kvsim.h"
#include "kvsim_libc.h"

/* "4096", "32K", "16M", "1G" (binary multiples) -> bytes; `dflt` when the argument is missing. */
static inline uint64_t arg_size(int argc, char **argv, int i, uint64_t dflt) {
    if (i >= argc)
        return dflt;
    return kvsim_parse_size(argv[i]);
}

static inline uint64_t xorshift(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static inline void measure_begin(void) { kvsim_roi_begin(); }
static inline void measure_end(void) {
    kvsim_roi_end();
    kvsim_stats_dump();
}

/* One cache line. */
struct node {
    struct node *next;
    uint64_t pad[7];
};

/* Link `n` nodes into one random cycle (each node visited once per lap); returns the first. `order`, if given,
 * receives the visiting order (order[k] = index of the k-th node). */
static inline struct node *random_cycle(struct node *nodes, uint64_t n, uint32_t *order, uint64_t seed) {
    uint32_t *perm = order ? order : (uint32_t *)kvsim_alloc_local(n * sizeof(uint32_t), 64);
    for (uint64_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    uint64_t s = seed | 1;
    for (uint64_t i = n - 1; i > 0; i--) {
        uint64_t j = xorshift(&s) % (i + 1);
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (uint64_t i = 0; i < n; i++)
        nodes[perm[i]].next = &nodes[perm[(i + 1) % n]];
    return &nodes[perm[0]];
}

#endif
