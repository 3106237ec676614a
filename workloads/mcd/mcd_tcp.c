/* mcd_tcp.c - TCP segments with their checksums, and per-4-tuple connection state (see mcd_tcp.h). */
#include "mcd_tcp.h"

/* The TCP checksum: the pseudo-header (addresses, zero, protocol, TCP length), the header and the data. */
static uint32_t pseudo_sum(uint32_t src, uint32_t dst, uint32_t tcp_len)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + MCD_IPPROTO_TCP + tcp_len;
}

int mcd_tcp_parse(const uint8_t *f, uint32_t len, struct mcd_tcp_seg *seg)
{
    if (len < MCD_TCP_HDRS_LEN)
        return MCD_NET_SHORT;
    const uint8_t *ip = f + MCD_ETH_HLEN;
    if (mcd_get16(f + 12) != MCD_ETHERTYPE_IPV4 || ip[0] != 0x45 || (mcd_get16(ip + 6) & 0x3fff) != 0)
        return MCD_NET_NOT_IPV4;
    if (ip[9] != MCD_IPPROTO_TCP)
        return MCD_TCP_NOT_TCP;
    uint32_t ip_len = mcd_get16(ip + 2); /* frames shorter than 60 bytes arrive padded: the IP length counts */
    if (ip_len < MCD_IP_HLEN + MCD_TCP_HLEN || MCD_ETH_HLEN + ip_len > len)
        return MCD_NET_SHORT;
    if (mcd_csum_fold(mcd_csum_add(0, ip, MCD_IP_HLEN)) != 0)
        return MCD_NET_IP_CSUM;
    const uint8_t *tcp = ip + MCD_IP_HLEN;
    uint32_t tcp_len = ip_len - MCD_IP_HLEN, off = (uint32_t)(tcp[12] >> 4) * 4;
    if (off < MCD_TCP_HLEN || off > tcp_len)
        return MCD_TCP_BAD_OFFSET;
    seg->flow.src_ip = mcd_get32(ip + 12);
    seg->flow.dst_ip = mcd_get32(ip + 16);
    if (mcd_csum_fold(mcd_csum_add(pseudo_sum(seg->flow.src_ip, seg->flow.dst_ip, tcp_len), tcp, tcp_len)) != 0)
        return MCD_TCP_CSUM;
    memcpy(seg->flow.dst_mac, f, 6);
    memcpy(seg->flow.src_mac, f + 6, 6);
    seg->flow.src_port = mcd_get16(tcp);
    seg->flow.dst_port = mcd_get16(tcp + 2);
    seg->seq = mcd_get32(tcp + 4);
    seg->ack = mcd_get32(tcp + 8);
    seg->flags = tcp[13] & 0x3f;
    seg->window = mcd_get16(tcp + 14);
    seg->mss = 0;
    for (uint32_t o = MCD_TCP_HLEN; o < off;) { /* options: only the MSS is read */
        uint8_t kind = tcp[o];
        if (kind == 0)
            break;
        if (kind == 1) {
            o++;
            continue;
        }
        if (o + 1 >= off || tcp[o + 1] < 2 || o + tcp[o + 1] > off)
            return MCD_TCP_BAD_OFFSET;
        if (kind == 2 && tcp[o + 1] == 4)
            seg->mss = mcd_get16(tcp + o + 2);
        o += tcp[o + 1];
    }
    seg->data = tcp + off;
    seg->len = tcp_len - off;
    return 0;
}

