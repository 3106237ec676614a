/* kvs_server.h - the per-core KVS server: configuration, partition set-up, the RX burst pipeline. Portable C over
 * platform.h. */
#ifndef KVS_SERVER_H
#define KVS_SERVER_H

#include <stdint.h>
#include "kvs_abi.h"
#include "kvs_proto.h"
#include "kvs_store.h"
#include "platform.h"

#define KVS_MAX_PARTITIONS 1024u
#define KVS_MAX_BURST      32u

/* The smallest data room the driver may post: a full 1,518-byte Ethernet frame, rounded up to whole lines. */
#define KVS_MIN_BUF_DATA 1536u

struct kvs_config {
    unsigned partitions;      /* = cores (one partition per core) */
    unsigned crew;            /* 0: EREW, 1: CREW */
    unsigned prefetch;        /* software prefetch pipeline on/off */
    unsigned lru;             /* approximate LRU re-append on/off */
    uint64_t log_size;        /* bytes per partition (power of two) */
    uint64_t buckets;         /* buckets per partition (power of two) */
    unsigned housekeeping_log2; /* housekeeping every 2^n polls */
    unsigned log_window_kib;  /* KiB of the log each partition keeps (kvs_partition_set_window); 0: all of it. In
                               * the padding after housekeeping_log2, so the fields after it keep their offsets */
    uint64_t crew_max_spins;  /* CREW reader patience before KVS_RES_BUSY */
    unsigned rx_ring, tx_ring; /* NIC descriptor ring entries per queue (guest driver) */
    unsigned tx_rs;           /* TX descriptors reclaimed per group, RS once per group (DPDK tx_rs_thresh; 0: 32) */
    unsigned tx_free;         /* TX buffers freed only when fewer TX descriptors than this are free (DPDK
                               * tx_free_thresh; 0: 32, at most the TX ring) */
    unsigned buf_data, buf_headroom, buf_meta; /* packet buffer: data room, headroom before it, metadata header */
    unsigned numa_report;     /* 1: print where each partition's memory is, once all are set up */
    uint64_t buckets_used;    /* buckets each partition uses (kvs_partition_set_buckets_used); 0: all of them. Last,
                               * so the fields before it keep their offsets */
};

struct kvs_core_stats {
    uint64_t polls, rx_bursts, rx_pkts, tx_pkts;
    uint64_t requests, responses_ok, misses, errors;
    uint64_t drops[KVS_DROP__COUNT];   /* by reason (index 0 unused) */
    uint64_t dropped;                  /* sum of drops[] */
    uint64_t result[16];               /* responses by result code */
    uint64_t tail_moves;               /* batched GET responses that needed the unread requests moved aside */
    uint64_t housekeeping;
    struct plat_nic_counters nic;      /* last NIC counter snapshot (housekeeping) */
    struct kvs_reader_stats reader;
};

struct kvs_pkt_state {
    uint8_t n;      /* requests */
    uint8_t drop;   /* enum kvs_drop */
};

struct kvs_shared {
    struct kvs_config cfg;
    struct kvs_partition *parts[KVS_MAX_PARTITIONS];
    unsigned ready;     /* cores that have published their partition */
};

struct kvs_core {
    unsigned id;
    struct kvs_shared *sh;
    struct kvs_partition *own;
    struct plat_queue *q;
    uint64_t hk_mask;
    struct kvs_core_stats st;
    struct plat_pkt rx[KVS_MAX_BURST];
    struct plat_pkt tx[KVS_MAX_BURST];
    struct kvs_pkt_state pk[KVS_MAX_BURST];
    struct kvs_req rq[KVS_MAX_BURST * KVS_MAX_BATCH];
    uint8_t keybuf[KVS_MAX_KEY_LEN + 1] __attribute__((aligned(8)));
    uint8_t scratch[KVS_NIC_BUF_SIZE] __attribute__((aligned(8)));
};

/* Defaults, then "key=value" arguments: mode=erew|crew prefetch=0|1 lru=0|1 log_mib=N log_kib=N buckets=N
 * (power of two) buckets_used=N (more than half of buckets, at most all) log_window_kib=N (more than half the log, at most all of it) housekeeping_log2=N rx_ring=N tx_ring=N (powers of two, 8..4096) numa_report=0|1. Unknown or bad arguments:
 * returns -1 and names it in *bad. */
void kvs_config_default(struct kvs_config *cfg, unsigned partitions);
/* NULL when `cfg`'s arguments fit together and the NIC; else what is wrong, naming the argument. */
const char *kvs_config_check(const struct kvs_config *cfg);
int kvs_config_parse(struct kvs_config *cfg, int argc, char **argv, const char **bad);

/* Allocate (on core `core`'s socket, whichever thread calls it) and initialize core `core`'s partition and
 * per-core state, publish the partition in sh.
 * Returns NULL on failure. */
struct kvs_core *kvs_core_create(struct kvs_shared *sh, unsigned core, struct plat_queue *q);
/* Wait until every partition is published (each core calls it once after kvs_core_create). */
void kvs_wait_ready(struct kvs_shared *sh);

/* One poll: receive up to KVS_MAX_BURST packets, process them, send the responses. Returns packets received. */
unsigned kvs_core_poll(struct kvs_core *c);
/* Process received packets (responses queued to TX, bad packets dropped). */
void kvs_process_burst(struct kvs_core *c, struct plat_pkt *pkts, unsigned n);

#endif
