/* The ELF loader: this program is linked with -z separate-code (see the Makefile), so it has several PT_LOAD
 * segments (read-only headers and rodata, executable text, read-write data + bss) at page-aligned addresses.
 * Checks initialized data spanning several pages, read-only tables, a table of code pointers, and a .bss that
 * starts inside the last file-backed page of the data segment (those bytes must read as zero however the file
 * continues after the segment). */
#include "common.h"

#define DATA_WORDS 3072   /* 24 KB: crosses pages */

#define W(i) ((uint64_t)(i) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)(i) << 17))
#define W4(i) W(i), W(i + 1), W(i + 2), W(i + 3)
#define W16(i) W4(i), W4(i + 4), W4(i + 8), W4(i + 12)
#define W64(i) W16(i), W16(i + 16), W16(i + 32), W16(i + 48)
#define W256(i) W64(i), W64(i + 64), W64(i + 128), W64(i + 192)

static uint64_t data_words[DATA_WORDS] = {
    W256(0), W256(256), W256(512), W256(768), W256(1024), W256(1280), W256(1536), W256(1792), W256(2048),
    W256(2304), W256(2560), W256(2816),
};
static char data_tail[5] = "tail";                /* the last initialized bytes */
static uint8_t bss_small[100];                     /* likely in the same page as data_tail */
static uint64_t bss_big[40000];                    /* 320 KB of zeroes */
static const char *const names[] = {"alpha", "beta", "gamma", "delta", "epsilon"};
static const uint32_t rodata_table[6] = {0xdeadbeef, 0xcafef00d, 0x12345678, 0, 0xffffffff, 7};

static long f0(long x) { return x + 1; }
static long f1(long x) { return x * 3; }
static long f2(long x) { return x ^ 0x55; }
static long (*data_fns[])(long) = {f0, f1, f2, f1, f0};

int main(void) {
    int ok = 1;
    for (int i = 0; i < DATA_WORDS; i++)
        ok &= data_words[i] == W(i);
    printf("data words intact: %d\n", ok);
    printf("data tail: %s\n", data_tail);
    long nonzero = 0;
    for (unsigned i = 0; i < sizeof bss_small; i++)
        nonzero += bss_small[i] != 0;
    for (unsigned i = 0; i < sizeof bss_big / 8; i++)
        nonzero += bss_big[i] != 0;
    printf("bss nonzero bytes/words: %ld\n", nonzero);
    for (unsigned i = 0; i < sizeof bss_big / 8; i += 7)
        bss_big[i] = data_words[i % DATA_WORDS];
    for (unsigned i = 0; i < sizeof bss_big / 8; i += 7)
        dg(bss_big[i]);
    dg_print("bss-written");
    for (unsigned i = 0; i < 5; i++)
        printf("%s %08x ", names[i], rodata_table[i]);
    printf("\n");
    long x = 1;
    for (int r = 0; r < 20; r++)
        x = data_fns[r % 5](x);
    printf("fn table: %ld\n", x);
    printf("segments ordered: text < rodata < data < bss: %d\n",
           (uintptr_t)main < (uintptr_t)rodata_table && (uintptr_t)rodata_table < (uintptr_t)data_words &&
           (uintptr_t)data_words < (uintptr_t)bss_big);
    return ok ? 4 : 1;
}
