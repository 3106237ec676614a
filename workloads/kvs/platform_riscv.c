/*
 * platform_riscv.c - the guest implementation of platform.h: simulator calls from workloads/runtime/kvsim.h and a
 * poll-mode driver for the kvsim NIC (workloads/ABI.md, "The NIC").
 *
 * Per queue the driver owns one RX and one TX descriptor ring and a cache of packet buffers (DPDK mbufs: a metadata
 * header, headroom, then a 2 KiB data room by default; plat_set_driver), all allocated
 * NUMA-locally, or, when the NIC is an integrated MAC with a buffer SRAM, in the queue's slice of that SRAM (the
 * rings first, then as many buffers as fit, up to the usual count). RX: the NIC owns descriptors [RX_HEAD,
 * RX_TAIL); the driver polls the DD bit of the next
 * descriptor in memory (never the head register), hands the buffer to the KVS core, and re-posts a free buffer in
 * its slot, writing RX_TAIL once per poll. TX: the driver fills descriptors at its tail, writes TX_TAIL once per
 * burst, and reclaims buffers the NIC has sent, as the NIC reports them (TX_COMPLETION): those whose descriptors
 * have DD set; those before the TX head the NIC writes to a word the driver registered in TX_HEAD_WB (head pointer);
 * or, in report-status mode, groups of tx_rs_every descriptors whose last one asked for status (cmd RS) and has DD,
 * as DPDK's ixgbe driver does with tx_rs_thresh = 32; there, as in DPDK, one group at a time and only once fewer than
 * tx_free_thresh (32) descriptors are free, so the ring holds its sent buffers until it is nearly full. A buffer is always in exactly one place: posted for RX, held by
 * the core, queued for TX, or free.
 *
 * Without a NIC (qemu-riscv64, or no queue for this hart) plat_queue_open can instead give a software queue that
 * plat_soft_inject/plat_soft_collect drive: the self-test in main_riscv.c uses it.
 */
#include "kvsim.h"
#include "kvsim_libc.h"
#include "platform.h"
#include "platform_riscv.h"
#include "kvs_abi.h"

#define SOFT_FIFO 256u

struct plat_queue {
    volatile uint64_t *regs;   /* NULL for a software queue */
    unsigned qid, port;
    struct kvs_nic_rx_desc *rx;
    struct kvs_nic_tx_desc *tx;
    uint32_t *rx_buf_of, *tx_buf_of;
    unsigned rx_mask, tx_mask;
    unsigned rx_next;          /* next RX descriptor to look at */
    unsigned rx_tail;          /* next RX descriptor to post (mirrors RX_TAIL) */
    unsigned tx_tail;          /* next TX descriptor to fill (mirrors TX_TAIL) */
    unsigned tx_clean;         /* oldest TX descriptor not yet reclaimed */
    volatile uint32_t *tx_head_wb; /* head-pointer TX completion: where the NIC writes TX_HEAD (else NULL) */
    unsigned tx_rs_every;      /* report-status TX completion: RS on every tx_rs_every-th descriptor (else 0) */
    unsigned tx_free_below;    /* report-status: reclaim only when fewer TX descriptors than this are free */
    uint8_t *bufs;
    unsigned nbufs;
    uint32_t *free_list;
    unsigned nfree;
    uint64_t tx_drops;
    uint64_t tx_reclaim_groups, tx_reclaimed; /* report-status reclaim: groups freed, descriptors freed in them */
    unsigned tx_most_free_at_reclaim;         /* report status: most free TX descriptors a burst's reclaim saw */
    unsigned tx_most_held;                    /* most TX descriptors holding a buffer (queued or sent, not freed) */
    /* software queue */
    uint32_t soft_rx[SOFT_FIFO], soft_rx_len[SOFT_FIFO], soft_tx[SOFT_FIFO], soft_tx_len[SOFT_FIFO];
    unsigned soft_rx_head, soft_rx_n, soft_tx_head, soft_tx_n;
    uint64_t soft_rx_frames, soft_tx_frames, soft_rx_drops;
};

static long simcall1(long nr, long a0) { return kvsim_call2(nr, a0, 0); }
long (*plat_nic_simcall)(long nr, long arg) = simcall1;

unsigned plat_core_id(void) { return (unsigned)kvsim_hart_id(); }
unsigned plat_num_cores(void) { return (unsigned)kvsim_num_harts(); }
unsigned plat_socket_of(unsigned core) { return (unsigned)kvsim_socket_of((long)core); }
void *plat_alloc_local(size_t bytes, size_t align) { return kvsim_alloc_local(bytes, align); }
void *plat_alloc_on(size_t bytes, size_t align, unsigned socket) { return kvsim_alloc_on(bytes, align, socket); }

