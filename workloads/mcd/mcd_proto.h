/* mcd_proto.h - the memcached binary protocol (GET, SET, DELETE, NOOP) inside memcached's UDP frame header.
 *
 * UDP frame header (8 bytes, big-endian): request id, sequence number, datagram count, reserved (0). A request
 * must fit one datagram (sequence 0 of 1); the response carries the same request id.
 * Binary header (24 bytes, big-endian): magic (0x80 request, 0x81 response), opcode, key length, extras length,
 * data type (0), vbucket (request) or status (response), total body length, opaque, CAS; then extras, key, value.
 */
#ifndef MCD_PROTO_H
#define MCD_PROTO_H

#include "mcd_sys.h"

#define MCD_UDP_FRAME_HLEN 8u
#define MCD_BIN_HLEN 24u
#define MCD_MAGIC_REQ 0x80u
#define MCD_MAGIC_RES 0x81u

enum mcd_opcode { MCD_OP_GET = 0x00, MCD_OP_SET = 0x01, MCD_OP_DELETE = 0x04, MCD_OP_NOOP = 0x0a };
enum mcd_status {
    MCD_ST_OK = 0x0000,
    MCD_ST_KEY_ENOENT = 0x0001,
    MCD_ST_E2BIG = 0x0003,
    MCD_ST_EINVAL = 0x0004,
    MCD_ST_UNKNOWN_COMMAND = 0x0081,
    MCD_ST_ENOMEM = 0x0082,
};

#define MCD_MAX_KEY 250u

/* The memcached UDP frame header. */
struct mcd_udp_hdr {
    uint16_t req_id, seq, count, reserved;
};

/* One parsed binary message (request or response); pointers go into the buffer it was parsed from. */
struct mcd_msg {
    uint8_t magic, opcode, extlen, datatype;
    uint16_t klen, status_or_vbucket;
    uint32_t bodylen, opaque;
    uint64_t cas;
    const uint8_t *extras, *key, *value;
    uint32_t vlen;
};

int mcd_udp_hdr_parse(const uint8_t *p, uint32_t len, struct mcd_udp_hdr *h); /* 0, or -1 if too short */
void mcd_udp_hdr_put(uint8_t *p, const struct mcd_udp_hdr *h);

/* Parse one message at p (len bytes available). Returns its total length (header + body), or 0 if it is
 * truncated, has the wrong magic, or its lengths do not add up. */
uint32_t mcd_msg_parse(const uint8_t *p, uint32_t len, uint8_t magic, struct mcd_msg *m);

/* Write one message; returns its length, or 0 if it does not fit cap. Any of extras/key/value may be NULL when
 * its length is 0. */
uint32_t mcd_msg_put(uint8_t *p, uint32_t cap, uint8_t magic, uint8_t opcode, uint16_t status_or_vbucket,
                     uint32_t opaque, uint64_t cas, const uint8_t *extras, uint8_t extlen, const uint8_t *key,
                     uint16_t klen, const uint8_t *value, uint32_t vlen);

#endif
