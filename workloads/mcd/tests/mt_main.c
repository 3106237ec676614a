/* mt_main.c - runs every registered test (or the ones named on the command line); --list names them. */
#include <stdlib.h>
#include <string.h>
#include "mt.h"

#define MT_MAX 256
static const char *g_names[MT_MAX];
static mt_fn g_fns[MT_MAX];
static unsigned g_n;
static int g_failed;

void mt_register(const char *name, mt_fn fn)
{
    if (g_n < MT_MAX) {
        g_names[g_n] = name;
        g_fns[g_n++] = fn;
    }
}

void mt_fail(const char *file, int line, const char *what, unsigned long long a, unsigned long long b, int has_ab)
{
    g_failed = 1;
    if (has_ab)
        printf("    %s:%d: %s (%llu != %llu)\n", file, line, what, a, b);
    else
        printf("    %s:%d: %s\n", file, line, what);
}

struct mcd_flow mt_flow_to_server(uint16_t client_port, uint16_t server_port)
{
    struct mcd_flow f = {{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}, MT_CLIENT_IP, MT_SERVER_IP, client_port,
                         server_port};
    return f;
}

struct mcd_server *mt_server_new(uint16_t port, size_t mem, unsigned buckets_log2, unsigned nconns)
{
    struct mcd_server *s = calloc(1, sizeof(*s));
    void *m = aligned_alloc(64, mem);
    struct mcd_conn *c = calloc(nconns, sizeof(*c));
    memset(m, 0, mem);
    if (mcd_server_init(s, port, m, mem, buckets_log2, c, nconns) != 0)
        abort();
    mcd_server_enable_tcp(s, calloc(nconns, sizeof(struct mcd_tcp_conn)), calloc(nconns, sizeof(uint16_t)), nconns);
    return s;
}

void mt_server_free(struct mcd_server *s)
{
    free(s->store.buckets);
    free(s->conns.slots);
    free(s->tcp.slots);
    free(s->tcp.out_list);
    free(s);
}

uint32_t mt_req(uint8_t *p, uint32_t cap, uint8_t op, const char *key, const uint8_t *val, uint32_t vlen,
                uint32_t flags, uint32_t opaque)
{
    uint8_t extras[8];
    mcd_put32(extras, flags);
    mcd_put32(extras + 4, 0);
    return mcd_msg_put(p, cap, MCD_MAGIC_REQ, op, 0, opaque, 0, extras, op == MCD_OP_SET ? 8 : 0,
                       (const uint8_t *)key, (uint16_t)strlen(key), val, vlen);
}

uint32_t mt_frame(uint8_t *f, uint32_t cap, uint16_t client_port, uint16_t server_port, uint16_t req_id,
                  const uint8_t *msgs, uint32_t len)
{
    uint8_t payload[MCD_MAX_FRAME];
    struct mcd_udp_hdr h = {req_id, 0, 1, 0};
    mcd_udp_hdr_put(payload, &h);
    memcpy(payload + MCD_UDP_FRAME_HLEN, msgs, len);
    struct mcd_flow fl = mt_flow_to_server(client_port, server_port);
    return mcd_net_build(f, cap, &fl, 7, payload, MCD_UDP_FRAME_HLEN + len);
}

int mt_reply(const uint8_t *f, uint32_t len, uint16_t client_port, uint16_t req_id, const uint8_t **msgs,
             uint32_t *mlen)
{
    struct mcd_flow fl;
    const uint8_t *p;
    uint32_t n;
    struct mcd_udp_hdr h;
    if (mcd_net_parse(f, len, &fl, &p, &n) != 0)
        return -1;
    if (fl.dst_port != client_port || fl.dst_ip != MT_CLIENT_IP || fl.src_ip != MT_SERVER_IP)
        return -2;
    if (mcd_udp_hdr_parse(p, n, &h) != 0 || h.req_id != req_id || h.seq != 0 || h.count != 1)
        return -3;
    *msgs = p + MCD_UDP_FRAME_HLEN;
    *mlen = n - MCD_UDP_FRAME_HLEN;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (unsigned i = 0; i < g_n; i++)
            printf("%s\n", g_names[i]);
        return 0;
    }
    unsigned run = 0, passed = 0;
    for (unsigned i = 0; i < g_n; i++) {
        int wanted = argc == 1;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], g_names[i]) == 0;
        if (!wanted)
            continue;
        g_failed = 0;
        g_fns[i]();
        run++;
        passed += !g_failed;
        printf("%s %s\n", g_failed ? "FAIL" : "PASS", g_names[i]);
    }
    printf("%u tests, %u passed, %u failed\n", run, passed, run - passed);
    return passed == run ? 0 : 1;
}