static inline void reg_write(struct plat_queue *q, unsigned off, uint64_t v) { q->regs[off / 8] = v; }
static inline uint64_t reg_read(const struct plat_queue *q, unsigned off) { return q->regs[off / 8]; }

/* Descriptor and buffer writes are visible to the device before the doorbell write that follows. */
static inline void fence_before_doorbell(void) { __asm__ volatile("fence w, o" ::: "memory"); }
/* A descriptor's DD bit is read before the packet data and length it covers. */
static inline void fence_after_dd(void) { __asm__ volatile("fence r, r" ::: "memory"); }

/* The driver's set-up (plat_set_driver): MICA's by default, as kvs_config_default gives it. */
static unsigned g_tx_rs = 32, g_tx_free = 32, g_buf_data = KVS_NIC_BUF_SIZE, g_buf_headroom = 128, g_buf_meta = 64;

void plat_set_driver(unsigned tx_rs, unsigned tx_free, unsigned data, unsigned headroom, unsigned meta)
{
    g_tx_rs = tx_rs ? tx_rs : 32; /* DPDK's ixgbe default tx_rs_thresh */
    g_tx_free = tx_free ? tx_free : 32; /* DPDK's ixgbe default tx_free_thresh */
    g_buf_data = data;
    g_buf_headroom = headroom;
    g_buf_meta = meta;
}

/* A buffer's bytes: the metadata header (DPDK's mbuf), the headroom, the data room. */
static inline size_t buf_stride(void) { return (size_t)g_buf_meta + g_buf_headroom + g_buf_data; }

/* The data room of buffer b (what RX descriptors post and packets point to). */
static inline uint8_t *buf_addr(const struct plat_queue *q, uint32_t b)
{
    return q->bufs + (size_t)b * buf_stride() + g_buf_meta + g_buf_headroom;
}

/* A queue with nbufs packet buffers at bufs (NULL: allocated here). */
static struct plat_queue *queue_alloc(unsigned nbufs, uint8_t *bufs)
{
    struct plat_queue *q = plat_alloc_local(sizeof(*q), 64);
    if (!q)
        return 0;
    q->bufs = bufs ? bufs : plat_alloc_local((size_t)nbufs * buf_stride(), 4096);
    q->free_list = plat_alloc_local(nbufs * sizeof(uint32_t), 64);
    if (!q->bufs || !q->free_list)
        return 0;
    q->nbufs = nbufs;
    for (unsigned i = 0; i < nbufs; i++)
        q->free_list[q->nfree++] = nbufs - 1 - i;
    return q;
}

/* Post free buffers into the RX ring up to one slot short of full; one doorbell write if anything was posted. */
static void rx_refill(struct plat_queue *q)
{
    unsigned posted = 0;
    while (((q->rx_tail + 1) & q->rx_mask) != q->rx_next && q->nfree) {
        uint32_t b = q->free_list[--q->nfree];
        struct kvs_nic_rx_desc *d = &q->rx[q->rx_tail];
        d->addr = (uint64_t)(uintptr_t)buf_addr(q, b);
        d->buf_size = (uint16_t)g_buf_data;
        d->len = 0;
        d->status = 0;
        q->rx_buf_of[q->rx_tail] = b;
        q->rx_tail = (q->rx_tail + 1) & q->rx_mask;
        posted++;
    }
    if (posted) {
        fence_before_doorbell();
        reg_write(q, KVS_NIC_REG_RX_TAIL, q->rx_tail);
    }
}

/* Report-status reclaim: up to `groups` whole groups whose last descriptor (RS) is done; tx_clean stays aligned. */
static void tx_free_groups(struct plat_queue *q, unsigned groups)
{
    while (groups-- && ((q->tx_tail - q->tx_clean) & q->tx_mask) >= q->tx_rs_every) {
        volatile struct kvs_nic_tx_desc *d = &q->tx[(q->tx_clean + q->tx_rs_every - 1) & q->tx_mask];
        if (!(d->status & KVS_NIC_DESC_DD))
            break;
        for (unsigned i = 0; i < q->tx_rs_every; i++) {
            q->free_list[q->nfree++] = q->tx_buf_of[q->tx_clean];
            q->tx_clean = (q->tx_clean + 1) & q->tx_mask;
        }
        q->tx_reclaim_groups++;
        q->tx_reclaimed += q->tx_rs_every;
    }
}

