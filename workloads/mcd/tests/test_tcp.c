/* The server over TCP: the handshake, sequence and acknowledgement numbers, checksums, messages spanning segments,
 * replies beyond the MSS and the peer's window, out-of-order and duplicate segments, closing and resets, and a
 * random run over several connections checked against a reference model. A small client here speaks TCP to
 * mcd_server_handle / mcd_server_output and checks every segment it gets. */
#include <stdlib.h>
#include <string.h>
#include "mt.h"

#define PORT 11211
#define OUTS 64

/* The client's end of one connection. */
struct tc {
    struct mcd_server *s;
    uint16_t cport;
    uint32_t iss, snd_nxt, rcv_nxt;
    uint16_t window;            /* the client's advertised window */
    uint32_t peer_wnd;          /* the server's, from its last segment */
    uint32_t stream_len;        /* bytes received from the server not yet parsed */
    uint8_t stream[1 << 16];
    unsigned segs, data_segs;   /* segments received, those with data */
    int bad;                    /* a segment failed the client's checks */
};

static uint8_t g_out[OUTS][MCD_MAX_FRAME];
static uint32_t g_len[OUTS];

/* Hand frame f to the server; every frame it sends (the reply on the frame's buffer, then the output list) goes to
 * g_out. Returns their number. */
static unsigned exchange(struct mcd_server *s, const uint8_t *f, uint32_t flen)
{
    uint8_t in[MCD_MAX_FRAME];
    memcpy(in, f, flen);
    unsigned n = 0;
    uint32_t len = mcd_server_handle(s, in, flen, g_out[0], MCD_MAX_FRAME);
    if (len)
        g_len[n++] = len;
    while (n < OUTS && (len = mcd_server_output(s, g_out[n], MCD_MAX_FRAME)) != 0)
        g_len[n++] = len;
    return n;
}

static uint32_t seg_frame(uint8_t *f, uint16_t cport, uint32_t seq, uint32_t ack, uint8_t flags, uint16_t window,
                          uint16_t mss, const uint8_t *data, uint32_t n)
{
    struct mcd_flow fl = mt_flow_to_server(cport, PORT);
    return mcd_tcp_build(f, MCD_MAX_FRAME, &fl, 1, seq, ack, flags, window, mss, data, n, 0, 0);
}

/* Take the server's segments in g_out[0..n) on c: checksums, ports, in order, ACK within what was sent. */
static void take(struct tc *c, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        struct mcd_tcp_seg seg;
        if (mcd_tcp_parse(g_out[i], g_len[i], &seg) != 0 || seg.flow.dst_port != c->cport ||
            seg.flow.src_port != PORT || seg.flow.dst_ip != MT_CLIENT_IP || !(seg.flags & MCD_TCP_ACK) ||
            (seg.flags & (MCD_TCP_SYN | MCD_TCP_RST)) || seg.seq != c->rcv_nxt || mcd_seq_lt(c->snd_nxt, seg.ack)) {
            c->bad++;
            continue;
        }
        memcpy(c->stream + c->stream_len, seg.data, seg.len);
        c->stream_len += seg.len;
        c->rcv_nxt += seg.len + !!(seg.flags & MCD_TCP_FIN);
        c->peer_wnd = seg.window;
        c->segs++;
        c->data_segs += seg.len > 0;
    }
}

