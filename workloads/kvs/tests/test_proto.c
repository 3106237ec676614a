/* Packet parsing (every malformed case) and response construction, through the parser and through a server. */
#include <string.h>
#include "kt.h"

static uint32_t one_get(uint8_t *f, const char *key)
{
    struct kt_req r = {.op = KVS_OP_GET, .key = (const uint8_t *)key, .klen = (uint32_t)strlen(key)};
    return kt_build(f, KVS_NIC_BUF_SIZE, &r, 1, KVS_UDP_PORT_BASE, 42);
}

static void set_ip_len(uint8_t *f, uint32_t ip_len)
{
    struct kvs_pkt_hdr *h = (struct kvs_pkt_hdr *)f;
    h->ip_total_len = kvs_bswap16((uint16_t)ip_len);
    h->udp_len = kvs_bswap16((uint16_t)(ip_len - KVS_IPV4_HDR_LEN));
}

KT_TEST(parse_valid_batch)
{
    uint8_t f[KVS_NIC_BUF_SIZE];
    struct kt_req r[4] = {
        {.op = KVS_OP_GET, .key = (const uint8_t *)"alpha", .klen = 5},
        {.op = KVS_OP_PUT, .key = (const uint8_t *)"beta", .klen = 4, .val = (const uint8_t *)"value-b", .vlen = 7,
         .expire = 99},
        {.op = KVS_OP_DELETE, .key = (const uint8_t *)"gamma-key-16byte", .klen = 16},
        {.op = KVS_OP_PUT, .key = (const uint8_t *)"d", .klen = 1, .val = (const uint8_t *)"12345678", .vlen = 8,
         .keyhash = 0x1122334455667788ull},
    };
    uint32_t len = kt_build(f, sizeof(f), r, 4, KVS_UDP_PORT_BASE, 7);
    KT_EQ(len, 48 + (24 + 8) + (24 + 8 + 8) + (24 + 16) + (24 + 8 + 8));
    struct kvs_req rq[KVS_MAX_BATCH];
    unsigned n;
    KT_EQ(kvs_parse(f, len, rq, &n), KVS_DROP_NONE);
    KT_EQ(n, 4);
    KT_EQ(rq[0].off, 48);
    KT_EQ(rq[1].off, 80);
    KT_EQ(rq[1].op, KVS_OP_PUT);
    KT_EQ(rq[1].klen, 4);
    KT_EQ(rq[1].vlen, 7);
    KT_EQ(rq[1].expire, 99);
    KT_EQ(rq[1].keyhash, kvs_keyhash("beta", 4));
    KT_CHECK(memcmp(rq[1].key, "beta", 4) == 0 && memcmp(rq[1].val, "value-b", 7) == 0);
    KT_EQ(rq[2].op, KVS_OP_DELETE);
    KT_EQ(rq[3].keyhash, 0x1122334455667788ull);
    for (unsigned i = 0; i < 4; i++)
        KT_EQ(rq[i].err, 0);
    /* Ethernet padding after the IPv4 datagram is ignored. */
    KT_EQ(kvs_parse(f, len + 20, rq, &n), KVS_DROP_NONE);
    /* One request too. */
    len = one_get(f, "k");
    KT_EQ(len, 48 + 24 + 8);
    KT_EQ(kvs_parse(f, len, rq, &n), KVS_DROP_NONE);
    KT_EQ(n, 1);
}

KT_TEST(parse_drops_malformed_headers)
{
    uint8_t f[KVS_NIC_BUF_SIZE], g[KVS_NIC_BUF_SIZE] = {0};
    struct kvs_req rq[KVS_MAX_BATCH];
    unsigned n;
    uint32_t len = one_get(f, "key-0001");
    struct kvs_pkt_hdr *h = (struct kvs_pkt_hdr *)g;
#define RESET() memcpy(g, f, len)
    RESET();
    KT_EQ(kvs_parse(g, 47, rq, &n), KVS_DROP_SHORT);
    KT_EQ(kvs_parse(g, 0, rq, &n), KVS_DROP_SHORT);
    h->eth_type = kvs_bswap16(0x86dd);
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_NOT_IPV4);
    RESET();
    h->ip_ver_ihl = 0x46; /* IPv4 options */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_BAD_IP);
    RESET();
    h->ip_ver_ihl = 0x65;
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_BAD_IP);
    RESET();
    h->ip_proto = 6; /* TCP */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_BAD_IP);
    RESET();
    h->ip_frag = kvs_bswap16(0x2000); /* more fragments */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_BAD_IP);
    RESET();
    h->ip_frag = kvs_bswap16(0x0010); /* a later fragment */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_BAD_IP);
    RESET();
    h->ip_frag = kvs_bswap16(0x4000); /* don't-fragment is fine */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_NONE);
    RESET();
    KT_EQ(kvs_parse(g, len - 1, rq, &n), KVS_DROP_BAD_LENGTH); /* frame cut short of the IPv4 length */
    RESET();
    set_ip_len(g, len - 14 + 8); /* IPv4 length beyond the frame */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_BAD_LENGTH);
    RESET();
    h->udp_len = kvs_bswap16((uint16_t)(kvs_bswap16(h->udp_len) - 8)); /* UDP length disagrees with IPv4 */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_BAD_LENGTH);
    RESET();
    set_ip_len(g, 20 + 8 + 5); /* no room for the batch header */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_BAD_LENGTH);
    RESET();
    set_ip_len(g, 1501); /* a datagram above the 1500-byte MTU, even in a buffer that holds it */
    KT_EQ(kvs_parse(g, KVS_NIC_BUF_SIZE, rq, &n), KVS_DROP_BAD_LENGTH);
    RESET();
    set_ip_len(g, 10); /* shorter than the IPv4 header (would underflow the UDP length) */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_BAD_LENGTH);
    RESET();
    h->batch_count = 0;
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_BAD_COUNT);
    h->batch_count = 33;
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_BAD_COUNT);
    h->batch_count = 255;
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_BAD_COUNT);
    KT_EQ(n, 0);
