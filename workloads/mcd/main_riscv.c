/*
 * main_riscv.c - the memcached-class server as a guest program: one single-threaded instance per hart, each on its
 * own NIC queue and its own port (port=BASE: hart i serves BASE + i, over UDP and TCP), sharing nothing.
 *
 * Arguments (NAME=VALUE): port=11211, mem=64MiB (store memory per instance), buckets=16 (log2 of hash buckets per
 * instance), conns=256 (UDP peer slots, a power of two), tcp_conns=16 (TCP connection slots per instance, a power
 * of two), rx_ring=256, tx_ring=256, burst=32.
 * The NIC driver is chosen at start from the queue's INTERFACE register: the descriptor rings (kvs/platform_riscv.c),
 * or KeyVault's zero-copy slots (below; rx_ring slots in each direction), where requests are served in place.
 * selftest=N: no NIC needed (qemu-riscv64): hart 0 plays a client that sends N random GET/SET/DELETE requests
 * through a software queue (selftest_nic=1: through the real NIC driver over kvs/fake_nic.c) and checks every
 * response against its model of the store; exit status 0 when all were right.
 * bench=N: no NIC needed: hart 0 loads bench_keys=1024 items of bench_vlen=32 bytes, then times N GETs three ways,
 * with a stats dump (the simulator's STATS_DUMP) before and after each phase: the key hash alone; the network
 * stack alone (parse and checksums, connection lookup, the copy into the socket buffer, building the reply frame
 * with its checksums); and the whole request path. The memcached share of a GET is the whole minus the other two.
 * Detailed timing starts at its ROI_BEGIN. corrupt_every=N (a test hook): every Nth GET hit returns its value
 * with one bit flipped, to show that the client catches a wrong response. With bench_all=1 every hart runs the same
 * benchmark on its own instance (hart 0 marks the phases; the run ends when all are done), to load a whole stack.
 * bench_tcp=1: the GETs travel over 16 TCP connections opened before the ROI (the network stack phase is then the
 * segment's parse and checksum, the connection's state machine, the copy into the receive buffer, the reply's copy
 * into the send buffer and its segment with checksums); the benchmark's client rewrites each frame's sequence and
 * acknowledgement numbers (an incremental checksum update, RFC 1624) and reads the reply's, a few instructions
 * counted with the network stack.
 */
#include "kvsim.h"
#include "kvsim_libc.h"
#include "platform.h"
#include "platform_riscv.h"
#include "kvs_abi.h"
#include "mcd_server.h"

struct mcd_args {
    uint64_t port, mem, buckets, conns, tcp_conns, rx_ring, tx_ring, burst, selftest, selftest_nic, bench, bench_keys,
        bench_vlen, bench_all, bench_tcp, corrupt_every;
};

static int prefix(const char *s, const char *p, const char **rest)
{
    size_t n = strlen(p);
    if (memcmp(s, p, n) != 0)
        return 0;
    *rest = s + n;
    return 1;
}