static void tc_connect(struct tc *c, struct mcd_server *s, uint16_t cport, uint16_t mss, uint16_t window)
{
    memset(c, 0, sizeof(*c));
    c->s = s;
    c->cport = cport;
    c->iss = 1000u * cport + 0xfffff000u; /* wraps the 32-bit sequence space soon after */
    c->window = window;
    uint8_t f[MCD_MAX_FRAME];
    uint32_t flen = seg_frame(f, cport, c->iss, 0, MCD_TCP_SYN, window, mss, 0, 0);
    struct mcd_tcp_seg seg;
    if (exchange(s, f, flen) != 1 || mcd_tcp_parse(g_out[0], g_len[0], &seg) != 0 ||
        seg.flags != (MCD_TCP_SYN | MCD_TCP_ACK) || seg.ack != c->iss + 1 || seg.mss != MCD_TCP_MSS) {
        c->bad++;
        return;
    }
    c->snd_nxt = c->iss + 1;
    c->rcv_nxt = seg.seq + 1;
    c->peer_wnd = seg.window;
    flen = seg_frame(f, cport, c->snd_nxt, c->rcv_nxt, MCD_TCP_ACK, window, 0, 0, 0);
    c->bad += exchange(s, f, flen) != 0; /* the handshake's last ACK gets no answer */
}

/* Send n bytes in segments of at most seglen (ACK of everything received so far); take every reply. Returns the
 * number of segments the server sent. */
static unsigned tc_send(struct tc *c, const uint8_t *data, uint32_t n, uint32_t seglen)
{
    uint8_t f[MCD_MAX_FRAME];
    unsigned got = 0;
    for (uint32_t off = 0; off < n; off += seglen) {
        uint32_t len = n - off < seglen ? n - off : seglen;
        uint32_t flen = seg_frame(f, c->cport, c->snd_nxt, c->rcv_nxt, MCD_TCP_ACK | MCD_TCP_PSH, c->window, 0,
                                  data + off, len);
        c->snd_nxt += len;
        unsigned k = exchange(c->s, f, flen);
        take(c, k);
        got += k;
    }
    return got;
}

/* A bare ACK of everything received (the server may send what the window held back). */
static unsigned tc_ack(struct tc *c)
{
    uint8_t f[MCD_MAX_FRAME];
    uint32_t flen = seg_frame(f, c->cport, c->snd_nxt, c->rcv_nxt, MCD_TCP_ACK, c->window, 0, 0, 0);
    unsigned k = exchange(c->s, f, flen);
    take(c, k);
    return k;
}

/* The next whole response in the received stream (1), or 0 when none is complete. */
static int tc_response(struct tc *c, struct mcd_msg *m, uint8_t *copy)
{
    if (c->stream_len < MCD_BIN_HLEN)
        return 0;
    uint32_t total = MCD_BIN_HLEN + mcd_get32(c->stream + 8);
    if (c->stream_len < total)
        return 0;
    memcpy(copy, c->stream, total);
    memmove(c->stream, c->stream + total, c->stream_len - total);
    c->stream_len -= total;
    return mcd_msg_parse(copy, total, MCD_MAGIC_RES, m) == total;
}

MT_TEST(tcp_handshake_then_get_and_set_answered_with_the_ack_piggybacked)
{
    struct mcd_server *s = mt_server_new(PORT, 1 << 20, 10, 16);
    static struct tc c;
    tc_connect(&c, s, 50000, 1460, 65535);
    MT_EQ(c.bad, 0);
    MT_EQ(s->tcp.live, 1);
    struct mcd_flow in = mt_flow_to_server(50000, PORT);
    struct mcd_tcp_conn *conn = mcd_tcp_find(&s->tcp, &in);
    MT_CHECK(conn != 0);
    MT_EQ(conn->state, MCD_TCP_ESTABLISHED);
    MT_EQ(conn->rcv_nxt, c.snd_nxt);
    MT_EQ(conn->mss, 1460);
    uint8_t req[512], copy[4096];
    struct mcd_msg m;
    uint32_t n = mt_req(req, sizeof(req), MCD_OP_SET, "foo", (const uint8_t *)"barbaz", 6, 0xabcd, 1);
    MT_EQ(tc_send(&c, req, n, 1460), 1); /* one segment back: the response, carrying the ACK */
    MT_EQ(c.bad, 0);
    MT_EQ(conn->rcv_nxt, c.snd_nxt);
    MT_CHECK(tc_response(&c, &m, copy));
    MT_EQ(m.status_or_vbucket, MCD_ST_OK);
    MT_EQ(m.opaque, 1);
    n = mt_req(req, sizeof(req), MCD_OP_GET, "foo", 0, 0, 0, 2);
    MT_EQ(tc_send(&c, req, n, 1460), 1);
    MT_CHECK(tc_response(&c, &m, copy));
    MT_EQ(m.status_or_vbucket, MCD_ST_OK);
    MT_EQ(mcd_get32(m.extras), 0xabcd);
    MT_EQ(m.vlen, 6);
    MT_CHECK(memcmp(m.value, "barbaz", 6) == 0);
    MT_EQ(c.bad, 0);
    MT_EQ(c.stream_len, 0);
    /* The server keeps its replies until they are acknowledged; this ACK frees them, and gets no answer. */
    MT_EQ(conn->snd_len, conn->snd_nxt - conn->snd_una);
    MT_CHECK(conn->snd_len > 0);
    MT_EQ(tc_ack(&c), 0);
    MT_EQ(conn->snd_len, 0);
    MT_EQ(conn->snd_una, c.rcv_nxt);
    MT_EQ(s->st.requests, 2);
    MT_EQ(s->tcp.st.opened, 1);
    mt_server_free(s);
}