#undef RESET
}

KT_TEST(parse_drops_inconsistent_requests)
{
    uint8_t f[KVS_NIC_BUF_SIZE], g[KVS_NIC_BUF_SIZE];
    struct kvs_req rq[KVS_MAX_BATCH];
    unsigned n;
    struct kt_req r[2] = {
        {.op = KVS_OP_PUT, .key = (const uint8_t *)"key-one", .klen = 7, .val = (const uint8_t *)"v1", .vlen = 2},
        {.op = KVS_OP_GET, .key = (const uint8_t *)"key-two", .klen = 7},
    };
    uint32_t len = kt_build(f, sizeof(f), r, 2, KVS_UDP_PORT_BASE, 1);
    struct kvs_pkt_hdr *h = (struct kvs_pkt_hdr *)g;
    struct kvs_req_desc *d0 = (struct kvs_req_desc *)(g + 48);
    struct kvs_req_desc *d1 = (struct kvs_req_desc *)(g + 48 + 24 + 8 + 8);
#define RESET() memcpy(g, f, len)
    RESET();
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_NONE);
    h->batch_count = 3; /* count says more than there is */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_TRUNCATED);
    h->batch_count = 1; /* count says less: bytes left over */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_TRAILING);
    RESET();
    set_ip_len(g, len - 14 - 20); /* the second descriptor cut */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_TRUNCATED);
    RESET();
    set_ip_len(g, len - 14 - 8); /* the second key cut */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_TRUNCATED);
    RESET();
    d0->kv_len = KVS_KV_LEN(7, 200); /* a value longer than the packet */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_TRUNCATED);
    RESET();
    d0->kv_len = KVS_KV_LEN(255, 0xffffff); /* the largest lengths: no overflow, just truncated */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_TRUNCATED);
    RESET();
    d1->kv_len = KVS_KV_LEN(7, 8); /* GET with a value: its 8 bytes run past the end */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_TRUNCATED);
    RESET();
    d0->kv_len = KVS_KV_LEN(7, 0); /* the PUT loses its value: the next descriptor starts 8 bytes early */
    KT_EQ(kvs_parse(g, len, rq, &n), KVS_DROP_TRAILING);
    KT_EQ(n, 0);
#undef RESET
}

KT_TEST(parse_flags_bad_requests)
{
    uint8_t f[KVS_NIC_BUF_SIZE];
    struct kvs_req rq[KVS_MAX_BATCH];
    unsigned n;
    struct kt_req r[5] = {
        {.op = 9, .key = (const uint8_t *)"k1", .klen = 2},
        {.op = 0, .key = (const uint8_t *)"k2", .klen = 2},
        {.op = KVS_OP_PUT, .key = (const uint8_t *)"", .klen = 0, .val = (const uint8_t *)"v", .vlen = 1},
        {.op = KVS_OP_GET, .key = (const uint8_t *)"k4", .klen = 2, .val = (const uint8_t *)"v", .vlen = 1},
        {.op = KVS_OP_DELETE, .key = (const uint8_t *)"k5", .klen = 2, .val = (const uint8_t *)"v", .vlen = 1},
    };
    uint32_t len = kt_build(f, sizeof(f), r, 5, KVS_UDP_PORT_BASE, 1);
    KT_EQ(kvs_parse(f, len, rq, &n), KVS_DROP_NONE);
    KT_EQ(rq[0].err, KVS_RES_BAD_OP);
    KT_EQ(rq[1].err, KVS_RES_BAD_OP);
    KT_EQ(rq[2].err, KVS_RES_BAD_LENGTH);
    KT_EQ(rq[3].err, KVS_RES_BAD_LENGTH);
    KT_EQ(rq[4].err, KVS_RES_BAD_LENGTH);
}