static int parse_args(int argc, char **argv, struct mcd_args *a, const char **bad)
{
    static const char *const names[] = {"port=", "mem=", "buckets=", "conns=", "tcp_conns=", "rx_ring=", "tx_ring=",
                                        "burst=", "selftest=", "selftest_nic=", "bench=", "bench_keys=", "bench_vlen=",
                                        "bench_all=", "bench_tcp=", "corrupt_every="};
    uint64_t *fields[] = {&a->port, &a->mem, &a->buckets, &a->conns, &a->tcp_conns, &a->rx_ring, &a->tx_ring, &a->burst,
                          &a->selftest, &a->selftest_nic, &a->bench, &a->bench_keys, &a->bench_vlen,
                          &a->bench_all, &a->bench_tcp, &a->corrupt_every};
    *a = (struct mcd_args){11211, 64u << 20, 16, 256, 16, 256, 256, 32, 0, 0, 0, 1024, 32, 0, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *v = 0;
        unsigned f = 0;
        while (f < sizeof(names) / sizeof(names[0]) && !prefix(argv[i], names[f], &v))
            f++;
        if (f == sizeof(names) / sizeof(names[0]) || !*v) {
            *bad = argv[i];
            return -1;
        }
        *fields[f] = kvsim_parse_size(v);
    }
    if (a->port == 0 || a->port > 65535 || a->buckets < 4 || a->buckets > 28 || !a->conns ||
        (a->conns & (a->conns - 1)) || !a->tcp_conns || a->tcp_conns > 4096 || (a->tcp_conns & (a->tcp_conns - 1)) ||
        a->burst == 0 || a->burst > 64 || a->bench_keys == 0 ||
        a->bench_vlen > 1024 || (a->bench_tcp && a->tcp_conns < 16)) {
        *bad = "port/buckets/conns/tcp_conns/burst/bench_keys/bench_vlen (port 1-65535, buckets 4-28, conns a power "
               "of two, tcp_conns a power of two up to 4096 (16 or more with bench_tcp=1), burst 1-64, "
               "bench_keys >= 1, bench_vlen <= 1024)";
        return -1;
    }
    return 0;
}

/* Receive a burst, serve each frame in its own buffer, send the replies; the number of frames received. TCP
 * segments beyond a frame's one reply (a reply longer than the peer's MSS, data its window held back) leave on the
 * buffers of the burst's frames that had no reply (bare ACKs, mostly), as a kernel's output path follows its input
 * path; what does not fit waits for the next burst (the peer's ACKs bring buffers). */
static unsigned poll_once(struct mcd_server *s, struct plat_queue *q, unsigned burst)
{
    struct plat_pkt pkts[64], out[64], spare[64];
    unsigned n = plat_rx_burst(q, pkts, burst), nout = 0, nspare = 0;
    for (unsigned i = 0; i < n; i++) {
        uint32_t len = mcd_server_handle(s, pkts[i].data, pkts[i].len, pkts[i].data, pkts[i].cap);
        if (len) {
            pkts[i].len = len;
            out[nout++] = pkts[i];
        } else {
            spare[nspare++] = pkts[i];
        }
    }
    for (unsigned i = 0; i < nspare; i++) {
        uint32_t len = mcd_server_output(s, spare[i].data, spare[i].cap);
        if (len) {
            spare[i].len = len;
            out[nout++] = spare[i];
        } else {
            plat_pkt_drop(q, &spare[i]);
        }
    }
    if (nout)
        plat_tx_burst(q, out, nout);
    return n;
}

/* ---- the zero-copy NIC (KeyVault; workloads/ABI.md, "The zero-copy interface") --------------------------------
 * No descriptors: the queue's registers name a receive and a send area of fixed 2 KiB slots in cacheable memory. A
 * slot's first line is its status word (len in the low half, flags in the high half), the frame starts 64 bytes in.
 * The NIC writes a request into the next receive slot and sets READY; the server answers it in place into the next
 * send slot, clears the receive status and hands both to the NIC through RX_TAIL and TX_TAIL, once per burst. */
#define ZC_SLOT 2048u
#define ZC_FRAME_OFF 64u
#define ZC_READY 1u /* receive status flag */
#define ZC_SENT 1u  /* send status flag: the NIC has read the slot out */

struct zc_queue {
    volatile uint64_t *regs;
    uint8_t *rx, *tx;
    unsigned slots;                      /* per area, a power of two */
    unsigned rx_next, tx_next, tx_clean; /* free-running: next slot to read, to fill, oldest not seen SENT */
};

static inline volatile uint32_t *zc_status(uint8_t *area, unsigned slots, unsigned i)
{
    return (volatile uint32_t *)(area + (size_t)(i & (slots - 1)) * ZC_SLOT);
}

