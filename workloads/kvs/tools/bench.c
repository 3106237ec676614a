/*
 * bench.c - native throughput of the KVS server loop on one core (host, -O2, no sanitizers): tiny items
 * (8-byte keys and values), uniform keys, 95% GET, through the loopback NIC. Only the server's poll calls are timed
 * (packet injection and response collection are the client's cost and are left out).
 * Usage: kvs_bench [keys] [packets] [one]
 * `one`: only the STANDARD point (EREW, prefetch on, one request per packet), for counting instructions per request
 * on two ISAs with the same source (the difference of two packet counts cancels the load and set-up).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../tests/kt.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define POOL 4096

static void run(unsigned crew, unsigned prefetch, unsigned batch, uint64_t nkeys, uint64_t npkts)
{
    struct kt_server s;
    native_platform_free_all();
    if (kt_server_start(&s, 1, crew, prefetch, 128ull << 20, 1ull << 20) != 0) {
        printf("setup failed\n");
        exit(1);
    }
    static uint8_t pool[POOL][256], resp[KVS_NIC_BUF_SIZE];
    static uint32_t plen[POOL];
    uint8_t f[KVS_NIC_BUF_SIZE];
    uint64_t v = 0, rng = 7;
    uint32_t rlen;
    /* load */
    for (uint64_t k = 0; k < nkeys; k += 4) {
        struct kt_req r[4];
        uint64_t keys[4];
        unsigned n = 0;
        for (; n < 4 && k + n < nkeys; n++) {
            keys[n] = k + n;
            r[n] = (struct kt_req){.op = KVS_OP_PUT, .key = (uint8_t *)&keys[n], .klen = 8, .val = (uint8_t *)&v,
                                   .vlen = 8};
        }
        uint32_t len = kt_build(f, sizeof(f), r, n, KVS_UDP_PORT_BASE, 0);
        native_inject(s.q[0], f, len);
        kvs_core_poll(s.core[0]);
        native_collect(s.q[0], resp, sizeof(resp), &rlen);
    }
    for (unsigned i = 0; i < POOL; i++) {
        struct kt_req r[KVS_MAX_BATCH];
        uint64_t keys[KVS_MAX_BATCH];
        for (unsigned j = 0; j < batch; j++) {
            keys[j] = kt_rand(&rng) % nkeys;
            int get = kt_rand(&rng) % 100 < 95;
            r[j] = (struct kt_req){.op = get ? KVS_OP_GET : KVS_OP_PUT, .key = (uint8_t *)&keys[j], .klen = 8,
                                   .val = (uint8_t *)&v, .vlen = get ? 0 : 8};
        }
        plen[i] = kt_build(pool[i], sizeof(pool[i]), r, batch, KVS_UDP_PORT_BASE, i);
    }
    double busy = 0;
    uint64_t sent = 0;
    while (sent < npkts) {
        for (unsigned j = 0; j < 32; j++, sent++)
            native_inject(s.q[0], pool[sent % POOL], plen[sent % POOL]);
        double t0 = now();
        kvs_core_poll(s.core[0]);
        busy += now() - t0;
        while (native_collect(s.q[0], resp, sizeof(resp), &rlen))
            ;
    }
    const struct kvs_core_stats *st = &s.core[0]->st;
    printf("%s prefetch=%u batch=%-2u keys=%-8llu %7.2f Mreq/s %7.1f ns/req  (ok %llu, misses %llu)\n",
           crew ? "CREW" : "EREW", prefetch, batch, (unsigned long long)nkeys, sent * batch / busy / 1e6,
           busy / (sent * batch) * 1e9, (unsigned long long)st->responses_ok, (unsigned long long)st->misses);
}

int main(int argc, char **argv)
{
    uint64_t nkeys = argc > 1 ? strtoull(argv[1], 0, 0) : 1u << 20;
    uint64_t npkts = argc > 2 ? strtoull(argv[2], 0, 0) : 1u << 21;
    if (argc > 3 && strcmp(argv[3], "one") == 0) {
        run(0, 1, 1, nkeys, npkts);
        native_platform_free_all();
        return 0;
    }
    for (unsigned batch = 1; batch <= 4; batch *= 4)
        for (unsigned crew = 0; crew < 2; crew++)
            for (int pf = 1; pf >= 0; pf--)
                run(crew, (unsigned)pf, batch, nkeys, npkts / batch);
    native_platform_free_all();
    return 0;
}
