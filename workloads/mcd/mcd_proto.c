/* mcd_proto.c - memcached UDP frame header and binary protocol messages. */
#include "mcd_proto.h"

int mcd_udp_hdr_parse(const uint8_t *p, uint32_t len, struct mcd_udp_hdr *h)
{
    if (len < MCD_UDP_FRAME_HLEN)
        return -1;
    h->req_id = mcd_get16(p);
    h->seq = mcd_get16(p + 2);
    h->count = mcd_get16(p + 4);
    h->reserved = mcd_get16(p + 6);
    return 0;
}

void mcd_udp_hdr_put(uint8_t *p, const struct mcd_udp_hdr *h)
{
    mcd_put16(p, h->req_id);
    mcd_put16(p + 2, h->seq);
    mcd_put16(p + 4, h->count);
    mcd_put16(p + 6, h->reserved);
}

uint32_t mcd_msg_parse(const uint8_t *p, uint32_t len, uint8_t magic, struct mcd_msg *m)
{
    if (len < MCD_BIN_HLEN || p[0] != magic)
        return 0;
    m->magic = p[0];
    m->opcode = p[1];
    m->klen = mcd_get16(p + 2);
    m->extlen = p[4];
    m->datatype = p[5];
    m->status_or_vbucket = mcd_get16(p + 6);
    m->bodylen = mcd_get32(p + 8);
    m->opaque = mcd_get32(p + 12);
    m->cas = mcd_get64(p + 16);
    if (m->bodylen > len - MCD_BIN_HLEN || (uint32_t)m->klen + m->extlen > m->bodylen)
        return 0;
    m->extras = p + MCD_BIN_HLEN;
    m->key = m->extras + m->extlen;
    m->value = m->key + m->klen;
    m->vlen = m->bodylen - m->klen - m->extlen;
    return MCD_BIN_HLEN + m->bodylen;
}

uint32_t mcd_msg_put(uint8_t *p, uint32_t cap, uint8_t magic, uint8_t opcode, uint16_t status_or_vbucket,
                     uint32_t opaque, uint64_t cas, const uint8_t *extras, uint8_t extlen, const uint8_t *key,
                     uint16_t klen, const uint8_t *value, uint32_t vlen)
{
    uint64_t body = (uint64_t)extlen + klen + vlen;
    if (MCD_BIN_HLEN + body > cap)
        return 0;
    p[0] = magic;
    p[1] = opcode;
    mcd_put16(p + 2, klen);
    p[4] = extlen;
    p[5] = 0;
    mcd_put16(p + 6, status_or_vbucket);
    mcd_put32(p + 8, (uint32_t)body);
    mcd_put32(p + 12, opaque);
    mcd_put64(p + 16, cas);
    uint8_t *q = p + MCD_BIN_HLEN;
    if (extlen)
        memcpy(q, extras, extlen);
    if (klen)
        memcpy(q + extlen, key, klen);
    if (vlen)
        memcpy(q + extlen + klen, value, vlen); /* the value's copy out of the store */
    return (uint32_t)(MCD_BIN_HLEN + body);
}