/* This hart's queue registers when its NIC has the zero-copy interface, else 0 (the ring driver opens it then). */
static volatile uint64_t *zc_probe(unsigned hart)
{
    long qid = plat_nic_simcall(KVS_SIMCALL_NIC_QUEUE_OF, (long)hart);
    long regs = qid < 0 ? -1 : plat_nic_simcall(KVS_SIMCALL_NIC_QUEUE_REGS, qid);
    if (regs < 0)
        return 0;
    volatile uint64_t *r = (volatile uint64_t *)(uintptr_t)regs;
    return r[KVS_NIC_REG_INTERFACE / 8] == KVS_NIC_INTERFACE_ZERO_COPY ? r : 0;
}

static struct zc_queue *zc_open(volatile uint64_t *regs, unsigned slots)
{
    struct zc_queue *z = plat_alloc_local(sizeof(*z), 64);
    uint8_t *rx = plat_alloc_local((size_t)slots * ZC_SLOT, 4096), *tx = plat_alloc_local((size_t)slots * ZC_SLOT, 4096);
    if (!z || !rx || !tx || slots < 8 || (slots & (slots - 1)))
        return 0;
    *z = (struct zc_queue){regs, rx, tx, slots, 0, 0, 0};
    for (unsigned i = 0; i < slots; i++)
        *zc_status(rx, slots, i) = 0;
    regs[KVS_NIC_REG_CTRL / 8] = 0;
    regs[KVS_NIC_REG_RX_BASE / 8] = (uint64_t)(uintptr_t)rx;
    regs[KVS_NIC_REG_RX_SIZE / 8] = slots;
    regs[KVS_NIC_REG_TX_BASE / 8] = (uint64_t)(uintptr_t)tx;
    regs[KVS_NIC_REG_TX_SIZE / 8] = slots;
    __asm__ volatile("fence w, o" ::: "memory");
    regs[KVS_NIC_REG_CTRL / 8] = KVS_NIC_CTRL_ENABLE;
    regs[KVS_NIC_REG_RX_TAIL / 8] = slots - 1; /* every receive slot but one to the NIC */
    return z;
}

/* Send slots whose reply the NIC has read out come back; returns how many the server may fill (the NIC holds at
 * most slots - 1, so that TX_TAIL never catches up with TX_HEAD). */
static unsigned zc_tx_room(struct zc_queue *z)
{
    while (z->tx_clean != z->tx_next && (*zc_status(z->tx, z->slots, z->tx_clean) >> 16) & ZC_SENT)
        z->tx_clean++;
    return z->slots - 1 - (z->tx_next - z->tx_clean);
}

static void zc_tx_doorbell(struct zc_queue *z)
{
    __asm__ volatile("fence w, o" ::: "memory"); /* the replies and their status before the doorbell */
    z->regs[KVS_NIC_REG_TX_TAIL / 8] = z->tx_next & (z->slots - 1);
}

/* Serve up to `burst` requests where they landed; the number served. */
static unsigned zc_poll_once(struct mcd_server *s, struct zc_queue *z, unsigned burst)
{
    unsigned n = 0, filled = 0;
    while (n < burst) {
        volatile uint32_t *st = zc_status(z->rx, z->slots, z->rx_next);
        uint32_t word = *st;
        if (!((word >> 16) & ZC_READY))
            break;
        __asm__ volatile("fence r, r" ::: "memory"); /* the status before the frame it covers */
        while (!zc_tx_room(z)) {
            if (filled) {
                zc_tx_doorbell(z);
                filled = 0;
            }
            KVS_CPU_RELAX();
        }
        uint8_t *in = (uint8_t *)st + ZC_FRAME_OFF, *out = (uint8_t *)zc_status(z->tx, z->slots, z->tx_next) + ZC_FRAME_OFF;
        uint32_t len = mcd_server_handle(s, in, word & 0xffffu, out, ZC_SLOT - ZC_FRAME_OFF);
        if (len) {
            *zc_status(z->tx, z->slots, z->tx_next) = len; /* flags 0: not sent yet */
            z->tx_next++;
            filled++;
        }
        for (;;) { /* a TCP segment may leave more segments to send, each in a send slot of its own */
            while (!zc_tx_room(z)) {
                if (filled) {
                    zc_tx_doorbell(z);
                    filled = 0;
                }
                KVS_CPU_RELAX();
            }
            volatile uint32_t *more = zc_status(z->tx, z->slots, z->tx_next);
            uint32_t m = mcd_server_output(s, (uint8_t *)more + ZC_FRAME_OFF, ZC_SLOT - ZC_FRAME_OFF);
            if (!m)
                break;
            *more = m;
            z->tx_next++;
            filled++;
        }
        *st = 0;
        z->rx_next++;
        n++;
    }
    if (filled)
        zc_tx_doorbell(z);
    if (n) /* the served receive slots back to the NIC */
        z->regs[KVS_NIC_REG_RX_TAIL / 8] = (z->rx_next + z->slots - 1) & (z->slots - 1);
    return n;
}