/* ---------------------------------------------------------------------------------------------------------- */

KT_TEST(response_headers_and_payload)
{
    struct kt_server s;
    KT_EQ(kt_server_start(&s, 1, 0, 1, 1 << 20, 1024), 0);
    uint8_t f[KVS_NIC_BUF_SIZE], req[KVS_NIC_BUF_SIZE], resp[KVS_NIC_BUF_SIZE];
    uint32_t rlen;
    struct kt_req put = {.op = KVS_OP_PUT, .key = (const uint8_t *)"hello", .klen = 5,
                         .val = (const uint8_t *)"world!!", .vlen = 7, .expire = 1234};
    uint32_t len = kt_build(f, sizeof(f), &put, 1, KVS_UDP_PORT_BASE, 0xdeadbeef);
    memcpy(req, f, len);
    KT_EQ(kt_roundtrip(&s, 0, f, len, resp, &rlen), 1);
    struct kt_resp rr[KVS_MAX_BATCH];
    unsigned n;
    uint32_t opaque;
    KT_EQ(kt_parse_response(resp, rlen, rr, &n, &opaque), 0);
    KT_EQ(rlen, 48 + 24); /* PUT: descriptor only */
    KT_EQ(n, 1);
    KT_EQ(opaque, 0xdeadbeef);
    KT_EQ(rr[0].op, KVS_OP_PUT);
    KT_EQ(rr[0].result, KVS_RES_OK);
    KT_EQ(rr[0].klen, 5);
    KT_EQ(rr[0].vlen, 0);
    KT_EQ(rr[0].keyhash, kvs_keyhash("hello", 5));
    KT_EQ(rr[0].expire, 1234);
    const struct kvs_pkt_hdr *q = (const struct kvs_pkt_hdr *)req, *a = (const struct kvs_pkt_hdr *)resp;
    KT_CHECK(memcmp(a->eth_dst, q->eth_src, 6) == 0 && memcmp(a->eth_src, q->eth_dst, 6) == 0);
    KT_CHECK(memcmp(a->ip_dst, q->ip_src, 4) == 0 && memcmp(a->ip_src, q->ip_dst, 4) == 0);
    KT_EQ(a->udp_sport, q->udp_dport);
    KT_EQ(a->udp_dport, q->udp_sport);
    KT_EQ(a->udp_csum, 0);
    KT_EQ(a->ip_id, q->ip_id);
    /* The checksum over the whole IPv4 header folds to 0xffff. */
    uint32_t sum = 0;
    for (unsigned i = 14; i < 34; i += 2)
        sum += (uint32_t)resp[i] << 8 | resp[i + 1];
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    KT_EQ(sum, 0xffff);

    struct kt_req get = {.op = KVS_OP_GET, .key = (const uint8_t *)"hello", .klen = 5};
    len = kt_build(f, sizeof(f), &get, 1, KVS_UDP_PORT_BASE, 5);
    KT_EQ(kt_roundtrip(&s, 0, f, len, resp, &rlen), 1);
    KT_EQ(kt_parse_response(resp, rlen, rr, &n, &opaque), 0); /* also checks the value's zero padding */
    KT_EQ(rlen, 48 + 24 + 8);
    KT_EQ(rr[0].result, KVS_RES_OK);
    KT_EQ(rr[0].vlen, 7);
    KT_CHECK(memcmp(rr[0].val, "world!!", 7) == 0);
    /* A miss: descriptor only. */
    get.key = (const uint8_t *)"nothere";
    get.klen = 7;
    len = kt_build(f, sizeof(f), &get, 1, KVS_UDP_PORT_BASE, 6);
    KT_EQ(kt_roundtrip(&s, 0, f, len, resp, &rlen), 1);
    KT_EQ(kt_parse_response(resp, rlen, rr, &n, &opaque), 0);
    KT_EQ(rr[0].result, KVS_RES_NOT_FOUND);
    KT_EQ(rlen, 48 + 24);
}

/* A mixed batch with per-request errors: every request gets its own result, in order, and bad ones change
 * nothing. */
