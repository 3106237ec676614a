/* Simulator calls (workloads/ABI.md, "Simulator calls"): `ecall` with a7 in 0x4b560000-0x4b5600ff.
 *
 * The same binary runs under qemu-riscv64, where these calls return -ENOSYS: the wrappers then act as hart 0 of a
 * one-hart machine on one socket, the markers do nothing, and ALLOC_LOCAL falls back to an anonymous mmap.
 */
#ifndef KVSIM_H
#define KVSIM_H

#include <stdint.h>
#include <stddef.h>
#include "kvsim_hints.h"
#include "kvsim_atomic.h"

#define KVSIM_CALL_HART_ID     0x4b560000L
#define KVSIM_CALL_NUM_HARTS   0x4b560001L
#define KVSIM_CALL_ROI_BEGIN   0x4b560002L
#define KVSIM_CALL_ROI_END     0x4b560003L
#define KVSIM_CALL_SOCKET_OF   0x4b560004L
#define KVSIM_CALL_ALLOC_LOCAL 0x4b560005L
#define KVSIM_CALL_STATS_DUMP  0x4b560006L
#define KVSIM_CALL_STATS_RESET 0x4b560007L
#define KVSIM_CALL_ALLOC_ON    0x4b56000fL
#define KVSIM_CALL_SOCKET_OF_ADDR 0x4b560010L

#define KVSIM_ENOSYS 38

static inline long kvsim_call2(long nr, long arg0, long arg1) {
    register long a0 __asm__("a0") = arg0;
    register long a1 __asm__("a1") = arg1;
    register long a7 __asm__("a7") = nr;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a7) : "memory");
    return a0;
}

static inline long kvsim_call3(long nr, long arg0, long arg1, long arg2) {
    register long a0 __asm__("a0") = arg0;
    register long a1 __asm__("a1") = arg1;
    register long a2 __asm__("a2") = arg2;
    register long a7 __asm__("a7") = nr;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
    return a0;
}

static inline long kvsim_call0(long nr) { return kvsim_call2(nr, 0, 0); }

/* 1 when running in the kvsim engine, 0 under qemu-riscv64 (or any Linux). */
static inline int kvsim_in_simulator(void) { return kvsim_call0(KVSIM_CALL_HART_ID) != -KVSIM_ENOSYS; }

static inline long kvsim_hart_id(void) {
    long r = kvsim_call0(KVSIM_CALL_HART_ID);
    return r == -KVSIM_ENOSYS ? 0 : r;
}

static inline long kvsim_num_harts(void) {
    long r = kvsim_call0(KVSIM_CALL_NUM_HARTS);
    return r == -KVSIM_ENOSYS ? 1 : r;
}

static inline long kvsim_socket_of(long hart) {
    long r = kvsim_call2(KVSIM_CALL_SOCKET_OF, hart, 0);
    return r == -KVSIM_ENOSYS ? 0 : r;
}

static inline void kvsim_roi_begin(void)   { (void)kvsim_call0(KVSIM_CALL_ROI_BEGIN); }
static inline void kvsim_roi_end(void)     { (void)kvsim_call0(KVSIM_CALL_ROI_END); }
static inline void kvsim_stats_dump(void)  { (void)kvsim_call0(KVSIM_CALL_STATS_DUMP); }
static inline void kvsim_stats_reset(void) { (void)kvsim_call0(KVSIM_CALL_STATS_RESET); }

/* The socket whose memory holds `addr` in the engine's NUMA map (0 outside the simulator). */
static inline long kvsim_socket_of_addr(const void *addr) {
    long r = kvsim_call2(KVSIM_CALL_SOCKET_OF_ADDR, (long)addr, 0);
    return r == -KVSIM_ENOSYS ? 0 : r;
}

/* Outside the simulator: an anonymous private mmap (Linux system call 222), over-allocated to honour a large
 * alignment. */
static inline void *kvsim_mmap_aligned(size_t bytes, size_t align) {
    if (align < 4096)
        align = 4096;
    register long a0 __asm__("a0") = 0;
    register long a1 __asm__("a1") = (long)(bytes + align - 4096);
    register long a2 __asm__("a2") = 3;      /* PROT_READ | PROT_WRITE */
    register long a3 __asm__("a3") = 0x22;   /* MAP_PRIVATE | MAP_ANONYMOUS */
    register long a4 __asm__("a4") = -1;
    register long a5 __asm__("a5") = 0;
    register long a7 __asm__("a7") = 222;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a3), "r"(a4), "r"(a5), "r"(a7) : "memory");
    if (a0 < 0 && a0 > -4096)
        return (void *)0;
    return (void *)(((uintptr_t)a0 + align - 1) & ~(uintptr_t)(align - 1));
}

/* Zeroed memory local to the calling hart's socket; NULL on failure. `align` is a power of two. Outside the
 * simulator: an anonymous mmap. */
static inline void *kvsim_alloc_local(size_t bytes, size_t align) {
    long r = kvsim_call2(KVSIM_CALL_ALLOC_LOCAL, (long)bytes, (long)align);
    if (r != -KVSIM_ENOSYS)
        return (r < 0 && r > -4096) ? (void *)0 : (void *)r;
    return kvsim_mmap_aligned(bytes, align);
}

/* Zeroed memory in socket `socket`'s memory (for a partition set up by another thread); NULL on failure. A socket
 * the system does not have stops the run with an error naming it. Outside the simulator: an anonymous mmap. */
static inline void *kvsim_alloc_on(size_t bytes, size_t align, unsigned socket) {
    long r = kvsim_call3(KVSIM_CALL_ALLOC_ON, (long)bytes, (long)align, (long)socket);
    if (r != -KVSIM_ENOSYS)
        return (r < 0 && r > -4096) ? (void *)0 : (void *)r;
    return kvsim_mmap_aligned(bytes, align);
}

#endif