/* ---- self-test client ---------------------------------------------------------------------------------- */
#define ST_KEYS 512
#define ST_MAXV 1000
static uint8_t st_val[ST_KEYS][ST_MAXV];
static uint32_t st_vlen[ST_KEYS];
static uint8_t st_present[ST_KEYS];
static int g_fake_nic;

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t st_key(char *k, unsigned i)
{
    return (uint32_t)snprintf(k, 32, "key:%u", i * 2654435761u);
}

static int selftest(struct mcd_server *s, struct plat_queue *q, uint64_t n, uint16_t port, unsigned burst)
{
    static uint8_t f[MCD_MAX_FRAME], payload[MCD_MAX_FRAME], r[MCD_MAX_FRAME];
    uint64_t rng = 11, bad = 0, gets = 0, hits = 0;
    struct mcd_flow fl = {{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}, 0x0a000002u, 0x0a000001u, 40000, port};
    for (uint64_t i = 0; i < n; i++) {
        unsigned k = (unsigned)(rng_next(&rng) % ST_KEYS), op = (unsigned)(rng_next(&rng) % 100);
        uint8_t opcode = op < 20 ? MCD_OP_SET : op < 25 ? MCD_OP_DELETE : MCD_OP_GET;
        char key[32];
        uint16_t klen = (uint16_t)st_key(key, k);
        uint8_t extras[8];
        mcd_put32(extras, k);
        mcd_put32(extras + 4, 0);
        uint32_t vlen = opcode == MCD_OP_SET ? (uint32_t)(rng_next(&rng) % ST_MAXV) : 0;
        uint8_t *m = payload + MCD_UDP_FRAME_HLEN;
        uint8_t *v = m + MCD_BIN_HLEN + 8 + klen;
        for (uint32_t j = 0; j < vlen; j++)
            v[j] = (uint8_t)rng_next(&rng);
        uint32_t mlen = mcd_msg_put(m, sizeof(payload) - MCD_UDP_FRAME_HLEN, MCD_MAGIC_REQ, opcode, 0, (uint32_t)i,
                                    0, extras, opcode == MCD_OP_SET ? 8 : 0, (const uint8_t *)key, klen, v, vlen);
        struct mcd_udp_hdr h = {(uint16_t)i, 0, 1, 0};
        mcd_udp_hdr_put(payload, &h);
        fl.src_port = (uint16_t)(40000 + i % 64);
        uint32_t flen = mcd_net_build(f, sizeof(f), &fl, (uint16_t)i, payload, MCD_UDP_FRAME_HLEN + mlen);
        if ((g_fake_nic ? fake_nic_deliver(f, flen) : plat_soft_inject(q, f, flen)) != 0)
            return 1;
        uint32_t rlen = 0;
        for (unsigned idle = 0;; idle++) {
            poll_once(s, q, burst);
            if (g_fake_nic ? fake_nic_transmit(r, sizeof(r), &rlen) : plat_soft_collect(q, r, sizeof(r), &rlen))
                break;
            if (idle > 1000)
                return 1;
        }
        struct mcd_flow rf;
        const uint8_t *p;
        uint32_t plen;
        struct mcd_udp_hdr rh;
        struct mcd_msg res;
        if (mcd_net_parse(r, rlen, &rf, &p, &plen) != 0 || rf.dst_port != fl.src_port ||
            mcd_udp_hdr_parse(p, plen, &rh) != 0 || rh.req_id != (uint16_t)i ||
            mcd_msg_parse(p + 8, plen - 8, MCD_MAGIC_RES, &res) != plen - 8 || res.opaque != (uint32_t)i) {
            bad++;
            continue;
        }
        if (opcode == MCD_OP_SET) {
            bad += res.status_or_vbucket != MCD_ST_OK;
            memcpy(st_val[k], v, vlen);
            st_vlen[k] = vlen;
            st_present[k] = 1;
        } else if (opcode == MCD_OP_DELETE) {
            bad += res.status_or_vbucket != (st_present[k] ? MCD_ST_OK : MCD_ST_KEY_ENOENT);
            st_present[k] = 0;
        } else {
            gets++;
            if (!st_present[k])
                bad += res.status_or_vbucket != MCD_ST_KEY_ENOENT;
            else if (res.status_or_vbucket == MCD_ST_OK && res.vlen == st_vlen[k] && res.extlen == 4 &&
                     mcd_get32(res.extras) == k && memcmp(res.value, st_val[k], st_vlen[k]) == 0)
                hits++;
            else
                bad++;
        }
    }
    printf("mcd selftest: %llu requests (%llu GETs, %llu hits), %llu wrong; %llu connections opened, %llu "
           "evictions\n", (unsigned long long)n, (unsigned long long)gets, (unsigned long long)hits,
           (unsigned long long)bad, (unsigned long long)s->conns.opened, (unsigned long long)s->store.st.evictions);
    return bad != 0;
}

