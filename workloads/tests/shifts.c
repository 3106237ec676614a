/* Shifts of RV64I: sll/srl/sra with register amounts 0..127 (only the low 6 bits count), sllw/srlw/sraw (low 5
 * bits, 32-bit result sign-extended), and the immediate forms slli/srli/srai for every amount 0..63 and
 * slliw/srliw/sraiw for 0..31. */
#include "common.h"

#define RR(name, insn)                                                                         \
    static long name(long a, long b) {                                                         \
        long r;                                                                                \
        __asm__ volatile(insn " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));                       \
        return r;                                                                              \
    }
RR(op_sll, "sll") RR(op_srl, "srl") RR(op_sra, "sra") RR(op_sllw, "sllw") RR(op_srlw, "srlw")
RR(op_sraw, "sraw")

static const long vals[] = {
    1, -1, 0x7fffffffffffffffL, (long)0x8000000000000000ull, 0x00000000deadbeefL, (long)0xfedcba9876543210ull,
    0x0000000080000000L, 0x000000007fffffffL, 0x123456789abcdef1L,
};
#define NV (sizeof vals / sizeof vals[0])

/* Immediate shifts: one asm statement per amount, generated with the preprocessor. */
#define SH_IMM(insn, n)                                                                        \
    do {                                                                                       \
        long r_;                                                                               \
        __asm__ volatile(insn " %0, %1, " #n : "=r"(r_) : "r"(v));                             \
        dg((uint64_t)r_);                                                                      \
    } while (0)
#define R4(insn, b) SH_IMM(insn, b); SH_IMM(insn, b + 1); SH_IMM(insn, b + 2); SH_IMM(insn, b + 3)
#define R16(insn, b) R4(insn, b); R4(insn, b + 4); R4(insn, b + 8); R4(insn, b + 12)
#define R32(insn) R16(insn, 0); R16(insn, 16)
#define R64(insn) R32(insn); R16(insn, 32); R16(insn, 48)

static void imm64(const char *name, int which) {
    for (unsigned i = 0; i < NV; i++) {
        long v = OPAQUE(vals[i]);
        if (which == 0) { R64("slli"); }
        else if (which == 1) { R64("srli"); }
        else { R64("srai"); }
    }
    dg_print(name);
}

static void imm32(const char *name, int which) {
    for (unsigned i = 0; i < NV; i++) {
        long v = OPAQUE(vals[i]);
        if (which == 0) { R32("slliw"); }
        else if (which == 1) { R32("srliw"); }
        else { R32("sraiw"); }
    }
    dg_print(name);
}

int main(void) {
    static const struct { const char *name; long (*fn)(long, long); } ops[] = {
        {"sll", op_sll}, {"srl", op_srl}, {"sra", op_sra}, {"sllw", op_sllw}, {"srlw", op_srlw},
        {"sraw", op_sraw},
    };
    for (unsigned k = 0; k < 6; k++) {
        for (unsigned i = 0; i < NV; i++)
            for (long s = -3; s < 128; s++)  /* negative and large amounts: only the low bits count */
                dg((uint64_t)ops[k].fn(vals[i], s + (s & 64 ? 0x1234500 : 0)));
        dg_print(ops[k].name);
    }
    imm64("slli", 0);
    imm64("srli", 1);
    imm64("srai", 2);
    imm32("slliw", 0);
    imm32("srliw", 1);
    imm32("sraiw", 2);
    long v = OPAQUE((long)0x8000000000000001ull);
    printf("sra63 %lx srl63 %lx sraw31 %lx srlw31 %lx sllw31 %lx sll64 %lx\n", op_sra(v, 63), op_srl(v, 63),
           op_sraw(OPAQUE(0x80000000L), 31), op_srlw(OPAQUE(0x80000000L), 31), op_sllw(v, 31), op_sll(v, 64));
    return 17;
}
