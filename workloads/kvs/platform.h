/*
 * platform.h - the thin platform interface under the portable KVS core.
 *
 * Two implementations: platform_native.c (host, software loopback NIC, for tests) and platform_riscv.c (the guest:
 * simulator calls from workloads/runtime/kvsim.h and a poll-mode driver for the NIC of workloads/ABI.md).
 */
#ifndef KVS_PLATFORM_H
#define KVS_PLATFORM_H

#include <stdint.h>
#include <stddef.h>

/* A packet buffer handed between the NIC queue and the KVS core. */
struct plat_pkt {
    uint8_t *data;  /* frame start */
    uint32_t len;   /* frame length (bytes) */
    uint32_t cap;   /* buffer capacity (bytes) */
    uint32_t buf;   /* the driver's buffer index (opaque to the core) */
    uint32_t pad;
};

struct plat_nic_counters {
    uint64_t rx_frames, tx_frames, rx_drops, tx_drops;
};

struct plat_queue; /* one RX/TX queue pair, owned by one core */

unsigned plat_core_id(void);
unsigned plat_num_cores(void);
unsigned plat_socket_of(unsigned core);
/* Zeroed memory local to the calling core's socket; never freed (the server allocates once at start). */
void *plat_alloc_local(size_t bytes, size_t align);
/* Zeroed memory in socket `socket`'s memory (data one thread sets up for another socket's core); never freed. */
void *plat_alloc_on(size_t bytes, size_t align, unsigned socket);

/* The calling core's queue with rings of the given sizes (powers of two; the native platform ignores them), or
 * NULL if the core has none. */
struct plat_queue *plat_queue_open(unsigned core, unsigned rx_ring, unsigned tx_ring);
/* Up to max received frames; the buffers belong to the caller until sent or dropped. */
unsigned plat_rx_burst(struct plat_queue *q, struct plat_pkt *pkts, unsigned max);
/* Queue n frames for sending; takes every buffer back (a frame that cannot be queued is dropped and counted). */
unsigned plat_tx_burst(struct plat_queue *q, struct plat_pkt *pkts, unsigned n);
/* Give a received buffer back without sending it. */
void plat_pkt_drop(struct plat_queue *q, struct plat_pkt *pkt);
/* Housekeeping: the queue's NIC counters. */
void plat_queue_counters(struct plat_queue *q, struct plat_nic_counters *out);

/* Hints: a non-temporal read prefetch (MICA's prefetchnta) of one line or of two consecutive lines (p, p + 64), and
 * a plain read prefetch. Functionally no-ops. On riscv64: NTL.ALL (add x0, x0, t0) immediately followed by
 * prefetch.r (Zicbop: ORI rd=x0, imm = offset | 1), in one asm statement so that the compiler cannot put another
 * memory access between the hint and the prefetch it applies to. Emitted with .insn so the binary builds without
 * the Zicbop flag and stays a no-op on cores without it. */
#if defined(__riscv)
#define KVS_PREFETCH_NT(p) \
    __asm__ volatile("add zero, zero, t0\n\t.insn i 0x13, 6, x0, %0, 1" : : "r"(p) : "memory")
#define KVS_PREFETCH_NT2(p)                                                                     \
    __asm__ volatile("add zero, zero, t0\n\t.insn i 0x13, 6, x0, %0, 1\n\t"                     \
                     "add zero, zero, t0\n\t.insn i 0x13, 6, x0, %0, 65" : : "r"(p) : "memory")
#define KVS_PREFETCH(p) __asm__ volatile(".insn i 0x13, 6, x0, %0, 1" : : "r"(p) : "memory")
#else
#define KVS_PREFETCH_NT(p) __builtin_prefetch((const void *)(p), 0, 0)
#define KVS_PREFETCH_NT2(p) \
    do { __builtin_prefetch((const void *)(p), 0, 0); __builtin_prefetch((const char *)(p) + 64, 0, 0); } while (0)
#define KVS_PREFETCH(p) __builtin_prefetch((const void *)(p), 0, 3)
#endif

/* The end of one poll of the serving loop, `n` the frames it found. On riscv64 the poll-end hint (SLTI x0, rs1 = n,
 * imm 0x4b5: an encoding the RISC-V spec designates for custom hints; workloads/ABI.md, "Hints the timing models
 * see"): the simulator splits the instructions into polls that found work and idle polls. Functionally a no-op,
 * one instruction per poll. */
#if defined(__riscv)
#define KVS_POLL_END(n) __asm__ volatile(".insn i 0x13, 2, x0, %0, 0x4b5" : : "r"((unsigned long)(n)))
#else
#define KVS_POLL_END(n) ((void)(n))
#endif

#if defined(__riscv)
#define KVS_CPU_RELAX() __asm__ volatile("nop" ::: "memory")
#else
#define KVS_CPU_RELAX() __asm__ volatile("" ::: "memory")
#endif

#endif
