/* Floating point of RV64FD, each instruction written explicitly, over a table of edge values (zeros, subnormals,
 * infinities, quiet and signalling NaNs, values that round differently in every mode): arithmetic, fused
 * multiply-add, square root, min/max, sign injection, compares, fclass, conversions to and from integers in every
 * rounding mode, moves, NaN-boxing of singles, and the accrued exception flags after each operation. Prints one
 * digest per group. Built with the F and D extensions (soft-float calling convention), so the registers f0..f31
 * also carry values for the lockstep comparison with qemu. With any argument it runs a short sample (one rounding
 * mode, every fourth edge value) small enough for that instruction-by-instruction comparison. */
#include "common.h"

static const uint64_t dedge[] = {
    0x0000000000000000ull, 0x8000000000000000ull, 0x3ff0000000000000ull, 0xbff0000000000000ull,
    0x0000000000000001ull, 0x800fffffffffffffull, 0x0010000000000000ull, 0x7fefffffffffffffull,
    0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff8000000000000ull, 0x7ff0000000000001ull,
    0x3fd5555555555555ull, 0x4000000000000001ull, 0x43e0000000000000ull, 0xc3e0000000000001ull,
    0x41dfffffffc00000ull, 0x3ff8000000000000ull, 0xbff8000000000000ull, 0x4004000000000000ull,
};
#define NDEDGE (sizeof dedge / sizeof dedge[0])

static const uint32_t sedge[] = {
    0x00000000u, 0x80000000u, 0x3f800000u, 0xbf800000u, 0x00000001u, 0x807fffffu, 0x00800000u, 0x7f7fffffu,
    0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0x3eaaaaabu, 0x40000001u, 0x5f000000u, 0xdf000001u,
    0x4effffffu, 0x3fc00000u, 0xbfc00000u, 0x40200000u,
};
#define NSEDGE (sizeof sedge / sizeof sedge[0])

static inline void set_rm(unsigned rm) { __asm__ volatile("fsrm %0" : : "r"(rm)); }
static inline uint64_t take_flags(void) {
    uint64_t f;
    __asm__ volatile("frflags %0\n fsflags x0" : "=r"(f));
    return f;
}

/* Double-precision binary operation from raw bits (the dynamic rounding mode applies). */
#define DRR(name, insn)                                                                        \
    static uint64_t name(uint64_t a, uint64_t b) {                                             \
        uint64_t r;                                                                            \
        __asm__ volatile("fmv.d.x ft0, %1\n fmv.d.x ft1, %2\n " insn " ft2, ft0, ft1\n"        \
                         "fmv.x.d %0, ft2" : "=r"(r) : "r"(a), "r"(b) : "ft0", "ft1", "ft2");   \
        return r;                                                                              \
    }
/* Single precision: the result register is read as 64 bits, so its NaN-boxing shows. */
#define SRR(name, insn)                                                                        \
    static uint64_t name(uint64_t a, uint64_t b) {                                             \
        uint64_t r;                                                                            \
        __asm__ volatile("fmv.w.x ft0, %1\n fmv.w.x ft1, %2\n " insn " ft2, ft0, ft1\n"        \
                         "fmv.x.d %0, ft2" : "=r"(r) : "r"(a), "r"(b) : "ft0", "ft1", "ft2");   \
        return r;                                                                              \
    }
/* Compares write an integer register. */
#define DCMP(name, insn)                                                                       \
    static uint64_t name(uint64_t a, uint64_t b) {                                             \
        uint64_t r;                                                                            \
        __asm__ volatile("fmv.d.x ft0, %1\n fmv.d.x ft1, %2\n " insn " %0, ft0, ft1"           \
                         : "=r"(r) : "r"(a), "r"(b) : "ft0", "ft1");                           \
        return r;                                                                              \
    }
#define SCMP(name, insn)                                                                       \
    static uint64_t name(uint64_t a, uint64_t b) {                                             \
        uint64_t r;                                                                            \
        __asm__ volatile("fmv.w.x ft0, %1\n fmv.w.x ft1, %2\n " insn " %0, ft0, ft1"           \
                         : "=r"(r) : "r"(a), "r"(b) : "ft0", "ft1");                           \
        return r;                                                                              \
    }

