/* mcd_net.c - Ethernet/IPv4/UDP parse and build with checksums, and per-peer connection state. */
#include "mcd_net.h"

uint32_t mcd_csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
    size_t i = 0;
    for (; i + 1 < n; i += 2)
        sum += mcd_get16(p + i);
    if (i < n)
        sum += (uint32_t)p[i] << 8; /* an odd last byte is padded with a zero */
    return sum;
}

uint16_t mcd_csum_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* UDP checksum: the pseudo-header (addresses, protocol, UDP length) and the UDP header and data. */
static uint16_t udp_checksum(uint32_t src, uint32_t dst, const uint8_t *udp, uint32_t udp_len)
{
    uint32_t sum = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + MCD_IPPROTO_UDP + udp_len;
    uint16_t c = mcd_csum_fold(mcd_csum_add(sum, udp, udp_len));
    return c ? c : 0xffff; /* 0 means "no checksum" in UDP, so a computed 0 is sent as all ones */
}

int mcd_net_parse(const uint8_t *f, uint32_t len, struct mcd_flow *flow, const uint8_t **payload, uint32_t *plen)
{
    if (len < MCD_HDRS_LEN)
        return MCD_NET_SHORT;
    const uint8_t *ip = f + MCD_ETH_HLEN;
    if (mcd_get16(f + 12) != MCD_ETHERTYPE_IPV4 || ip[0] != 0x45 || (mcd_get16(ip + 6) & 0x3fff) != 0)
        return MCD_NET_NOT_IPV4;
    if (ip[9] != MCD_IPPROTO_UDP)
        return MCD_NET_NOT_UDP;
    uint32_t ip_len = mcd_get16(ip + 2);
    if (ip_len < MCD_IP_HLEN + MCD_UDP_HLEN || MCD_ETH_HLEN + ip_len > len)
        return MCD_NET_SHORT;
    if (mcd_csum_fold(mcd_csum_add(0, ip, MCD_IP_HLEN)) != 0)
        return MCD_NET_IP_CSUM;
    const uint8_t *udp = ip + MCD_IP_HLEN;
    uint32_t udp_len = mcd_get16(udp + 4);
    if (udp_len != ip_len - MCD_IP_HLEN)
        return MCD_NET_UDP_LEN;
    flow->src_ip = mcd_get32(ip + 12);
    flow->dst_ip = mcd_get32(ip + 16);
    if (mcd_get16(udp + 6) != 0) {
        uint32_t sum = (flow->src_ip >> 16) + (flow->src_ip & 0xffff) + (flow->dst_ip >> 16) +
                       (flow->dst_ip & 0xffff) + MCD_IPPROTO_UDP + udp_len;
        if (mcd_csum_fold(mcd_csum_add(sum, udp, udp_len)) != 0)
            return MCD_NET_UDP_CSUM;
    }
    memcpy(flow->dst_mac, f, 6);
    memcpy(flow->src_mac, f + 6, 6);
    flow->src_port = mcd_get16(udp);
    flow->dst_port = mcd_get16(udp + 2);
    *payload = udp + MCD_UDP_HLEN;
    *plen = udp_len - MCD_UDP_HLEN;
    return 0;
}

void mcd_net_put_ipv4(uint8_t *f, const struct mcd_flow *flow, uint16_t ip_id, uint8_t proto, uint32_t ip_payload)
{
    memcpy(f, flow->dst_mac, 6);
    memcpy(f + 6, flow->src_mac, 6);
    mcd_put16(f + 12, MCD_ETHERTYPE_IPV4);
    uint8_t *ip = f + MCD_ETH_HLEN;
    ip[0] = 0x45;
    ip[1] = 0;
    mcd_put16(ip + 2, (uint16_t)(MCD_IP_HLEN + ip_payload));
    mcd_put16(ip + 4, ip_id);
    mcd_put16(ip + 6, 0x4000); /* don't fragment */
    ip[8] = 64;
    ip[9] = proto;
    mcd_put16(ip + 10, 0);
    mcd_put32(ip + 12, flow->src_ip);
    mcd_put32(ip + 16, flow->dst_ip);
    mcd_put16(ip + 10, mcd_csum_fold(mcd_csum_add(0, ip, MCD_IP_HLEN)));
}

uint32_t mcd_net_build(uint8_t *f, uint32_t cap, const struct mcd_flow *flow, uint16_t ip_id, const uint8_t *payload,
                       uint32_t plen)
{
    uint32_t len = MCD_HDRS_LEN + plen;
    if (len > cap || len > MCD_MAX_FRAME)
        return 0;
    uint8_t *udp = f + MCD_ETH_HLEN + MCD_IP_HLEN;
    memmove(udp + MCD_UDP_HLEN, payload, plen); /* payload may already sit in f */
    mcd_net_put_ipv4(f, flow, ip_id, MCD_IPPROTO_UDP, MCD_UDP_HLEN + plen);
    mcd_put16(udp, flow->src_port);
    mcd_put16(udp + 2, flow->dst_port);
    mcd_put16(udp + 4, (uint16_t)(MCD_UDP_HLEN + plen));
    mcd_put16(udp + 6, 0);
    mcd_put16(udp + 6, udp_checksum(flow->src_ip, flow->dst_ip, udp, MCD_UDP_HLEN + plen));
    return len;
}

struct mcd_flow mcd_flow_reverse(const struct mcd_flow *flow)
{
    struct mcd_flow r;
    memcpy(r.src_mac, flow->dst_mac, 6);
    memcpy(r.dst_mac, flow->src_mac, 6);
    r.src_ip = flow->dst_ip;
    r.dst_ip = flow->src_ip;
    r.src_port = flow->dst_port;
    r.dst_port = flow->src_port;
    return r;
}

void mcd_conns_init(struct mcd_conn_table *t, struct mcd_conn *slots, unsigned n)
{
    t->slots = slots;
    t->mask = n - 1;
    t->live = 0;
    t->opened = t->recycled = 0;
}

#define MCD_CONN_PROBES 8u

struct mcd_conn *mcd_conn_lookup(struct mcd_conn_table *t, uint32_t ip, uint16_t port)
{
    uint32_t h = (ip ^ ((uint32_t)port << 16 | port)) * 0x9E3779B1u;
    unsigned start = (h >> 16) & t->mask, probes = MCD_CONN_PROBES < t->mask + 1 ? MCD_CONN_PROBES : t->mask + 1;
    struct mcd_conn *free_slot = 0;
    for (unsigned i = 0; i < probes; i++) {
        struct mcd_conn *c = &t->slots[(start + i) & t->mask];
        if (c->state == MCD_CONN_ESTABLISHED && c->peer_ip == ip && c->peer_port == port)
            return c;
        if (c->state == MCD_CONN_FREE && !free_slot)
            free_slot = c;
    }
    if (!free_slot) { /* every probed slot is taken: recycle the first, as a TIME_WAIT slot would be */
        free_slot = &t->slots[start];
        t->recycled++;
        t->live--;
    }
    memset(free_slot, 0, offsetof(struct mcd_conn, rcvbuf));
    free_slot->peer_ip = ip;
    free_slot->peer_port = port;
    free_slot->state = MCD_CONN_ESTABLISHED;
    t->live++;
    t->opened++;
    return free_slot;
}

void mcd_conn_receive(struct mcd_conn *c, const uint8_t *payload, uint32_t plen)
{
    uint32_t n = plen < MCD_SOCKBUF ? plen : MCD_SOCKBUF;
    memcpy(c->rcvbuf, payload, n);
    c->rcv_len = n;
    c->rx_seq++;
    c->rx_bytes += plen;
}
