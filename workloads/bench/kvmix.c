/* kvsim's own compute benchmark: a key-value flavoured mix of integer work, sized by argv[1] (rounds, default
 * 12). Each round
 *   - hashes 16 Ki variable-length keys with a 64-bit multiply/rotate hash (byte and word loads, mul, shifts),
 *   - inserts them into an open-addressing hash table with linear probing (8-byte buckets holding tag+value),
 *     then looks up every key plus as many absent ones (data-dependent branches, cache-unfriendly loads),
 *   - sorts the hashes with an iterative quicksort + insertion sort (compares, swaps, a manual stack),
 *   - and runs a small LR/SC/AMO counter over the table for the atomics path.
 * Prints a checksum of everything so that qemu-riscv64 and the engine can be compared. */
#include "kvsim.h"
#include "kvsim_libc.h"

#define NKEYS 16384
#define KEYMAX 24
#define TBITS 15
#define TSIZE (1u << TBITS)

static uint8_t keys[NKEYS][KEYMAX];
static uint8_t keylen[NKEYS];
static uint64_t hashes[NKEYS];
static uint64_t table[TSIZE];     /* 0 = empty; else (hash | 1) */
static uint32_t values[TSIZE];
static volatile int64_t counter;

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t hash_key(const uint8_t *k, unsigned len, uint64_t seed) {
    uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ull);
    unsigned i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, k + i, 8);
        h = rotl(h ^ (w * 0xff51afd7ed558ccdull), 31) * 0xc4ceb9fe1a85ec53ull;
    }
    for (; i < len; i++)
        h = (h ^ k[i]) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 29;
    return h;
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t xorshift(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void make_keys(void) {
    for (int i = 0; i < NKEYS; i++) {
        unsigned len = 8 + (unsigned)(xorshift() % (KEYMAX - 8 + 1));
        keylen[i] = (uint8_t)len;
        for (unsigned j = 0; j < len; j++)
            keys[i][j] = (uint8_t)xorshift();
    }
}

static int table_insert(uint64_t h, uint32_t v) {
    uint64_t tag = h | 1;
    for (uint32_t i = (uint32_t)(h >> (64 - TBITS)), n = 0; n < TSIZE; i = (i + 1) & (TSIZE - 1), n++) {
        if (table[i] == 0 || table[i] == tag) {
            table[i] = tag;
            values[i] = v;
            return (int)n;
        }
    }
    return -1;
}

static int64_t table_lookup(uint64_t h) {
    uint64_t tag = h | 1;
    for (uint32_t i = (uint32_t)(h >> (64 - TBITS)), n = 0; n < TSIZE; i = (i + 1) & (TSIZE - 1), n++) {
        if (table[i] == tag)
            return values[i];
        if (table[i] == 0)
            return -1;
    }
    return -1;
}

static void sort_u64(uint64_t *a, long n) {
    long stack[128];
    int sp = 0;
    stack[sp++] = 0;
    stack[sp++] = n - 1;
    while (sp) {
        long hi = stack[--sp], lo = stack[--sp];
        while (hi - lo > 16) {
            uint64_t x = a[lo], y = a[(lo + hi) / 2], z = a[hi];
            uint64_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
            long i = lo, j = hi;
            while (i <= j) {
                while (a[i] < pivot) i++;
                while (a[j] > pivot) j--;
                if (i <= j) {
                    uint64_t t = a[i]; a[i] = a[j]; a[j] = t;
                    i++; j--;
                }
            }
            /* Recurse (via the stack) into the larger part, loop on the smaller. */
            if (j - lo > hi - i) { stack[sp++] = lo; stack[sp++] = j; lo = i; }
            else { stack[sp++] = i; stack[sp++] = hi; hi = j; }
        }
        for (long k = lo + 1; k <= hi; k++) {
            uint64_t v = a[k];
            long m = k - 1;
            while (m >= lo && a[m] > v) { a[m + 1] = a[m]; m--; }
            a[m + 1] = v;
        }
    }
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? (long)kvsim_parse_size(argv[1]) : 12;
    uint64_t check = 0;
    make_keys();
    kvsim_roi_begin();
    for (long r = 0; r < rounds; r++) {
        memset(table, 0, sizeof table);
        uint64_t seed = 0x1234567ull + (uint64_t)r;
        long probes = 0;
        for (int i = 0; i < NKEYS; i++) {
            hashes[i] = hash_key(keys[i], keylen[i], seed);
            probes += table_insert(hashes[i], (uint32_t)i);
        }
        long found = 0, missing = 0;
        for (int i = 0; i < NKEYS; i++) {
            found += table_lookup(hashes[i]) == i;
            missing += table_lookup(hashes[i] ^ 0x5555000000000000ull) < 0;
            if ((i & 63) == 0) {
                amoadd_d(&counter, 1);
                lrsc_fetch_add_d(&counter, (int64_t)(hashes[i] & 7));
            }
        }
        sort_u64(hashes, NKEYS);
        long sorted = 1;
        for (int i = 1; i < NKEYS; i++)
            sorted &= hashes[i - 1] <= hashes[i];
        uint64_t h = 0;
        for (int i = 0; i < NKEYS; i += 97)
            h = rotl(h, 7) ^ hashes[i];
        check = rotl(check, 13) ^ h ^ (uint64_t)probes ^ ((uint64_t)found << 20) ^ ((uint64_t)missing << 40);
        if (!sorted)
            check ^= 0xbad;
    }
    kvsim_roi_end();
    printf("kvmix rounds %ld checksum %016lx counter %ld\n", rounds, check, (long)counter);
    return 0;
}
