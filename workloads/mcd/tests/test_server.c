/* The server end to end through frames: every operation, several requests per datagram, refusals, connection
 * state, and a random run checked against a reference model. */
#include <stdlib.h>
#include <string.h>
#include "mt.h"

#define PORT 11211
#define CPORT 50000

/* Send one frame of msgs; the single reply's first message parsed into *r. Returns the reply's message bytes,
 * 0 when there was no reply. */
static uint32_t roundtrip(struct mcd_server *s, uint16_t req_id, const uint8_t *msgs, uint32_t len, uint8_t *reply,
                          const uint8_t **rmsgs)
{
    uint8_t f[MCD_MAX_FRAME];
    uint32_t flen = mt_frame(f, sizeof(f), CPORT, PORT, req_id, msgs, len);
    uint32_t rlen = mcd_server_handle(s, f, flen, reply, MCD_MAX_FRAME);
    uint32_t mlen = 0;
    if (rlen == 0 || mt_reply(reply, rlen, CPORT, req_id, rmsgs, &mlen) != 0)
        return 0;
    return mlen;
}

MT_TEST(get_miss_set_get_hit_delete)
{
    struct mcd_server *s = mt_server_new(PORT, 1 << 20, 10, 16);
    uint8_t req[256], reply[MCD_MAX_FRAME];
    const uint8_t *r;
    struct mcd_msg m;
    uint32_t n = mt_req(req, sizeof(req), MCD_OP_GET, "foo", 0, 0, 0, 11);
    uint32_t mlen = roundtrip(s, 1, req, n, reply, &r);
    MT_CHECK(mlen > 0 && mcd_msg_parse(r, mlen, MCD_MAGIC_RES, &m) == mlen);
    MT_EQ(m.status_or_vbucket, MCD_ST_KEY_ENOENT);
    MT_EQ(m.opaque, 11);
    MT_EQ(m.opcode, MCD_OP_GET);

    n = mt_req(req, sizeof(req), MCD_OP_SET, "foo", (const uint8_t *)"barbaz", 6, 0xdeadbeef, 12);
    mlen = roundtrip(s, 2, req, n, reply, &r);
    MT_CHECK(mlen > 0 && mcd_msg_parse(r, mlen, MCD_MAGIC_RES, &m) == mlen);
    MT_EQ(m.status_or_vbucket, MCD_ST_OK);
    MT_CHECK(m.cas != 0);
    uint64_t cas = m.cas;

    n = mt_req(req, sizeof(req), MCD_OP_GET, "foo", 0, 0, 0, 13);
    mlen = roundtrip(s, 3, req, n, reply, &r);
    MT_CHECK(mlen > 0 && mcd_msg_parse(r, mlen, MCD_MAGIC_RES, &m) == mlen);
    MT_EQ(m.status_or_vbucket, MCD_ST_OK);
    MT_EQ(m.extlen, 4);
    MT_EQ(mcd_get32(m.extras), 0xdeadbeef);
    MT_EQ(m.klen, 0);
    MT_EQ(m.vlen, 6);
    MT_CHECK(memcmp(m.value, "barbaz", 6) == 0);
    MT_EQ(m.cas, cas);

    n = mt_req(req, sizeof(req), MCD_OP_DELETE, "foo", 0, 0, 0, 14);
    mlen = roundtrip(s, 4, req, n, reply, &r);
    MT_CHECK(mlen > 0 && mcd_msg_parse(r, mlen, MCD_MAGIC_RES, &m) == mlen);
    MT_EQ(m.status_or_vbucket, MCD_ST_OK);
    mlen = roundtrip(s, 5, req, n, reply, &r);
    MT_CHECK(mlen > 0 && mcd_msg_parse(r, mlen, MCD_MAGIC_RES, &m) == mlen);
    MT_EQ(m.status_or_vbucket, MCD_ST_KEY_ENOENT);
    MT_EQ(s->st.requests, 5);
    MT_EQ(s->st.frames_out, 5);
    /* One client, one connection, five datagrams each way. */
    MT_EQ(s->conns.live, 1);
    struct mcd_conn *c = mcd_conn_lookup(&s->conns, MT_CLIENT_IP, CPORT);
    MT_EQ(c->rx_seq, 5);
    MT_EQ(c->tx_seq, 5);
    MT_EQ(c->last_req_id, 5);
    mt_server_free(s);
}