static void tx_reclaim(struct plat_queue *q)
{
    if (q->tx_head_wb) { /* every descriptor before the written-back head has been sent */
        unsigned head = *q->tx_head_wb & q->tx_mask;
        __asm__ volatile("fence r, rw" ::: "memory"); /* the head is read before the buffers are reused */
        while (q->tx_clean != head) {
            q->free_list[q->nfree++] = q->tx_buf_of[q->tx_clean];
            q->tx_clean = (q->tx_clean + 1) & q->tx_mask;
        }
        return;
    }
    if (q->tx_rs_every) {
        tx_free_groups(q, ~0u);
        return;
    }
    while (q->tx_clean != q->tx_tail) {
        volatile struct kvs_nic_tx_desc *d = &q->tx[q->tx_clean];
        if (!(d->status & KVS_NIC_DESC_DD))
            break;
        q->free_list[q->nfree++] = q->tx_buf_of[q->tx_clean];
        q->tx_clean = (q->tx_clean + 1) & q->tx_mask;
    }
}

/* What the burst functions call. Report status (DPDK's ixgbe driver): free one group, and only once fewer than
 * tx_free_thresh descriptors are free; the sent buffers stay with the ring until then, so they are the I/O
 * footprint DPDK has (rte_eth_txconf: "start freeing TX buffers if there are less free descriptors than this"). The
 * other completions free all that is done. */
static void tx_reclaim_if_due(struct plat_queue *q)
{
    if (!q->tx_rs_every) {
        tx_reclaim(q);
        return;
    }
    unsigned free_descs = q->tx_mask - ((q->tx_tail - q->tx_clean) & q->tx_mask);
    if (free_descs < q->tx_free_below) {
        if (free_descs > q->tx_most_free_at_reclaim)
            q->tx_most_free_at_reclaim = free_descs;
        tx_free_groups(q, q->tx_free_below > q->tx_mask ? ~0u : 1); /* tx_free = ring: all that is done */
    }
}

