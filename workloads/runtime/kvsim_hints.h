/* Prefetch (Zicbop) and non-temporal locality (Zihintntl) hints. Functionally no-ops on every core; the
 * engine's timing models see them (workloads/ABI.md, "Hints the timing models see").
 *
 *   prefetch.i/.r/.w off(rs1)   ORI with rd = x0, imm[4:0] = 0/1/3, offset imm[11:5] << 5 (a multiple of 32)
 *   NTL.P1/PALL/S1/ALL          ADD x0, x0, x2/x3/x4/x5, applying to the next memory instruction
 *
 * binutils 2.40 knows the prefetch mnemonics with -march=..._zicbop (the workloads Makefile checks); without it
 * (KVSIM_NO_ZICBOP) we emit the same words with .insn. It does not know ntl.*, so we write the ADD forms.
 */
#ifndef KVSIM_HINTS_H
#define KVSIM_HINTS_H

#define KVSIM_STR_(x) #x
#define KVSIM_STR(x) KVSIM_STR_(x)

#ifndef KVSIM_NO_ZICBOP
#define KVSIM_PREFETCH_(kind, code, off, p) \
    __asm__ volatile("prefetch." kind " " KVSIM_STR(off) "(%0)" : : "r"(p))
#else
#define KVSIM_PREFETCH_(kind, code, off, p) \
    __asm__ volatile(".insn i 0x13, 6, x0, %0, " KVSIM_STR(off) " + " KVSIM_STR(code) : : "r"(p))
#endif

/* off must be a constant multiple of 32 in [-2048, 2016]. */
#define KVSIM_PREFETCH_R_OFF(p, off) KVSIM_PREFETCH_("r", 1, off, p)
#define KVSIM_PREFETCH_W_OFF(p, off) KVSIM_PREFETCH_("w", 3, off, p)
#define KVSIM_PREFETCH_I_OFF(p, off) KVSIM_PREFETCH_("i", 0, off, p)
#define KVSIM_PREFETCH_R(p) KVSIM_PREFETCH_R_OFF(p, 0)
#define KVSIM_PREFETCH_W(p) KVSIM_PREFETCH_W_OFF(p, 0)
#define KVSIM_PREFETCH_I(p) KVSIM_PREFETCH_I_OFF(p, 0)

#define KVSIM_NTL_P1()   __asm__ volatile("add zero, zero, sp")
#define KVSIM_NTL_PALL() __asm__ volatile("add zero, zero, gp")
#define KVSIM_NTL_S1()   __asm__ volatile("add zero, zero, tp")
#define KVSIM_NTL_ALL()  __asm__ volatile("add zero, zero, t0")

/* x86 prefetchnta as MICA uses it: a non-temporal read prefetch. The NTL hint applies to the next instruction,
 * so both go in one asm statement: as two, the compiler may schedule a load between them. */
#define KVSIM_PREFETCH_NTA(p) \
    __asm__ volatile("add zero, zero, t0\n\t.insn i 0x13, 6, x0, %0, 1" : : "r"(p))

static inline void kvsim_prefetch_r(const void *p) { KVSIM_PREFETCH_R(p); }
static inline void kvsim_prefetch_w(const void *p) { KVSIM_PREFETCH_W(p); }
static inline void kvsim_prefetch_nta(const void *p) { KVSIM_PREFETCH_NTA(p); }

#endif