MT_TEST(several_requests_in_one_datagram_are_answered_in_order)
{
    struct mcd_server *s = mt_server_new(PORT, 1 << 20, 10, 16);
    uint8_t req[1024], reply[MCD_MAX_FRAME];
    uint32_t n = 0;
    n += mt_req(req + n, sizeof(req) - n, MCD_OP_SET, "a", (const uint8_t *)"1", 1, 0, 1);
    n += mt_req(req + n, sizeof(req) - n, MCD_OP_GET, "a", 0, 0, 0, 2);
    n += mt_req(req + n, sizeof(req) - n, MCD_OP_NOOP, "", 0, 0, 0, 3);
    n += mt_req(req + n, sizeof(req) - n, 0x33, "a", 0, 0, 0, 4); /* not a command this server knows */
    const uint8_t *r;
    uint32_t mlen = roundtrip(s, 9, req, n, reply, &r), off = 0;
    const uint16_t want_status[4] = {MCD_ST_OK, MCD_ST_OK, MCD_ST_OK, MCD_ST_UNKNOWN_COMMAND};
    for (unsigned i = 0; i < 4; i++) {
        struct mcd_msg m;
        uint32_t k = mcd_msg_parse(r + off, mlen - off, MCD_MAGIC_RES, &m);
        MT_CHECK(k > 0);
        MT_EQ(m.opaque, i + 1);
        MT_EQ(m.status_or_vbucket, want_status[i]);
        if (i == 1)
            MT_CHECK(m.vlen == 1 && m.value[0] == '1');
        off += k;
    }
    MT_EQ(off, mlen);
    MT_EQ(s->st.unknown_ops, 1);
    mt_server_free(s);
}

MT_TEST(bad_frames_and_requests_are_refused_and_counted)
{
    struct mcd_server *s = mt_server_new(PORT, 1 << 20, 10, 16);
    uint8_t req[256], f[MCD_MAX_FRAME], reply[MCD_MAX_FRAME];
    uint32_t n = mt_req(req, sizeof(req), MCD_OP_GET, "k", 0, 0, 0, 1);
    uint32_t flen = mt_frame(f, sizeof(f), CPORT, PORT + 1, 1, req, n);
    MT_EQ(mcd_server_handle(s, f, flen, reply, sizeof(reply)), 0); /* another instance's port */
    MT_EQ(s->st.wrong_port, 1);
    flen = mt_frame(f, sizeof(f), CPORT, PORT, 1, req, n);
    f[flen - 1] ^= 1;
    MT_EQ(mcd_server_handle(s, f, flen, reply, sizeof(reply)), 0); /* UDP checksum */
    MT_EQ(s->st.bad_frames, 1);
    uint8_t payload[64] = {0};
    struct mcd_udp_hdr h = {1, 1, 2, 0}; /* the second datagram of two */
    mcd_udp_hdr_put(payload, &h);
    struct mcd_flow fl = mt_flow_to_server(CPORT, PORT);
    flen = mcd_net_build(f, sizeof(f), &fl, 0, payload, 8 + n);
    MT_EQ(mcd_server_handle(s, f, flen, reply, sizeof(reply)), 0);
    MT_EQ(s->st.bad_udp_hdr, 1);
    req[0] = 0x81; /* a response's magic */
    flen = mt_frame(f, sizeof(f), CPORT, PORT, 1, req, n);
    MT_EQ(mcd_server_handle(s, f, flen, reply, sizeof(reply)), 0);
    MT_EQ(s->st.bad_requests, 1);
    /* A GET with extras is malformed: answered EINVAL. */
    n = mcd_msg_put(req, sizeof(req), MCD_MAGIC_REQ, MCD_OP_GET, 0, 5, 0, (const uint8_t *)"xxxx", 4,
                    (const uint8_t *)"k", 1, 0, 0);
    const uint8_t *r;
    struct mcd_msg m;
    uint32_t mlen = roundtrip(s, 2, req, n, reply, &r);
    MT_CHECK(mlen > 0 && mcd_msg_parse(r, mlen, MCD_MAGIC_RES, &m) == mlen);
    MT_EQ(m.status_or_vbucket, MCD_ST_EINVAL);
    MT_EQ(s->st.frames_in, 5);
    MT_EQ(s->st.frames_out, 1);
    mt_server_free(s);
}

