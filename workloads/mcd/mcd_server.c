/* mcd_server.c - one request path, as a kernel and memcached would run it: network stack (parse, checksums,
 * connection lookup, copy into the socket buffer), the memcached UDP frame header (UDP) or the byte stream cut
 * into messages (TCP), the binary protocol, the store, and back out (build in the application's send buffer, copy
 * into the frame (UDP) or into the connection's send buffer and from there into segments (TCP), checksums). */
#include "mcd_server.h"

int mcd_server_init(struct mcd_server *s, uint16_t port, void *mem, size_t mem_size, unsigned buckets_log2,
                    struct mcd_conn *conns, unsigned nconns)
{
    memset(&s->st, 0, sizeof(s->st));
    s->port = port;
    s->corrupt_every = s->corrupt_count = 0;
    s->tcp_enabled = 0;
    s->max_request = MCD_TCP_RCVBUF;
    if (nconns == 0 || (nconns & (nconns - 1)))
        return -1;
    mcd_conns_init(&s->conns, conns, nconns);
    return mcd_store_init(&s->store, mem, mem_size, buckets_log2);
}

/* Execute one request; append its response at out (cap bytes left). Returns the response length, 0 if it did
 * not fit (the rest of the datagram is then not answered). */
static uint32_t execute(struct mcd_server *s, const struct mcd_msg *m, uint8_t *out, uint32_t cap)
{
    struct mcd_store *st = &s->store;
    s->st.requests++;
    if (m->klen > MCD_MAX_KEY)
        return mcd_msg_put(out, cap, MCD_MAGIC_RES, m->opcode, MCD_ST_EINVAL, m->opaque, 0, 0, 0, 0, 0, 0, 0);
    switch (m->opcode) {
    case MCD_OP_GET: {
        if (m->extlen || m->vlen || m->klen == 0)
            break;
        struct mcd_item *it = mcd_store_get(st, m->key, m->klen, mcd_hash(m->key, m->klen));
        if (!it)
            return mcd_msg_put(out, cap, MCD_MAGIC_RES, m->opcode, MCD_ST_KEY_ENOENT, m->opaque, 0, 0, 0, 0, 0,
                               (const uint8_t *)"Not found", 9);
        uint8_t flags[4];
        mcd_put32(flags, it->flags);
        uint32_t n = mcd_msg_put(out, cap, MCD_MAGIC_RES, m->opcode, MCD_ST_OK, m->opaque, it->cas, flags, 4, 0, 0,
                                 mcd_item_value(it), it->vlen);
        if (n && it->vlen && s->corrupt_every && ++s->corrupt_count % s->corrupt_every == 0)
            out[n - 1] ^= 0x01; /* the test hook: the value's last byte, after the store, before the checksums */
        return n;
    }
    case MCD_OP_SET: {
        if (m->extlen != 8 || m->klen == 0)
            break;
        uint64_t cas = 0;
        int r = mcd_store_set(st, m->key, m->klen, mcd_hash(m->key, m->klen), mcd_get32(m->extras),
                              mcd_get32(m->extras + 4), m->value, m->vlen, &cas);
        return mcd_msg_put(out, cap, MCD_MAGIC_RES, m->opcode, (uint16_t)r, m->opaque, cas, 0, 0, 0, 0, 0, 0);
    }
    case MCD_OP_DELETE: {
        if (m->extlen || m->vlen || m->klen == 0)
            break;
        int r = mcd_store_delete(st, m->key, m->klen, mcd_hash(m->key, m->klen));
        return mcd_msg_put(out, cap, MCD_MAGIC_RES, m->opcode, (uint16_t)r, m->opaque, 0, 0, 0, 0, 0, 0, 0);
    }
    case MCD_OP_NOOP:
        return mcd_msg_put(out, cap, MCD_MAGIC_RES, m->opcode, MCD_ST_OK, m->opaque, 0, 0, 0, 0, 0, 0, 0);
    default:
        s->st.unknown_ops++;
        return mcd_msg_put(out, cap, MCD_MAGIC_RES, m->opcode, MCD_ST_UNKNOWN_COMMAND, m->opaque, 0, 0, 0, 0, 0, 0,
                           0);
    }
    s->st.bad_requests++; /* a known command with the wrong shape */
    return mcd_msg_put(out, cap, MCD_MAGIC_RES, m->opcode, MCD_ST_EINVAL, m->opaque, 0, 0, 0, 0, 0, 0, 0);
}

void mcd_server_enable_tcp(struct mcd_server *s, struct mcd_tcp_conn *slots, uint16_t *out_list, unsigned n)
{
    mcd_tcp_init(&s->tcp, slots, out_list, n);
    s->tcp_enabled = 1;
}

/* One request of a byte stream (mcd_server.h). */
int mcd_server_stream_request(struct mcd_server *s, const uint8_t *in, uint32_t avail, uint8_t *out, uint32_t cap,
                              uint32_t *consumed, uint32_t *resp_len)
{
    if (avail < MCD_BIN_HLEN)
        return 0;
    uint32_t total = MCD_BIN_HLEN + mcd_get32(in + 8);
    if (in[0] != MCD_MAGIC_REQ || total > s->max_request)
        return -1; /* not a request, or one that could never fit the receive buffer */
    if (avail < total)
        return 0; /* the message spans segments: the rest is on its way */
    struct mcd_msg m;
    if (mcd_msg_parse(in, total, MCD_MAGIC_REQ, &m) != total)
        return -1;
    uint32_t r = execute(s, &m, out, cap);
    if (r == 0)
        return -1;
    *consumed = total;
    *resp_len = r;
    return 1;
}