uint32_t mcd_tcp_build(uint8_t *f, uint32_t cap, const struct mcd_flow *flow, uint16_t ip_id, uint32_t seq,
                       uint32_t ack, uint8_t flags, uint16_t window, uint16_t mss, const uint8_t *d1, uint32_t n1,
                       const uint8_t *d2, uint32_t n2)
{
    uint32_t hlen = MCD_TCP_HLEN + (mss ? 4u : 0u), tcp_len = hlen + n1 + n2;
    uint32_t len = MCD_ETH_HLEN + MCD_IP_HLEN + tcp_len;
    if (len > cap || len > MCD_MAX_FRAME)
        return 0;
    uint8_t *tcp = f + MCD_ETH_HLEN + MCD_IP_HLEN;
    mcd_net_put_ipv4(f, flow, ip_id, MCD_IPPROTO_TCP, tcp_len);
    mcd_put16(tcp, flow->src_port);
    mcd_put16(tcp + 2, flow->dst_port);
    mcd_put32(tcp + 4, seq);
    mcd_put32(tcp + 8, ack);
    tcp[12] = (uint8_t)((hlen / 4) << 4);
    tcp[13] = flags;
    mcd_put16(tcp + 14, window);
    mcd_put32(tcp + 16, 0); /* checksum (filled below), urgent pointer */
    if (mss) {
        tcp[20] = 2;
        tcp[21] = 4;
        mcd_put16(tcp + 22, mss);
    }
    if (n1)
        memcpy(tcp + hlen, d1, n1);
    if (n2)
        memcpy(tcp + hlen + n1, d2, n2);
    mcd_put16(tcp + 16, mcd_csum_fold(mcd_csum_add(pseudo_sum(flow->src_ip, flow->dst_ip, tcp_len), tcp, tcp_len)));
    return len;
}

void mcd_tcp_init(struct mcd_tcp_table *t, struct mcd_tcp_conn *slots, uint16_t *out_list, unsigned n)
{
    memset(t, 0, sizeof(*t));
    t->slots = slots;
    t->out_list = out_list;
    t->mask = n - 1;
}

static unsigned tuple_hash(const struct mcd_tcp_table *t, uint32_t peer_ip, uint16_t peer_port, uint16_t port)
{
    uint32_t h = (peer_ip ^ ((uint32_t)peer_port << 16 | port)) * 0x9E3779B1u;
    return (h >> 16) & t->mask;
}

static int same_tuple(const struct mcd_tcp_conn *c, const struct mcd_flow *in)
{
    return c->state != MCD_TCP_FREE && c->flow.dst_ip == in->src_ip && c->flow.dst_port == in->src_port &&
           c->flow.src_ip == in->dst_ip && c->flow.src_port == in->dst_port;
}

struct mcd_tcp_conn *mcd_tcp_find(struct mcd_tcp_table *t, const struct mcd_flow *in)
{
    /* Linear probing over the whole table: slots are freed in any order, so a probe cannot stop at a free one
     * (a hit is normally the first slot probed; only a new connection's SYN walks the table). */
    unsigned start = tuple_hash(t, in->src_ip, in->src_port, in->dst_port);
    for (unsigned i = 0; i <= t->mask; i++) {
        struct mcd_tcp_conn *c = &t->slots[(start + i) & t->mask];
        if (same_tuple(c, in))
            return c;
    }
    return 0;
}

static void free_slot(struct mcd_tcp_table *t, struct mcd_tcp_conn *c)
{
    c->state = MCD_TCP_FREE; /* `queued` stays: the output list may still name the slot (it skips free ones) */
    t->live--;
    t->st.closed++;
}

static void want_output(struct mcd_tcp_table *t, struct mcd_tcp_conn *c)
{
    if (c->queued)
        return;
    c->queued = 1;
    t->out_list[(t->out_head + t->out_n++) & t->mask] = (uint16_t)(c - t->slots);
}

struct mcd_tcp_conn *mcd_tcp_next_pending(struct mcd_tcp_table *t)
{
    while (t->out_n) {
        struct mcd_tcp_conn *c = &t->slots[t->out_list[t->out_head]];
        t->out_head = (t->out_head + 1) & t->mask;
        t->out_n--;
        c->queued = 0;
        if (c->state != MCD_TCP_FREE)
            return c;
    }
    return 0;
}

