/* keyhash.c - XXH64, from the algorithm's published description: four 64-bit lanes over 32-byte stripes, a merge,
 * then the tail in 8-, 4- and 1-byte steps, then the avalanche. Little-endian reads (as the spec defines). */
#include "keyhash.h"

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static inline uint64_t rotl64(uint64_t x, unsigned r) { return (x << r) | (x >> (64 - r)); }

static inline uint64_t rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static inline uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t lane_round(uint64_t acc, uint64_t input)
{
    acc += input * P2;
    acc = rotl64(acc, 31);
    return acc * P1;
}

static inline uint64_t merge_round(uint64_t acc, uint64_t lane)
{
    acc ^= lane_round(0, lane);
    return acc * P1 + P4;
}

uint64_t kvs_xxh64(const void *data, size_t len, uint64_t seed)
{
    const uint8_t *p = data;
    const uint8_t *end = p + len;
    uint64_t h;

    if (len >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        const uint8_t *limit = end - 32;
        do {
            v1 = lane_round(v1, rd64(p));
            v2 = lane_round(v2, rd64(p + 8));
            v3 = lane_round(v3, rd64(p + 16));
            v4 = lane_round(v4, rd64(p + 24));
            p += 32;
        } while (p <= limit);
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = merge_round(h, v1);
        h = merge_round(h, v2);
        h = merge_round(h, v3);
        h = merge_round(h, v4);
    } else {
        h = seed + P5;
    }
    h += (uint64_t)len;

    while (end - p >= 8) {
        h ^= lane_round(0, rd64(p));
        h = rotl64(h, 27) * P1 + P4;
        p += 8;
    }
    if (end - p >= 4) {
        h ^= (uint64_t)rd32(p) * P1;
        h = rotl64(h, 23) * P2 + P3;
        p += 4;
    }
    while (p < end) {
        h ^= (uint64_t)(*p) * P5;
        h = rotl64(h, 11) * P1;
        p++;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}