KT_TEST(response_batch_with_errors)
{
    struct kt_server s;
    KT_EQ(kt_server_start(&s, 2, 0, 1, 1 << 20, 1024), 0);
    char k0[32], k1[32];
    uint64_t ctr = 0;
    uint32_t l0 = kt_key_for_partition(k0, 0, 2, &ctr), l1 = kt_key_for_partition(k1, 1, 2, &ctr);
    uint8_t big[1100] = {0};
    struct kt_req r[8] = {
        {.op = KVS_OP_PUT, .key = (uint8_t *)k0, .klen = l0, .val = (const uint8_t *)"first", .vlen = 5},
        {.op = 77, .key = (uint8_t *)k0, .klen = l0},
        {.op = KVS_OP_GET, .key = (uint8_t *)k0, .klen = l0},
        {.op = KVS_OP_PUT, .key = (uint8_t *)k1, .klen = l1, .val = (const uint8_t *)"other", .vlen = 5},
        {.op = KVS_OP_GET, .key = (uint8_t *)k0, .klen = 0},
        {.op = KVS_OP_PUT, .key = (uint8_t *)k0, .klen = l0, .val = big, .vlen = 1100}, /* log 1 MiB: fits */
        {.op = KVS_OP_DELETE, .key = (uint8_t *)k0, .klen = l0},
        {.op = KVS_OP_GET, .key = (uint8_t *)k0, .klen = l0},
    };
    uint8_t f[KVS_NIC_BUF_SIZE], resp[KVS_NIC_BUF_SIZE];
    uint32_t len = kt_build(f, sizeof(f), r, 8, KVS_UDP_PORT_BASE, 3), rlen;
    KT_CHECK(len > 0);
    KT_EQ(kt_roundtrip(&s, 0, f, len, resp, &rlen), 1);
    struct kt_resp rr[KVS_MAX_BATCH];
    unsigned n;
    uint32_t opaque;
    KT_EQ(kt_parse_response(resp, rlen, rr, &n, &opaque), 0);
    KT_EQ(n, 8);
    KT_EQ(rr[0].result, KVS_RES_OK);
    KT_EQ(rr[1].result, KVS_RES_BAD_OP);
    KT_EQ(rr[1].op, 77);
    KT_EQ(rr[2].result, KVS_RES_OK);
    KT_CHECK(rr[2].vlen == 5 && memcmp(rr[2].val, "first", 5) == 0);
    KT_EQ(rr[3].result, KVS_RES_WRONG_PARTITION); /* EREW: core 0 may not touch partition 1 */
    KT_EQ(rr[4].result, KVS_RES_BAD_LENGTH);
    KT_EQ(rr[5].result, KVS_RES_OK);
    KT_EQ(rr[6].result, KVS_RES_OK);
    KT_EQ(rr[7].result, KVS_RES_NOT_FOUND);
    KT_EQ(s.sh.parts[1]->st.puts, 0);
    KT_EQ(s.core[0]->st.requests, 8);
    /* Too large for a 4 KiB-log partition: another server. */
    native_platform_free_all();
    KT_EQ(kt_server_start(&s, 1, 0, 0, 4096, 64), 0);
    struct kt_req p1 = {.op = KVS_OP_PUT, .key = (uint8_t *)k0, .klen = l0, .val = big, .vlen = 1100};
    len = kt_build(f, sizeof(f), &p1, 1, KVS_UDP_PORT_BASE, 3);
    KT_EQ(kt_roundtrip(&s, 0, f, len, resp, &rlen), 1);
    KT_EQ(kt_parse_response(resp, rlen, rr, &n, &opaque), 0);
    KT_EQ(rr[0].result, KVS_RES_TOO_LARGE);
    KT_EQ(s.sh.parts[0]->tail, 0);
}

/* Batched GETs whose values are longer than their keys: responses outgrow requests, so the server must move the
 * unread requests aside; every value still comes back right, and what cannot fit the frame is NO_ROOM. */
