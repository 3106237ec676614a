/* Shared by the differential test programs: a running digest that any wrong result changes, and printing. */
#ifndef KVSIM_TEST_COMMON_H
#define KVSIM_TEST_COMMON_H

#include <stdint.h>
#include "kvsim.h"
#include "kvsim_libc.h"

/* Hide a value from the optimizer so that operations on it are executed at run time, not folded. */
#define OPAQUE(x) ({ __typeof__((x) + 0) v_ = (x); __asm__ volatile("" : "+r"(v_)); v_; })

static uint64_t digest_state = 0x6a09e667f3bcc908ull;

/* Mix a 64-bit value into the digest (a splitmix64-style finalizer over a running state). */
static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void dg(uint64_t v) { digest_state = mix64(digest_state ^ v) + 0x9e3779b97f4a7c15ull; }

static inline uint64_t dg_take(void) {
    uint64_t d = digest_state;
    digest_state = 0x6a09e667f3bcc908ull;
    return d;
}

/* Print "<name> <digest>" and reset the digest for the next group. */
static inline void dg_print(const char *name) { printf("%-12s %016lx\n", name, dg_take()); }

#endif
