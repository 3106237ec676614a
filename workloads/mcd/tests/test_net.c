/* The network stack: checksums against a published vector, build/parse round trips, every refusal. */
#include <string.h>
#include "mt.h"

MT_TEST(ipv4_checksum_matches_the_textbook_example)
{
    /* A 20-byte IPv4 header whose checksum is 0xb861 (the common worked example). */
    uint8_t h[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                     0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
    MT_EQ(mcd_csum_fold(mcd_csum_add(0, h, 20)), 0xb861);
    h[10] = 0xb8;
    h[11] = 0x61;
    MT_EQ(mcd_csum_fold(mcd_csum_add(0, h, 20)), 0); /* a correct header sums to all ones */
    const uint8_t odd[3] = {0x01, 0x02, 0x03};         /* an odd byte is padded with zero: 0x0102 + 0x0300 */
    MT_EQ(mcd_csum_fold(mcd_csum_add(0, odd, 3)), (uint16_t)~0x0402);
}

MT_TEST(build_then_parse_round_trips)
{
    uint8_t f[MCD_MAX_FRAME];
    const uint8_t payload[5] = {1, 2, 3, 4, 5};
    struct mcd_flow fl = mt_flow_to_server(40000, 11211), got;
    uint32_t len = mcd_net_build(f, sizeof(f), &fl, 99, payload, 5);
    MT_EQ(len, MCD_HDRS_LEN + 5);
    const uint8_t *p;
    uint32_t n;
    MT_EQ(mcd_net_parse(f, len, &got, &p, &n), 0);
    MT_EQ(n, 5);
    MT_CHECK(memcmp(p, payload, 5) == 0);
    MT_EQ(got.src_ip, MT_CLIENT_IP);
    MT_EQ(got.dst_ip, MT_SERVER_IP);
    MT_EQ(got.src_port, 40000);
    MT_EQ(got.dst_port, 11211);
    MT_CHECK(memcmp(got.src_mac, fl.src_mac, 6) == 0 && memcmp(got.dst_mac, fl.dst_mac, 6) == 0);
    MT_EQ(mcd_get16(f + MCD_ETH_HLEN + 4), 99); /* the IP id */
    struct mcd_flow back = mcd_flow_reverse(&got);
    MT_EQ(back.dst_port, 40000);
    MT_EQ(back.src_ip, MT_SERVER_IP);
    MT_EQ(mcd_net_build(f, MCD_HDRS_LEN + 4, &fl, 0, payload, 5), 0); /* does not fit */
}

MT_TEST(parse_refuses_bad_frames)
{
    uint8_t f[MCD_MAX_FRAME], g[MCD_MAX_FRAME];
    const uint8_t payload[16] = {0};
    struct mcd_flow fl = mt_flow_to_server(1, 2), got;
    const uint8_t *p;
    uint32_t n, len = mcd_net_build(f, sizeof(f), &fl, 1, payload, 16);
    MT_EQ(mcd_net_parse(f, MCD_HDRS_LEN - 1, &got, &p, &n), MCD_NET_SHORT);
    MT_EQ(mcd_net_parse(f, len - 1, &got, &p, &n), MCD_NET_SHORT);
    memcpy(g, f, len);
    g[12] = 0x86; /* IPv6 ethertype */
    MT_EQ(mcd_net_parse(g, len, &got, &p, &n), MCD_NET_NOT_IPV4);
    memcpy(g, f, len);
    g[MCD_ETH_HLEN + 9] = 6; /* TCP */
    MT_EQ(mcd_net_parse(g, len, &got, &p, &n), MCD_NET_NOT_UDP);
    memcpy(g, f, len);
    g[MCD_ETH_HLEN + 8] ^= 1; /* TTL changed, checksum not updated */
    MT_EQ(mcd_net_parse(g, len, &got, &p, &n), MCD_NET_IP_CSUM);
    memcpy(g, f, len);
    g[len - 1] ^= 0x40; /* one payload bit */
    MT_EQ(mcd_net_parse(g, len, &got, &p, &n), MCD_NET_UDP_CSUM);
    memcpy(g, f, len);
    g[MCD_ETH_HLEN + MCD_IP_HLEN + 6] = 0; /* no UDP checksum: accepted as sent */
    g[MCD_ETH_HLEN + MCD_IP_HLEN + 7] = 0;
    g[len - 1] ^= 0x40;
    MT_EQ(mcd_net_parse(g, len, &got, &p, &n), 0);
    memcpy(g, f, len);
    g[MCD_ETH_HLEN + MCD_IP_HLEN + 5] += 1; /* UDP length disagrees */
    MT_EQ(mcd_net_parse(g, len, &got, &p, &n), MCD_NET_UDP_LEN);
}

MT_TEST(connections_are_found_again_and_recycled_when_full)
{
    struct mcd_conn slots[8];
    struct mcd_conn_table t;
    memset(slots, 0, sizeof(slots));
    mcd_conns_init(&t, slots, 8);
    struct mcd_conn *a = mcd_conn_lookup(&t, 1, 100), *b = mcd_conn_lookup(&t, 1, 101);
    MT_CHECK(a != b);
    MT_CHECK(mcd_conn_lookup(&t, 1, 100) == a);
    MT_EQ(a->state, MCD_CONN_ESTABLISHED);
    const uint8_t data[3] = {7, 8, 9};
    mcd_conn_receive(a, data, 3);
    mcd_conn_receive(a, data, 2);
    MT_EQ(a->rx_seq, 2);
    MT_EQ(a->rx_bytes, 5);
    MT_EQ(a->rcv_len, 2);
    MT_EQ(t.live, 2);
    for (uint16_t port = 200; port < 220; port++)
        mcd_conn_lookup(&t, 2, port);
    MT_EQ(t.live, 8);             /* never more than the slots */
    MT_EQ(t.opened, 22);
    MT_EQ(t.recycled, 14);
}
