/*
 * End to end through the loopback NIC: a client (this file) sends batched GET/PUT packets to a 4-core server and
 * checks every response against a reference model. Rounds use each key at most once, so every GET must return the
 * value of the key's latest PUT from earlier rounds; a miss is accepted only where the partition has evicted
 * something (log wrapped or index eviction), and the strict configurations (log and index far larger than the
 * data) accept none.
 */
#include <string.h>
#include "kt.h"

#define E2E_CORES 4
#define E2E_MAX_KEYS 2048
#define E2E_PKTS_PER_ROUND 48

struct e2e_cfg {
    unsigned crew, prefetch, batch, get_pct, strict;
    uint64_t log_size;
    unsigned nkeys, rounds;
};

struct e2e_key {
    char key[48];
    uint32_t klen;
    unsigned part;
    uint32_t ver, vlen;   /* model: latest acknowledged PUT (ver 0 = never) */
    uint32_t round_used;
};

struct e2e_pkt {
    unsigned n, core;
    unsigned key[KVS_MAX_BATCH];
    uint8_t op[KVS_MAX_BATCH];
    uint32_t new_vlen[KVS_MAX_BATCH];
    int answered;
};

static struct e2e_key g_keys[E2E_MAX_KEYS];
static unsigned g_part_keys[E2E_CORES][E2E_MAX_KEYS], g_part_n[E2E_CORES];
static struct e2e_pkt g_pkts[E2E_PKTS_PER_ROUND];

static void e2e_value(uint8_t *v, uint32_t n, unsigned key, uint32_t ver)
{
    uint64_t s = (uint64_t)key << 32 | ver;
    for (uint32_t i = 0; i < n; i += 8) {
        uint64_t r = kt_rand(&s);
        for (uint32_t j = 0; j < 8 && i + j < n; j++)
            v[i + j] = (uint8_t)(r >> (8 * j));
    }
}

struct e2e_result {
    uint64_t gets, hits, misses, puts;
};

/* Check one response frame against the packet it answers; update the model. Returns 0 or a line number. */
static int check_response(struct kt_server *s, const uint8_t *resp, uint32_t rlen, const struct e2e_cfg *cfg,
                          struct e2e_result *res)
{
    struct kt_resp rr[KVS_MAX_BATCH];
    unsigned n;
    uint32_t opaque;
    if (kt_parse_response(resp, rlen, rr, &n, &opaque) != 0)
        return __LINE__;
    if (opaque >= E2E_PKTS_PER_ROUND)
        return __LINE__;
    struct e2e_pkt *pk = &g_pkts[opaque];
    if (pk->answered || n != pk->n)
        return __LINE__;
    pk->answered = 1;
    uint8_t want[128];
    for (unsigned i = 0; i < n; i++) {
        struct e2e_key *k = &g_keys[pk->key[i]];
        if (rr[i].op != pk->op[i] || rr[i].keyhash != kvs_keyhash(k->key, k->klen) || rr[i].klen != k->klen)
            return __LINE__;
        if (pk->op[i] == KVS_OP_PUT) {
            if (rr[i].result != KVS_RES_OK)
                return __LINE__;
            k->ver++;
            k->vlen = pk->new_vlen[i];
            res->puts++;
            continue;
        }
        res->gets++;
        if (rr[i].result == KVS_RES_OK) {
            if (k->ver == 0 || rr[i].vlen != k->vlen)
                return __LINE__;
            e2e_value(want, k->vlen, pk->key[i], k->ver);
            if (memcmp(rr[i].val, want, k->vlen) != 0)
                return __LINE__; /* a wrong value is never acceptable */
            res->hits++;
        } else if (rr[i].result == KVS_RES_NOT_FOUND) {
            const struct kvs_partition *p = s->sh.parts[k->part];
            int evicted = p->tail > p->log_size || p->st.index_evictions > 0;
            if (k->ver != 0 && (cfg->strict || !evicted))
                return __LINE__;
            res->misses++;
        } else {
            return __LINE__;
        }
    }
    return 0;
}

