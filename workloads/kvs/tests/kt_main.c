/* kt_main.c - test runner and shared helpers. Usage: kvs_tests [--list] [name ...] */
#include <stdlib.h>
#include <string.h>
#include "kt.h"

#define KT_MAX 256
static struct {
    const char *name;
    kt_fn fn;
} g_tests[KT_MAX];
static unsigned g_ntests;
int kt_failed;

void kt_register(const char *name, kt_fn fn)
{
    if (g_ntests < KT_MAX)
        g_tests[g_ntests++] = (typeof(g_tests[0])){name, fn};
}

void kt_fail(const char *file, int line, const char *what, unsigned long long a, unsigned long long b, int has_ab)
{
    kt_failed = 1;
    if (has_ab)
        printf("    %s:%d: check failed: %s (0x%llx vs 0x%llx, %llu vs %llu)\n", file, line, what, a, b, a, b);
    else
        printf("    %s:%d: check failed: %s\n", file, line, what);
}

#ifndef KT_NO_MAIN
static int cmp_tests(const void *a, const void *b)
{
    return strcmp(((const typeof(g_tests[0]) *)a)->name, ((const typeof(g_tests[0]) *)b)->name);
}

int main(int argc, char **argv)
{
    qsort(g_tests, g_ntests, sizeof(g_tests[0]), cmp_tests);
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (unsigned i = 0; i < g_ntests; i++)
            printf("%s\n", g_tests[i].name);
        return 0;
    }
    unsigned run = 0, failed = 0;
    for (unsigned i = 0; i < g_ntests; i++) {
        int selected = argc == 1;
        for (int a = 1; a < argc; a++)
            if (strcmp(argv[a], g_tests[i].name) == 0)
                selected = 1;
        if (!selected)
            continue;
        kt_failed = 0;
        native_platform_init(1, 1);
        kvs_test_hook = 0;
        g_tests[i].fn();
        kvs_test_hook = 0;
        native_platform_free_all();
        run++;
        if (kt_failed)
            failed++;
        printf("%s %s\n", kt_failed ? "FAIL" : "PASS", g_tests[i].name);
        fflush(stdout);
    }
    printf("%u tests, %u passed, %u failed\n", run, run - failed, failed);
    return failed ? 1 : 0;
}
#endif

/* ---------------------------------------------------------------------------------------------------------- */

uint32_t kt_build(uint8_t *frame, uint32_t cap, const struct kt_req *reqs, unsigned n, uint16_t dport,
                  uint32_t opaque)
{
    uint32_t off = KVS_PAYLOAD_OFF;
    for (unsigned i = 0; i < n; i++)
        off += KVS_REQ_DESC_LEN + KVS_PAD8(reqs[i].klen) + KVS_PAD8(reqs[i].vlen);
    if (off > cap)
        return 0;
    memset(frame, 0, off);
    struct kvs_pkt_hdr *h = (struct kvs_pkt_hdr *)frame;
    const uint8_t cmac[6] = {0x02, 0, 0, 0, 0, 0x01}, smac[6] = {0x02, 0, 0, 0, 0, 0x02};
    memcpy(h->eth_src, cmac, 6);
    memcpy(h->eth_dst, smac, 6);
    h->eth_type = kvs_bswap16(KVS_ETHERTYPE_IPV4);
    h->ip_ver_ihl = 0x45;
    h->ip_total_len = kvs_bswap16((uint16_t)(off - KVS_ETH_HDR_LEN));
    h->ip_id = kvs_bswap16(0x1234);
    h->ip_ttl = 32;
    h->ip_proto = KVS_IPPROTO_UDP;
    h->ip_src[0] = kvs_bswap16(0x0a00);
    h->ip_src[1] = kvs_bswap16(0x0001);
    h->ip_dst[0] = kvs_bswap16(0x0a00);
    h->ip_dst[1] = kvs_bswap16(0x0002);
    h->udp_sport = kvs_bswap16(0x9000);
    h->udp_dport = kvs_bswap16(dport);
    h->udp_len = kvs_bswap16((uint16_t)(off - KVS_ETH_HDR_LEN - KVS_IPV4_HDR_LEN));
    h->batch_count = (uint8_t)n;
    h->batch_opaque = opaque;
    h->ip_csum = kvs_ipv4_checksum(frame);
    uint32_t p = KVS_PAYLOAD_OFF;
    for (unsigned i = 0; i < n; i++) {
        struct kvs_req_desc *d = (struct kvs_req_desc *)(frame + p);
        d->op = reqs[i].op;
        d->kv_len = KVS_KV_LEN(reqs[i].klen, reqs[i].vlen);
        d->keyhash = reqs[i].keyhash ? reqs[i].keyhash : kvs_keyhash(reqs[i].key, reqs[i].klen);
        d->expire = reqs[i].expire;
        p += KVS_REQ_DESC_LEN;
        if (reqs[i].klen)
            memcpy(frame + p, reqs[i].key, reqs[i].klen);
        p += KVS_PAD8(reqs[i].klen);
        if (reqs[i].vlen)
            memcpy(frame + p, reqs[i].val, reqs[i].vlen);
        p += KVS_PAD8(reqs[i].vlen);
    }
    return off;
}