/* A SYN to the listening port: a new connection in SYN-RECEIVED, or NULL when every slot is taken. */
static struct mcd_tcp_conn *open_conn(struct mcd_tcp_table *t, const struct mcd_tcp_seg *seg)
{
    unsigned start = tuple_hash(t, seg->flow.src_ip, seg->flow.src_port, seg->flow.dst_port);
    struct mcd_tcp_conn *c = 0;
    for (unsigned i = 0; i <= t->mask && !c; i++)
        if (t->slots[(start + i) & t->mask].state == MCD_TCP_FREE)
            c = &t->slots[(start + i) & t->mask];
    if (!c)
        return 0;
    uint8_t queued = c->queued;
    memset(c, 0, offsetof(struct mcd_tcp_conn, rcvbuf));
    c->queued = queued;
    c->flow = mcd_flow_reverse(&seg->flow);
    c->state = MCD_TCP_SYN_RECEIVED;
    /* The initial sequence number: a hash of the 4-tuple and a count of connections (RFC 6528 without the clock,
     * so runs are deterministic). */
    uint32_t x = (seg->flow.src_ip ^ (uint32_t)seg->flow.src_port << 16 ^ seg->flow.dst_port) + ++t->isn_count;
    x = (x ^ (x >> 16)) * 0x7feb352du;
    c->iss = x ^ (x >> 15);
    c->snd_una = c->iss;
    c->snd_nxt = c->iss; /* the SYN-ACK takes iss */
    c->irs = seg->seq;
    c->rcv_nxt = seg->seq + 1;
    c->snd_wnd = seg->window;
    c->mss = seg->mss ? (seg->mss < MCD_TCP_MSS ? seg->mss : MCD_TCP_MSS) : MCD_TCP_DEFAULT_MSS;
    c->ack_owed = 1;
    t->live++;
    t->st.opened++;
    return c;
}

/* Bytes of the send buffer not sent yet (the server's FIN, once sent, takes one number beyond the data). */
static uint32_t unsent_bytes(const struct mcd_tcp_conn *c)
{
    return c->snd_len - (c->snd_nxt - c->snd_una - (c->state == MCD_TCP_LAST_ACK));
}

/* Sequence space a segment takes: its data, plus one for SYN and for FIN. */
static uint32_t seg_space(const struct mcd_tcp_seg *seg)
{
    return seg->len + !!(seg->flags & MCD_TCP_SYN) + !!(seg->flags & MCD_TCP_FIN);
}