/* Send one round of packets, run the server, check all responses. */
static int run_round(struct kt_server *s, const struct e2e_cfg *cfg, uint32_t round, uint64_t *rng, int load,
                     unsigned *load_next, struct e2e_result *res)
{
    uint8_t f[KVS_NIC_BUF_SIZE], vals[KVS_MAX_BATCH][128];
    unsigned npk = 0;
    for (unsigned t = 0; t < E2E_PKTS_PER_ROUND; t++) {
        unsigned part = (unsigned)(kt_rand(rng) % E2E_CORES);
        struct e2e_pkt *pk = &g_pkts[npk];
        memset(pk, 0, sizeof(*pk));
        struct kt_req rq[KVS_MAX_BATCH];
        int all_get = 1;
        for (unsigned i = 0; i < cfg->batch; i++) {
            unsigned id;
            if (load) { /* the load phase walks every partition's keys in order */
                part = t % E2E_CORES;
                if (load_next[part] >= g_part_n[part])
                    break;
                id = g_part_keys[part][load_next[part]++];
            } else {
                unsigned tries = 0;
                do
                    id = g_part_keys[part][kt_rand(rng) % g_part_n[part]];
                while (g_keys[id].round_used == round && ++tries < 64);
                if (g_keys[id].round_used == round)
                    break;
            }
            g_keys[id].round_used = round;
            struct e2e_key *k = &g_keys[id];
            uint8_t op = (!load && kt_rand(rng) % 100 < cfg->get_pct) ? KVS_OP_GET : KVS_OP_PUT;
            pk->key[pk->n] = id;
            pk->op[pk->n] = op;
            rq[pk->n] = (struct kt_req){.op = op, .key = (uint8_t *)k->key, .klen = k->klen};
            if (op == KVS_OP_PUT) {
                /* Half the updates keep the length (in place), the others change it (append or shrink). */
                uint32_t vl = (k->vlen && kt_rand(rng) % 2) ? k->vlen : 8 + (uint32_t)(kt_rand(rng) % 96);
                pk->new_vlen[pk->n] = vl;
                e2e_value(vals[pk->n], vl, id, k->ver + 1);
                rq[pk->n].val = vals[pk->n];
                rq[pk->n].vlen = vl;
                all_get = 0;
            }
            pk->n++;
        }
        if (pk->n == 0)
            continue;
        /* EREW, and CREW packets with a write, go to the owner; CREW read-only packets to any core. */
        pk->core = (cfg->crew && all_get) ? (unsigned)(kt_rand(rng) % E2E_CORES) : part;
        uint32_t len = kt_build(f, sizeof(f), rq, pk->n, (uint16_t)(KVS_UDP_PORT_BASE + pk->core), npk);
        if (len == 0 || native_inject(s->q[pk->core], f, len) != 0)
            return __LINE__;
        npk++;
    }
    kt_server_drain(s);
    uint8_t resp[KVS_NIC_BUF_SIZE];
    uint32_t rlen;
    unsigned got = 0;
    for (unsigned c = 0; c < E2E_CORES; c++)
        while (native_collect(s->q[c], resp, sizeof(resp), &rlen)) {
            int bad = check_response(s, resp, rlen, cfg, res);
            if (bad)
                return bad;
            got++;
        }
    return got == npk ? 0 : __LINE__;
}

static int run_e2e(const struct e2e_cfg *cfg, struct e2e_result *res, struct kt_server *s)
{
    memset(res, 0, sizeof(*res));
    if (kt_server_start(s, E2E_CORES, cfg->crew, cfg->prefetch, cfg->log_size, 1024) != 0)
        return __LINE__;
    memset(g_part_n, 0, sizeof(g_part_n));
    for (unsigned i = 0; i < cfg->nkeys; i++) {
        struct e2e_key *k = &g_keys[i];
        memset(k, 0, sizeof(*k));
        int n = snprintf(k->key, sizeof(k->key), "e2e-key-%u", i);
        while (n < (int)(8 + (i % 5) * 8)) /* 8..40-byte keys */
            k->key[n++] = (char)('a' + i % 26);
        k->klen = (uint32_t)n;
        k->part = kvs_partition_of(kvs_keyhash(k->key, k->klen), E2E_CORES);
        g_part_keys[k->part][g_part_n[k->part]++] = i;
    }
    uint64_t rng = 12345 + cfg->crew * 7 + cfg->prefetch * 11 + cfg->batch * 13 + cfg->get_pct;
    unsigned load_next[E2E_CORES] = {0};
    uint32_t round = 1;
    for (;;) { /* load every key */
        int bad = run_round(s, cfg, round++, &rng, 1, load_next, res);
        if (bad)
            return bad;
        unsigned left = 0;
        for (unsigned p = 0; p < E2E_CORES; p++)
            left += g_part_n[p] - load_next[p];
        if (!left)
            break;
    }
    for (unsigned r = 0; r < cfg->rounds; r++) {
        int bad = run_round(s, cfg, round++, &rng, 0, load_next, res);
        if (bad)
            return bad;
    }
    for (unsigned c = 0; c < E2E_CORES; c++)
        if (native_bufs_free(s->q[c]) != native_bufs_total(s->q[c]) || s->core[c]->st.dropped)
            return __LINE__;
    return 0;
}

