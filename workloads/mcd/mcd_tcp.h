/* mcd_tcp.h - the guest's minimal TCP: segments parsed and built with the TCP checksum over the pseudo-header,
 * connection state per 4-tuple (the instance's port is the listening socket; a slot goes SYN-RECEIVED,
 * ESTABLISHED, CLOSE-WAIT, LAST-ACK and back to free), the three-way handshake, sequence and acknowledgement
 * numbers, the peer's window and MSS, in-order delivery (a segment that is not the next one expected is dropped,
 * counted and answered with a duplicate ACK), the byte stream copied into the connection's receive buffer, and
 * the application's replies copied into a send buffer (a ring) from which segments leave with the ACK piggybacked.
 *
 * There are no timers: no retransmission (the peers here never lose a segment; data stays in the send buffer
 * until acknowledged, as it must for a retransmission, but nothing resends it), no delayed ACK (every in-order
 * segment is acknowledged at once, on the reply when there is one), no TIME-WAIT (only the peer closes: a FIN is
 * answered with the server's own FIN, whose ACK frees the slot), no window scaling and no options but the MSS. */
#ifndef MCD_TCP_H
#define MCD_TCP_H

#include "mcd_net.h"

#define MCD_IPPROTO_TCP 6u
#define MCD_TCP_HLEN 20u
#define MCD_TCP_HDRS_LEN (MCD_ETH_HLEN + MCD_IP_HLEN + MCD_TCP_HLEN) /* 54 */
#define MCD_TCP_MSS (1514u - MCD_TCP_HDRS_LEN)                        /* 1460: a full Ethernet frame */
#define MCD_TCP_DEFAULT_MSS 536u /* RFC 879: the MSS of a peer that sends no MSS option */
/* The socket buffers of one connection (assumed sizes: room for many requests in flight; 64 KiB is the largest
 * window without the scaling option). The send buffer is a ring, so its size is a power of two. */
#define MCD_TCP_RCVBUF 16384u
#define MCD_TCP_SNDBUF 16384u

/* Header flags. */
enum { MCD_TCP_FIN = 0x01, MCD_TCP_SYN = 0x02, MCD_TCP_RST = 0x04, MCD_TCP_PSH = 0x08, MCD_TCP_ACK = 0x10 };

/* Why a segment was refused (negative return codes of mcd_tcp_parse; the IPv4 ones are mcd_net_err's). */
enum mcd_tcp_err {
    MCD_TCP_NOT_TCP = -10,
    MCD_TCP_BAD_OFFSET = -11, /* data offset below 5 words or beyond the segment */
    MCD_TCP_CSUM = -12,       /* TCP checksum (with the pseudo-header) wrong */
};

/* One parsed segment; data points into the frame. */
struct mcd_tcp_seg {
    struct mcd_flow flow;
    uint32_t seq, ack;
    uint16_t window;
    uint16_t mss; /* the MSS option (0: none) */
    uint8_t flags;
    const uint8_t *data;
    uint32_t len;
};

/* The sequence space: a before b (RFC 793's modular comparison). */
static inline int mcd_seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline int mcd_seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }

/* Check and split a received frame (IPv4 header checksum, TCP checksum). 0 on success. */
int mcd_tcp_parse(const uint8_t *frame, uint32_t len, struct mcd_tcp_seg *seg);
/* Build a segment for flow (from src to dst): the header (with an MSS option when mss is not 0) and the data in
 * two pieces (a ring's wrap; either may be empty), both checksums. Returns the frame length, 0 if over cap. */
uint32_t mcd_tcp_build(uint8_t *frame, uint32_t cap, const struct mcd_flow *flow, uint16_t ip_id, uint32_t seq,
                       uint32_t ack, uint8_t flags, uint16_t window, uint16_t mss, const uint8_t *d1, uint32_t n1,
                       const uint8_t *d2, uint32_t n2);

enum mcd_tcp_state {
    MCD_TCP_FREE = 0, /* CLOSED: the slot is unused (LISTEN is the instance's port itself) */
    MCD_TCP_SYN_RECEIVED = 1,
    MCD_TCP_ESTABLISHED = 2,
    MCD_TCP_CLOSE_WAIT = 3, /* the peer sent FIN; the server's FIN follows its last data */
    MCD_TCP_LAST_ACK = 4,   /* the server's FIN is out; its ACK frees the slot */
};

