/* kt.h - a tiny test harness for the native KVS tests, plus helpers to build request packets and check responses
 * the way a client would. */
#ifndef KT_H
#define KT_H

#include <stdint.h>
#include <stdio.h>
#include "../kvs_abi.h"
#include "../kvs_proto.h"
#include "../kvs_server.h"
#include "../kvs_store.h"
#include "../keyhash.h"
#include "../native_nic.h"

typedef void (*kt_fn)(void);
void kt_register(const char *name, kt_fn fn);
void kt_fail(const char *file, int line, const char *what, unsigned long long a, unsigned long long b, int has_ab);
extern int kt_failed;

#define KT_TEST(name)                                                                                           \
    static void name(void);                                                                                     \
    __attribute__((constructor)) static void kt_reg_##name(void) { kt_register(#name, name); }                 \
    static void name(void)

#define KT_CHECK(cond)                                                                                          \
    do {                                                                                                        \
        if (!(cond)) {                                                                                          \
            kt_fail(__FILE__, __LINE__, #cond, 0, 0, 0);                                                        \
            return;                                                                                             \
        }                                                                                                       \
    } while (0)

#define KT_EQ(a, b)                                                                                             \
    do {                                                                                                        \
        unsigned long long kt_a = (unsigned long long)(a), kt_b = (unsigned long long)(b);                      \
        if (kt_a != kt_b) {                                                                                     \
            kt_fail(__FILE__, __LINE__, #a " == " #b, kt_a, kt_b, 1);                                           \
            return;                                                                                             \
        }                                                                                                       \
    } while (0)

/* A deterministic PRNG (splitmix64). */
static inline uint64_t kt_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A request for kt_build. keyhash 0 means "compute it from the key". */
struct kt_req {
    uint8_t op;
    const uint8_t *key;
    uint32_t klen;
    const uint8_t *val;
    uint32_t vlen;
    uint64_t keyhash;
    uint32_t expire;
};

/* Build a request frame; returns its length (0 if it would not fit cap). */
uint32_t kt_build(uint8_t *frame, uint32_t cap, const struct kt_req *reqs, unsigned n, uint16_t dport,
                  uint32_t opaque);

/* A parsed response entry. */
struct kt_resp {
    uint8_t op, result;
    uint32_t klen, vlen;
    uint64_t keyhash;
    uint32_t expire;
    const uint8_t *val;
};

/* Check a response frame as a client would (lengths, checksum, layout, zero padding) and split it into entries.
 * Returns 0 when well formed, else a negative code naming the first problem. */
int kt_parse_response(const uint8_t *frame, uint32_t len, struct kt_resp *out, unsigned *n, uint32_t *opaque);

/* A small server: ncores cores with loopback queues, one partition each. */
struct kt_server {
    struct kvs_shared sh;
    unsigned ncores;
    struct kvs_core *core[16];
    struct plat_queue *q[16];
};
int kt_server_start(struct kt_server *s, unsigned ncores, unsigned crew, unsigned prefetch, uint64_t log_size,
                    uint64_t buckets);
/* Poll every core in turn until no RX queue has anything left. */
void kt_server_drain(struct kt_server *s);

/* Send one frame to core `core` and get the single response back (1), or 0 if none came. */
int kt_roundtrip(struct kt_server *s, unsigned core, const uint8_t *frame, uint32_t len, uint8_t *resp,
                 uint32_t *resp_len);

/* A key string whose keyhash lands in partition `part` of `parts`, starting the search at *counter. */
uint32_t kt_key_for_partition(char *buf, unsigned part, unsigned parts, uint64_t *counter);

/* A simple partition over fresh memory. */
struct kvs_partition *kt_partition(uint64_t buckets, uint64_t log_size, int crew);

#endif
