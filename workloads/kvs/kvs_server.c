/*
 * kvs_server.c - the per-core request pipeline.
 *
 * A burst of up to 32 packets runs through four stages a packet apart (with prefetching on):
 *   stage 0 (packet i+3): prefetch the packet's first two lines;
 *   stage 1 (packet i+2): parse, resolve each request's partition and bucket, prefetch the bucket's two lines;
 *   stage 2 (packet i+1): scan the bucket's tags, prefetch the first matching item's two lines;
 *   stage 3 (packet i):   execute the requests and build the response in the request's own buffer.
 * With prefetching off, stages 1 and 3 run back to back per packet and nothing is prefetched.
 *
 * Zero copy: responses are written over the request, from the first descriptor on. A response descriptor is never
 * longer than its request, so it cannot overrun unread requests; a GET value can, so a GET first gets only the room
 * up to the next unread request, and in the rare case that is too little the unread requests are moved to a
 * per-core scratch area and the GET is retried with the whole frame's room.
 */
#include "kvs_server.h"

#define MEMCPY __builtin_memcpy
#define MEMSET __builtin_memset

/* ---------------------------------------------------------------------------------------------------------- */
/* Configuration                                                                                                */
/* ---------------------------------------------------------------------------------------------------------- */

void kvs_config_default(struct kvs_config *cfg, unsigned partitions)
{
    cfg->partitions = partitions;
    cfg->crew = 0;
    cfg->prefetch = 1;
    cfg->lru = 1;
    cfg->log_size = 64ull << 20;
    cfg->buckets = 1ull << 16;
    cfg->housekeeping_log2 = 16;
    cfg->log_window_kib = 0; /* the whole log */
    cfg->buckets_used = 0;   /* every bucket */
    cfg->crew_max_spins = 1ull << 30;
    /* MICA's DPDK set-up (src/net_common.c): 128 RX and 512 TX descriptors per queue; TX reclaimed in groups of 32
     * (the ixgbe poll-mode driver's default tx_rs_thresh); buffers of 2,048 data bytes after 128 bytes of headroom
     * (RTE_PKTMBUF_HEADROOM) and the mbuf header, 64 bytes (one line: DPDK 1.x's struct rte_mbuf, assumed). */
    cfg->rx_ring = 128;
    cfg->tx_ring = 512;
    cfg->tx_rs = 0; /* 0: the driver's default, 32, at most a quarter of the TX ring */
    /* tx_free_thresh, which MICA leaves at the ixgbe driver's default (32): DPDK frees sent TX buffers only when
     * fewer descriptors than this are free, so the TX ring holds up to ~480 sent buffers (rte_eth_txconf). */
    cfg->tx_free = 0;
    cfg->buf_data = 2048;
    cfg->buf_headroom = 128;
    cfg->buf_meta = 64;
    cfg->numa_report = 0;
}

static int str_prefix(const char *s, const char *prefix, const char **rest)
{
    while (*prefix)
        if (*s++ != *prefix++)
            return 0;
    *rest = s;
    return 1;
}

static int str_eq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

static int parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static int pow2(uint64_t v) { return v && !(v & (v - 1)); }