struct mcd_tcp_conn {
    struct mcd_flow flow; /* server to peer: the flow of the segments the server sends */
    uint16_t state, ip_id;
    uint32_t iss, irs;            /* initial sequence numbers: the server's, the peer's */
    uint32_t snd_una, snd_nxt;    /* oldest unacknowledged, next to send */
    uint32_t snd_wnd;             /* the peer's window from its last acceptable ACK */
    uint32_t rcv_nxt;             /* next byte expected from the peer */
    uint16_t mss;                 /* largest segment the peer takes */
    uint8_t ack_owed, queued;     /* an ACK must go out; the connection is on the output list */
    uint32_t rcv_len;             /* bytes in rcvbuf not yet parsed into messages */
    uint32_t snd_len;             /* bytes in sndbuf from snd_una: sent-unacknowledged, then unsent */
    uint64_t segs_in, segs_out, bytes_in, bytes_out;
    uint8_t rcvbuf[MCD_TCP_RCVBUF]; /* the stream from the peer, copied in: messages may span segments */
    uint8_t sndbuf[MCD_TCP_SNDBUF]; /* a ring: byte of sequence s at (s - iss - 1) mod MCD_TCP_SNDBUF */
};

struct mcd_tcp_stats {
    uint64_t segs_in, segs_out, bad_segs, opened, closed, refused, resets_in, resets_sent, out_of_order,
        duplicates, dup_acks_sent, ack_unsent, over_window, stream_errors;
};

/* The connections of one instance: an open-addressed table over the 4-tuple, and the list of connections with
 * segments to send. */
struct mcd_tcp_table {
    struct mcd_tcp_conn *slots;
    uint16_t *out_list; /* a ring of slot indices, each slot at most once (its `queued` flag) */
    unsigned mask, live, out_head, out_n;
    uint32_t isn_count;
    struct mcd_tcp_stats st;
};

/* slots: a zeroed array of n (a power of two, at most 65536) connections; out_list: n entries. */
void mcd_tcp_init(struct mcd_tcp_table *t, struct mcd_tcp_conn *slots, uint16_t *out_list, unsigned n);
/* The connection of a segment's 4-tuple (as received: src is the peer), or NULL. */
struct mcd_tcp_conn *mcd_tcp_find(struct mcd_tcp_table *t, const struct mcd_flow *in);

/* Run one segment through the state machine: a SYN opens a connection, ACKs advance snd_una, in-order data is
 * copied to the receive buffer (out-of-order and duplicate segments are dropped, counted and owe a duplicate
 * ACK). Returns the connection (NULL when the segment had none); *rst is set when the segment must be answered
 * with a reset (mcd_tcp_reset builds it). */
struct mcd_tcp_conn *mcd_tcp_input(struct mcd_tcp_table *t, const struct mcd_tcp_seg *seg, int *rst);
/* The reset answering seg (RFC 793: seq = its ACK, or ACK of its sequence space). Returns the frame length. */
uint32_t mcd_tcp_reset(struct mcd_tcp_table *t, const struct mcd_tcp_seg *seg, uint8_t *out, uint32_t cap);
/* Bytes the receive buffer can take (the window the server advertises). */
static inline uint32_t mcd_tcp_rcv_room(const struct mcd_tcp_conn *c) { return MCD_TCP_RCVBUF - c->rcv_len; }
/* Bytes the send buffer can take. */
static inline uint32_t mcd_tcp_snd_room(const struct mcd_tcp_conn *c) { return MCD_TCP_SNDBUF - c->snd_len; }
/* Drop the first n bytes of the receive buffer (the application consumed them). */
void mcd_tcp_consume(struct mcd_tcp_conn *c, uint32_t n);
/* Copy n bytes (n <= mcd_tcp_snd_room) to the end of the send buffer. */
void mcd_tcp_write(struct mcd_tcp_conn *c, const uint8_t *p, uint32_t n);
/* Build c's next segment (SYN-ACK, data within the peer's window and MSS, FIN, or a bare ACK) into out; 0 when c
 * has nothing to send. A connection with more to send goes on the output list. */
uint32_t mcd_tcp_output(struct mcd_tcp_table *t, struct mcd_tcp_conn *c, uint8_t *out, uint32_t cap);
/* The next connection on the output list (taken off it), or NULL. */
struct mcd_tcp_conn *mcd_tcp_next_pending(struct mcd_tcp_table *t);
/* Abort c: a reset to the peer is built into out (its length returned) and the slot is freed. */
uint32_t mcd_tcp_abort(struct mcd_tcp_table *t, struct mcd_tcp_conn *c, uint8_t *out, uint32_t cap);

#endif