/* ---- GET breakdown benchmark ----------------------------------------------------------------------------- */
#define BENCH_FRAMES 256u
#define BENCH_TCP_CONNS 16u

/* Buffers of one hart's benchmark (allocated per hart: every hart may run it at once). */
struct bench_bufs {
    uint8_t frames[BENCH_FRAMES][MCD_MAX_FRAME], reply[MCD_MAX_FRAME], payload[MCD_MAX_FRAME], value[1024];
    uint32_t frame_len[BENCH_FRAMES];
    uint32_t snd_nxt[BENCH_TCP_CONNS], rcv_nxt[BENCH_TCP_CONNS]; /* the benchmark client's end of each connection */
};

/* Rewrite a 32-bit field of a TCP segment (off bytes into the TCP header) and update the checksum incrementally
 * (RFC 1624: HC' = ~(~HC + ~m + m')). */
static void tcp_patch32(uint8_t *f, unsigned off, uint32_t v)
{
    uint8_t *tcp = f + MCD_ETH_HLEN + MCD_IP_HLEN;
    uint32_t sum = (uint16_t)~mcd_get16(tcp + 16);
    sum += (uint16_t)~mcd_get16(tcp + off) + (uint16_t)~mcd_get16(tcp + off + 2);
    mcd_put32(tcp + off, v);
    sum += (uint32_t)mcd_get16(tcp + off) + mcd_get16(tcp + off + 2);
    mcd_put16(tcp + 16, mcd_csum_fold(sum));
}

