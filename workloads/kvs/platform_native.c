/* platform_native.c - the host implementation of platform.h: simulated cores chosen by the caller, memory from the
 * C library, and a software loopback NIC. Single-threaded: the test harness runs the cores in turn. */
#include <stdlib.h>
#include <string.h>
#include "native_nic.h"
#include "kvs_abi.h"

struct fifo_slot {
    uint32_t buf, len;
};

struct plat_queue {
    unsigned core;
    uint8_t *bufs;
    unsigned nbufs;
    uint32_t *free_list;
    unsigned nfree;
    struct fifo_slot *rx, *tx;
    unsigned cap, rx_head, rx_count, tx_head, tx_count;
    struct plat_nic_counters ctr;
};

#define MAX_CORES 1024
static unsigned g_cores = 1, g_sockets = 1, g_current;
static struct plat_queue *g_queues[MAX_CORES];
static void **g_allocs;
static size_t g_nallocs, g_allocs_cap;

void native_platform_init(unsigned num_cores, unsigned sockets)
{
    g_cores = num_cores ? num_cores : 1;
    g_sockets = sockets ? sockets : 1;
    g_current = 0;
}

void native_set_core(unsigned core) { g_current = core; }

unsigned plat_core_id(void) { return g_current; }
unsigned plat_num_cores(void) { return g_cores; }
unsigned plat_socket_of(unsigned core) { return core * g_sockets / g_cores; }

void *plat_alloc_local(size_t bytes, size_t align)
{
    if (align < sizeof(void *))
        align = sizeof(void *);
    size_t rounded = (bytes + align - 1) / align * align;
    void *p = aligned_alloc(align, rounded ? rounded : align);
    if (!p)
        return 0;
    memset(p, 0, rounded);
    if (g_nallocs == g_allocs_cap) {
        size_t cap = g_allocs_cap ? g_allocs_cap * 2 : 64;
        void **n = realloc(g_allocs, cap * sizeof(void *));
        if (!n) {
            free(p);
            return 0;
        }
        g_allocs = n;
        g_allocs_cap = cap;
    }
    g_allocs[g_nallocs++] = p;
    return p;
}

/* The host has one memory as far as these tests go: the socket only matters in the simulator. */
void *plat_alloc_on(size_t bytes, size_t align, unsigned socket)
{
    (void)socket;
    return plat_alloc_local(bytes, align);
}

void native_platform_free_all(void)
{
    for (size_t i = 0; i < g_nallocs; i++)
        free(g_allocs[i]);
    free(g_allocs);
    g_allocs = 0;
    g_nallocs = g_allocs_cap = 0;
    memset(g_queues, 0, sizeof(g_queues));
}

struct plat_queue *native_queue_create(unsigned core, unsigned nbufs, unsigned fifo_cap)
{
    if (core >= MAX_CORES || nbufs == 0 || fifo_cap == 0)
        return 0;
    struct plat_queue *q = plat_alloc_local(sizeof(*q), 64);
    if (!q)
        return 0;
    q->core = core;
    q->bufs = plat_alloc_local((size_t)nbufs * KVS_NIC_BUF_SIZE, 4096);
    q->free_list = plat_alloc_local(nbufs * sizeof(uint32_t), 8);
    q->rx = plat_alloc_local(fifo_cap * sizeof(struct fifo_slot), 8);
    q->tx = plat_alloc_local(fifo_cap * sizeof(struct fifo_slot), 8);
    if (!q->bufs || !q->free_list || !q->rx || !q->tx)
        return 0;
    q->nbufs = nbufs;
    q->cap = fifo_cap;
    for (unsigned i = 0; i < nbufs; i++)
        q->free_list[q->nfree++] = nbufs - 1 - i;
    g_queues[core] = q;
    return q;
}

struct plat_queue *plat_queue_open(unsigned core, unsigned rx_ring, unsigned tx_ring)
{
    (void)rx_ring, (void)tx_ring;
    return core < MAX_CORES ? g_queues[core] : 0;
}

int native_inject(struct plat_queue *q, const uint8_t *frame, uint32_t len)
{
    if (q->nfree == 0 || q->rx_count == q->cap || len > KVS_NIC_BUF_SIZE) {
        q->ctr.rx_drops++;
        return -1;
    }
    uint32_t b = q->free_list[--q->nfree];
    uint8_t *dst = q->bufs + (size_t)b * KVS_NIC_BUF_SIZE;
    memcpy(dst, frame, len);
    /* Leave recognizable garbage after the frame, as a reused buffer would have. */
    memset(dst + len, 0xa5, KVS_NIC_BUF_SIZE - len);
    q->rx[(q->rx_head + q->rx_count) % q->cap] = (struct fifo_slot){b, len};
    q->rx_count++;
    q->ctr.rx_frames++;
    return 0;
}

int native_collect(struct plat_queue *q, uint8_t *out, uint32_t cap, uint32_t *len)
{
    if (q->tx_count == 0)
        return 0;
    struct fifo_slot s = q->tx[q->tx_head];
    q->tx_head = (q->tx_head + 1) % q->cap;
    q->tx_count--;
    uint32_t n = s.len < cap ? s.len : cap;
    memcpy(out, q->bufs + (size_t)s.buf * KVS_NIC_BUF_SIZE, n);
    *len = s.len;
    q->free_list[q->nfree++] = s.buf;
    return 1;
}

unsigned native_rx_pending(const struct plat_queue *q) { return q->rx_count; }
unsigned native_tx_pending(const struct plat_queue *q) { return q->tx_count; }
unsigned native_bufs_free(const struct plat_queue *q) { return q->nfree; }
unsigned native_bufs_total(const struct plat_queue *q) { return q->nbufs; }

unsigned plat_rx_burst(struct plat_queue *q, struct plat_pkt *pkts, unsigned max)
{
    unsigned n = 0;
    while (n < max && q->rx_count) {
        struct fifo_slot s = q->rx[q->rx_head];
        q->rx_head = (q->rx_head + 1) % q->cap;
        q->rx_count--;
        pkts[n].data = q->bufs + (size_t)s.buf * KVS_NIC_BUF_SIZE;
        pkts[n].len = s.len;
        pkts[n].cap = KVS_NIC_BUF_SIZE;
        pkts[n].buf = s.buf;
        pkts[n].pad = 0;
        n++;
    }
    return n;
}

unsigned plat_tx_burst(struct plat_queue *q, struct plat_pkt *pkts, unsigned n)
{
    unsigned sent = 0;
    for (unsigned i = 0; i < n; i++) {
        if (q->tx_count == q->cap || pkts[i].len > pkts[i].cap) {
            q->ctr.tx_drops++;
            q->free_list[q->nfree++] = pkts[i].buf;
            continue;
        }
        q->tx[(q->tx_head + q->tx_count) % q->cap] = (struct fifo_slot){pkts[i].buf, pkts[i].len};
        q->tx_count++;
        q->ctr.tx_frames++;
        sent++;
    }
    return sent;
}

void plat_pkt_drop(struct plat_queue *q, struct plat_pkt *pkt) { q->free_list[q->nfree++] = pkt->buf; }

void plat_queue_counters(struct plat_queue *q, struct plat_nic_counters *out) { *out = q->ctr; }