static void e2e_case(unsigned crew, unsigned prefetch, unsigned batch, unsigned get_pct)
{
    struct e2e_cfg cfg = {.crew = crew, .prefetch = prefetch, .batch = batch, .get_pct = get_pct, .strict = 1,
                          .log_size = 4 << 20, .nkeys = 1500, .rounds = 30};
    struct e2e_result res;
    struct kt_server s;
    int bad = run_e2e(&cfg, &res, &s);
    if (bad)
        printf("    e2e failed at test_e2e.c:%d\n", bad);
    KT_EQ(bad, 0);
    KT_EQ(res.misses, 0);
    KT_EQ(res.hits, res.gets);
    KT_CHECK(res.gets > 0 && res.puts > cfg.nkeys);
    /* The mix is about what was asked for. */
    uint64_t mixed = res.gets + res.puts - cfg.nkeys;
    KT_CHECK(res.gets * 100 >= mixed * (get_pct - 5) && res.gets * 100 <= mixed * (get_pct + 5));
    uint64_t inplace = 0;
    for (unsigned c = 0; c < E2E_CORES; c++) {
        inplace += s.sh.parts[c]->st.put_inplace;
        KT_EQ(s.sh.parts[c]->st.index_evictions, 0);
    }
    KT_CHECK(inplace > 0);
    if (crew) { /* some GETs took the reader path: fewer owner GETs than GETs in all */
        uint64_t owner_gets = 0;
        for (unsigned c = 0; c < E2E_CORES; c++)
            owner_gets += s.sh.parts[c]->st.gets;
        KT_CHECK(owner_gets < res.gets);
    } else { /* EREW: every GET is the owner's */
        uint64_t owner_gets = 0;
        for (unsigned c = 0; c < E2E_CORES; c++)
            owner_gets += s.sh.parts[c]->st.gets;
        KT_EQ(owner_gets, res.gets);
    }
}

#define E2E(name, crew, pf, batch, get)                                                                         \
    KT_TEST(name) { e2e_case(crew, pf, batch, get); }

E2E(e2e_erew_prefetch_b1_get95, 0, 1, 1, 95)
E2E(e2e_erew_prefetch_b1_get50, 0, 1, 1, 50)
E2E(e2e_erew_prefetch_b4_get95, 0, 1, 4, 95)
E2E(e2e_erew_prefetch_b4_get50, 0, 1, 4, 50)
E2E(e2e_erew_noprefetch_b1_get95, 0, 0, 1, 95)
E2E(e2e_erew_noprefetch_b1_get50, 0, 0, 1, 50)
E2E(e2e_erew_noprefetch_b4_get95, 0, 0, 4, 95)
E2E(e2e_erew_noprefetch_b4_get50, 0, 0, 4, 50)
E2E(e2e_crew_prefetch_b1_get95, 1, 1, 1, 95)
E2E(e2e_crew_prefetch_b1_get50, 1, 1, 1, 50)
E2E(e2e_crew_prefetch_b4_get95, 1, 1, 4, 95)
E2E(e2e_crew_prefetch_b4_get50, 1, 1, 4, 50)
E2E(e2e_crew_noprefetch_b1_get95, 1, 0, 1, 95)
E2E(e2e_crew_noprefetch_b1_get50, 1, 0, 1, 50)
E2E(e2e_crew_noprefetch_b4_get95, 1, 0, 4, 95)
E2E(e2e_crew_noprefetch_b4_get50, 1, 0, 4, 50)

/* A log far smaller than the data: misses happen, explained by eviction; every hit is still exact. */
static void e2e_evicting(unsigned crew)
{
    struct e2e_cfg cfg = {.crew = crew, .prefetch = 1, .batch = 4, .get_pct = 50, .strict = 0,
                          .log_size = 16 << 10, .nkeys = 1500, .rounds = 30};
    struct e2e_result res;
    struct kt_server s;
    int bad = run_e2e(&cfg, &res, &s);
    if (bad)
        printf("    e2e failed at test_e2e.c:%d\n", bad);
    KT_EQ(bad, 0);
    KT_CHECK(res.misses > 0 && res.hits > 0);
    uint64_t wraps = 0;
    for (unsigned c = 0; c < E2E_CORES; c++)
        wraps += s.sh.parts[c]->st.wrap_skips;
    KT_CHECK(wraps > 0);
}

KT_TEST(e2e_erew_evicting_log) { e2e_evicting(0); }
KT_TEST(e2e_crew_evicting_log) { e2e_evicting(1); }
