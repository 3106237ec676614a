/* Integer arithmetic of RV64IM, each instruction written explicitly: add/sub/logic/compare, the W forms, and
 * every multiply and divide including division by zero and the INT_MIN / -1 overflow cases, over a table of edge
 * values (all pairs). Prints one digest per instruction plus the raw results of the division edge cases. */
#include "common.h"

#define RR(name, insn)                                                                         \
    static long name(long a, long b) {                                                         \
        long r;                                                                                \
        __asm__ volatile(insn " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));                       \
        return r;                                                                              \
    }

RR(op_add, "add") RR(op_sub, "sub") RR(op_and, "and") RR(op_or, "or") RR(op_xor, "xor")
RR(op_slt, "slt") RR(op_sltu, "sltu")
RR(op_addw, "addw") RR(op_subw, "subw")
RR(op_mul, "mul") RR(op_mulh, "mulh") RR(op_mulhsu, "mulhsu") RR(op_mulhu, "mulhu") RR(op_mulw, "mulw")
RR(op_div, "div") RR(op_divu, "divu") RR(op_rem, "rem") RR(op_remu, "remu")
RR(op_divw, "divw") RR(op_divuw, "divuw") RR(op_remw, "remw") RR(op_remuw, "remuw")

struct op { const char *name; long (*fn)(long, long); };

static const struct op ops[] = {
    {"add", op_add}, {"sub", op_sub}, {"and", op_and}, {"or", op_or}, {"xor", op_xor},
    {"slt", op_slt}, {"sltu", op_sltu}, {"addw", op_addw}, {"subw", op_subw},
    {"mul", op_mul}, {"mulh", op_mulh}, {"mulhsu", op_mulhsu}, {"mulhu", op_mulhu}, {"mulw", op_mulw},
    {"div", op_div}, {"divu", op_divu}, {"rem", op_rem}, {"remu", op_remu},
    {"divw", op_divw}, {"divuw", op_divuw}, {"remw", op_remw}, {"remuw", op_remuw},
};

static const long edge[] = {
    0, 1, -1, 2, -2, 3, 7, -7, 0x7fffffff, -0x80000000L, 0x80000000L, 0xffffffffL, 0x100000000L,
    0x7fffffffffffffffL, (long)0x8000000000000000ull, (long)0xffffffff7fffffffull, 0x123456789abcdef0L,
    (long)0xfedcba9876543210ull, 0x00000000ffff0000L, 0x5555555555555555L, (long)0xaaaaaaaaaaaaaaaaull,
    1000000007L, -1000000007L, 0x0000000080000001L, (long)0xffffffff80000000ull,
};
#define NEDGE (sizeof edge / sizeof edge[0])

/* Immediate forms, with immediates at the edges of the 12-bit range. */
#define RI(name, insn, imm)                                                                    \
    static long name(long a) {                                                                 \
        long r;                                                                                \
        __asm__ volatile(insn " %0, %1, " #imm : "=r"(r) : "r"(a));                            \
        return r;                                                                              \
    }
RI(addi_p, "addi", 2047) RI(addi_n, "addi", -2048) RI(addi_1, "addi", -1)
RI(slti_p, "slti", 2047) RI(slti_n, "slti", -2048) RI(slti_0, "slti", 0)
RI(sltiu_n, "sltiu", -1) RI(sltiu_p, "sltiu", 5) RI(sltiu_0, "sltiu", 0)
RI(xori_n, "xori", -1) RI(xori_p, "xori", 1365) RI(ori_n, "ori", -2048) RI(ori_p, "ori", 255)
RI(andi_n, "andi", -16) RI(andi_p, "andi", 2047) RI(addiw_p, "addiw", 2047) RI(addiw_n, "addiw", -2048)
RI(addiw_0, "addiw", 0)

static long (*const imm_ops[])(long) = {
    addi_p, addi_n, addi_1, slti_p, slti_n, slti_0, sltiu_n, sltiu_p, sltiu_0, xori_n, xori_p, ori_n, ori_p,
    andi_n, andi_p, addiw_p, addiw_n, addiw_0,
};

static long lui_auipc(void) {
    long a, b, c, d, pc1, pc2;
    __asm__ volatile("lui %0, 0xfffff\n"
                     "lui %1, 0x80000\n"
                     "lui %2, 0x7ffff\n"
                     "lui %3, 1\n"
                     "1: auipc %4, 0\n"
                     "auipc %5, 0x80000\n"
                     : "=r"(a), "=r"(b), "=r"(c), "=r"(d), "=r"(pc1), "=r"(pc2));
    /* auipc with 0x80000 adds -2^31 (sign-extended): the difference to the previous auipc is fixed. */
    return a ^ (b << 1) ^ (c << 2) ^ (d << 3) ^ ((pc2 - pc1) << 4);
}

int main(void) {
    int status = 0;
    for (unsigned k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        for (unsigned i = 0; i < NEDGE; i++)
            for (unsigned j = 0; j < NEDGE; j++)
                dg((uint64_t)ops[k].fn(edge[i], edge[j]));
        dg_print(ops[k].name);
    }
    for (unsigned k = 0; k < sizeof imm_ops / sizeof imm_ops[0]; k++)
        for (unsigned i = 0; i < NEDGE; i++)
            dg((uint64_t)imm_ops[k](edge[i]));
    dg_print("imm-ops");
    printf("lui/auipc    %016lx\n", lui_auipc());

    /* The division edge cases, raw. */
    long mn = OPAQUE((long)0x8000000000000000ull), m1 = OPAQUE(-1L), z = OPAQUE(0L), x = OPAQUE(-12345L);
    long mnw = OPAQUE(-0x80000000L);
    printf("div  INT64_MIN/-1 = %lx   rem = %lx\n", op_div(mn, m1), op_rem(mn, m1));
    printf("div  x/0 = %lx  divu x/0 = %lx  rem x/0 = %lx  remu x/0 = %lx\n", op_div(x, z), op_divu(x, z),
           op_rem(x, z), op_remu(x, z));
    printf("divw INT32_MIN/-1 = %lx   remw = %lx\n", op_divw(mnw, m1), op_remw(mnw, m1));
    printf("divw x/0 = %lx  divuw x/0 = %lx  remw x/0 = %lx  remuw x/0 = %lx\n", op_divw(x, z),
           op_divuw(x, z), op_remw(x, z), op_remuw(x, z));
    /* W forms use only the low 32 bits of their operands and sign-extend the 32-bit result. */
    long hi = OPAQUE(0x1234567800000007L), hd = OPAQUE(0x7fffffff00000002L);
    printf("divw hi = %lx  remuw hi = %lx  mulw = %lx  addw = %lx\n", op_divw(hi, hd), op_remuw(hi, hd),
           op_mulw(hi, OPAQUE(0x40000000L)), op_addw(OPAQUE(0x7fffffffL), OPAQUE(1L)));
    printf("mulh  min*min = %lx  mulhu max*max = %lx  mulhsu -1*max = %lx\n", op_mulh(mn, mn),
           op_mulhu(m1, m1), op_mulhsu(m1, m1));
    status = (int)(op_div(x, OPAQUE(7L)) & 0x3f);
    return status;
}
