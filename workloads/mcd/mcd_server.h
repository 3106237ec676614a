/* mcd_server.h - one memcached-class server instance: a core's store, its connections and its UDP port.
 * Single-threaded: each core runs its own instance on its own port, sharing nothing. */
#ifndef MCD_SERVER_H
#define MCD_SERVER_H

#include "mcd_net.h"
#include "mcd_proto.h"
#include "mcd_store.h"

struct mcd_server_stats {
    uint64_t frames_in, frames_out, bad_frames, wrong_port, bad_udp_hdr, bad_requests, unknown_ops, requests;
};

struct mcd_server {
    uint16_t port;              /* the UDP port this instance serves */
    struct mcd_store store;
    struct mcd_conn_table conns;
    struct mcd_server_stats st;
    uint8_t sndbuf[MCD_MAX_FRAME]; /* the application's send buffer: responses are built here, then copied */
    /* Test hook (0: off): flip a bit of every Nth GET hit's value, so tests can show the client catches it. */
    uint32_t corrupt_every, corrupt_count;
};

/* mem: zeroed memory for the store (hash heads and items); conns: a zeroed array of nconns (power of two). */
int mcd_server_init(struct mcd_server *s, uint16_t port, void *mem, size_t mem_size, unsigned buckets_log2,
                    struct mcd_conn *conns, unsigned nconns);

/* Serve one received frame: out gets the reply frame (it may be the same buffer as in). Returns the reply length,
 * or 0 when there is no reply (a frame that is not a well-formed request to this port is dropped and counted). */
uint32_t mcd_server_handle(struct mcd_server *s, const uint8_t *in, uint32_t len, uint8_t *out, uint32_t cap);

#endif