DRR(d_add, "fadd.d") DRR(d_sub, "fsub.d") DRR(d_mul, "fmul.d") DRR(d_div, "fdiv.d")
DRR(d_min, "fmin.d") DRR(d_max, "fmax.d") DRR(d_sgnj, "fsgnj.d") DRR(d_sgnjn, "fsgnjn.d") DRR(d_sgnjx, "fsgnjx.d")
SRR(s_add, "fadd.s") SRR(s_sub, "fsub.s") SRR(s_mul, "fmul.s") SRR(s_div, "fdiv.s")
SRR(s_min, "fmin.s") SRR(s_max, "fmax.s") SRR(s_sgnj, "fsgnj.s") SRR(s_sgnjn, "fsgnjn.s") SRR(s_sgnjx, "fsgnjx.s")
DCMP(d_eq, "feq.d") DCMP(d_lt, "flt.d") DCMP(d_le, "fle.d")
SCMP(s_eq, "feq.s") SCMP(s_lt, "flt.s") SCMP(s_le, "fle.s")

struct binop { const char *name; uint64_t (*fn)(uint64_t, uint64_t); int single; };

static const struct binop binops[] = {
    {"fadd.d", d_add, 0}, {"fsub.d", d_sub, 0}, {"fmul.d", d_mul, 0}, {"fdiv.d", d_div, 0},
    {"fmin.d", d_min, 0}, {"fmax.d", d_max, 0}, {"fsgnj.d", d_sgnj, 0}, {"fsgnjn.d", d_sgnjn, 0},
    {"fsgnjx.d", d_sgnjx, 0}, {"feq.d", d_eq, 0}, {"flt.d", d_lt, 0}, {"fle.d", d_le, 0},
    {"fadd.s", s_add, 1}, {"fsub.s", s_sub, 1}, {"fmul.s", s_mul, 1}, {"fdiv.s", s_div, 1},
    {"fmin.s", s_min, 1}, {"fmax.s", s_max, 1}, {"fsgnj.s", s_sgnj, 1}, {"fsgnjn.s", s_sgnjn, 1},
    {"fsgnjx.s", s_sgnjx, 1}, {"feq.s", s_eq, 1}, {"flt.s", s_lt, 1}, {"fle.s", s_le, 1},
};

static uint64_t d_fmadd(uint64_t a, uint64_t b, uint64_t c) {
    uint64_t r;
    __asm__ volatile("fmv.d.x ft0, %1\n fmv.d.x ft1, %2\n fmv.d.x ft2, %3\n fmadd.d ft3, ft0, ft1, ft2\n"
                     "fnmsub.d ft4, ft0, ft1, ft3\n fmv.x.d %0, ft4"
                     : "=r"(r) : "r"(a), "r"(b), "r"(c) : "ft0", "ft1", "ft2", "ft3", "ft4");
    return r;
}

static uint64_t s_fmsub(uint64_t a, uint64_t b, uint64_t c) {
    uint64_t r;
    __asm__ volatile("fmv.w.x ft0, %1\n fmv.w.x ft1, %2\n fmv.w.x ft2, %3\n fmsub.s ft3, ft0, ft1, ft2\n"
                     "fnmadd.s ft4, ft3, ft1, ft2\n fmv.x.d %0, ft4"
                     : "=r"(r) : "r"(a), "r"(b), "r"(c) : "ft0", "ft1", "ft2", "ft3", "ft4");
    return r;
}

/* Unary operations and conversions on one double and one single edge value, digested together. */
static void unary(uint64_t d, uint32_t s) {
    uint64_t r;
    __asm__ volatile("fmv.d.x ft0, %1\n fsqrt.d ft1, ft0\n fmv.x.d %0, ft1" : "=r"(r) : "r"(d) : "ft0", "ft1");
    dg(r); dg(take_flags());
    __asm__ volatile("fmv.w.x ft0, %1\n fsqrt.s ft1, ft0\n fmv.x.d %0, ft1" : "=r"(r) : "r"(s) : "ft0", "ft1");
    dg(r); dg(take_flags());
    __asm__ volatile("fmv.d.x ft0, %1\n fclass.d %0, ft0" : "=r"(r) : "r"(d) : "ft0");
    dg(r);
    __asm__ volatile("fmv.w.x ft0, %1\n fclass.s %0, ft0" : "=r"(r) : "r"(s) : "ft0");
    dg(r);
    __asm__ volatile("fmv.d.x ft0, %1\n fcvt.s.d ft1, ft0\n fmv.x.d %0, ft1" : "=r"(r) : "r"(d) : "ft0", "ft1");
    dg(r); dg(take_flags());
    __asm__ volatile("fmv.w.x ft0, %1\n fcvt.d.s ft1, ft0\n fmv.x.d %0, ft1" : "=r"(r) : "r"(s) : "ft0", "ft1");
    dg(r); dg(take_flags());
    __asm__ volatile("fmv.d.x ft0, %1\n fcvt.l.d %0, ft0" : "=r"(r) : "r"(d) : "ft0");
    dg(r); dg(take_flags());
    __asm__ volatile("fmv.d.x ft0, %1\n fcvt.wu.d %0, ft0" : "=r"(r) : "r"(d) : "ft0");
    dg(r); dg(take_flags());
    __asm__ volatile("fmv.w.x ft0, %1\n fcvt.lu.s %0, ft0" : "=r"(r) : "r"(s) : "ft0");
    dg(r); dg(take_flags());
    __asm__ volatile("fmv.w.x ft0, %1\n fcvt.w.s %0, ft0" : "=r"(r) : "r"(s) : "ft0");
    dg(r); dg(take_flags());
    __asm__ volatile("fcvt.d.l ft0, %1\n fmv.x.d %0, ft0" : "=r"(r) : "r"(d) : "ft0");
    dg(r); dg(take_flags());
    __asm__ volatile("fcvt.s.lu ft0, %1\n fmv.x.d %0, ft0" : "=r"(r) : "r"(d) : "ft0");
    dg(r); dg(take_flags());
    __asm__ volatile("fcvt.s.w ft0, %1\n fmv.x.d %0, ft0" : "=r"(r) : "r"(d) : "ft0");
    dg(r); dg(take_flags());
}

