/*
 * Fuzz: random and mutated packets (fixed seed, bounded count) thrown at a 2-core server, in EREW and CREW, with
 * prefetching on and off. Nothing may crash (ASan/UBSan watch every access), every answer must be a well-formed
 * response, every buffer must come back, and afterwards the reference keys - which the fuzz traffic cannot name -
 * must all still hold exactly their values.
 */
#include <string.h>
#include <stdlib.h>
#include "kt.h"

#define FZ_CORES 2
#define FZ_REF_KEYS 200
#define FZ_PACKETS 6000

static void ref_value(uint8_t *v, unsigned i)
{
    for (unsigned j = 0; j < 32; j++)
        v[j] = (uint8_t)(i * 7 + j * 13 + 1);
}

/* A valid packet of fuzz traffic: keys start with "fz" (reference keys with "REF"), random ops and sizes. */
static uint32_t fz_valid(uint8_t *f, uint64_t *rng, unsigned *core)
{
    static uint8_t keys[KVS_MAX_BATCH][256], vals[KVS_MAX_BATCH][1024];
    struct kt_req r[KVS_MAX_BATCH];
    unsigned n = 1 + (unsigned)(kt_rand(rng) % 8);
    if (kt_rand(rng) % 8 == 0)
        n = 1 + (unsigned)(kt_rand(rng) % KVS_MAX_BATCH);
    for (unsigned i = 0; i < n; i++) {
        uint32_t klen = 2 + (uint32_t)(kt_rand(rng) % (kt_rand(rng) % 4 == 0 ? 254 : 24));
        keys[i][0] = 'f';
        keys[i][1] = 'z';
        for (uint32_t j = 2; j < klen; j++)
            keys[i][j] = (uint8_t)('a' + kt_rand(rng) % 4); /* a small key space: updates and collisions */
        uint32_t op = (uint32_t)(kt_rand(rng) % 3) + 1, vlen = 0;
        if (op == KVS_OP_PUT) {
            vlen = (uint32_t)(kt_rand(rng) % (kt_rand(rng) % 4 == 0 ? 1024 : 64));
            for (uint32_t j = 0; j < vlen; j++)
                vals[i][j] = (uint8_t)kt_rand(rng);
        }
        r[i] = (struct kt_req){.op = (uint8_t)op, .key = keys[i], .klen = klen, .val = vals[i], .vlen = vlen};
    }
    uint32_t len = 0;
    while (n > 0 && (len = kt_build(f, KVS_MAX_FRAME_LEN, r, n, KVS_UDP_PORT_BASE, 0)) == 0)
        n--;
    *core = (unsigned)(kt_rand(rng) % FZ_CORES);
    return len;
}

static uint32_t fz_mutate(uint8_t *f, uint32_t len, uint64_t *rng)
{
    unsigned kind = (unsigned)(kt_rand(rng) % 8);
    unsigned flips = 1 + (unsigned)(kt_rand(rng) % 8);
    switch (kind) {
    case 0: /* random bytes anywhere */
        for (unsigned i = 0; i < flips; i++)
            f[kt_rand(rng) % len] ^= (uint8_t)(1 + kt_rand(rng) % 255);
        break;
    case 1: /* truncate */
        len = (uint32_t)(kt_rand(rng) % len);
        break;
    case 2: /* extend with junk */
        for (unsigned i = 0; i < flips * 8 && len < KVS_NIC_BUF_SIZE; i++)
            f[len++] = (uint8_t)kt_rand(rng);
        break;
    case 3: /* count */
        f[42] = (uint8_t)kt_rand(rng);
        break;
    case 4: { /* a descriptor's lengths */
        uint32_t off = KVS_PAYLOAD_OFF + 8 * (uint32_t)(kt_rand(rng) % 16);
        if (off + 8 <= len)
            memcpy(f + off + 4, &(uint32_t){(uint32_t)kt_rand(rng)}, 4);
        break;
    }
    case 5: /* IPv4/UDP lengths, consistently or not */
        f[16 + kt_rand(rng) % 2] = (uint8_t)kt_rand(rng);
        if (kt_rand(rng) % 2) {
            uint16_t ip = (uint16_t)(f[16] << 8 | f[17]);
            uint16_t udp = (uint16_t)(ip - 20);
            f[38] = (uint8_t)(udp >> 8);
            f[39] = (uint8_t)udp;
        }
        break;
    case 6: /* an op byte */
        if (KVS_PAYLOAD_OFF < len)
            f[KVS_PAYLOAD_OFF] = (uint8_t)kt_rand(rng);
        break;
    default: /* leave it valid */
        break;
    }
    return len;
}

