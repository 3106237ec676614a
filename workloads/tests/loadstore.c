/* Every load and store width and signedness of RV64I (lb lbu lh lhu lw lwu ld, sb sh sw sd), at positive and
 * negative offsets and at every aligned position in a buffer, plus byte-order checks (little-endian). */
#include "common.h"

static uint8_t buf[256] __attribute__((aligned(16)));

#define LOAD(insn, off, p)                                                                     \
    ({ long r_; __asm__ volatile(insn " %0, " #off "(%1)" : "=r"(r_) : "r"(p) : "memory"); r_; })
#define STORE(insn, off, p, v)                                                                 \
    __asm__ volatile(insn " %1, " #off "(%0)" : : "r"(p), "r"(v) : "memory")

static void fill(void) {
    for (int i = 0; i < 256; i++)
        buf[i] = (uint8_t)(i * 37 + 0x80);  /* half of the bytes have the sign bit set */
}

int main(void) {
    fill();
    uint8_t *base = OPAQUE(buf + 128);
    /* Loads at each naturally aligned position in the buffer, through a base register in the middle so that
     * both negative and positive offsets are used. */
    for (long i = -128; i < 128; i++) {
        uint8_t *p = OPAQUE(base + i);
        dg(LOAD("lb", 0, p));
        dg(LOAD("lbu", 0, p));
        if ((i & 1) == 0) { dg(LOAD("lh", 0, p)); dg(LOAD("lhu", 0, p)); }
        if ((i & 3) == 0) { dg(LOAD("lw", 0, p)); dg(LOAD("lwu", 0, p)); }
        if ((i & 7) == 0) dg(LOAD("ld", 0, p));
    }
    dg_print("loads");
    dg(LOAD("lb", -128, base)); dg(LOAD("lbu", 127, base)); dg(LOAD("lh", -2, base));
    dg(LOAD("lhu", 126, base)); dg(LOAD("lw", -124, base)); dg(LOAD("lwu", 124, base));
    dg(LOAD("ld", -128, base)); dg(LOAD("ld", 120, base));
    dg_print("load-offsets");
    printf("lb %lx lbu %lx lh %lx lhu %lx lw %lx lwu %lx ld %lx\n", LOAD("lb", 1, base), LOAD("lbu", 1, base),
           LOAD("lh", 2, base), LOAD("lhu", 2, base), LOAD("lw", 4, base), LOAD("lwu", 4, base),
           LOAD("ld", 8, base));

    /* Stores of each width write exactly their bytes, little-endian, and only the low bits of the register. */
    long v = OPAQUE((long)0x8899aabbccddeeffull);
    for (long i = -128; i < 128; i += 16) {
        uint8_t *p = OPAQUE(base + i);
        STORE("sb", 0, p, v);
        STORE("sh", 2, p, v + i);
        STORE("sw", 4, p, v ^ i);
        STORE("sd", 8, p, v * (i | 1));
    }
    STORE("sb", -1, base, v);
    STORE("sh", -4, base, v);
    STORE("sw", 120, base, v);
    STORE("sd", -120, base, v);
    for (int i = 0; i < 256; i += 8)
        dg(*(volatile uint64_t *)(buf + i));
    dg_print("stores");
    /* Store then reload through different widths (store-to-load forwarding in a timing model must not change
     * the value). */
    uint8_t *p = OPAQUE(base);
    STORE("sd", 0, p, v);
    STORE("sb", 3, p, OPAQUE(0x11L));
    STORE("sh", 6, p, OPAQUE(0x2233L));
    printf("mixed ld %lx lw %lx lhu %lx lb %lx\n", LOAD("ld", 0, p), LOAD("lw", 4, p), LOAD("lhu", 2, p),
           LOAD("lb", 7, p));
    for (int i = 0; i < 16; i++)
        printf("%02x", buf[120 + i]);
    printf("\n");
    return 5;
}