int kvs_config_parse(struct kvs_config *cfg, int argc, char **argv, const char **bad)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        uint64_t n;
        *bad = a;
        if (str_prefix(a, "mode=", &v)) {
            if (str_eq(v, "erew"))
                cfg->crew = 0;
            else if (str_eq(v, "crew"))
                cfg->crew = 1;
            else
                return -1;
        } else if (str_prefix(a, "prefetch=", &v)) {
            if (parse_u64(v, &n) || n > 1)
                return -1;
            cfg->prefetch = (unsigned)n;
        } else if (str_prefix(a, "lru=", &v)) {
            if (parse_u64(v, &n) || n > 1)
                return -1;
            cfg->lru = (unsigned)n;
        } else if (str_prefix(a, "log_mib=", &v)) {
            if (parse_u64(v, &n) || n > (1ull << 20) || !pow2(n))
                return -1;
            cfg->log_size = n << 20;
        } else if (str_prefix(a, "log_kib=", &v)) {
            if (parse_u64(v, &n) || n < 4 || n > (1ull << 30) || !pow2(n))
                return -1;
            cfg->log_size = n << 10;
        } else if (str_prefix(a, "log_window_kib=", &v)) {
            if (parse_u64(v, &n) || n < 4 || n > (1ull << 30))
                return -1;
            cfg->log_window_kib = (unsigned)n;
        } else if (str_prefix(a, "buckets=", &v)) {
            if (parse_u64(v, &n) || !pow2(n) || n > (1ull << 32))
                return -1;
            cfg->buckets = n;
        } else if (str_prefix(a, "buckets_used=", &v)) {
            if (parse_u64(v, &n) || n < 1 || n > (1ull << 32))
                return -1;
            cfg->buckets_used = n;
        } else if (str_prefix(a, "rx_ring=", &v) || str_prefix(a, "tx_ring=", &v)) {
            if (parse_u64(v, &n) || !pow2(n) || n < 8 || n > 4096)
                return -1; /* the 82599 takes at most 4,096 descriptors per ring */
            if (a[0] == 'r')
                cfg->rx_ring = (unsigned)n;
            else
                cfg->tx_ring = (unsigned)n;
        } else if (str_prefix(a, "tx_rs=", &v)) {
            if (parse_u64(v, &n) || !pow2(n) || n > 1024)
                return -1;
            cfg->tx_rs = (unsigned)n;
        } else if (str_prefix(a, "tx_free=", &v)) {
            if (parse_u64(v, &n) || n < 1 || n > 4096)
                return -1;
            cfg->tx_free = (unsigned)n;
        } else if (str_prefix(a, "buf_data=", &v) || str_prefix(a, "buf_headroom=", &v) ||
                   str_prefix(a, "buf_meta=", &v)) {
            if (parse_u64(v, &n) || n % 64 || n > 65535)
                return -1; /* whole lines; the RX descriptor's buf_size is 16 bits */
            if (a[4] == 'd')
                cfg->buf_data = (unsigned)n;
            else if (a[4] == 'h')
                cfg->buf_headroom = (unsigned)n;
            else
                cfg->buf_meta = (unsigned)n;
        } else if (str_prefix(a, "numa_report=", &v)) {
            if (parse_u64(v, &n) || n > 1)
                return -1;
            cfg->numa_report = (unsigned)n;
        } else if (str_prefix(a, "housekeeping_log2=", &v)) {
            if (parse_u64(v, &n) || n > 40)
                return -1;
            cfg->housekeeping_log2 = (unsigned)n;
        } else {
            return -1;
        }
    }
    *bad = 0;
    return 0;
}