MT_TEST(tcp_a_message_spanning_segments_is_answered_once_complete)
{
    struct mcd_server *s = mt_server_new(PORT, 1 << 20, 10, 16);
    static struct tc c;
    tc_connect(&c, s, 50001, 1460, 65535);
    uint8_t req[2048], val[1000], copy[4096];
    for (unsigned i = 0; i < sizeof(val); i++)
        val[i] = (uint8_t)(i * 7);
    uint32_t n = mt_req(req, sizeof(req), MCD_OP_SET, "big", val, sizeof(val), 5, 9);
    /* 11 segments of at most 97 bytes: the first 10 carry part of the message and get a bare ACK each. */
    MT_EQ(tc_send(&c, req, n, 97), 11);
    MT_EQ(c.data_segs, 1);
    struct mcd_msg m;
    MT_CHECK(tc_response(&c, &m, copy));
    MT_EQ(m.status_or_vbucket, MCD_ST_OK);
    MT_EQ(m.opaque, 9);
    /* And two messages in one segment, the second cut across the next. */
    uint32_t a = mt_req(req, sizeof(req), MCD_OP_GET, "big", 0, 0, 0, 10);
    a += mt_req(req + a, sizeof(req) - a, MCD_OP_GET, "none", 0, 0, 0, 11);
    tc_send(&c, req, a, a - 5);
    MT_CHECK(tc_response(&c, &m, copy));
    MT_EQ(m.opaque, 10);
    MT_EQ(m.vlen, 1000);
    MT_CHECK(memcmp(m.value, val, 1000) == 0);
    MT_CHECK(tc_response(&c, &m, copy));
    MT_EQ(m.opaque, 11);
    MT_EQ(m.status_or_vbucket, MCD_ST_KEY_ENOENT);
    MT_EQ(c.bad, 0);
    mt_server_free(s);
}

MT_TEST(tcp_replies_leave_within_the_peers_mss_and_window)
{
    struct mcd_server *s = mt_server_new(PORT, 1 << 20, 10, 16);
    static struct tc c;
    tc_connect(&c, s, 50002, 100, 250); /* MSS 100, window 250 */
    uint8_t req[2048], val[1000], copy[4096];
    memset(val, 0x5a, sizeof(val));
    uint32_t n = mt_req(req, sizeof(req), MCD_OP_SET, "k", val, sizeof(val), 0, 1);
    tc_send(&c, req, n, 100);
    struct mcd_msg m;
    MT_CHECK(tc_response(&c, &m, copy));
    tc_ack(&c);
    unsigned before = c.data_segs;
    n = mt_req(req, sizeof(req), MCD_OP_GET, "k", 0, 0, 0, 2);
    /* 1028 bytes of reply: 100, 100 and 50 bytes fill the 250-byte window; each ACK opens room for more. */
    MT_EQ(tc_send(&c, req, n, 1460), 3);
    MT_EQ(c.stream_len, 250);
    unsigned acks = 0;
    while (!tc_response(&c, &m, copy) && acks < 20) {
        tc_ack(&c);
        acks++;
    }
    MT_EQ(m.vlen, 1000);
    MT_CHECK(memcmp(m.value, val, 1000) == 0);
    MT_EQ(acks, 4);                              /* 1028 bytes = 250 + 250 + 250 + 250 + 28 */
    MT_EQ(c.data_segs - before, 13);             /* 100 + 100 + 50 per window, then 28 */
    MT_EQ(c.bad, 0);
    mt_server_free(s);
}

