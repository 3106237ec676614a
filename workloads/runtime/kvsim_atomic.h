/* Atomics for kvsim guests (RV64A), written as inline assembly so the exact instructions are known.
 * Every AMO here is .aqrl (sequentially consistent); LR/SC loops are single asm blocks so no other memory access
 * can land between the LR and its SC. All pointers must be naturally aligned (misaligned atomics fault).
 */
#ifndef KVSIM_ATOMIC_H
#define KVSIM_ATOMIC_H

#include <stdint.h>

#define KVSIM_AMO_(name, insn, T)                                                          \
    static inline T name(volatile T *p, T v) {                                             \
        T old;                                                                             \
        __asm__ volatile(insn " %0, %2, %1" : "=r"(old), "+A"(*p) : "r"(v) : "memory");  \
        return old;                                                                        \
    }

/* Each returns the old value of *p. */
KVSIM_AMO_(amoswap_w, "amoswap.w.aqrl", int32_t)
KVSIM_AMO_(amoadd_w,  "amoadd.w.aqrl",  int32_t)
KVSIM_AMO_(amoxor_w,  "amoxor.w.aqrl",  int32_t)
KVSIM_AMO_(amoand_w,  "amoand.w.aqrl",  int32_t)
KVSIM_AMO_(amoor_w,   "amoor.w.aqrl",   int32_t)
KVSIM_AMO_(amomin_w,  "amomin.w.aqrl",  int32_t)
KVSIM_AMO_(amomax_w,  "amomax.w.aqrl",  int32_t)
KVSIM_AMO_(amominu_w, "amominu.w.aqrl", uint32_t)
KVSIM_AMO_(amomaxu_w, "amomaxu.w.aqrl", uint32_t)
KVSIM_AMO_(amoswap_d, "amoswap.d.aqrl", int64_t)
KVSIM_AMO_(amoadd_d,  "amoadd.d.aqrl",  int64_t)
KVSIM_AMO_(amoxor_d,  "amoxor.d.aqrl",  int64_t)
KVSIM_AMO_(amoand_d,  "amoand.d.aqrl",  int64_t)
KVSIM_AMO_(amoor_d,   "amoor.d.aqrl",   int64_t)
KVSIM_AMO_(amomin_d,  "amomin.d.aqrl",  int64_t)
KVSIM_AMO_(amomax_d,  "amomax.d.aqrl",  int64_t)
KVSIM_AMO_(amominu_d, "amominu.d.aqrl", uint64_t)
KVSIM_AMO_(amomaxu_d, "amomaxu.d.aqrl", uint64_t)

/* Compare-and-swap with an LR/SC loop; returns the value seen (== expected on success). */
static inline int64_t cas_d(volatile int64_t *p, int64_t expected, int64_t desired) {
    int64_t seen, fail;
    __asm__ volatile("1: lr.d.aqrl %0, %2\n"
                     "   bne %0, %3, 2f\n"
                     "   sc.d.rl %1, %4, %2\n"
                     "   bnez %1, 1b\n"
                     "2:"
                     : "=&r"(seen), "=&r"(fail), "+A"(*p)
                     : "r"(expected), "r"(desired)
                     : "memory");
    return seen;
}

static inline int32_t cas_w(volatile int32_t *p, int32_t expected, int32_t desired) {
    int32_t seen, fail;
    __asm__ volatile("1: lr.w.aqrl %0, %2\n"
                     "   bne %0, %3, 2f\n"
                     "   sc.w.rl %1, %4, %2\n"
                     "   bnez %1, 1b\n"
                     "2:"
                     : "=&r"(seen), "=&r"(fail), "+A"(*p)
                     : "r"(expected), "r"(desired)
                     : "memory");
    return seen;
}

/* Fetch-and-add with an LR/SC loop (the AMO-free way); returns the old value. */
static inline int64_t lrsc_fetch_add_d(volatile int64_t *p, int64_t v) {
    int64_t old, tmp;
    __asm__ volatile("1: lr.d %0, %2\n"
                     "   add %1, %0, %3\n"
                     "   sc.d %1, %1, %2\n"
                     "   bnez %1, 1b"
                     : "=&r"(old), "=&r"(tmp), "+A"(*p)
                     : "r"(v)
                     : "memory");
    return old;
}

static inline void fence(void) { __asm__ volatile("fence rw, rw" ::: "memory"); }

/* A test-and-set spinlock built on LR/SC (acquire) and a release store. */
typedef struct { volatile int32_t word; } spinlock_t;
#define SPINLOCK_INIT {0}

static inline void spin_lock(spinlock_t *l) {
    int32_t seen, fail;
    __asm__ volatile("1: lr.w.aq %0, %2\n"
                     "   bnez %0, 1b\n"
                     "   sc.w %1, %3, %2\n"
                     "   bnez %1, 1b"
                     : "=&r"(seen), "=&r"(fail), "+A"(l->word)
                     : "r"(1)
                     : "memory");
}

static inline void spin_unlock(spinlock_t *l) {
    __asm__ volatile("amoswap.w.rl zero, zero, %0" : "+A"(l->word) : : "memory");
}

#endif