const char *kvs_config_check(const struct kvs_config *cfg)
{
    if (cfg->tx_rs && cfg->tx_rs * 4 > cfg->tx_ring)
        return "tx_rs: a reclaim group is at most a quarter of tx_ring (and a power of two)";
    if (cfg->tx_free && cfg->tx_free > cfg->tx_ring)
        return "tx_free: the free-descriptor threshold is at most tx_ring (tx_free=tx_ring: reclaim at every burst)";
    unsigned group = cfg->tx_rs ? cfg->tx_rs : (32 * 4 <= cfg->tx_ring ? 32 : cfg->tx_ring / 4);
    if (cfg->tx_free && cfg->tx_free < group)
        return "tx_free: at least the reclaim group tx_rs (as DPDK requires tx_rs_thresh <= tx_free_thresh)";
    uint64_t window = (uint64_t)cfg->log_window_kib << 10;
    if (window && (window <= cfg->log_size / 2 || window > cfg->log_size))
        return "log_window_kib: the window is more than half the log (log_mib/log_kib) and at most all of it";
    if (cfg->buckets_used && (cfg->buckets_used <= cfg->buckets / 2 || cfg->buckets_used > cfg->buckets))
        return "buckets_used: the buckets in use are more than half of buckets= and at most all of them";
    if (cfg->buf_data < KVS_MIN_BUF_DATA)
        return "buf_data: the data room must hold a full Ethernet frame (1,536 bytes, a multiple of 64)";
    return 0;
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Set-up                                                                                                       */
/* ---------------------------------------------------------------------------------------------------------- */

struct kvs_core *kvs_core_create(struct kvs_shared *sh, unsigned core, struct plat_queue *q)
{
    const struct kvs_config *cfg = &sh->cfg;
    if (core >= cfg->partitions || cfg->partitions > KVS_MAX_PARTITIONS)
        return 0;
    /* Everything of the partition in the memory of its core's socket, as MICA does; named explicitly so it holds
     * whichever thread sets the partition up. */
    unsigned socket = plat_socket_of(core);
    struct kvs_core *c = plat_alloc_on(sizeof(*c), 128, socket);
    struct kvs_partition *p = plat_alloc_on(sizeof(*p), 64, socket);
    struct kvs_bucket *buckets = plat_alloc_on(cfg->buckets * sizeof(struct kvs_bucket), 128, socket);
    uint8_t *log = plat_alloc_on(cfg->log_size, 4096, socket);
    if (!c || !p || !buckets || !log)
        return 0;
    if (kvs_partition_init(p, core, buckets, cfg->buckets, log, cfg->log_size, (int)cfg->crew) != 0 ||
        (cfg->log_window_kib && kvs_partition_set_window(p, (uint64_t)cfg->log_window_kib << 10) != 0) ||
        (cfg->buckets_used && kvs_partition_set_buckets_used(p, cfg->buckets_used) != 0))
        return 0;
    c->id = core;
    c->sh = sh;
    c->own = p;
    c->q = q;
    c->hk_mask = (1ull << cfg->housekeeping_log2) - 1;
    __atomic_store_n(&sh->parts[core], p, __ATOMIC_RELEASE);
    __atomic_add_fetch(&sh->ready, 1, __ATOMIC_ACQ_REL);
    return c;
}

void kvs_wait_ready(struct kvs_shared *sh)
{
    while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < sh->cfg.partitions)
        KVS_CPU_RELAX();
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Pipeline stages                                                                                              */
/* ---------------------------------------------------------------------------------------------------------- */

static inline void stage_prefetch_packet(const struct plat_pkt *pkt)
{
    KVS_PREFETCH_NT2(pkt->data);
}

/* Parse; resolve partitions; check steering; prefetch buckets when asked. */
static void stage_parse(struct kvs_core *c, unsigned i, const struct plat_pkt *pkt, int prefetch)
{
    struct kvs_pkt_state *ps = &c->pk[i];
    struct kvs_req *rq = &c->rq[i * KVS_MAX_BATCH];
    unsigned n;
    enum kvs_drop why = kvs_parse(pkt->data, pkt->len, rq, &n);
    ps->drop = (uint8_t)why;
    ps->n = (uint8_t)n;
    if (why != KVS_DROP_NONE)
        return;
    const struct kvs_config *cfg = &c->sh->cfg;
    for (unsigned j = 0; j < n; j++) {
        struct kvs_req *r = &rq[j];
        if (r->err)
            continue;
        unsigned part = kvs_partition_of(r->keyhash, cfg->partitions);
        if (part != c->id && (!cfg->crew || r->op != KVS_OP_GET)) {
            r->err = KVS_RES_WRONG_PARTITION;
            continue;
        }
        r->part = c->sh->parts[part];
        if (prefetch)
            kvs_store_prefetch_bucket(r->part, r->keyhash);
    }
}

static void stage_prefetch_items(struct kvs_core *c, unsigned i)
{
    const struct kvs_pkt_state *ps = &c->pk[i];
    if (ps->drop != KVS_DROP_NONE)
        return;
    const struct kvs_req *rq = &c->rq[i * KVS_MAX_BATCH];
    for (unsigned j = 0; j < ps->n; j++)
        if (!rq[j].err && rq[j].op == KVS_OP_GET)
            kvs_store_prefetch_item(rq[j].part, rq[j].keyhash);
}

/* CREW, another core's partition: the reader may retry, so the key must not sit under the output. */
static unsigned remote_get(struct kvs_core *c, struct kvs_req *r, uint8_t *out, uint32_t room, uint32_t *vlen)
{
    const uint8_t *key = r->key;
    if (key < out + room && out < key + r->klen) {
        MEMCPY(c->keybuf, key, r->klen);
        key = c->keybuf;
    }
    return kvs_store_get_remote(r->part, r->keyhash, key, r->klen, out, room, vlen, c->sh->cfg.crew_max_spins,
                                &c->st.reader);
}

/* Move the unread requests rq[from..n) (they end at `end` in the frame) into the scratch area. */
static void move_unread(struct kvs_core *c, uint8_t *frame, struct kvs_req *rq, unsigned from, unsigned n,
                        uint32_t end)
{
    uint32_t start = rq[from].off;
    MEMCPY(c->scratch, frame + start, end - start);
    for (unsigned j = from; j < n; j++) {
        rq[j].key = c->scratch + (rq[j].key - (frame + start));
        rq[j].val = c->scratch + (rq[j].val - (frame + start));
    }
    c->st.tail_moves++;
}

/* Execute a packet's requests and build the response in place. Returns the response length. */
static uint32_t stage_execute(struct kvs_core *c, unsigned i, struct plat_pkt *pkt)
{
    const struct kvs_pkt_state *ps = &c->pk[i];
    struct kvs_req *rq = &c->rq[i * KVS_MAX_BATCH];
    uint8_t *f = pkt->data;
    unsigned n = ps->n;
    uint32_t limit = pkt->cap < KVS_MAX_FRAME_LEN ? pkt->cap : KVS_MAX_FRAME_LEN;
    uint32_t end = KVS_ETH_HDR_LEN + kvs_bswap16(((const struct kvs_pkt_hdr *)f)->ip_total_len);
    uint32_t w = KVS_PAYLOAD_OFF;
    int moved = 0;

    for (unsigned j = 0; j < n; j++) {
        struct kvs_req *r = &rq[j];
        unsigned res;
        uint32_t vout = 0;
        c->st.requests++;
        if (r->err) {
            res = r->err;
        } else if (r->op == KVS_OP_GET) {
            /* Room for this value: up to the frame limit, keeping 24 bytes for each later response ... */
            uint32_t reserve = KVS_REQ_DESC_LEN * (n - j), room = 0;
            if (w + reserve < limit)
                room = limit - w - reserve;
            /* ... and, while the unread requests are still in the frame, not past the next one. */
            uint32_t safe = room;
            if (!moved && j + 1 < n && w + KVS_REQ_DESC_LEN + room > rq[j + 1].off)
                safe = rq[j + 1].off - w - KVS_REQ_DESC_LEN;
            uint8_t *out = f + w + KVS_REQ_DESC_LEN;
            if (r->part == c->own) {
                const uint8_t *v;
                res = kvs_store_get_ref(c->own, r->keyhash, r->key, r->klen, &v, &vout, (int)c->sh->cfg.lru);
                if (res == KVS_RES_OK && vout > safe && vout <= room) {
                    move_unread(c, f, rq, j + 1, n, end);
                    moved = 1;
                    safe = room;
                }
                if (res == KVS_RES_OK && vout > safe)
                    res = KVS_RES_NO_ROOM;
                if (res == KVS_RES_OK)
                    MEMCPY(out, v, vout);
            } else {
                res = remote_get(c, r, out, safe, &vout);
                if (res == KVS_RES_NO_ROOM && vout > safe && vout <= room) {
                    move_unread(c, f, rq, j + 1, n, end);
                    moved = 1;
                    res = remote_get(c, r, out, room, &vout);
                }
            }
            if (res != KVS_RES_OK)
                vout = 0;
        } else if (r->op == KVS_OP_PUT) {
            res = kvs_store_put(c->own, r->keyhash, r->key, r->klen, r->val, r->vlen, r->expire);
        } else {
            res = kvs_store_delete(c->own, r->keyhash, r->key, r->klen);
        }
        /* The descriptor goes at w (<= this request's own offset until a move), after the request was read. */
        struct kvs_req_desc *d = (struct kvs_req_desc *)(f + w);
        d->op = r->op;
        d->result = (uint8_t)res;
        d->reserved = 0;
        d->kv_len = KVS_KV_LEN(r->klen, vout);
        d->keyhash = r->keyhash;
        d->expire = r->expire;
        d->reserved2 = 0;
        w += KVS_REQ_DESC_LEN;
        if (vout) {
            uint32_t padded = KVS_PAD8(vout);
            if (padded != vout)
                MEMSET(f + w + vout, 0, padded - vout);
            w += padded;
        }
        c->st.result[res & 15]++;
        if (res == KVS_RES_OK)
            c->st.responses_ok++;
        else if (res == KVS_RES_NOT_FOUND)
            c->st.misses++;
        else
            c->st.errors++;
    }
    kvs_finish_response(f, w);
    return w;
}

void kvs_process_burst(struct kvs_core *c, struct plat_pkt *pkts, unsigned n)
{
    unsigned ntx = 0;
    if (n > KVS_MAX_BURST)
        n = KVS_MAX_BURST;
    int prefetch = (int)c->sh->cfg.prefetch;
    for (int i = prefetch ? -3 : 0; i < (int)n; i++) {
        if (prefetch) {
            if (i + 3 < (int)n)
                stage_prefetch_packet(&pkts[i + 3]);
            if (i + 2 >= 0 && i + 2 < (int)n)
                stage_parse(c, (unsigned)(i + 2), &pkts[i + 2], 1);
            if (i + 1 >= 0 && i + 1 < (int)n)
                stage_prefetch_items(c, (unsigned)(i + 1));
            if (i < 0)
                continue;
        } else {
            stage_parse(c, (unsigned)i, &pkts[i], 0);
        }
        struct plat_pkt *pkt = &pkts[i];
        unsigned why = c->pk[i].drop;
        if (why != KVS_DROP_NONE) {
            c->st.drops[why]++;
            c->st.dropped++;
            plat_pkt_drop(c->q, pkt);
            continue;
        }
        pkt->len = stage_execute(c, (unsigned)i, pkt);
        c->tx[ntx++] = *pkt;
    }
    if (ntx) {
        plat_tx_burst(c->q, c->tx, ntx);
        c->st.tx_pkts += ntx;
    }
}

static void housekeeping(struct kvs_core *c)
{
    c->st.housekeeping++;
    plat_queue_counters(c->q, &c->st.nic);
}

unsigned kvs_core_poll(struct kvs_core *c)
{
    unsigned n = plat_rx_burst(c->q, c->rx, KVS_MAX_BURST);
    c->st.polls++;
    if (n) {
        c->st.rx_bursts++;
        c->st.rx_pkts += n;
        kvs_process_burst(c, c->rx, n);
    }
    if ((c->st.polls & c->hk_mask) == 0)
        housekeeping(c);
    KVS_POLL_END(n);
    return n;
}
