/* kvs_proto.c - request parsing (every malformed case is classified, nothing is read past the frame) and
 * response header construction. */
#include "kvs_proto.h"

enum kvs_drop kvs_parse(const uint8_t *frame, uint32_t len, struct kvs_req *reqs, unsigned *count)
{
    *count = 0;
    if (len < KVS_PAYLOAD_OFF)
        return KVS_DROP_SHORT;
    const struct kvs_pkt_hdr *h = (const struct kvs_pkt_hdr *)frame;
    if (h->eth_type != kvs_bswap16(KVS_ETHERTYPE_IPV4))
        return KVS_DROP_NOT_IPV4;
    if (h->ip_ver_ihl != 0x45 || h->ip_proto != KVS_IPPROTO_UDP || (kvs_bswap16(h->ip_frag) & 0x3fff) != 0)
        return KVS_DROP_BAD_IP;
    uint32_t ip_len = kvs_bswap16(h->ip_total_len);
    uint32_t udp_len = kvs_bswap16(h->udp_len);
    if (ip_len < KVS_IPV4_HDR_LEN + KVS_UDP_HDR_LEN + KVS_BATCH_HDR_LEN || KVS_ETH_HDR_LEN + ip_len > len ||
        KVS_ETH_HDR_LEN + ip_len > KVS_MAX_FRAME_LEN || udp_len != ip_len - KVS_IPV4_HDR_LEN)
        return KVS_DROP_BAD_LENGTH;
    unsigned n = h->batch_count;
    if (n == 0 || n > KVS_MAX_BATCH)
        return KVS_DROP_BAD_COUNT;
    uint32_t end = KVS_ETH_HDR_LEN + ip_len, off = KVS_PAYLOAD_OFF;
    for (unsigned i = 0; i < n; i++) {
        if (off + KVS_REQ_DESC_LEN > end)
            return KVS_DROP_TRUNCATED;
        const struct kvs_req_desc *d = (const struct kvs_req_desc *)(frame + off);
        uint32_t klen = KVS_KEY_LEN(d->kv_len), vlen = KVS_VALUE_LEN(d->kv_len);
        uint32_t size = KVS_REQ_DESC_LEN + KVS_PAD8(klen) + KVS_PAD8(vlen); /* < 2^25: no overflow */
        if (size > end - off)
            return KVS_DROP_TRUNCATED;
        struct kvs_req *r = &reqs[i];
        r->key = frame + off + KVS_REQ_DESC_LEN;
        r->val = r->key + KVS_PAD8(klen);
        r->part = 0;
        r->keyhash = d->keyhash;
        r->vlen = vlen;
        r->expire = d->expire;
        r->off = (uint16_t)off;
        r->op = d->op;
        r->klen = (uint8_t)klen;
        r->err = 0;
        if (d->op != KVS_OP_GET && d->op != KVS_OP_PUT && d->op != KVS_OP_DELETE)
            r->err = KVS_RES_BAD_OP;
        else if (klen == 0 || (d->op != KVS_OP_PUT && vlen != 0))
            r->err = KVS_RES_BAD_LENGTH;
        off += size;
    }
    if (off != end)
        return KVS_DROP_TRAILING;
    *count = n;
    return KVS_DROP_NONE;
}

uint16_t kvs_ipv4_checksum(const uint8_t *frame)
{
    /* The one's complement sum is byte-order independent (RFC 1071): add the header's 16-bit words as they are in
     * memory (2-byte aligned at offset 14), skipping the checksum field, and store the result as it comes out. */
    const uint16_t *w = (const uint16_t *)(frame + KVS_ETH_HDR_LEN);
    uint32_t sum = (uint32_t)w[0] + w[1] + w[2] + w[3] + w[4] + w[6] + w[7] + w[8] + w[9];
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

void kvs_finish_response(uint8_t *frame, uint32_t resp_len)
{
    struct kvs_pkt_hdr *h = (struct kvs_pkt_hdr *)frame;
    for (unsigned i = 0; i < 6; i++) {
        uint8_t t = h->eth_dst[i];
        h->eth_dst[i] = h->eth_src[i];
        h->eth_src[i] = t;
    }
    for (unsigned i = 0; i < 2; i++) {
        uint16_t t = h->ip_src[i];
        h->ip_src[i] = h->ip_dst[i];
        h->ip_dst[i] = t;
    }
    uint16_t t = h->udp_sport;
    h->udp_sport = h->udp_dport;
    h->udp_dport = t;
    uint32_t ip_len = resp_len - KVS_ETH_HDR_LEN;
    h->ip_total_len = kvs_bswap16((uint16_t)ip_len);
    h->udp_len = kvs_bswap16((uint16_t)(ip_len - KVS_IPV4_HDR_LEN));
    h->udp_csum = 0;
    h->ip_ttl = 64;
    h->ip_frag = 0;
    h->ip_csum = kvs_ipv4_checksum(frame);
}
