/* mt.h - a tiny test harness for the memcached-class server's native tests, and a client's helpers. */
#ifndef MT_H
#define MT_H

#include <stdint.h>
#include <stdio.h>
#include "../mcd_server.h"

typedef void (*mt_fn)(void);
void mt_register(const char *name, mt_fn fn);
void mt_fail(const char *file, int line, const char *what, unsigned long long a, unsigned long long b, int has_ab);

#define MT_TEST(name)                                                                                           \
    static void name(void);                                                                                     \
    __attribute__((constructor)) static void mt_reg_##name(void) { mt_register(#name, name); }                 \
    static void name(void)

#define MT_CHECK(cond)                                                                                          \
    do {                                                                                                        \
        if (!(cond)) {                                                                                          \
            mt_fail(__FILE__, __LINE__, #cond, 0, 0, 0);                                                        \
            return;                                                                                             \
        }                                                                                                       \
    } while (0)

#define MT_EQ(a, b)                                                                                             \
    do {                                                                                                        \
        unsigned long long mt_a = (unsigned long long)(a), mt_b = (unsigned long long)(b);                      \
        if (mt_a != mt_b) {                                                                                     \
            mt_fail(__FILE__, __LINE__, #a " == " #b, mt_a, mt_b, 1);                                           \
            return;                                                                                             \
        }                                                                                                       \
    } while (0)

static inline uint64_t mt_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The client side of the tests: a client at 10.0.0.2:port talking to the server at 10.0.0.1. */
#define MT_CLIENT_IP 0x0a000002u
#define MT_SERVER_IP 0x0a000001u
struct mcd_flow mt_flow_to_server(uint16_t client_port, uint16_t server_port);

/* A server with its own zeroed memory and nconns UDP and TCP connection slots each (freed by mt_server_free). */
struct mcd_server *mt_server_new(uint16_t port, size_t mem, unsigned buckets_log2, unsigned nconns);
void mt_server_free(struct mcd_server *s);

/* Build a request message at p (returns its length). */
uint32_t mt_req(uint8_t *p, uint32_t cap, uint8_t op, const char *key, const uint8_t *val, uint32_t vlen,
                uint32_t flags, uint32_t opaque);
/* Wrap msgs (len bytes) in the memcached UDP header (req_id) and Ethernet/IP/UDP; returns the frame length. */
uint32_t mt_frame(uint8_t *f, uint32_t cap, uint16_t client_port, uint16_t server_port, uint16_t req_id,
                  const uint8_t *msgs, uint32_t len);
/* Check a reply frame as a client would (checksums, ports, request id) and point at its first message.
 * Returns 0 when well formed. */
int mt_reply(const uint8_t *f, uint32_t len, uint16_t client_port, uint16_t req_id, const uint8_t **msgs,
             uint32_t *mlen);

#endif