struct plat_queue *plat_queue_open(unsigned core, unsigned rx_ring, unsigned tx_ring)
{
    long qid = plat_nic_simcall(KVS_SIMCALL_NIC_QUEUE_OF, (long)core);
    if (qid < 0)
        return 0;
    long regs = plat_nic_simcall(KVS_SIMCALL_NIC_QUEUE_REGS, qid);
    long port = plat_nic_simcall(KVS_SIMCALL_NIC_QUEUE_PORT, qid);
    if (regs < 0 || port < 0 || rx_ring < 8 || tx_ring < 8 || (rx_ring & (rx_ring - 1)) || (tx_ring & (tx_ring - 1)))
        return 0;
    /* MICA's per-core buffer cache: (RX + TX + one burst) buffers per port (its socket's pool holds the rest). */
    unsigned nbufs = rx_ring + tx_ring + 32;
    size_t rings = rx_ring * sizeof(struct kvs_nic_rx_desc) + tx_ring * sizeof(struct kvs_nic_tx_desc);
    /* The MAC's buffer SRAM, if the queue has a slice of it that holds its rings and at least 16 buffers. */
    long sram = plat_nic_simcall(KVS_SIMCALL_NIC_QUEUE_SRAM, qid);
    uint8_t *slice = 0;
    if (sram > 0) {
        long bytes = plat_nic_simcall(KVS_SIMCALL_NIC_QUEUE_SRAM_BYTES, qid);
        size_t fit = bytes > (long)rings ? ((size_t)bytes - rings) / buf_stride() : 0;
        if (fit >= 16) {
            slice = (uint8_t *)(uintptr_t)sram;
            nbufs = fit < nbufs ? (unsigned)fit : nbufs;
        }
    }
    struct plat_queue *q = queue_alloc(nbufs, slice ? slice + rings : 0);
    if (!q)
        return 0;
    q->regs = (volatile uint64_t *)(uintptr_t)regs;
    q->qid = (unsigned)qid;
    q->port = (unsigned)port;
    if (slice) { /* rings at the slice's start (page aligned), buffers after them (2 KiB multiples from there) */
        q->rx = (struct kvs_nic_rx_desc *)slice;
        q->tx = (struct kvs_nic_tx_desc *)(slice + rx_ring * sizeof(struct kvs_nic_rx_desc));
    } else {
        q->rx = plat_alloc_local(rx_ring * sizeof(struct kvs_nic_rx_desc), 4096);
        q->tx = plat_alloc_local(tx_ring * sizeof(struct kvs_nic_tx_desc), 4096);
    }
    q->rx_buf_of = plat_alloc_local(rx_ring * sizeof(uint32_t), 64);
    q->tx_buf_of = plat_alloc_local(tx_ring * sizeof(uint32_t), 64);
    if (!q->rx || !q->tx || !q->rx_buf_of || !q->tx_buf_of)
        return 0;
    q->rx_mask = rx_ring - 1;
    q->tx_mask = tx_ring - 1;
    reg_write(q, KVS_NIC_REG_CTRL, 0);
    reg_write(q, KVS_NIC_REG_RX_BASE, (uint64_t)(uintptr_t)q->rx);
    reg_write(q, KVS_NIC_REG_RX_SIZE, rx_ring);
    reg_write(q, KVS_NIC_REG_TX_BASE, (uint64_t)(uintptr_t)q->tx);
    reg_write(q, KVS_NIC_REG_TX_SIZE, tx_ring);
    if (reg_read(q, KVS_NIC_REG_TX_COMPLETION) == KVS_NIC_TX_COMPLETION_HEAD_POINTER) {
        /* A line of its own: the NIC's write-back then never takes a line the core is writing. */
        q->tx_head_wb = plat_alloc_local(64, 64);
        if (!q->tx_head_wb)
            return 0;
        *q->tx_head_wb = 0; /* TX_HEAD after enabling */
        reg_write(q, KVS_NIC_REG_TX_HEAD_WB, (uint64_t)(uintptr_t)q->tx_head_wb | KVS_NIC_TX_HEAD_WB_ENABLE);
    } else {
        reg_write(q, KVS_NIC_REG_TX_HEAD_WB, 0);
        if (reg_read(q, KVS_NIC_REG_TX_COMPLETION) == KVS_NIC_TX_COMPLETION_REPORT_STATUS) {
            q->tx_rs_every = g_tx_rs * 4 <= tx_ring ? g_tx_rs : tx_ring / 4; /* at most a quarter of the ring */
            q->tx_free_below = g_tx_free < tx_ring ? g_tx_free : tx_ring; /* tx_ring: reclaim at every burst */
            if (q->tx_free_below < q->tx_rs_every)
                q->tx_free_below = q->tx_rs_every; /* DPDK: tx_rs_thresh <= tx_free_thresh */
        }
    }
    fence_before_doorbell();
    reg_write(q, KVS_NIC_REG_CTRL, KVS_NIC_CTRL_ENABLE); /* heads and tails are 0 now */
    rx_refill(q);
    return q;
}

struct plat_queue *plat_soft_queue_open(unsigned nbufs)
{
    return queue_alloc(nbufs, 0);
}

unsigned plat_rx_burst(struct plat_queue *q, struct plat_pkt *pkts, unsigned max)
{
    unsigned n = 0;
    if (!q->regs) {
        while (n < max && q->soft_rx_n) {
            uint32_t b = q->soft_rx[q->soft_rx_head];
            pkts[n] = (struct plat_pkt){buf_addr(q, b), q->soft_rx_len[q->soft_rx_head], g_buf_data, b, 0};
            q->soft_rx_head = (q->soft_rx_head + 1) % SOFT_FIFO;
            q->soft_rx_n--;
            n++;
        }
        return n;
    }
    if (q->nfree < 64)
        tx_reclaim_if_due(q); /* buffers the NIC has finished sending */
    while (n < max && q->rx_next != q->rx_tail) { /* only descriptors that were posted */
        volatile struct kvs_nic_rx_desc *d = &q->rx[q->rx_next];
        if (!(d->status & KVS_NIC_DESC_DD))
            break;
        fence_after_dd();
        uint32_t b = q->rx_buf_of[q->rx_next];
        pkts[n] = (struct plat_pkt){buf_addr(q, b), d->len, g_buf_data, b, 0};
        d->status = 0; /* consumed: a stale DD must never be seen again */
        q->rx_next = (q->rx_next + 1) & q->rx_mask;
        n++;
    }
    if (((q->rx_tail + 1) & q->rx_mask) != q->rx_next && q->nfree)
        rx_refill(q); /* slots consumed now or earlier, when no buffer was free */
    return n;
}