MT_TEST(tcp_out_of_order_and_duplicate_segments_are_dropped_counted_and_duplicate_acked)
{
    struct mcd_server *s = mt_server_new(PORT, 1 << 20, 10, 16);
    static struct tc c;
    tc_connect(&c, s, 50003, 1460, 65535);
    uint8_t req[256], f[MCD_MAX_FRAME], copy[4096];
    uint32_t n = mt_req(req, sizeof(req), MCD_OP_SET, "x", (const uint8_t *)"1", 1, 0, 1);
    /* A segment ahead of rcv_nxt (one byte missing): dropped, and the ACK repeats rcv_nxt. */
    uint32_t flen = seg_frame(f, c.cport, c.snd_nxt + 1, c.rcv_nxt, MCD_TCP_ACK, 65535, 0, req, n);
    MT_EQ(exchange(s, f, flen), 1);
    struct mcd_tcp_seg seg;
    MT_CHECK(mcd_tcp_parse(g_out[0], g_len[0], &seg) == 0);
    MT_EQ(seg.ack, c.snd_nxt);
    MT_EQ(seg.len, 0);
    MT_EQ(s->tcp.st.out_of_order, 1);
    MT_EQ(s->st.requests, 0);
    /* In order: served. */
    MT_EQ(tc_send(&c, req, n, 1460), 1);
    struct mcd_msg m;
    MT_CHECK(tc_response(&c, &m, copy));
    MT_EQ(m.status_or_vbucket, MCD_ST_OK);
    /* The same segment again (a duplicate): dropped, not executed again, and a duplicate ACK. */
    flen = seg_frame(f, c.cport, c.snd_nxt - n, c.rcv_nxt, MCD_TCP_ACK, 65535, 0, req, n);
    MT_EQ(exchange(s, f, flen), 1);
    MT_CHECK(mcd_tcp_parse(g_out[0], g_len[0], &seg) == 0);
    MT_EQ(seg.ack, c.snd_nxt);
    MT_EQ(seg.len, 0);
    MT_EQ(s->tcp.st.duplicates, 1);
    MT_EQ(s->tcp.st.dup_acks_sent, 2);
    MT_EQ(s->st.requests, 1);
    /* An ACK of bytes the server never sent: refused with an ACK. */
    flen = seg_frame(f, c.cport, c.snd_nxt, c.rcv_nxt + 100, MCD_TCP_ACK, 65535, 0, req, n);
    MT_EQ(exchange(s, f, flen), 1);
    MT_EQ(s->tcp.st.ack_unsent, 1);
    MT_EQ(s->st.requests, 1);
    /* A corrupted segment (checksum): no answer at all. */
    flen = seg_frame(f, c.cport, c.snd_nxt, c.rcv_nxt, MCD_TCP_ACK, 65535, 0, req, n);
    f[flen - 1] ^= 0x10;
    MT_EQ(exchange(s, f, flen), 0);
    MT_EQ(s->tcp.st.bad_segs, 1);
    MT_EQ(s->st.requests, 1);
    MT_EQ(c.bad, 0);
    mt_server_free(s);
}