KT_TEST(response_batch_values_outgrow_requests)
{
    for (int prefetch = 0; prefetch < 2; prefetch++) {
        native_platform_free_all();
        struct kt_server s;
        KT_EQ(kt_server_start(&s, 1, 0, (unsigned)prefetch, 1 << 20, 1024), 0);
        uint8_t f[KVS_NIC_BUF_SIZE], resp[KVS_NIC_BUF_SIZE];
        uint32_t len, rlen;
        char keys[32][24];
        uint8_t vals[32][200];
        struct kt_req r[32];
        for (unsigned i = 0; i < 32; i++) {
            snprintf(keys[i], sizeof(keys[i]), "batchkey-%02u-xxxxx", i); /* 17 bytes -> 24 padded */
            for (unsigned j = 0; j < 200; j++)
                vals[i][j] = (uint8_t)(i * 31 + j);
            r[i] = (struct kt_req){.op = KVS_OP_PUT, .key = (uint8_t *)keys[i], .klen = 17, .val = vals[i],
                                   .vlen = 64};
        }
        for (unsigned i = 0; i < 32; i += 8) { /* load in batches of 8 (a full batch of 200 B would not fit) */
            len = kt_build(f, sizeof(f), r + i, 8, KVS_UDP_PORT_BASE, i);
            KT_EQ(kt_roundtrip(&s, 0, f, len, resp, &rlen), 1);
        }
        /* 8 GETs: requests 48 B each, responses 88 B: fits the frame, needs the move. */
        for (unsigned i = 0; i < 32; i++)
            r[i] = (struct kt_req){.op = KVS_OP_GET, .key = (uint8_t *)keys[i], .klen = 17};
        len = kt_build(f, sizeof(f), r, 8, KVS_UDP_PORT_BASE, 1);
        KT_EQ(kt_roundtrip(&s, 0, f, len, resp, &rlen), 1);
        struct kt_resp rr[KVS_MAX_BATCH];
        unsigned n;
        uint32_t opaque;
        KT_EQ(kt_parse_response(resp, rlen, rr, &n, &opaque), 0);
        KT_EQ(n, 8);
        for (unsigned i = 0; i < 8; i++) {
            KT_EQ(rr[i].result, KVS_RES_OK);
            KT_EQ(rr[i].keyhash, kvs_keyhash(keys[i], 17));
            KT_CHECK(rr[i].vlen == 64 && memcmp(rr[i].val, vals[i], 64) == 0);
        }
        KT_CHECK(s.core[0]->st.tail_moves >= 1);
        /* 30 GETs (the most 48-byte requests an MTU-sized frame holds): 30 x 88 B > 1466 B of payload, so the
         * first ones carry values and the rest are NO_ROOM. */
        const unsigned N = (KVS_MAX_FRAME_LEN - 48) / 48;
        KT_EQ(N, 30);
        len = kt_build(f, sizeof(f), r, N, KVS_UDP_PORT_BASE, 2);
        KT_CHECK(len <= KVS_MAX_FRAME_LEN);
        KT_EQ(kt_roundtrip(&s, 0, f, len, resp, &rlen), 1);
        KT_EQ(kt_parse_response(resp, rlen, rr, &n, &opaque), 0);
        KT_EQ(n, N);
        KT_CHECK(rlen <= KVS_MAX_FRAME_LEN);
        unsigned ok = 0;
        for (unsigned i = 0; i < N; i++) {
            if (rr[i].result == KVS_RES_OK) {
                KT_EQ(ok, i); /* hits come first, then only NO_ROOM */
                KT_CHECK(rr[i].vlen == 64 && memcmp(rr[i].val, vals[i], 64) == 0);
                ok++;
            } else {
                KT_EQ(rr[i].result, KVS_RES_NO_ROOM);
            }
        }
        /* (1514 - 48 - 24 * 30) / 64 = 11 values fit beside the 30 descriptors. */
        KT_EQ(ok, (KVS_MAX_FRAME_LEN - 48 - 24 * N) / 64);
        /* One request more is a frame above the MTU: dropped. */
        len = kt_build(f, sizeof(f), r, N + 1, KVS_UDP_PORT_BASE, 3);
        KT_CHECK(len > KVS_MAX_FRAME_LEN);
        KT_EQ(kt_roundtrip(&s, 0, f, len, resp, &rlen), 0);
        KT_EQ(s.core[0]->st.drops[KVS_DROP_BAD_LENGTH], 1);
    }
}

/* CREW: GETs may go to any core, writes only to the owner; a remote GET whose value overlaps its own key in the
 * buffer still compares the key correctly. */
KT_TEST(response_crew_steering)
{
    struct kt_server s;
    KT_EQ(kt_server_start(&s, 2, 1, 1, 1 << 20, 1024), 0);
    char k0[32];
    uint64_t ctr = 0;
    uint32_t l0 = kt_key_for_partition(k0, 0, 2, &ctr);
    uint8_t f[KVS_NIC_BUF_SIZE], resp[KVS_NIC_BUF_SIZE];
    uint32_t len, rlen;
    struct kt_resp rr[KVS_MAX_BATCH];
    unsigned n;
    uint32_t opaque;
    const char *val = "a value longer than the key, 40 bytes...";
    struct kt_req put = {.op = KVS_OP_PUT, .key = (uint8_t *)k0, .klen = l0, .val = (const uint8_t *)val,
                         .vlen = 40};
    len = kt_build(f, sizeof(f), &put, 1, KVS_UDP_PORT_BASE + 1, 1);
    KT_EQ(kt_roundtrip(&s, 1, f, len, resp, &rlen), 1); /* PUT to the wrong core */
    KT_EQ(kt_parse_response(resp, rlen, rr, &n, &opaque), 0);
    KT_EQ(rr[0].result, KVS_RES_WRONG_PARTITION);
    KT_EQ(kt_roundtrip(&s, 0, f, len, resp, &rlen), 1); /* to the owner */
    KT_EQ(kt_parse_response(resp, rlen, rr, &n, &opaque), 0);
    KT_EQ(rr[0].result, KVS_RES_OK);
    struct kt_req get = {.op = KVS_OP_GET, .key = (uint8_t *)k0, .klen = l0};
    len = kt_build(f, sizeof(f), &get, 1, KVS_UDP_PORT_BASE + 1, 2);
    KT_EQ(kt_roundtrip(&s, 1, f, len, resp, &rlen), 1); /* GET on the other core */
    KT_EQ(kt_parse_response(resp, rlen, rr, &n, &opaque), 0);
    KT_EQ(rr[0].result, KVS_RES_OK);
    KT_CHECK(rr[0].vlen == 40 && memcmp(rr[0].val, val, 40) == 0);
    KT_EQ(s.sh.parts[0]->st.gets, 0); /* served by the reader path, not the owner's */
    struct kt_req del = {.op = KVS_OP_DELETE, .key = (uint8_t *)k0, .klen = l0};
    len = kt_build(f, sizeof(f), &del, 1, KVS_UDP_PORT_BASE + 1, 3);
    KT_EQ(kt_roundtrip(&s, 1, f, len, resp, &rlen), 1);
    KT_EQ(kt_parse_response(resp, rlen, rr, &n, &opaque), 0);
    KT_EQ(rr[0].result, KVS_RES_WRONG_PARTITION);
}

