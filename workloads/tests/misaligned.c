/* Misaligned loads and stores of every width, including ones that straddle a page boundary. RISC-V lets
 * hardware trap on these; qemu-user (like Linux's trap emulation) performs them. The engine does the same with
 * System.misaligned = "allow" (how tests/test_qemu_diff.py runs this program) and raises MemoryFault with the
 * default "fault" (tests/test_engine_errors.py). */
#include "common.h"

#define LOAD(insn, p)   ({ long r_; __asm__ volatile(insn " %0, 0(%1)" : "=r"(r_) : "r"(p) : "memory"); r_; })
#define STORE(insn, p, v) __asm__ volatile(insn " %1, 0(%0)" : : "r"(p), "r"(v) : "memory")

static uint8_t pages[3 * 4096] __attribute__((aligned(4096)));

int main(void) {
    for (int i = 0; i < (int)sizeof pages; i++)
        pages[i] = (uint8_t)(i * 131 + 7);
    /* Every offset inside a 16-byte window, and around the two page boundaries. */
    static const long spots[] = {1, 2, 3, 5, 6, 7, 9, 11, 13, 15, 4096 - 7, 4096 - 5, 4096 - 3, 4096 - 1,
                                 8192 - 6, 8192 - 2, 8192 - 1};
    for (unsigned k = 0; k < sizeof spots / sizeof spots[0]; k++) {
        uint8_t *p = OPAQUE(pages + spots[k]);
        dg(LOAD("lh", p)); dg(LOAD("lhu", p)); dg(LOAD("lw", p)); dg(LOAD("lwu", p)); dg(LOAD("ld", p));
    }
    dg_print("loads");
    for (unsigned k = 0; k < sizeof spots / sizeof spots[0]; k++) {
        uint8_t *p = OPAQUE(pages + spots[k]);
        long v = (long)0x8877665544332211ull + (long)k;
        STORE("sd", p, v);
        STORE("sw", p + 9, ~v);
        STORE("sh", p + 19, v >> 8);
        printf("at %5ld: ld %016lx lw %08x lh %04x\n", spots[k], LOAD("ld", p), (unsigned)LOAD("lwu", p + 9),
               (unsigned)LOAD("lhu", p + 19));
    }
    for (int i = 0; i < (int)sizeof pages; i += 8)
        dg(*(uint64_t *)(pages + i));
    dg_print("stores");
    return 11;
}
