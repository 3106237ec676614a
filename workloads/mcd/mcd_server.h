/* mcd_server.h - one memcached-class server instance: a core's store, its connections and its port (UDP
 * datagrams and TCP connections on the same number). Single-threaded: each core runs its own instance on its own
 * port, sharing nothing. */
#ifndef MCD_SERVER_H
#define MCD_SERVER_H

#include "mcd_net.h"
#include "mcd_proto.h"
#include "mcd_store.h"
#include "mcd_tcp.h"

/* The application's send buffer: the largest response (a GET hit of the largest item, 4 KiB chunk) fits. */
#define MCD_APPBUF 4608u

struct mcd_server_stats {
    uint64_t frames_in, frames_out, bad_frames, wrong_port, bad_udp_hdr, bad_requests, unknown_ops, requests;
};

struct mcd_server {
    uint16_t port;              /* the UDP port and the TCP port this instance serves */
    struct mcd_store store;
    struct mcd_conn_table conns;
    struct mcd_tcp_table tcp;   /* TCP connections (none until mcd_server_enable_tcp: TCP segments are refused) */
    int tcp_enabled;
    struct mcd_server_stats st;
    /* The longest request a byte stream may carry (a longer one resets the connection): the guest TCP's receive
     * buffer, MCD_TCP_RCVBUF, unless a server on the kernel's sockets with larger buffers raises it. */
    uint32_t max_request;
    uint8_t sndbuf[MCD_APPBUF]; /* the application's send buffer: responses are built here, then copied */
    /* Test hook (0: off): flip a bit of every Nth GET hit's value, so tests can show the client catches it. */
    uint32_t corrupt_every, corrupt_count;
};

/* mem: zeroed memory for the store (hash heads and items); conns: a zeroed array of nconns (power of two). */
int mcd_server_init(struct mcd_server *s, uint16_t port, void *mem, size_t mem_size, unsigned buckets_log2,
                    struct mcd_conn *conns, unsigned nconns);

/* Accept TCP on the instance's port: slots is a zeroed array of n (a power of two) connections, out_list n
 * entries. */
void mcd_server_enable_tcp(struct mcd_server *s, struct mcd_tcp_conn *slots, uint16_t *out_list, unsigned n);

/* Serve one received frame (a UDP datagram or a TCP segment): out gets the reply frame (it may be the same buffer
 * as in). Returns the reply length, or 0 when there is no reply (a frame that is not a well-formed request to this
 * port is dropped and counted). A TCP segment may leave more segments to send: mcd_server_output gives them. */
uint32_t mcd_server_handle(struct mcd_server *s, const uint8_t *in, uint32_t len, uint8_t *out, uint32_t cap);
/* Serve one memcached UDP datagram's payload (the frame header and its binary requests) into resp (cap bytes):
 * the reply's payload, every request answered in order. Returns its length (0: no reply, the datagram counted as
 * bad) and the request id in *req_id. mcd_server_handle calls it below its own network stack; a server on the
 * kernel's sockets calls it with what recvfrom gave (workloads/fs/init.c). */
uint32_t mcd_server_datagram(struct mcd_server *s, const uint8_t *req, uint32_t len, uint8_t *resp, uint32_t cap,
                             uint16_t *req_id);
/* One request of a TCP byte stream at in (avail bytes): 1 when a whole request was there and executed (its
 * length in *consumed, its response of *resp_len bytes at out), 0 when the rest of it has not arrived yet, -1 when
 * the stream is not requests (the connection must be reset). The guest TCP's stream loop calls it, and so does a
 * server on the kernel's TCP sockets (workloads/fs/init.c). */
int mcd_server_stream_request(struct mcd_server *s, const uint8_t *in, uint32_t avail, uint8_t *out, uint32_t cap,
                              uint32_t *consumed, uint32_t *resp_len);
/* The next TCP segment waiting to be sent (replies beyond the first, FINs), built into out; 0 when none. The poll
 * loop calls it with the buffers of frames that had no reply. */
uint32_t mcd_server_output(struct mcd_server *s, uint8_t *out, uint32_t cap);

#endif