static int fuzz_run(unsigned crew, unsigned prefetch, uint64_t seed)
{
    struct kt_server s;
    if (kt_server_start(&s, FZ_CORES, crew, prefetch, 1 << 22, 4096) != 0)
        return __LINE__;
    uint8_t f[KVS_NIC_BUF_SIZE], resp[KVS_NIC_BUF_SIZE], v[32];
    struct kt_resp rr[KVS_MAX_BATCH];
    unsigned n;
    uint32_t opaque, rlen;
    char key[32];
    uint64_t ctr = 0;
    /* Reference keys, loaded through the server. */
    static char refkey[FZ_REF_KEYS][32];
    static uint32_t refklen[FZ_REF_KEYS];
    for (unsigned i = 0; i < FZ_REF_KEYS; i++) {
        unsigned part = i % FZ_CORES;
        uint32_t kl = kt_key_for_partition(key, part, FZ_CORES, &ctr);
        refkey[i][0] = 'R', refkey[i][1] = 'E', refkey[i][2] = 'F';
        memcpy(refkey[i] + 3, key, kl);
        refklen[i] = kl + 3;
        if (kvs_partition_of(kvs_keyhash(refkey[i], refklen[i]), FZ_CORES) != part) {
            i--; /* the prefix changed the partition: try the next candidate */
            continue;
        }
        ref_value(v, i);
        struct kt_req r = {.op = KVS_OP_PUT, .key = (uint8_t *)refkey[i], .klen = refklen[i], .val = v, .vlen = 32};
        uint32_t len = kt_build(f, sizeof(f), &r, 1, KVS_UDP_PORT_BASE, i);
        if (!kt_roundtrip(&s, part, f, len, resp, &rlen) || kt_parse_response(resp, rlen, rr, &n, &opaque) ||
            rr[0].result != KVS_RES_OK)
            return __LINE__;
    }
    uint64_t rng = seed, sent = 0, answered = 0;
    for (unsigned t = 0; t < FZ_PACKETS; t++) {
        unsigned core;
        uint32_t len;
        if (kt_rand(&rng) % 10 == 0) { /* pure noise */
            len = (uint32_t)(kt_rand(&rng) % KVS_NIC_BUF_SIZE);
            for (uint32_t i = 0; i < len; i++)
                f[i] = (uint8_t)kt_rand(&rng);
            core = (unsigned)(kt_rand(&rng) % FZ_CORES);
        } else {
            len = fz_valid(f, &rng, &core);
            len = fz_mutate(f, len, &rng);
        }
        if (native_inject(s.q[core], f, len) == 0)
            sent++;
        if (t % 16 == 15 || t == FZ_PACKETS - 1) {
            kt_server_drain(&s);
            for (unsigned c = 0; c < FZ_CORES; c++)
                while (native_collect(s.q[c], resp, sizeof(resp), &rlen)) {
                    if (kt_parse_response(resp, rlen, rr, &n, &opaque) != 0)
                        return __LINE__; /* anything answered is a well-formed response */
                    answered++;
                }
        }
    }
    uint64_t dropped = 0;
    for (unsigned c = 0; c < FZ_CORES; c++) {
        dropped += s.core[c]->st.dropped;
        if (native_bufs_free(s.q[c]) != native_bufs_total(s.q[c]))
            return __LINE__;
    }
    if (answered + dropped != sent || dropped == 0 || answered == 0)
        return __LINE__;
    if (getenv("KT_VERBOSE"))
        printf("    sent %llu answered %llu dropped %llu moves %llu/%llu\n", (unsigned long long)sent,
               (unsigned long long)answered, (unsigned long long)dropped,
               (unsigned long long)s.core[0]->st.tail_moves, (unsigned long long)s.core[1]->st.tail_moves);
    /* Every reference key still reads back exactly (the log is big enough that nothing was evicted). */
    for (unsigned c = 0; c < FZ_CORES; c++)
        if (s.sh.parts[c]->tail >= s.sh.parts[c]->log_size)
            return __LINE__;
    for (unsigned i = 0; i < FZ_REF_KEYS; i++) {
        struct kt_req r = {.op = KVS_OP_GET, .key = (uint8_t *)refkey[i], .klen = refklen[i]};
        uint32_t len = kt_build(f, sizeof(f), &r, 1, KVS_UDP_PORT_BASE, i);
        if (!kt_roundtrip(&s, i % FZ_CORES, f, len, resp, &rlen) || kt_parse_response(resp, rlen, rr, &n, &opaque))
            return __LINE__;
        ref_value(v, i);
        if (rr[0].result != KVS_RES_OK || rr[0].vlen != 32 || memcmp(rr[0].val, v, 32) != 0)
            return __LINE__;
    }
    return 0;
}

static void fuzz_case(unsigned crew, unsigned prefetch, uint64_t seed)
{
    int bad = fuzz_run(crew, prefetch, seed);
    if (bad)
        printf("    fuzz failed at test_fuzz.c:%d\n", bad);
    KT_EQ(bad, 0);
}

KT_TEST(fuzz_erew_prefetch) { fuzz_case(0, 1, 0xf00d); }
KT_TEST(fuzz_erew_noprefetch) { fuzz_case(0, 0, 0xbeef); }
KT_TEST(fuzz_crew_prefetch) { fuzz_case(1, 1, 0xcafe); }
KT_TEST(fuzz_crew_noprefetch) { fuzz_case(1, 0, 0x5eed); }