/* Dropped packets: counted by reason, the buffer goes back, nothing is sent. */
KT_TEST(server_drops_and_counts)
{
    struct kt_server s;
    KT_EQ(kt_server_start(&s, 1, 0, 1, 1 << 20, 1024), 0);
    uint8_t f[KVS_NIC_BUF_SIZE];
    uint32_t len = one_get(f, "abc");
    KT_EQ(native_inject(s.q[0], f, 30), 0);
    f[12] = 0x86;
    KT_EQ(native_inject(s.q[0], f, len), 0);
    f[12] = 0x08;
    f[42] = 0;
    KT_EQ(native_inject(s.q[0], f, len), 0);
    f[42] = 1;
    KT_EQ(native_inject(s.q[0], f, len), 0); /* one good one */
    kt_server_drain(&s);
    KT_EQ(native_tx_pending(s.q[0]), 1);
    KT_EQ(s.core[0]->st.dropped, 3);
    KT_EQ(s.core[0]->st.drops[KVS_DROP_SHORT], 1);
    KT_EQ(s.core[0]->st.drops[KVS_DROP_NOT_IPV4], 1);
    KT_EQ(s.core[0]->st.drops[KVS_DROP_BAD_COUNT], 1);
    uint8_t resp[KVS_NIC_BUF_SIZE];
    uint32_t rlen;
    KT_EQ(native_collect(s.q[0], resp, sizeof(resp), &rlen), 1);
    KT_EQ(native_bufs_free(s.q[0]), native_bufs_total(s.q[0]));
    /* Housekeeping ran (every 16 polls here) and saw the NIC's counters. */
    for (unsigned i = 0; i < 40; i++)
        kvs_core_poll(s.core[0]);
    KT_CHECK(s.core[0]->st.housekeeping >= 2);
    KT_EQ(s.core[0]->st.nic.rx_frames, 4);
    KT_EQ(s.core[0]->st.nic.tx_frames, 1);
}

KT_TEST(config_parse)
{
    struct kvs_config c;
    kvs_config_default(&c, 4);
    const char *bad;
    char *ok[] = {"kvs", "mode=crew", "prefetch=0", "lru=0", "log_mib=128", "buckets=1024", "housekeeping_log2=20"};
    KT_EQ(kvs_config_parse(&c, 7, ok, &bad), 0);
    KT_EQ(c.crew, 1);
    KT_EQ(c.prefetch, 0);
    KT_EQ(c.lru, 0);
    KT_EQ(c.log_size, 128ull << 20);
    KT_EQ(c.buckets, 1024);
    KT_EQ(c.housekeeping_log2, 20);
    char *kib[] = {"kvs", "log_kib=64", "mode=erew", "rx_ring=512", "tx_ring=64"};
    KT_EQ(kvs_config_parse(&c, 5, kib, &bad), 0);
    KT_EQ(c.log_size, 64 << 10);
    KT_EQ(c.crew, 0);
    KT_EQ(c.rx_ring, 512);
    KT_EQ(c.tx_ring, 64);
    KT_EQ(c.numa_report, 0);
    char *numa[] = {"kvs", "numa_report=1"};
    KT_EQ(kvs_config_parse(&c, 2, numa, &bad), 0);
    KT_EQ(c.numa_report, 1);
    char *bads[][2] = {{"kvs", "numa_report=2"}, {"kvs", "mode=xrew"}, {"kvs", "buckets=1000"}, {"kvs", "log_mib=3"}, {"kvs", "prefetch=2"},
                       {"kvs", "frobnicate=1"}, {"kvs", "log_kib="}, {"kvs", "rx_ring=4"}, {"kvs", "tx_ring=100"},
                       {"kvs", "buckets=99999999999999999999999"}, {"kvs", "rx_ring=8192"}, {"kvs", "tx_rs=24"},
                       {"kvs", "buf_data=2000"}, {"kvs", "buf_headroom=65536"}, {"kvs", "buf_meta=1"}};
    for (unsigned i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        KT_EQ(kvs_config_parse(&c, 2, bads[i], &bad), -1);
        KT_CHECK(bad == bads[i][1]);
    }
}