struct mcd_tcp_conn *mcd_tcp_input(struct mcd_tcp_table *t, const struct mcd_tcp_seg *seg, int *rst)
{
    *rst = 0;
    t->st.segs_in++;
    struct mcd_tcp_conn *c = mcd_tcp_find(t, &seg->flow);
    if (!c) {
        if (seg->flags & MCD_TCP_RST)
            return 0; /* a reset of nothing: ignored */
        if ((seg->flags & (MCD_TCP_SYN | MCD_TCP_ACK)) == MCD_TCP_SYN) {
            c = open_conn(t, seg);
            if (c) {
                want_output(t, c);
                return c;
            }
            t->st.refused++; /* every slot is taken */
        }
        *rst = 1;
        return 0;
    }
    c->segs_in++;
    if (seg->flags & MCD_TCP_RST) {
        /* Accepted only exactly at rcv_nxt (RFC 5961's strict check), so a stray reset cannot close it. */
        if (seg->seq == c->rcv_nxt) {
            t->st.resets_in++;
            free_slot(t, c);
            return 0;
        }
        return c;
    }
    if (seg->flags & MCD_TCP_SYN) {
        /* In SYN-RECEIVED the peer's SYN again (its copy of our SYN-ACK went missing): the SYN-ACK again. Anywhere
         * else a SYN is answered with an ACK (RFC 5961's challenge ACK) and dropped. */
        if (!(c->state == MCD_TCP_SYN_RECEIVED && seg->seq == c->irs))
            t->st.duplicates++;
        c->ack_owed = 1;
        want_output(t, c);
        return c;
    }
    if (!(seg->flags & MCD_TCP_ACK)) {
        t->st.bad_segs++; /* past the handshake every segment carries an ACK */
        return c;
    }
    /* Acceptability: a segment with data or FIN must start exactly at rcv_nxt (in-order delivery only); one
     * without must lie in the window. Anything else is an out-of-order or duplicate segment: dropped, counted, and
     * answered with a duplicate ACK of rcv_nxt. */
    uint32_t space = seg_space(seg);
    if (space ? seg->seq != c->rcv_nxt
              : (mcd_seq_lt(seg->seq, c->rcv_nxt) || !mcd_seq_le(seg->seq, c->rcv_nxt + mcd_tcp_rcv_room(c)))) {
        if (mcd_seq_lt(seg->seq, c->rcv_nxt))
            t->st.duplicates++;
        else
            t->st.out_of_order++;
        t->st.dup_acks_sent++;
        c->ack_owed = 1;
        want_output(t, c);
        return c;
    }
    /* The ACK field. */
    if (mcd_seq_lt(c->snd_nxt, seg->ack)) {
        t->st.ack_unsent++; /* acknowledges what was never sent: dropped, with an ACK (RFC 793) */
        c->ack_owed = 1;
        want_output(t, c);
        return c;
    }
    if (c->state == MCD_TCP_SYN_RECEIVED) {
        if (seg->ack != c->snd_nxt) { /* must acknowledge the SYN-ACK */
            *rst = 1;
            return c;
        }
        c->state = MCD_TCP_ESTABLISHED;
        c->snd_una = c->snd_nxt;
    } else if (mcd_seq_lt(c->snd_una, seg->ack)) {
        uint32_t acked = seg->ack - c->snd_una;
        if (c->state == MCD_TCP_LAST_ACK && seg->ack == c->snd_nxt) { /* our FIN acknowledged */
            free_slot(t, c);
            return 0;
        }
        c->snd_una = seg->ack;
        c->snd_len -= acked; /* the ring's bytes before snd_una are free again */
    }
    if (mcd_seq_le(c->snd_una, seg->ack))
        c->snd_wnd = seg->window;
    if (seg->len) {
        if (c->state != MCD_TCP_ESTABLISHED) {
            t->st.bad_segs++; /* data after the peer's FIN */
            return c;
        }
        if (seg->len > mcd_tcp_rcv_room(c)) {
            t->st.over_window++; /* beyond the advertised window: dropped, the ACK repeats the window */
            c->ack_owed = 1;
            want_output(t, c);
            return c;
        }
        memcpy(c->rcvbuf + c->rcv_len, seg->data, seg->len); /* the socket's copy */
        c->rcv_len += seg->len;
        c->bytes_in += seg->len;
    }
    if (seg->flags & MCD_TCP_FIN) {
        if (c->state == MCD_TCP_ESTABLISHED)
            c->state = MCD_TCP_CLOSE_WAIT;
    }
    c->rcv_nxt += space;
    if (space)
        c->ack_owed = 1;
    if (c->ack_owed || unsent_bytes(c) || c->state == MCD_TCP_CLOSE_WAIT)
        want_output(t, c);
    return c;
}

uint32_t mcd_tcp_reset(struct mcd_tcp_table *t, const struct mcd_tcp_seg *seg, uint8_t *out, uint32_t cap)
{
    struct mcd_flow back = mcd_flow_reverse(&seg->flow);
    t->st.resets_sent++;
    if (seg->flags & MCD_TCP_ACK)
        return mcd_tcp_build(out, cap, &back, 0, seg->ack, 0, MCD_TCP_RST, 0, 0, 0, 0, 0, 0);
    return mcd_tcp_build(out, cap, &back, 0, 0, seg->seq + seg_space(seg), MCD_TCP_RST | MCD_TCP_ACK, 0, 0, 0, 0, 0,
                         0);
}

void mcd_tcp_consume(struct mcd_tcp_conn *c, uint32_t n)
{
    /* Messages are parsed in place, so the remainder (a message still arriving) moves to the front. */
    memmove(c->rcvbuf, c->rcvbuf + n, c->rcv_len - n);
    c->rcv_len -= n;
}

