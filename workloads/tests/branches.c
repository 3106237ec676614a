/* Control flow: every conditional branch kind (taken and not taken, signed vs unsigned at the edges), jal/jalr
 * through direct calls, function pointers and a computed-goto-free switch jump table, recursion (deep enough to
 * use the stack), and a return-address chain. */
#include "common.h"

#define BR(name, insn)                                                                         \
    static int name(long a, long b) {                                                          \
        int r;                                                                                 \
        __asm__ volatile("li %0, 1\n\t" insn " %1, %2, 1f\n\tli %0, 0\n1:"                     \
                         : "=&r"(r) : "r"(a), "r"(b));                                          \
        return r;                                                                              \
    }
BR(br_beq, "beq") BR(br_bne, "bne") BR(br_blt, "blt") BR(br_bge, "bge") BR(br_bltu, "bltu") BR(br_bgeu, "bgeu")

/* Backward branches: count down with each kind. */
static long loop_kinds(long n) {
    long c = 0, i;
    __asm__ volatile("mv %1, %2\n"
                     "1: addi %0, %0, 1\n addi %1, %1, -1\n bgtz %1, 1b\n"        /* blt zero, i */
                     "mv %1, %2\n"
                     "2: addi %0, %0, 2\n addi %1, %1, -1\n bnez %1, 2b\n"        /* bne */
                     "mv %1, zero\n"
                     "3: addi %0, %0, 3\n addi %1, %1, 1\n bltu %1, %2, 3b\n"     /* bltu */
                     "mv %1, %2\n"
                     "4: addi %0, %0, 5\n addi %1, %1, -1\n bge %1, zero, 4b\n"   /* bge (one extra trip) */
                     : "+r"(c), "=&r"(i)
                     : "r"(n));
    return c;
}

static long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static long ackermann(long m, long n) {
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

/* Deep, non-tail recursion with a frame that holds an array, to walk down the stack. */
static __attribute__((noinline)) uint64_t deep(int depth, uint64_t acc) {
    volatile uint64_t frame[8];
    for (int i = 0; i < 8; i++)
        frame[i] = acc + (uint64_t)i * depth;
    if (depth == 0)
        return acc;
    uint64_t r = deep(depth - 1, mix64(acc ^ (uint64_t)depth));
    for (int i = 0; i < 8; i++)
        r += frame[i];
    return r;
}

static long f_add(long a, long b) { return a + b; }
static long f_sub(long a, long b) { return a - b; }
static long f_mul(long a, long b) { return a * b; }
static long f_xor(long a, long b) { return a ^ b; }
static long f_min(long a, long b) { return a < b ? a : b; }
static long (*const fptrs[])(long, long) = {f_add, f_sub, f_mul, f_xor, f_min};

/* Dense enough for GCC to emit a jump table (a load of a code address and a jr). */
static __attribute__((noinline)) long sw(long k, long x) {
    switch (k) {
    case 0: return x + 11;
    case 1: return x * 3;
    case 2: return x ^ 0x5a5a;
    case 3: return x - 77;
    case 4: return x << 3;
    case 5: return x >> 2;
    case 6: return ~x;
    case 7: return x * x;
    case 8: return x + 1000;
    case 9: return -x;
    case 10: return x | 0xf0;
    case 11: return x & 0xff;
    default: return 123456;
    }
}

/* jalr with a non-zero offset and a link register other than ra. */
static long jalr_offset(void) {
    long r, link, target;
    __asm__ volatile(".option push\n.option norvc\n"
                     "la %2, 1f\n"
                     "jalr %1, 8(%2)\n"          /* lands at 1f + 8 */
                     "1: li %0, 100\n"           /* 4 bytes each (norvc) */
                     "j 2f\n"
                     "li %0, 200\n"              /* target: 1f + 8 */
                     "sub %1, %1, %2\n"          /* link - 1f = 0 (link is the address after the jalr = 1f) */
                     "add %0, %0, %1\n"
                     "2:\n.option pop"
                     : "=&r"(r), "=&r"(link), "=&r"(target));
    return r;
}

int main(int argc, char **argv) {
    (void)argv;
    static const long v[] = {0, 1, -1, 2, -2, 0x7fffffffffffffffL, (long)0x8000000000000000ull, 0x80000000L,
                             -0x80000000L, 12345};
    const unsigned n = sizeof v / sizeof v[0];
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            unsigned bits = br_beq(v[i], v[j]) | br_bne(v[i], v[j]) << 1 | br_blt(v[i], v[j]) << 2 |
                            br_bge(v[i], v[j]) << 3 | br_bltu(v[i], v[j]) << 4 | br_bgeu(v[i], v[j]) << 5;
            dg(bits);
            if (i == 5 || i == 6)
                printf("%x", bits);
        }
    printf("\n");
    dg_print("branches");
    printf("loops        %ld %ld\n", loop_kinds(OPAQUE(10L)), loop_kinds(OPAQUE(1L)));
    printf("fib(20)      %ld\n", fib(OPAQUE(20L)));
    printf("ack(2,3)     %ld  ack(3,3) %ld\n", ackermann(2, OPAQUE(3L)), ackermann(3, OPAQUE(3L)));
    printf("deep         %016lx\n", deep(OPAQUE(2000), 1));
    long acc = argc;
    for (long k = 0; k < 50; k++)
        acc = fptrs[(k * 7 + acc) % 5 < 0 ? 0 : (k * 7 + acc) % 5](acc, k + 3);
    printf("fptr         %ld\n", acc);
    for (long k = -2; k < 15; k++)
        dg((uint64_t)sw(OPAQUE(k), k * 1000 + 7));
    dg_print("switch");
    printf("jalr-offset  %ld\n", jalr_offset());
    return (int)(fib(10) & 0x7f);
}