MT_TEST(reply_may_overwrite_the_request_buffer)
{
    struct mcd_server *s = mt_server_new(PORT, 1 << 20, 10, 16);
    uint8_t req[256], f[MCD_MAX_FRAME];
    uint32_t n = mt_req(req, sizeof(req), MCD_OP_SET, "key", (const uint8_t *)"value", 5, 3, 1);
    uint32_t flen = mt_frame(f, sizeof(f), CPORT, PORT, 1, req, n);
    MT_CHECK(mcd_server_handle(s, f, flen, f, sizeof(f)) > 0);
    n = mt_req(req, sizeof(req), MCD_OP_GET, "key", 0, 0, 0, 2);
    flen = mt_frame(f, sizeof(f), CPORT, PORT, 2, req, n);
    uint32_t rlen = mcd_server_handle(s, f, flen, f, sizeof(f));
    const uint8_t *r;
    uint32_t mlen;
    struct mcd_msg m;
    MT_EQ(mt_reply(f, rlen, CPORT, 2, &r, &mlen), 0);
    MT_CHECK(mcd_msg_parse(r, mlen, MCD_MAGIC_RES, &m) == mlen);
    MT_CHECK(m.vlen == 5 && memcmp(m.value, "value", 5) == 0);
    mt_server_free(s);
}

#define RKEYS 300

MT_TEST(random_operations_match_a_reference_model)
{
    struct mcd_server *s = mt_server_new(PORT, 8 << 20, 12, 64);
    static uint8_t val[RKEYS][1200];
    static uint32_t vlen[RKEYS];
    static int present[RKEYS];
    uint64_t rng = 7;
    uint8_t req[MCD_MAX_FRAME], reply[MCD_MAX_FRAME], v[1200];
    char key[32];
    for (unsigned i = 0; i < 20000; i++) {
        unsigned k = (unsigned)(mt_rand(&rng) % RKEYS), op = (unsigned)(mt_rand(&rng) % 10);
        snprintf(key, sizeof(key), "user:%u:%u", k, k * 31);
        uint32_t n;
        uint8_t opcode;
        if (op < 3) {
            uint32_t len = (uint32_t)(mt_rand(&rng) % sizeof(v));
            for (uint32_t j = 0; j < len; j++)
                v[j] = (uint8_t)mt_rand(&rng);
            n = mt_req(req, sizeof(req), MCD_OP_SET, key, v, len, k, i);
            memcpy(val[k], v, len);
            vlen[k] = len;
            present[k] = 1;
            opcode = MCD_OP_SET;
        } else if (op < 4) {
            n = mt_req(req, sizeof(req), MCD_OP_DELETE, key, 0, 0, 0, i);
            opcode = MCD_OP_DELETE;
        } else {
            n = mt_req(req, sizeof(req), MCD_OP_GET, key, 0, 0, 0, i);
            opcode = MCD_OP_GET;
        }
        const uint8_t *r;
        struct mcd_msg m;
        /* Many clients: the client port varies, so connection state is exercised (and recycled). */
        uint8_t f[MCD_MAX_FRAME];
        uint16_t cport = (uint16_t)(40000 + i % 200), rid = (uint16_t)i;
        uint32_t flen = mt_frame(f, sizeof(f), cport, PORT, rid, req, n);
        uint32_t rlen = mcd_server_handle(s, f, flen, reply, sizeof(reply)), mlen;
        MT_CHECK(rlen > 0 && mt_reply(reply, rlen, cport, rid, &r, &mlen) == 0);
        MT_CHECK(mcd_msg_parse(r, mlen, MCD_MAGIC_RES, &m) == mlen);
        MT_EQ(m.opaque, i);
        MT_EQ(m.opcode, opcode);
        if (opcode == MCD_OP_SET) {
            MT_EQ(m.status_or_vbucket, MCD_ST_OK);
        } else if (opcode == MCD_OP_DELETE) {
            MT_EQ(m.status_or_vbucket, present[k] ? MCD_ST_OK : MCD_ST_KEY_ENOENT);
            present[k] = 0;
        } else if (!present[k]) {
            MT_EQ(m.status_or_vbucket, MCD_ST_KEY_ENOENT);
        } else {
            MT_EQ(m.status_or_vbucket, MCD_ST_OK);
            MT_EQ(mcd_get32(m.extras), k);
            MT_EQ(m.vlen, vlen[k]);
            MT_CHECK(memcmp(m.value, val[k], vlen[k]) == 0);
        }
    }
    MT_EQ(s->store.st.evictions, 0);
    MT_CHECK(s->conns.recycled > 0);
    mt_server_free(s);
}