MT_TEST(tcp_checksum_covers_the_pseudo_header)
{
    uint8_t f[MCD_MAX_FRAME];
    struct mcd_tcp_seg seg;
    uint32_t flen = seg_frame(f, 40000, 7, 9, MCD_TCP_ACK, 100, 0, (const uint8_t *)"abc", 3);
    MT_EQ(mcd_tcp_parse(f, flen, &seg), 0);
    MT_EQ(seg.len, 3);
    MT_EQ(seg.seq, 7);
    MT_EQ(seg.ack, 9);
    /* Change the destination address and fix only the IPv4 header checksum: the TCP checksum still fails, because
     * the pseudo-header holds the addresses. */
    f[MCD_ETH_HLEN + 19] ^= 1;
    mcd_put16(f + MCD_ETH_HLEN + 10, 0);
    mcd_put16(f + MCD_ETH_HLEN + 10, mcd_csum_fold(mcd_csum_add(0, f + MCD_ETH_HLEN, MCD_IP_HLEN)));
    MT_EQ(mcd_tcp_parse(f, flen, &seg), MCD_TCP_CSUM);
    /* A frame padded to Ethernet's 60 bytes parses by its IP length. */
    flen = seg_frame(f, 40000, 7, 9, MCD_TCP_ACK, 100, 0, 0, 0);
    MT_EQ(flen, 54);
    memset(f + flen, 0xee, 6);
    MT_EQ(mcd_tcp_parse(f, 60, &seg), 0);
    MT_EQ(seg.len, 0);
}

MT_TEST(tcp_the_peer_closing_gets_ack_and_fin_and_frees_the_slot_and_a_reset_frees_it_too)
{
    struct mcd_server *s = mt_server_new(PORT, 1 << 20, 10, 16);
    static struct tc c;
    tc_connect(&c, s, 50004, 1460, 65535);
    uint8_t f[MCD_MAX_FRAME];
    uint32_t flen = seg_frame(f, c.cport, c.snd_nxt, c.rcv_nxt, MCD_TCP_ACK | MCD_TCP_FIN, 65535, 0, 0, 0);
    c.snd_nxt++;
    MT_EQ(exchange(s, f, flen), 1); /* the ACK of the FIN and the server's own FIN in one segment */
    struct mcd_tcp_seg seg;
    MT_CHECK(mcd_tcp_parse(g_out[0], g_len[0], &seg) == 0);
    MT_EQ(seg.flags, MCD_TCP_FIN | MCD_TCP_ACK);
    MT_EQ(seg.ack, c.snd_nxt);
    struct mcd_flow in = mt_flow_to_server(c.cport, PORT);
    MT_EQ(mcd_tcp_find(&s->tcp, &in)->state, MCD_TCP_LAST_ACK);
    flen = seg_frame(f, c.cport, c.snd_nxt, seg.seq + 1, MCD_TCP_ACK, 65535, 0, 0, 0);
    MT_EQ(exchange(s, f, flen), 0);
    MT_CHECK(mcd_tcp_find(&s->tcp, &in) == 0);
    MT_EQ(s->tcp.live, 0);
    MT_EQ(s->tcp.st.closed, 1);
    /* A reset at rcv_nxt closes a connection; one elsewhere is ignored. */
    tc_connect(&c, s, 50005, 1460, 65535);
    in = mt_flow_to_server(c.cport, PORT);
    flen = seg_frame(f, c.cport, c.snd_nxt + 5, 0, MCD_TCP_RST, 0, 0, 0, 0);
    MT_EQ(exchange(s, f, flen), 0);
    MT_CHECK(mcd_tcp_find(&s->tcp, &in) != 0);
    flen = seg_frame(f, c.cport, c.snd_nxt, 0, MCD_TCP_RST, 0, 0, 0, 0);
    MT_EQ(exchange(s, f, flen), 0);
    MT_CHECK(mcd_tcp_find(&s->tcp, &in) == 0);
    MT_EQ(s->tcp.st.resets_in, 1);
    mt_server_free(s);
}