/* MICA's DPDK set-up by default; the driver's arguments, and what does not fit together or the NIC. */
KT_TEST(config_driver_arguments)
{
    struct kvs_config c;
    kvs_config_default(&c, 1);
    KT_EQ(c.rx_ring, 128);
    KT_EQ(c.tx_ring, 512);
    KT_EQ(c.buf_data, 2048);
    KT_EQ(c.buf_headroom, 128);
    KT_CHECK(kvs_config_check(&c) == 0);
    const char *bad;
    char *ok[] = {"kvs", "tx_ring=256", "tx_rs=64", "buf_data=4096", "buf_headroom=0", "buf_meta=128"};
    KT_EQ(kvs_config_parse(&c, 6, ok, &bad), 0);
    KT_EQ(c.tx_rs, 64);
    KT_EQ(c.buf_data, 4096);
    KT_EQ(c.buf_headroom, 0);
    KT_EQ(c.buf_meta, 128);
    KT_CHECK(kvs_config_check(&c) == 0);
    char *group[] = {"kvs", "tx_ring=64", "tx_rs=32"}; /* a group of half the ring: more than a quarter */
    KT_EQ(kvs_config_parse(&c, 3, group, &bad), 0);
    KT_CHECK(kvs_config_check(&c) != 0 && kvs_config_check(&c)[0] == 't');
    char *small[] = {"kvs", "tx_rs=16", "buf_data=1024"}; /* no room for a full frame */
    KT_EQ(kvs_config_parse(&c, 3, small, &bad), 0);
    KT_CHECK(kvs_config_check(&c) != 0 && kvs_config_check(&c)[0] == 'b');
    /* tx_free (DPDK's tx_free_thresh): 0 (the driver's 32) by default; at most the ring, at least the group. */
    kvs_config_default(&c, 1);
    KT_EQ(c.tx_free, 0);
    char *lazy[] = {"kvs", "tx_ring=256", "tx_free=64"};
    KT_EQ(kvs_config_parse(&c, 3, lazy, &bad), 0);
    KT_EQ(c.tx_free, 64);
    KT_CHECK(kvs_config_check(&c) == 0);
    char *eager[] = {"kvs", "tx_ring=256", "tx_free=256"};
    KT_EQ(kvs_config_parse(&c, 3, eager, &bad), 0);
    KT_CHECK(kvs_config_check(&c) == 0);
    char *over[] = {"kvs", "tx_ring=256", "tx_free=512"};
    KT_EQ(kvs_config_parse(&c, 3, over, &bad), 0);
    KT_CHECK(kvs_config_check(&c) != 0 && kvs_config_check(&c)[0] == 't');
    char *under[] = {"kvs", "tx_ring=512", "tx_rs=64", "tx_free=32"};
    KT_EQ(kvs_config_parse(&c, 4, under, &bad), 0);
    KT_CHECK(kvs_config_check(&c) != 0 && kvs_config_check(&c)[0] == 't');
    char *zero[] = {"kvs", "tx_free=0"};
    KT_EQ(kvs_config_parse(&c, 2, zero, &bad), -1);
}

/* CREW: a remote GET whose response value lands on top of its own key in the buffer, and whose read is retried
 * (a concurrent write to the same bucket): the retry must still compare against the real key. */
static struct kvs_partition *g_owner;
static uint64_t g_other_kh;
static int g_hook_calls;
static void bump_bucket_hook(int point, const struct kvs_bucket *b)
{
    (void)b;
    if (point == KVS_HOOK_READER_READ && g_hook_calls++ == 0)
        kvs_store_put(g_owner, g_other_kh, (const uint8_t *)"another", 7, (const uint8_t *)"x", 1, 0);
}