/* Open the benchmark's TCP connections (client ports 40000..): the handshake through the server. */
static int bench_connect(struct mcd_server *s, struct bench_bufs *bb, struct mcd_flow fl)
{
    for (unsigned j = 0; j < BENCH_TCP_CONNS; j++) {
        fl.src_port = (uint16_t)(40000 + j);
        uint32_t iss = 0x10000u * j + 1;
        uint32_t n = mcd_tcp_build(bb->payload, MCD_MAX_FRAME, &fl, 0, iss, 0, MCD_TCP_SYN, 65535, MCD_TCP_MSS, 0, 0,
                                   0, 0);
        uint32_t r = mcd_server_handle(s, bb->payload, n, bb->reply, MCD_MAX_FRAME);
        struct mcd_tcp_seg sa;
        if (!r || mcd_tcp_parse(bb->reply, r, &sa) != 0 || sa.flags != (MCD_TCP_SYN | MCD_TCP_ACK))
            return 1;
        bb->snd_nxt[j] = iss + 1;
        bb->rcv_nxt[j] = sa.seq + 1;
        n = mcd_tcp_build(bb->payload, MCD_MAX_FRAME, &fl, 0, iss + 1, sa.seq + 1, MCD_TCP_ACK, 65535, 0, 0, 0, 0, 0);
        if (mcd_server_handle(s, bb->payload, n, bb->reply, MCD_MAX_FRAME) != 0)
            return 1;
    }
    return 0;
}

/* Frame b's next use over TCP: its connection's sequence and acknowledgement numbers. */
static void bench_tcp_next(struct bench_bufs *bb, unsigned b)
{
    unsigned j = b % BENCH_TCP_CONNS;
    tcp_patch32(bb->frames[b], 4, bb->snd_nxt[j]);
    tcp_patch32(bb->frames[b], 8, bb->rcv_nxt[j]);
    bb->snd_nxt[j] += bb->frame_len[b] - MCD_TCP_HDRS_LEN;
}

/* The server's reply on frame b's connection: the next sequence number expected from it. */
static void bench_tcp_reply(struct bench_bufs *bb, unsigned b)
{
    const uint8_t *r = bb->reply;
    bb->rcv_nxt[b % BENCH_TCP_CONNS] = mcd_get32(r + MCD_ETH_HLEN + MCD_IP_HLEN + 4) +
                                       (mcd_get16(r + MCD_ETH_HLEN + 2) - MCD_IP_HLEN - MCD_TCP_HLEN);
}

