/* RVC: the hand-written c.* sequences of compressed_asm.S over many inputs, plus whatever the compiler
 * compresses on its own in this file. */
#include "common.h"

long c_alu(long a, long b);
long c_mem(long a, long *buf);
long c_ctrl(long n);

static long membuf[40];

int main(void) {
    static const long in[] = {0, 1, -1, 31, -32, 0x7fffffff, -0x80000000L, 0x123456789abcdefL,
                              (long)0x8000000000000000ull, 0x7fffffffffffffffL, 0xfff, 4096};
    const unsigned n = sizeof in / sizeof in[0];
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++)
            dg((uint64_t)c_alu(in[i], in[j]));
    dg_print("c_alu");
    for (unsigned i = 0; i < n; i++) {
        dg((uint64_t)c_mem(in[i], membuf));
        for (int k = 0; k < 40; k++)
            dg((uint64_t)membuf[k]);
    }
    dg_print("c_mem");
    for (long k = 0; k < 20; k++)
        dg((uint64_t)c_ctrl(k));
    dg_print("c_ctrl");
    printf("c_alu(5,9)=%lx c_mem(-2)=%lx c_ctrl(7)=%ld\n", c_alu(5, 9), c_mem(-2, membuf), c_ctrl(7));
    return 9;
}