int kt_parse_response(const uint8_t *frame, uint32_t len, struct kt_resp *out, unsigned *n, uint32_t *opaque)
{
    if (len < KVS_PAYLOAD_OFF || len > KVS_MAX_FRAME_LEN)
        return -1;
    const struct kvs_pkt_hdr *h = (const struct kvs_pkt_hdr *)frame;
    if (h->eth_type != kvs_bswap16(KVS_ETHERTYPE_IPV4) || h->ip_ver_ihl != 0x45 || h->ip_proto != KVS_IPPROTO_UDP)
        return -2;
    if (kvs_bswap16(h->ip_total_len) + KVS_ETH_HDR_LEN != len ||
        kvs_bswap16(h->udp_len) + KVS_ETH_HDR_LEN + KVS_IPV4_HDR_LEN != len)
        return -3;
    if (h->ip_csum != kvs_ipv4_checksum(frame))
        return -4;
    unsigned cnt = h->batch_count;
    if (cnt == 0 || cnt > KVS_MAX_BATCH)
        return -5;
    uint32_t off = KVS_PAYLOAD_OFF;
    for (unsigned i = 0; i < cnt; i++) {
        if (off + KVS_REQ_DESC_LEN > len)
            return -6;
        const struct kvs_req_desc *d = (const struct kvs_req_desc *)(frame + off);
        struct kt_resp *r = &out[i];
        r->op = d->op;
        r->result = d->result;
        r->klen = KVS_KEY_LEN(d->kv_len);
        r->vlen = KVS_VALUE_LEN(d->kv_len);
        r->keyhash = d->keyhash;
        r->expire = d->expire;
        if (d->result == 0 || d->reserved || d->reserved2)
            return -7;
        if (r->vlen && !(d->op == KVS_OP_GET && d->result == KVS_RES_OK))
            return -8;
        off += KVS_REQ_DESC_LEN;
        r->val = frame + off;
        if (off + KVS_PAD8(r->vlen) > len)
            return -9;
        for (uint32_t k = r->vlen; k < KVS_PAD8(r->vlen); k++)
            if (frame[off + k])
                return -10;
        off += KVS_PAD8(r->vlen);
    }
    if (off != len)
        return -11;
    *n = cnt;
    *opaque = h->batch_opaque;
    return 0;
}

int kt_server_start(struct kt_server *s, unsigned ncores, unsigned crew, unsigned prefetch, uint64_t log_size,
                    uint64_t buckets)
{
    memset(s, 0, sizeof(*s));
    if (ncores > 16)
        return -1;
    native_platform_init(ncores, 1);
    s->ncores = ncores;
    kvs_config_default(&s->sh.cfg, ncores);
    s->sh.cfg.crew = crew;
    s->sh.cfg.prefetch = prefetch;
    s->sh.cfg.log_size = log_size;
    s->sh.cfg.buckets = buckets;
    s->sh.cfg.housekeeping_log2 = 4;
    s->sh.cfg.crew_max_spins = 1u << 16; /* a version left odd fails fast (BUSY) instead of hanging */
    for (unsigned c = 0; c < ncores; c++) {
        native_set_core(c);
        s->q[c] = native_queue_create(c, 256, 128);
        s->core[c] = kvs_core_create(&s->sh, c, plat_queue_open(c, 0, 0));
        if (!s->q[c] || !s->core[c])
            return -1;
    }
    kvs_wait_ready(&s->sh);
    return 0;
}

void kt_server_drain(struct kt_server *s)
{
    for (;;) {
        unsigned pending = 0;
        for (unsigned c = 0; c < s->ncores; c++) {
            native_set_core(c);
            kvs_core_poll(s->core[c]);
            pending += native_rx_pending(s->q[c]);
        }
        if (!pending)
            return;
    }
}

int kt_roundtrip(struct kt_server *s, unsigned core, const uint8_t *frame, uint32_t len, uint8_t *resp,
                 uint32_t *resp_len)
{
    if (native_inject(s->q[core], frame, len) != 0)
        return 0;
    kt_server_drain(s);
    return native_collect(s->q[core], resp, KVS_NIC_BUF_SIZE, resp_len);
}

uint32_t kt_key_for_partition(char *buf, unsigned part, unsigned parts, uint64_t *counter)
{
    for (;;) {
        int n = snprintf(buf, 64, "key-%08llu", (unsigned long long)(*counter)++);
        if (kvs_partition_of(kvs_keyhash(buf, (size_t)n), parts) == part)
            return (uint32_t)n;
    }
}

struct kvs_partition *kt_partition(uint64_t buckets, uint64_t log_size, int crew)
{
    struct kvs_partition *p = plat_alloc_local(sizeof(*p), 64);
    struct kvs_bucket *b = plat_alloc_local(buckets * sizeof(struct kvs_bucket), 128);
    uint8_t *log = plat_alloc_local(log_size, 4096);
    if (!p || !b || !log || kvs_partition_init(p, 0, b, buckets, log, log_size, crew) != 0)
        return 0;
    return p;
}