/* lead: the hart that marks the ROI and the phase boundaries (hart 0); the others only add load. */
static int bench(struct mcd_server *s, uint64_t n, unsigned keys, unsigned vlen, uint16_t port, int lead, int tcp)
{
    struct bench_bufs *bb = plat_alloc_local(sizeof(*bb), 64);
    if (!bb)
        return 1;
    uint8_t(*frames)[MCD_MAX_FRAME] = bb->frames, *reply = bb->reply, *payload = bb->payload, *value = bb->value;
    uint32_t *frame_len = bb->frame_len;
    const uint32_t reply_cap = MCD_MAX_FRAME, payload_cap = MCD_MAX_FRAME;
    char key[32];
    uint64_t rng = 5, cas;
    for (unsigned j = 0; j < vlen; j++)
        value[j] = (uint8_t)j;
    for (unsigned k = 0; k < keys; k++) {
        uint16_t klen = (uint16_t)st_key(key, k);
        if (mcd_store_set(&s->store, (const uint8_t *)key, klen, mcd_hash((const uint8_t *)key, klen), k, 0, value,
                          vlen, &cas) != MCD_ST_OK)
            return 1;
    }
    /* GET frames for random keys from 64 client ports (UDP) or on 16 connections (TCP), built once and cycled. */
    struct mcd_flow fl = {{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}, 0x0a000002u, 0x0a000001u, 40000, port};
    if (tcp && bench_connect(s, bb, fl) != 0)
        return 1;
    /* Where a frame's binary request starts: after the UDP frame header (UDP) or the TCP header. */
    const uint32_t msg_off = tcp ? MCD_TCP_HDRS_LEN : MCD_HDRS_LEN + MCD_UDP_FRAME_HLEN;
    for (unsigned i = 0; i < BENCH_FRAMES; i++) {
        uint16_t klen = (uint16_t)st_key(key, (unsigned)(rng_next(&rng) % keys));
        struct mcd_udp_hdr h = {(uint16_t)i, 0, 1, 0};
        mcd_udp_hdr_put(payload, &h);
        uint32_t m = mcd_msg_put(payload + 8, payload_cap - 8, MCD_MAGIC_REQ, MCD_OP_GET, 0, i, 0, 0, 0,
                                 (const uint8_t *)key, klen, 0, 0);
        if (tcp) {
            fl.src_port = (uint16_t)(40000 + i % BENCH_TCP_CONNS);
            frame_len[i] = mcd_tcp_build(frames[i], MCD_MAX_FRAME, &fl, 0, 0, 0, MCD_TCP_ACK | MCD_TCP_PSH, 65535,
                                         0, payload + 8, m, 0, 0);
        } else {
            fl.src_port = (uint16_t)(40000 + i % 64);
            frame_len[i] = mcd_net_build(frames[i], MCD_MAX_FRAME, &fl, 0, payload, 8 + m);
        }
    }
    /* A GET hit's reply payload: (UDP: the UDP frame header,) binary header, 4 bytes of flags, the value. */
    uint32_t reply_payload = (tcp ? 0 : MCD_UDP_FRAME_HLEN) + MCD_BIN_HLEN + 4 + vlen;
    uint32_t reply_len = (tcp ? MCD_TCP_HDRS_LEN : MCD_HDRS_LEN) + reply_payload;
    uint64_t sink = 0, ok = 0;
    if (lead) {
        kvsim_roi_begin();
        kvsim_stats_dump(); /* phase boundary 0 */
    }
    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *f = frames[i % BENCH_FRAMES];
        uint16_t klen = mcd_get16(f + msg_off + 2);
        sink += mcd_hash(f + msg_off + MCD_BIN_HLEN, klen);
    }
    if (lead)
        kvsim_stats_dump(); /* 1: hashing */
    for (uint64_t i = 0; i < n; i++) {
        unsigned b = (unsigned)(i % BENCH_FRAMES);
        if (tcp) {
            bench_tcp_next(bb, b);
            struct mcd_tcp_seg seg;
            int rst;
            if (mcd_tcp_parse(frames[b], frame_len[b], &seg) != 0)
                return 1;
            struct mcd_tcp_conn *c = mcd_tcp_input(&s->tcp, &seg, &rst);
            if (!c || rst)
                return 1;
            mcd_tcp_consume(c, c->rcv_len);           /* the application takes the request ... */
            mcd_tcp_write(c, s->sndbuf, reply_payload); /* ... and writes a reply of a hit's size */
            sink += mcd_tcp_output(&s->tcp, c, reply, reply_cap);
            bench_tcp_reply(bb, b);
            continue;
        }
        struct mcd_flow rf;
        const uint8_t *p;
        uint32_t plen;
        if (mcd_net_parse(frames[b], frame_len[b], &rf, &p, &plen) != 0)
            return 1;
        struct mcd_conn *c = mcd_conn_lookup(&s->conns, rf.src_ip, rf.src_port);
        mcd_conn_receive(c, p, plen);
        struct mcd_flow back = mcd_flow_reverse(&rf);
        sink += mcd_net_build(reply, reply_cap, &back, c->ip_id++, s->sndbuf, reply_payload);
    }
    if (lead)
        kvsim_stats_dump(); /* 2: network stack */
    for (uint64_t i = 0; i < n; i++) {
        unsigned b = (unsigned)(i % BENCH_FRAMES);
        if (tcp)
            bench_tcp_next(bb, b);
        uint32_t len = mcd_server_handle(s, frames[b], frame_len[b], reply, reply_cap);
        ok += len == reply_len;
        if (tcp)
            bench_tcp_reply(bb, b);
    }
    if (!lead)
        return ok != n;
    kvsim_stats_dump(); /* 3: the whole request path */
    kvsim_roi_end();
    printf("mcd bench: %llu GETs per phase, %llu hits of %u-byte values (sink %llu)%s\n", (unsigned long long)n,
           (unsigned long long)ok, vlen, (unsigned long long)(sink & 0xff), tcp ? " over TCP" : "");
    return ok != n;
}