MT_TEST(tcp_segments_without_a_connection_are_reset_and_a_full_table_refuses_syns)
{
    struct mcd_server *s = mt_server_new(PORT, 1 << 20, 10, 4);
    uint8_t f[MCD_MAX_FRAME];
    struct mcd_tcp_seg seg;
    uint32_t flen = seg_frame(f, 41000, 100, 777, MCD_TCP_ACK, 65535, 0, (const uint8_t *)"zz", 2);
    MT_EQ(exchange(s, f, flen), 1);
    MT_CHECK(mcd_tcp_parse(g_out[0], g_len[0], &seg) == 0);
    MT_EQ(seg.flags, MCD_TCP_RST);
    MT_EQ(seg.seq, 777); /* RFC 793: a reset answering an ACK takes its number */
    static struct tc c[4];
    for (unsigned i = 0; i < 4; i++) {
        tc_connect(&c[i], s, (uint16_t)(42000 + i), 1460, 65535);
        MT_EQ(c[i].bad, 0);
    }
    MT_EQ(s->tcp.live, 4);
    flen = seg_frame(f, 43000, 5, 0, MCD_TCP_SYN, 65535, 1460, 0, 0);
    MT_EQ(exchange(s, f, flen), 1);
    MT_CHECK(mcd_tcp_parse(g_out[0], g_len[0], &seg) == 0);
    MT_EQ(seg.flags, MCD_TCP_RST | MCD_TCP_ACK);
    MT_EQ(seg.ack, 6);
    MT_EQ(s->tcp.st.refused, 1);
    MT_EQ(s->tcp.st.resets_sent, 2);
    /* Every connection still works, each keyed by its own 4-tuple. */
    uint8_t req[256], copy[4096];
    struct mcd_msg m;
    for (unsigned i = 0; i < 4; i++) {
        uint32_t n = mt_req(req, sizeof(req), MCD_OP_NOOP, "", 0, 0, 0, 100 + i);
        MT_EQ(tc_send(&c[i], req, n, 1460), 1);
        MT_CHECK(tc_response(&c[i], &m, copy));
        MT_EQ(m.opaque, 100 + i);
        MT_EQ(c[i].bad, 0);
    }
    mt_server_free(s);
}

MT_TEST(tcp_a_stream_that_is_not_requests_resets_the_connection)
{
    struct mcd_server *s = mt_server_new(PORT, 1 << 20, 10, 16);
    static struct tc c;
    tc_connect(&c, s, 50006, 1460, 65535);
    uint8_t junk[40];
    memset(junk, 0x42, sizeof(junk));
    uint8_t f[MCD_MAX_FRAME];
    uint32_t flen = seg_frame(f, c.cport, c.snd_nxt, c.rcv_nxt, MCD_TCP_ACK, 65535, 0, junk, sizeof(junk));
    MT_EQ(exchange(s, f, flen), 1);
    struct mcd_tcp_seg seg;
    MT_CHECK(mcd_tcp_parse(g_out[0], g_len[0], &seg) == 0);
    MT_EQ(seg.flags, MCD_TCP_RST | MCD_TCP_ACK);
    MT_EQ(s->tcp.live, 0);
    MT_EQ(s->st.bad_requests, 1);
    mt_server_free(s);
}

