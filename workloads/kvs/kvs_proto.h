/* kvs_proto.h - parsing request packets and finishing responses (see kvs_abi.h for the format). */
#ifndef KVS_PROTO_H
#define KVS_PROTO_H

#include <stdint.h>
#include "kvs_abi.h"

/* Why a packet was dropped (no response can be built for it). */
enum kvs_drop {
    KVS_DROP_NONE = 0,
    KVS_DROP_SHORT,       /* shorter than the 48 bytes before the first request */
    KVS_DROP_NOT_IPV4,    /* ethertype is not IPv4 */
    KVS_DROP_BAD_IP,      /* not a plain IPv4 header (version/IHL), not UDP, or a fragment */
    KVS_DROP_BAD_LENGTH,  /* IPv4/UDP lengths inconsistent with each other or the frame, or above the MTU */
    KVS_DROP_BAD_COUNT,   /* request count 0 or above KVS_MAX_BATCH */
    KVS_DROP_TRUNCATED,   /* a descriptor, key or value runs past the end of the UDP payload */
    KVS_DROP_TRAILING,    /* bytes left after the last request (count inconsistent with the length) */
    KVS_DROP__COUNT
};

/* One parsed request. key/val point into the frame (or into a copy, see kvs_server.c). */
struct kvs_req {
    const uint8_t *key;
    const uint8_t *val;
    const struct kvs_partition *part; /* resolved by the server */
    uint64_t keyhash;
    uint32_t vlen;
    uint32_t expire;
    uint16_t off;   /* descriptor offset in the frame */
    uint8_t op;
    uint8_t klen;
    uint8_t err;    /* a result code fixed at parse time (KVS_RES_BAD_OP/BAD_LENGTH), else 0 */
    uint8_t pad[7];
};

/* Parse a frame of len bytes into reqs (room for KVS_MAX_BATCH); *count gets the request count.
 * Returns KVS_DROP_NONE or the reason to drop the packet. */
enum kvs_drop kvs_parse(const uint8_t *frame, uint32_t len, struct kvs_req *reqs, unsigned *count);

/* Turn the request headers of frame into the response headers for a frame of resp_len bytes: swap the MAC and IPv4
 * addresses and the UDP ports, set the IPv4 and UDP lengths, TTL 64, the IPv4 checksum, UDP checksum 0. The batch
 * header (count, opaque) stays. */
void kvs_finish_response(uint8_t *frame, uint32_t resp_len);

/* The IPv4 header checksum (the 20 bytes at frame + 14, with the checksum field taken as 0), as it is stored in the
 * header (network order). */
uint16_t kvs_ipv4_checksum(const uint8_t *frame);

static inline uint16_t kvs_bswap16(uint16_t v) { return (uint16_t)(v << 8 | v >> 8); }

#endif