/* A single read from a register that holds a double that is not NaN-boxed reads as the canonical NaN. */
static uint64_t unboxed_single(uint64_t d) {
    uint64_t r;
    __asm__ volatile("fmv.d.x ft0, %1\n fadd.s ft1, ft0, ft0\n fmv.x.d %0, ft1" : "=r"(r) : "r"(d) : "ft0", "ft1");
    return r;
}

/* Loads and stores of both widths through memory (flw NaN-boxes, fsw stores the low word). */
static uint64_t through_memory(uint64_t d) {
    volatile uint64_t slot = d;
    uint64_t r1, r2;
    __asm__ volatile("fld ft0, 0(%2)\n fsw ft0, 0(%2)\n flw ft1, 4(%2)\n fmv.x.d %0, ft1\n fsd ft1, 0(%2)\n"
                     "ld %1, 0(%2)"
                     : "=r"(r1), "=r"(r2) : "r"(&slot) : "ft0", "ft1", "memory");
    return r1 ^ (r2 << 1);
}

int main(int argc, char **argv) {
    (void)argv;
    static const char *const modes[] = {"rne", "rtz", "rdn", "rup", "rmm"};
    const unsigned first_rm = argc > 1 ? 2 : 0, step = argc > 1 ? 4 : 1;
    for (unsigned rm = first_rm; rm < 5; rm += argc > 1 ? 5 : 1) {
        set_rm(rm);
        for (unsigned k = 0; k < sizeof binops / sizeof binops[0]; k++) {
            for (unsigned i = 0; i < NDEDGE; i += step) {
                for (unsigned j = 0; j < NDEDGE; j += step) {
                    uint64_t a = binops[k].single ? sedge[i] : dedge[i];
                    uint64_t b = binops[k].single ? sedge[j] : dedge[j];
                    dg(binops[k].fn(OPAQUE(a), OPAQUE(b)));
                    dg(take_flags());
                }
            }
            printf("%s %-9s %016lx\n", modes[rm], binops[k].name, dg_take());
        }
        for (unsigned i = 0; i < NDEDGE; i += step) {
            for (unsigned j = 0; j < NDEDGE; j += 3 * step) {
                dg(d_fmadd(dedge[i], dedge[j], dedge[(i + j) % NDEDGE]));
                dg(take_flags());
                dg(s_fmsub(sedge[i], sedge[j], sedge[(i + 2 * j) % NSEDGE]));
                dg(take_flags());
            }
        }
        dg_print(rm == 0 ? "fma rne" : rm == 1 ? "fma rtz" : rm == 2 ? "fma rdn" : rm == 3 ? "fma rup" : "fma rmm");
        for (unsigned i = 0; i < NDEDGE; i += step) unary(OPAQUE(dedge[i]), OPAQUE(sedge[i]));
        dg_print(rm == 0 ? "unary rne" : rm == 1 ? "unary rtz" : rm == 2 ? "unary rdn" : rm == 3 ? "unary rup"
                                                                                       : "unary rmm");
    }
    set_rm(0);
    for (unsigned i = 0; i < NDEDGE; i += step) {
        dg(unboxed_single(OPAQUE(dedge[i])));
        dg(through_memory(OPAQUE(dedge[i])));
    }
    dg_print("boxing");
    return 0;
}
