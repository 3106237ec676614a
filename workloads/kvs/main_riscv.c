/*
 * main_riscv.c - the KVS server program (riscv64 guest). Every hart runs main: hart 0 parses the arguments
 * (kvs_config_parse: mode=erew|crew prefetch=0|1 lru=0|1 log_mib=N buckets=N rx_ring=N tx_ring=N ...), each hart
 * opens its NIC queue, allocates its partition on its socket, waits for all partitions, then polls forever.
 *
 * selftest=N: instead of serving a NIC, hart 0 feeds N requests (tiny items, 95% GET, 1-4 per packet, or exactly
 * selftest_batch=B per packet) through a software queue and checks every response (for qemu-riscv64, which has no
 * NIC; the other harts end). Exit status 0 when all were right. selftest_nic=1 puts fake_nic.c (a software model
 * of one NIC queue, per ABI.md) behind the real poll-mode driver instead, and sends bursts that overflow small rings.
 */
#include "kvsim.h"
#include "kvsim_libc.h"
#include "keyhash.h"
#include "kvs_server.h"
#include "platform_riscv.h"

static struct kvs_shared g_shared;
static unsigned g_cfg_ready;

static int prefix(const char *s, const char *p, const char **rest)
{
    while (*p)
        if (*s++ != *p++)
            return 0;
    *rest = s;
    return 1;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#define ST_KEYS 1024
static uint64_t st_key[ST_KEYS];
static uint32_t st_ver[ST_KEYS];

static uint64_t st_value(unsigned k, uint32_t ver) { return st_key[k] * 0x100000001b3ull + ver; }

/* Build one packet of n tiny (8-byte key, 8-byte value) requests. */
static uint32_t st_build(uint8_t *f, const unsigned *keys, const uint8_t *ops, const uint32_t *vers, unsigned n,
                         uint32_t opaque)
{
    struct kvs_pkt_hdr *h = (struct kvs_pkt_hdr *)f;
    memset(f, 0, KVS_PAYLOAD_OFF);
    h->eth_type = kvs_bswap16(KVS_ETHERTYPE_IPV4);
    h->ip_ver_ihl = 0x45;
    h->ip_ttl = 64;
    h->ip_proto = KVS_IPPROTO_UDP;
    h->udp_sport = kvs_bswap16(0x9000);
    h->udp_dport = kvs_bswap16(KVS_UDP_PORT_BASE);
    h->batch_count = (uint8_t)n;
    h->batch_opaque = opaque;
    uint32_t off = KVS_PAYLOAD_OFF;
    for (unsigned i = 0; i < n; i++) {
        struct kvs_req_desc *d = (struct kvs_req_desc *)(f + off);
        unsigned put = ops[i] == KVS_OP_PUT;
        memset(d, 0, sizeof(*d));
        d->op = ops[i];
        d->kv_len = KVS_KV_LEN(8, put ? 8 : 0);
        d->keyhash = kvs_keyhash(&st_key[keys[i]], 8);
        memcpy(f + off + 24, &st_key[keys[i]], 8);
        off += 32;
        if (put) {
            uint64_t v = st_value(keys[i], vers[i]);
            memcpy(f + off, &v, 8);
            off += 8;
        }
    }
    h->ip_total_len = kvs_bswap16((uint16_t)(off - KVS_ETH_HDR_LEN));
    h->udp_len = kvs_bswap16((uint16_t)(off - KVS_ETH_HDR_LEN - KVS_IPV4_HDR_LEN));
    h->ip_csum = kvs_ipv4_checksum(f);
    return off;
}

/* Where self-test frames go in and come out: the software queue, or the fake NIC behind the real driver. */
static int g_use_fake_nic;
static struct plat_queue *g_soft;

static int st_inject(const uint8_t *f, uint32_t len)
{
    return g_use_fake_nic ? fake_nic_deliver(f, len) : plat_soft_inject(g_soft, f, len);
}

static int st_collect(uint8_t *out, uint32_t cap, uint32_t *len)
{
    return g_use_fake_nic ? fake_nic_transmit(out, cap, len) : plat_soft_collect(g_soft, out, cap, len);
}

#define ST_BURST 12

struct st_pkt {
    unsigned n, keys[4];
    uint8_t ops[4];
    uint32_t ver[4];
    uint32_t opaque;
};

static int selftest(struct kvs_core *c, uint64_t nreq, unsigned batch)
{
    static uint8_t f[KVS_NIC_BUF_SIZE], r[KVS_NIC_BUF_SIZE];
    static uint32_t pend[ST_KEYS];
    struct st_pkt pk[ST_BURST];
    uint64_t rng = 42, cand = 1, done = 0, bad = 0, gets = 0, hits = 0, misses = 0, dropped = 0, opaque = 0;
    for (unsigned k = 0; k < ST_KEYS; k++) { /* keys of this core's partition */
        while (kvs_partition_of(kvs_keyhash(&cand, 8), c->sh->cfg.partitions) != c->id)
            cand++;
        st_key[k] = cand++;
    }
    for (uint64_t round = 0; done < nreq + ST_KEYS; round++) {
        int load = round < ST_KEYS / 4;
        /* With the fake NIC, bursts of up to 12 frames: more than a small RX ring holds, so some are dropped. */
        /* (Never more than the TX ring holds: a response that finds the TX ring full is dropped.) */
        unsigned max_burst = c->sh->cfg.tx_ring - 1 < ST_BURST ? c->sh->cfg.tx_ring - 1 : ST_BURST;
        unsigned burst = (g_use_fake_nic && !load) ? 1 + (unsigned)(rng_next(&rng) % max_burst) : 1, accepted = 0;
        for (unsigned b = 0; b < burst; b++) {
            struct st_pkt *p = &pk[accepted];
            p->n = load ? 4 : batch ? batch : 1 + (unsigned)(rng_next(&rng) % 4);
            for (unsigned i = 0; i < p->n; i++) {
                unsigned k = load ? (unsigned)(round * 4 + i) : (unsigned)(rng_next(&rng) % ST_KEYS);
                for (unsigned j = 0; j < i; j++)
                    if (p->keys[j] == k)
                        k = (k + 1) % ST_KEYS, j = (unsigned)-1; /* distinct keys in a packet */
                p->keys[i] = k;
                p->ops[i] = (load || rng_next(&rng) % 100 >= 95) ? KVS_OP_PUT : KVS_OP_GET;
                p->ver[i] = p->ops[i] == KVS_OP_PUT ? ++pend[k] : 0;
            }
            p->opaque = (uint32_t)opaque++;
            uint32_t len = st_build(f, p->keys, p->ops, p->ver, p->n, p->opaque);
            if (st_inject(f, len) == 0)
                accepted++;
            else if (g_use_fake_nic)
                dropped++; /* the RX ring was full: the NIC dropped it */
            else
                return 1;
        }
        /* Poll until every accepted frame is answered; responses come back in order. */
        for (unsigned got = 0, idle = 0; got < accepted;) {
            if (kvs_core_poll(c) == 0 && ++idle > 1000)
                return 1;
            uint32_t rlen;
            while (got < accepted && st_collect(r, sizeof(r), &rlen)) {
                struct st_pkt *p = &pk[got++];
                const struct kvs_pkt_hdr *h = (const struct kvs_pkt_hdr *)r;
                uint32_t off = KVS_PAYLOAD_OFF;
                if (h->batch_count != p->n || h->batch_opaque != p->opaque || h->ip_csum != kvs_ipv4_checksum(r))
                    bad++;
                for (unsigned i = 0; i < p->n && off + 24 <= rlen; i++) {
                    const struct kvs_req_desc *d = (const struct kvs_req_desc *)(r + off);
                    unsigned k = p->keys[i];
                    off += 24;
                    if (d->op == KVS_OP_GET && p->ops[i] == KVS_OP_GET && d->result == KVS_RES_NOT_FOUND &&
                        c->own->tail > c->own->log_window) {
                        gets++;
                        misses++; /* the log has wrapped: eviction explains a miss */
                        continue;
                    }
                    if (d->result != KVS_RES_OK || d->op != p->ops[i]) {
                        bad++;
                        continue;
                    }
                    if (p->ops[i] == KVS_OP_PUT) {
                        st_ver[k] = p->ver[i];
                        continue;
                    }
                    uint64_t v;
                    memcpy(&v, r + off, 8);
                    off += 8;
                    gets++;
                    if (KVS_VALUE_LEN(d->kv_len) == 8 && v == st_value(k, st_ver[k]))
                        hits++;
                    else
                        bad++;
                }
                done += p->n;
            }
        }
    }
    printf("kvs selftest: %llu requests (%llu GETs, %llu right, %llu evicted), %llu wrong\n",
           (unsigned long long)done, (unsigned long long)gets, (unsigned long long)hits, (unsigned long long)misses,
           (unsigned long long)bad);
    if (g_use_fake_nic) {
        struct plat_nic_counters ctr;
        plat_queue_counters(c->q, &ctr);
        uint64_t groups, reclaimed;
        unsigned most_free, most_held;
        plat_tx_reclaim_counts(c->q, &groups, &reclaimed, &most_free, &most_held);
        printf("kvs selftest: fake NIC: %llu frames in, %llu out, %llu dropped (client saw %llu), %llu TX write-backs\n",
               (unsigned long long)ctr.rx_frames, (unsigned long long)ctr.tx_frames,
               (unsigned long long)ctr.rx_drops, (unsigned long long)dropped,
               (unsigned long long)fake_nic_tx_writebacks());
        printf("kvs selftest: driver: %llu TX reclaim groups, %llu descriptors reclaimed in them; at most %u TX "
               "descriptors free at a reclaim, %u holding a buffer\n",
               (unsigned long long)groups, (unsigned long long)reclaimed, most_free, most_held);
        if (ctr.rx_drops != dropped || ctr.rx_frames != ctr.tx_frames)
            bad++;
    }
    return bad != 0;
}

/* numa_report=1: where each partition is, by its core's socket and by the engine's page map (SOCKET_OF_ADDR). */
static void report_placement(const struct kvs_shared *sh)
{
    for (unsigned k = 0; k < sh->cfg.partitions; k++) {
        const struct kvs_partition *p = sh->parts[k];
        printf("kvs: partition %u core_socket %u log 0x%lx %lu log_socket %ld buckets 0x%lx %lu buckets_socket %ld\n",
               k, plat_socket_of(k), (unsigned long)p->log, (unsigned long)p->log_size, kvsim_socket_of_addr(p->log),
               (unsigned long)p->buckets, (unsigned long)((p->bucket_mask + 1) * sizeof(struct kvs_bucket)),
               kvsim_socket_of_addr(p->buckets));
    }
}

int main(int argc, char **argv)
{
    unsigned hart = plat_core_id(), harts = plat_num_cores();
    uint64_t selftest_n = 0, selftest_batch = 0, selftest_nic = 0, selftest_rs = 0;
    char *args[64];
    int nargs = 0;
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (i > 0 && prefix(argv[i], "selftest=", &v)) {
            for (selftest_n = 0; *v >= '0' && *v <= '9'; v++)
                selftest_n = selftest_n * 10 + (uint64_t)(*v - '0');
        } else if (i > 0 && prefix(argv[i], "selftest_nic=", &v)) {
            selftest_nic = *v == '1';
        } else if (i > 0 && prefix(argv[i], "selftest_rs=", &v)) {
            selftest_rs = *v == '1'; /* the fake NIC in report-status mode (DD only where the driver set RS) */
        } else if (i > 0 && prefix(argv[i], "selftest_batch=", &v)) {
            for (selftest_batch = 0; *v >= '0' && *v <= '9'; v++)
                selftest_batch = selftest_batch * 10 + (uint64_t)(*v - '0');
            if (selftest_batch > 4)
                selftest_batch = 4;
        } else if (nargs < 64) {
            args[nargs++] = argv[i];
        }
    }
    if (hart == 0) {
        const char *bad;
        kvs_config_default(&g_shared.cfg, harts);
        if (kvs_config_parse(&g_shared.cfg, nargs, args, &bad) != 0) {
            printf("kvs: bad argument '%s'\n", bad);
            exit_group(2);
        }
        const char *why = kvs_config_check(&g_shared.cfg);
        if (why) {
            printf("kvs: bad arguments: %s\n", why);
            exit_group(2);
        }
        plat_set_driver(g_shared.cfg.tx_rs, g_shared.cfg.tx_free, g_shared.cfg.buf_data, g_shared.cfg.buf_headroom,
                        g_shared.cfg.buf_meta);
        __atomic_store_n(&g_cfg_ready, 1, __ATOMIC_RELEASE);
    } else {
        while (!__atomic_load_n(&g_cfg_ready, __ATOMIC_ACQUIRE))
            KVS_CPU_RELAX();
    }
    const struct kvs_config *cfg = &g_shared.cfg;
    struct plat_queue *q;
    if (selftest_n && selftest_nic && hart == 0) {
        if (fake_nic_install() != 0)
            exit_group(1);
        if (selftest_rs)
            fake_nic_report_status();
    }
    g_use_fake_nic = selftest_n && selftest_nic;
    if (selftest_n && !selftest_nic)
        q = g_soft = plat_soft_queue_open(64);
    else
        q = plat_queue_open(hart, cfg->rx_ring, cfg->tx_ring);
    if (!q) {
        printf("kvs: hart %u: no NIC queue (none in this system, or bad ring sizes); selftest=N runs without one\n",
               hart);
        exit_group(1);
    }
    struct kvs_core *c = kvs_core_create(&g_shared, hart, q);
    if (!c) {
        printf("kvs: hart %u: out of memory for the partition\n", hart);
        exit_group(1);
    }
    kvs_wait_ready(&g_shared);
    if (hart == 0 && cfg->numa_report)
        report_placement(&g_shared);
    if (hart == 0)
        printf("kvs: %u cores, %s, prefetch %s, lru %s, log %llu KiB and %llu buckets per partition\n",
               cfg->partitions, cfg->crew ? "CREW" : "EREW", cfg->prefetch ? "on" : "off", cfg->lru ? "on" : "off",
               (unsigned long long)(cfg->log_size >> 10), (unsigned long long)cfg->buckets);
    if (selftest_n) {
        if (hart != 0)
            hart_exit(0);
        exit_group(selftest(c, selftest_n, (unsigned)selftest_batch));
    }
    if (hart == 0)
        printf("kvs: serving (queue %u, port %u on hart 0)\n", plat_queue_id(q), plat_queue_port(q));
    for (;;)
        kvs_core_poll(c);
}
