/* mcd_net.h - the guest's minimal network stack: Ethernet II, IPv4 (no options, no fragments) and UDP, parsed and
 * built with their checksums, plus a table of connection state per peer (a TCP-like path: every datagram finds
 * its connection, updates its sequence and byte counts, and its payload is copied into the connection's receive
 * buffer, as a kernel copies into a socket). The point is that the stack's work is executed by the simulated cores
 * rather than assumed. */
#ifndef MCD_NET_H
#define MCD_NET_H

#include "mcd_sys.h"

#define MCD_ETH_HLEN 14u
#define MCD_IP_HLEN 20u
#define MCD_UDP_HLEN 8u
#define MCD_HDRS_LEN (MCD_ETH_HLEN + MCD_IP_HLEN + MCD_UDP_HLEN)
#define MCD_ETHERTYPE_IPV4 0x0800u
#define MCD_IPPROTO_UDP 17u
#define MCD_MAX_FRAME 2048u
#define MCD_SOCKBUF MCD_MAX_FRAME

/* Why a frame was refused (negative return codes of mcd_net_parse). */
enum mcd_net_err {
    MCD_NET_SHORT = -1,     /* shorter than its headers say */
    MCD_NET_NOT_IPV4 = -2,  /* ethertype, version, header length, or a fragment */
    MCD_NET_NOT_UDP = -3,
    MCD_NET_IP_CSUM = -4,   /* IPv4 header checksum wrong */
    MCD_NET_UDP_CSUM = -5,  /* UDP checksum (with the pseudo-header) wrong */
    MCD_NET_UDP_LEN = -6,   /* UDP length disagrees with the IP length */
};

/* Addresses of one datagram (host byte order). */
struct mcd_flow {
    uint8_t src_mac[6], dst_mac[6];
    uint32_t src_ip, dst_ip;
    uint16_t src_port, dst_port;
};

/* The Internet checksum (RFC 1071): add bytes to a running sum, then fold and complement. */
uint32_t mcd_csum_add(uint32_t sum, const uint8_t *p, size_t n);
uint16_t mcd_csum_fold(uint32_t sum);

/* Check and split a received frame. On success (0) *payload points into frame. */
int mcd_net_parse(const uint8_t *frame, uint32_t len, struct mcd_flow *flow, const uint8_t **payload,
                  uint32_t *plen);
/* Build a frame for flow (from src to dst) around a copy of payload, with both checksums. Returns the frame
 * length, or 0 if it would not fit cap. */
/* The Ethernet II and IPv4 headers (checksummed, don't fragment, TTL 64) of a frame from `flow` carrying
 * `ip_payload` bytes of protocol `proto`: the UDP and TCP builders share them. */
void mcd_net_put_ipv4(uint8_t *frame, const struct mcd_flow *flow, uint16_t ip_id, uint8_t proto,
                      uint32_t ip_payload);
uint32_t mcd_net_build(uint8_t *frame, uint32_t cap, const struct mcd_flow *flow, uint16_t ip_id,
                       const uint8_t *payload, uint32_t plen);
/* The flow of the reply to flow: addresses and ports swapped. */
struct mcd_flow mcd_flow_reverse(const struct mcd_flow *flow);

/* Connection state of one peer (IP, port). */
enum mcd_conn_state { MCD_CONN_FREE = 0, MCD_CONN_ESTABLISHED = 1 };
struct mcd_conn {
    uint32_t peer_ip;
    uint16_t peer_port;
    uint16_t state;
    uint32_t rx_seq, tx_seq;   /* datagrams received from / sent to the peer */
    uint16_t ip_id;            /* next IPv4 identification of frames to the peer */
    uint16_t last_req_id;      /* the memcached UDP request id seen last */
    uint64_t rx_bytes, tx_bytes;
    uint32_t rcv_len;
    uint8_t rcvbuf[MCD_SOCKBUF]; /* the socket's receive buffer: the payload is copied here */
};

/* Open-addressed table of connections; when full, the oldest-probed slot is recycled (counted). */
struct mcd_conn_table {
    struct mcd_conn *slots;
    unsigned mask;
    unsigned live;
    uint64_t opened, recycled;
};

/* slots: a zeroed array of n (a power of two) connections. */
void mcd_conns_init(struct mcd_conn_table *t, struct mcd_conn *slots, unsigned n);
/* The connection of the peer, opened (ESTABLISHED) if it had none; never NULL. */
struct mcd_conn *mcd_conn_lookup(struct mcd_conn_table *t, uint32_t peer_ip, uint16_t peer_port);
/* A datagram arrived on c: count it and copy its payload into the receive buffer (truncating at MCD_SOCKBUF). */
void mcd_conn_receive(struct mcd_conn *c, const uint8_t *payload, uint32_t plen);

#endif