int main(int argc, char **argv)
{
    unsigned hart = plat_core_id();
    struct mcd_args a;
    const char *bad = 0;
    if (parse_args(argc, argv, &a, &bad) != 0) {
        if (hart == 0)
            printf("mcd: bad argument '%s'\n", bad);
        exit_group(2);
    }
    if ((a.selftest || (a.bench && !a.bench_all)) && hart != 0)
        hart_exit(0);
    struct plat_queue *q = 0;
    struct zc_queue *zq = 0;
    volatile uint64_t *zc_regs = 0;
    if (a.selftest && a.selftest_nic) {
        if (fake_nic_install() != 0)
            exit_group(1);
        g_fake_nic = 1;
        q = plat_queue_open(hart, (unsigned)a.rx_ring, (unsigned)a.tx_ring);
    } else if (a.selftest || a.bench) {
        q = plat_soft_queue_open(64);
    } else if ((zc_regs = zc_probe(hart)) != 0) {
        zq = zc_open(zc_regs, (unsigned)a.rx_ring);
    } else {
        q = plat_queue_open(hart, (unsigned)a.rx_ring, (unsigned)a.tx_ring);
    }
    if (!q && !zq) {
        printf("mcd: hart %u: no NIC queue (none in this system, or bad ring sizes); selftest=N runs without one\n",
               hart);
        exit_group(1);
    }
    struct mcd_server *s = plat_alloc_local(sizeof(*s), 64);
    void *mem = plat_alloc_local(a.mem, 4096);
    struct mcd_conn *conns = plat_alloc_local(a.conns * sizeof(struct mcd_conn), 64);
    struct mcd_tcp_conn *tcp = plat_alloc_local(a.tcp_conns * sizeof(struct mcd_tcp_conn), 64);
    uint16_t *tcp_out = plat_alloc_local(a.tcp_conns * sizeof(uint16_t), 64);
    uint16_t port = (uint16_t)(a.port + hart);
    if (!s || !mem || !conns || !tcp || !tcp_out ||
        mcd_server_init(s, port, mem, a.mem, (unsigned)a.buckets, conns, (unsigned)a.conns) != 0) {
        printf("mcd: hart %u: out of memory (mem=%llu)\n", hart, (unsigned long long)a.mem);
        exit_group(1);
    }
    mcd_server_enable_tcp(s, tcp, tcp_out, (unsigned)a.tcp_conns);
    s->corrupt_every = (uint32_t)a.corrupt_every;
    if (a.selftest)
        exit_group(selftest(s, q, a.selftest, port, (unsigned)a.burst));
    if (a.bench) {
        static unsigned done, failed;
        int bad = bench(s, a.bench, (unsigned)a.bench_keys, (unsigned)a.bench_vlen, port, hart == 0, (int)a.bench_tcp);
        if (bad)
            __atomic_fetch_add(&failed, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&done, 1, __ATOMIC_ACQ_REL);
        if (hart != 0)
            hart_exit(0);
        unsigned harts = a.bench_all ? plat_num_cores() : 1;
        while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < harts)
            KVS_CPU_RELAX();
        exit_group(__atomic_load_n(&failed, __ATOMIC_RELAXED) != 0);
    }
    if (hart == 0)
        printf("mcd: serving UDP ports %u.. and TCP on the same (one instance per hart), %llu KiB store per "
               "instance\n", port, (unsigned long long)(a.mem >> 10));
    if (zq)
        for (;;)
            zc_poll_once(s, zq, (unsigned)a.burst);
    for (;;)
        poll_once(s, q, (unsigned)a.burst);
}