/* The application on a TCP connection: every complete message in the receive buffer, in order, each response
 * built in the application's buffer and copied into the connection's send buffer. A message still arriving stays
 * for the next segment; the loop also stops while the send buffer could not take a largest response (the window
 * the server advertises then shrinks: back-pressure). Returns -1 when the stream cannot be parsed (the connection
 * must be reset: a byte stream has no datagram boundary to resynchronise on). */
static int serve_stream(struct mcd_server *s, struct mcd_tcp_conn *c)
{
    uint32_t off = 0;
    int err = 0;
    while (mcd_tcp_snd_room(c) >= MCD_APPBUF) {
        uint32_t used, r;
        int got = mcd_server_stream_request(s, c->rcvbuf + off, c->rcv_len - off, s->sndbuf, MCD_APPBUF, &used, &r);
        if (got <= 0) {
            err = got;
            break;
        }
        mcd_tcp_write(c, s->sndbuf, r);
        off += used;
    }
    if (off)
        mcd_tcp_consume(c, off);
    if (err)
        s->st.bad_requests++;
    return err;
}

static uint32_t handle_tcp(struct mcd_server *s, const uint8_t *in, uint32_t len, uint8_t *out, uint32_t cap)
{
    struct mcd_tcp_seg seg;
    if (!s->tcp_enabled || mcd_tcp_parse(in, len, &seg) != 0) {
        s->st.bad_frames++;
        s->tcp.st.bad_segs += s->tcp_enabled;
        return 0;
    }
    if (seg.flow.dst_port != s->port) {
        s->st.wrong_port++;
        return 0;
    }
    int rst;
    struct mcd_tcp_conn *c = mcd_tcp_input(&s->tcp, &seg, &rst);
    if (rst)
        return mcd_tcp_reset(&s->tcp, &seg, out, cap);
    if (!c)
        return 0;
    if (c->rcv_len && serve_stream(s, c) != 0)
        return mcd_tcp_abort(&s->tcp, c, out, cap);
    /* The first segment goes out on this frame's buffer (replies with the ACK piggybacked); the rest wait on the
     * output list for mcd_server_output. */
    uint32_t n = mcd_tcp_output(&s->tcp, c, out, cap);
    if (n)
        s->st.frames_out++;
    return n;
}

uint32_t mcd_server_output(struct mcd_server *s, uint8_t *out, uint32_t cap)
{
    if (!s->tcp_enabled)
        return 0;
    struct mcd_tcp_conn *c;
    while ((c = mcd_tcp_next_pending(&s->tcp)) != 0) {
        uint32_t n = mcd_tcp_output(&s->tcp, c, out, cap);
        if (n) {
            s->st.frames_out++;
            return n;
        }
    }
    return 0;
}

uint32_t mcd_server_datagram(struct mcd_server *s, const uint8_t *req, uint32_t len, uint8_t *resp, uint32_t cap,
                             uint16_t *req_id)
{
    struct mcd_udp_hdr h;
    if (mcd_udp_hdr_parse(req, len, &h) != 0 || h.seq != 0 || h.count != 1) {
        s->st.bad_udp_hdr++; /* requests spanning datagrams are not supported, as in memcached over UDP */
        return 0;
    }
    *req_id = h.req_id;
    /* Every binary request in the datagram, answered in order in one reply datagram. */
    uint32_t used = MCD_UDP_FRAME_HLEN, off = MCD_UDP_FRAME_HLEN, answered = 0;
    while (off < len) {
        struct mcd_msg m;
        uint32_t n = mcd_msg_parse(req + off, len - off, MCD_MAGIC_REQ, &m);
        if (n == 0) {
            s->st.bad_requests++;
            break;
        }
        uint32_t r = execute(s, &m, resp + used, cap - used);
        if (r == 0)
            break;
        used += r;
        off += n;
        answered++;
    }
    if (answered == 0)
        return 0;
    struct mcd_udp_hdr rh = {h.req_id, 0, 1, 0};
    mcd_udp_hdr_put(resp, &rh);
    return used;
}

uint32_t mcd_server_handle(struct mcd_server *s, const uint8_t *in, uint32_t len, uint8_t *out, uint32_t cap)
{
    if (len >= MCD_ETH_HLEN + MCD_IP_HLEN && in[MCD_ETH_HLEN + 9] == MCD_IPPROTO_TCP) {
        s->st.frames_in++;
        return handle_tcp(s, in, len, out, cap);
    }
    struct mcd_flow flow;
    const uint8_t *payload;
    uint32_t plen;
    s->st.frames_in++; /* a UDP datagram */
    if (mcd_net_parse(in, len, &flow, &payload, &plen) != 0) {
        s->st.bad_frames++;
        return 0;
    }
    if (flow.dst_port != s->port) {
        s->st.wrong_port++;
        return 0;
    }
    /* The socket layer: the peer's connection, and the payload copied into its receive buffer. */
    struct mcd_conn *c = mcd_conn_lookup(&s->conns, flow.src_ip, flow.src_port);
    mcd_conn_receive(c, payload, plen);
    uint16_t req_id = c->last_req_id; /* set when the frame header parses, answered or not */
    uint32_t used = mcd_server_datagram(s, c->rcvbuf, c->rcv_len, s->sndbuf, MCD_MAX_FRAME - MCD_HDRS_LEN, &req_id);
    c->last_req_id = req_id;
    if (used == 0)
        return 0;
    uint8_t *resp = s->sndbuf;
    struct mcd_flow back = mcd_flow_reverse(&flow);
    uint32_t flen = mcd_net_build(out, cap, &back, c->ip_id++, resp, used);
    if (flen) {
        c->tx_seq++;
        c->tx_bytes += used;
        s->st.frames_out++;
    }
    return flen;
}