void mcd_tcp_write(struct mcd_tcp_conn *c, const uint8_t *p, uint32_t n)
{
    uint32_t at = (c->snd_una - c->iss - 1 + c->snd_len) & (MCD_TCP_SNDBUF - 1);
    uint32_t first = MCD_TCP_SNDBUF - at < n ? MCD_TCP_SNDBUF - at : n;
    memcpy(c->sndbuf + at, p, first); /* the socket's copy */
    memcpy(c->sndbuf, p + first, n - first);
    c->snd_len += n;
}

uint32_t mcd_tcp_output(struct mcd_tcp_table *t, struct mcd_tcp_conn *c, uint8_t *out, uint32_t cap)
{
    if (!c || c->state == MCD_TCP_FREE || cap < MCD_TCP_HDRS_LEN)
        return 0;
    uint16_t window = (uint16_t)mcd_tcp_rcv_room(c);
    uint32_t len = 0;
    if (c->state == MCD_TCP_SYN_RECEIVED) {
        if (!c->ack_owed)
            return 0;
        len = mcd_tcp_build(out, cap, &c->flow, c->ip_id, c->iss, c->rcv_nxt, MCD_TCP_SYN | MCD_TCP_ACK, window,
                            MCD_TCP_MSS, 0, 0, 0, 0);
        if (!len)
            return 0;
        c->snd_nxt = c->iss + 1;
    } else {
        uint32_t in_flight = c->snd_nxt - c->snd_una, unsent = unsent_bytes(c);
        uint32_t allowed = c->snd_wnd > in_flight ? c->snd_wnd - in_flight : 0;
        uint32_t n = unsent < allowed ? unsent : allowed;
        if (n > c->mss)
            n = c->mss;
        if (n > cap - MCD_TCP_HDRS_LEN)
            n = cap - MCD_TCP_HDRS_LEN;
        if (n) {
            uint32_t at = (c->snd_nxt - c->iss - 1) & (MCD_TCP_SNDBUF - 1);
            uint32_t first = MCD_TCP_SNDBUF - at < n ? MCD_TCP_SNDBUF - at : n;
            len = mcd_tcp_build(out, cap, &c->flow, c->ip_id, c->snd_nxt, c->rcv_nxt, MCD_TCP_ACK | MCD_TCP_PSH,
                                window, 0, c->sndbuf + at, first, c->sndbuf, n - first);
            c->snd_nxt += n;
            c->bytes_out += n;
            unsent -= n;
        } else if (c->state == MCD_TCP_CLOSE_WAIT && unsent == 0) {
            /* The peer closed and everything is out: the server's FIN (the application closes at once). */
            len = mcd_tcp_build(out, cap, &c->flow, c->ip_id, c->snd_nxt, c->rcv_nxt, MCD_TCP_FIN | MCD_TCP_ACK,
                                window, 0, 0, 0, 0, 0);
            c->snd_nxt++;
            c->state = MCD_TCP_LAST_ACK;
        } else if (c->ack_owed) {
            len = mcd_tcp_build(out, cap, &c->flow, c->ip_id, c->snd_nxt, c->rcv_nxt, MCD_TCP_ACK, window, 0, 0, 0,
                                0, 0);
        }
        if (len && n && unsent && c->snd_wnd > c->snd_nxt - c->snd_una)
            want_output(t, c); /* more fits the peer's window: the next segment on the next free buffer */
        else if (len && c->state == MCD_TCP_CLOSE_WAIT && unsent == 0)
            want_output(t, c); /* the FIN follows the last data */
    }
    if (len) {
        c->ack_owed = 0;
        c->ip_id++;
        c->segs_out++;
        t->st.segs_out++;
    }
    return len;
}

uint32_t mcd_tcp_abort(struct mcd_tcp_table *t, struct mcd_tcp_conn *c, uint8_t *out, uint32_t cap)
{
    uint32_t len = mcd_tcp_build(out, cap, &c->flow, c->ip_id, c->snd_nxt, c->rcv_nxt, MCD_TCP_RST | MCD_TCP_ACK, 0,
                                 0, 0, 0, 0, 0);
    t->st.resets_sent++;
    free_slot(t, c);
    return len;
}