KT_TEST(response_crew_remote_retry_keeps_key)
{
    struct kt_server s;
    KT_EQ(kt_server_start(&s, 2, 1, 0, 1 << 20, 1024), 0);
    char k0[32];
    uint64_t ctr = 0;
    uint32_t l0 = kt_key_for_partition(k0, 0, 2, &ctr);
    uint8_t f[KVS_NIC_BUF_SIZE], resp[KVS_NIC_BUF_SIZE];
    uint32_t len, rlen;
    struct kt_resp rr[KVS_MAX_BATCH];
    unsigned n;
    uint32_t opaque;
    const char *val = "0123456789abcdef0123456789abcdef"; /* 32 bytes: covers the key in the buffer */
    struct kt_req put = {.op = KVS_OP_PUT, .key = (uint8_t *)k0, .klen = l0, .val = (const uint8_t *)val,
                         .vlen = 32};
    len = kt_build(f, sizeof(f), &put, 1, KVS_UDP_PORT_BASE, 1);
    KT_EQ(kt_roundtrip(&s, 0, f, len, resp, &rlen), 1);
    g_owner = s.sh.parts[0];
    g_other_kh = kvs_keyhash(k0, l0) ^ (1ull << 40); /* same partition, same bucket, another key */
    g_hook_calls = 0;
    kvs_test_hook = bump_bucket_hook;
    struct kt_req get = {.op = KVS_OP_GET, .key = (uint8_t *)k0, .klen = l0};
    len = kt_build(f, sizeof(f), &get, 1, KVS_UDP_PORT_BASE + 1, 2);
    int got = kt_roundtrip(&s, 1, f, len, resp, &rlen);
    kvs_test_hook = 0;
    KT_EQ(got, 1);
    KT_EQ(g_hook_calls, 2); /* read, concurrent write, read again */
    KT_EQ(s.core[1]->st.reader.crew_retries, 1);
    KT_EQ(kt_parse_response(resp, rlen, rr, &n, &opaque), 0);
    KT_EQ(rr[0].result, KVS_RES_OK);
    KT_CHECK(rr[0].vlen == 32 && memcmp(rr[0].val, val, 32) == 0);
}

/* log_window_kib: parsed as KiB, 0 (the whole log) by default; more than half the log and at most all of it. */
KT_TEST(config_log_window)
{
    struct kvs_config c;
    kvs_config_default(&c, 1);
    KT_EQ(c.log_window_kib, 0);
    const char *bad;
    char *ok[] = {"kvs", "log_mib=64", "log_window_kib=43691"};
    KT_EQ(kvs_config_parse(&c, 3, ok, &bad), 0);
    KT_EQ(c.log_window_kib, 43691);
    KT_CHECK(kvs_config_check(&c) == 0);
    char *all[] = {"kvs", "log_window_kib=65536"};
    KT_EQ(kvs_config_parse(&c, 2, all, &bad), 0);
    KT_CHECK(kvs_config_check(&c) == 0);
    char *half[] = {"kvs", "log_window_kib=32768"}; /* exactly half the 64 MiB log: refused */
    KT_EQ(kvs_config_parse(&c, 2, half, &bad), 0);
    KT_CHECK(kvs_config_check(&c) != 0 && kvs_config_check(&c)[0] == 'l');
    char *over[] = {"kvs", "log_window_kib=65537"};
    KT_EQ(kvs_config_parse(&c, 2, over, &bad), 0);
    KT_CHECK(kvs_config_check(&c) != 0 && kvs_config_check(&c)[0] == 'l');
    char *bads[][2] = {{"kvs", "log_window_kib=3"}, {"kvs", "log_window_kib="}, {"kvs", "log_window_kib=x"}};
    for (unsigned i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        KT_EQ(kvs_config_parse(&c, 2, bads[i], &bad), -1);
        KT_CHECK(bad == bads[i][1]);
    }
}

/* buckets_used: 0 (every bucket) by default; more than half of buckets= and at most all of them. */
KT_TEST(config_buckets_used)
{
    struct kvs_config c;
    kvs_config_default(&c, 1);
    KT_EQ(c.buckets_used, 0);
    const char *bad;
    char *ok[] = {"kvs", "buckets=131072", "buckets_used=87381"};
    KT_EQ(kvs_config_parse(&c, 3, ok, &bad), 0);
    KT_EQ(c.buckets_used, 87381);
    KT_CHECK(kvs_config_check(&c) == 0);
    char *half[] = {"kvs", "buckets_used=65536"}; /* exactly half of 131,072: refused */
    KT_EQ(kvs_config_parse(&c, 2, half, &bad), 0);
    KT_CHECK(kvs_config_check(&c) != 0 && strncmp(kvs_config_check(&c), "buckets_used", 12) == 0);
    char *over[] = {"kvs", "buckets_used=131073"};
    KT_EQ(kvs_config_parse(&c, 2, over, &bad), 0);
    KT_CHECK(kvs_config_check(&c) != 0 && strncmp(kvs_config_check(&c), "buckets_used", 12) == 0);
    char *bads[][2] = {{"kvs", "buckets_used=0"}, {"kvs", "buckets_used="}, {"kvs", "buckets_used=x"}};
    for (unsigned i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        KT_EQ(kvs_config_parse(&c, 2, bads[i], &bad), -1);
        KT_CHECK(bad == bads[i][1]);
    }
}