unsigned plat_tx_burst(struct plat_queue *q, struct plat_pkt *pkts, unsigned n)
{
    unsigned sent = 0;
    if (!q->regs) {
        for (unsigned i = 0; i < n; i++) {
            if (q->soft_tx_n == SOFT_FIFO) {
                q->tx_drops++;
                q->free_list[q->nfree++] = pkts[i].buf;
                continue;
            }
            unsigned at = (q->soft_tx_head + q->soft_tx_n++) % SOFT_FIFO;
            q->soft_tx[at] = pkts[i].buf;
            q->soft_tx_len[at] = pkts[i].len;
            q->soft_tx_frames++;
            sent++;
        }
        return sent;
    }
    tx_reclaim_if_due(q);
    for (unsigned i = 0; i < n; i++) {
        if (((q->tx_tail + 1) & q->tx_mask) == q->tx_clean) {
            tx_reclaim_if_due(q); /* a full ring has no free descriptor: always due */
            if (((q->tx_tail + 1) & q->tx_mask) == q->tx_clean) { /* ring full: drop and count */
                q->tx_drops++;
                q->free_list[q->nfree++] = pkts[i].buf;
                continue;
            }
        }
        struct kvs_nic_tx_desc *d = &q->tx[q->tx_tail];
        d->addr = (uint64_t)(uintptr_t)pkts[i].data;
        d->len = (uint16_t)pkts[i].len;
        d->cmd = q->tx_rs_every && ((q->tx_tail + 1) & (q->tx_rs_every - 1)) == 0 ? KVS_NIC_TX_CMD_RS : 0;
        d->status = 0;
        d->reserved2 = 0;
        q->tx_buf_of[q->tx_tail] = pkts[i].buf;
        q->tx_tail = (q->tx_tail + 1) & q->tx_mask;
        sent++;
    }
    if (sent) {
        unsigned held = (q->tx_tail - q->tx_clean) & q->tx_mask;
        if (held > q->tx_most_held)
            q->tx_most_held = held;
        fence_before_doorbell();
        reg_write(q, KVS_NIC_REG_TX_TAIL, q->tx_tail);
    }
    return sent;
}

void plat_pkt_drop(struct plat_queue *q, struct plat_pkt *pkt)
{
    q->free_list[q->nfree++] = pkt->buf; /* re-posted by the next plat_rx_burst */
}

void plat_queue_counters(struct plat_queue *q, struct plat_nic_counters *out)
{
    if (!q->regs) {
        out->rx_frames = q->soft_rx_frames;
        out->tx_frames = q->soft_tx_frames;
        out->rx_drops = q->soft_rx_drops;
        out->tx_drops = q->tx_drops;
        return;
    }
    tx_reclaim(q);
    out->rx_frames = reg_read(q, KVS_NIC_REG_RX_FRAMES);
    out->tx_frames = reg_read(q, KVS_NIC_REG_TX_FRAMES);
    out->rx_drops = reg_read(q, KVS_NIC_REG_RX_DROPS);
    out->tx_drops = q->tx_drops;
}

void plat_tx_reclaim_counts(const struct plat_queue *q, uint64_t *groups, uint64_t *descriptors,
                            unsigned *most_free_at_reclaim, unsigned *most_held)
{
    *groups = q->tx_reclaim_groups;
    *descriptors = q->tx_reclaimed;
    *most_free_at_reclaim = q->tx_most_free_at_reclaim;
    *most_held = q->tx_most_held;
}

unsigned plat_queue_id(const struct plat_queue *q) { return q->qid; }
unsigned plat_queue_port(const struct plat_queue *q) { return q->port; }

int plat_soft_inject(struct plat_queue *q, const uint8_t *frame, uint32_t len)
{
    if (q->regs || !q->nfree || q->soft_rx_n == SOFT_FIFO || len > g_buf_data) {
        q->soft_rx_drops++;
        return -1;
    }
    uint32_t b = q->free_list[--q->nfree];
    memcpy(buf_addr(q, b), frame, len);
    unsigned at = (q->soft_rx_head + q->soft_rx_n++) % SOFT_FIFO;
    q->soft_rx[at] = b;
    q->soft_rx_len[at] = len;
    q->soft_rx_frames++;
    return 0;
}

int plat_soft_collect(struct plat_queue *q, uint8_t *out, uint32_t cap, uint32_t *len)
{
    if (q->regs || !q->soft_tx_n)
        return 0;
    uint32_t b = q->soft_tx[q->soft_tx_head], l = q->soft_tx_len[q->soft_tx_head];
    q->soft_tx_head = (q->soft_tx_head + 1) % SOFT_FIFO;
    q->soft_tx_n--;
    memcpy(out, buf_addr(q, b), l < cap ? l : cap);
    *len = l;
    q->free_list[q->nfree++] = b;
    return 1;
}