#define RKEYS 300
MT_TEST(tcp_random_pipelined_operations_over_several_connections_match_a_reference_model)
{
    struct mcd_server *s = mt_server_new(PORT, 8 << 20, 12, 8);
    static struct tc c[4];
    static uint8_t val[RKEYS][1200];
    static uint32_t vlen[RKEYS];
    static int present[RKEYS];
    /* Per connection, the expected responses in order: opcode, key, status (the value is checked on hits). */
    static struct { uint8_t op; uint16_t key, status; uint32_t opaque; } want[4][64];
    unsigned nwant[4] = {0}, head[4] = {0};
    for (unsigned i = 0; i < 4; i++)
        tc_connect(&c[i], s, (uint16_t)(45000 + i), (uint16_t)(i == 3 ? 200 : 1460), 65535);
    uint64_t rng = 3;
    uint8_t batch[8192], v[1200], copy[4096];
    char key[32];
    unsigned checked = 0;
    for (unsigned round = 0; round < 1500; round++) {
        unsigned ci = (unsigned)(mt_rand(&rng) % 4), k = 1 + (unsigned)(mt_rand(&rng) % 6);
        unsigned base = (unsigned)(mt_rand(&rng) % RKEYS);
        uint32_t n = 0;
        for (unsigned j = 0; j < k; j++) { /* a pipeline of k requests on distinct keys, applied in order */
            unsigned key_i = (base + j * 37) % RKEYS, op = (unsigned)(mt_rand(&rng) % 10);
            uint32_t opaque = round * 8 + j;
            snprintf(key, sizeof(key), "user:%u", key_i);
            unsigned w = (head[ci] + nwant[ci]++) % 64;
            want[ci][w].key = (uint16_t)key_i;
            want[ci][w].opaque = opaque;
            if (op < 3) {
                uint32_t len = (uint32_t)(mt_rand(&rng) % 1100);
                for (uint32_t b = 0; b < len; b++)
                    v[b] = (uint8_t)mt_rand(&rng);
                n += mt_req(batch + n, sizeof(batch) - n, MCD_OP_SET, key, v, len, key_i, opaque);
                memcpy(val[key_i], v, len);
                vlen[key_i] = len;
                present[key_i] = 1;
                want[ci][w].op = MCD_OP_SET;
                want[ci][w].status = MCD_ST_OK;
            } else if (op < 4) {
                n += mt_req(batch + n, sizeof(batch) - n, MCD_OP_DELETE, key, 0, 0, 0, opaque);
                want[ci][w].op = MCD_OP_DELETE;
                want[ci][w].status = present[key_i] ? MCD_ST_OK : MCD_ST_KEY_ENOENT;
                present[key_i] = 0;
            } else {
                n += mt_req(batch + n, sizeof(batch) - n, MCD_OP_GET, key, 0, 0, 0, opaque);
                want[ci][w].op = MCD_OP_GET;
                want[ci][w].status = present[key_i] ? MCD_ST_OK : MCD_ST_KEY_ENOENT;
            }
        }
        /* Random segment sizes: messages cut anywhere. The batch's keys are distinct and every response is taken
         * before the next round, so the model holds each GET's expected value when its response is checked. */
        tc_send(&c[ci], batch, n, 1 + (uint32_t)(mt_rand(&rng) % 1460));
        struct mcd_msg m;
        for (unsigned guard = 0; nwant[ci] && guard < 100; guard++) {
            while (nwant[ci] && tc_response(&c[ci], &m, copy)) {
                unsigned w = head[ci];
                MT_EQ(m.opaque, want[ci][w].opaque);
                MT_EQ(m.opcode, want[ci][w].op);
                MT_EQ(m.status_or_vbucket, want[ci][w].status);
                if (m.opcode == MCD_OP_GET && m.status_or_vbucket == MCD_ST_OK) {
                    unsigned key_i = want[ci][w].key;
                    MT_EQ(m.vlen, vlen[key_i]);
                    MT_EQ(mcd_get32(m.extras), key_i);
                    MT_CHECK(memcmp(m.value, val[key_i], vlen[key_i]) == 0);
                }
                head[ci] = (head[ci] + 1) % 64;
                nwant[ci]--;
                checked++;
            }
            if (nwant[ci])
                tc_ack(&c[ci]); /* the rest is held back by the MSS or the send buffer: ACKs clock it out */
        }
        MT_EQ(nwant[ci], 0);
    }
    for (unsigned i = 0; i < 4; i++)
        MT_EQ(c[i].bad, 0);
    MT_CHECK(checked > 4000);
    MT_EQ(s->tcp.st.out_of_order + s->tcp.st.duplicates + s->tcp.st.bad_segs, 0);
    mt_server_free(s);
}
