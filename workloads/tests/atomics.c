/* RV64A: every AMO in .w and .d form over edge values (the .w forms sign-extend the old value and use only the
 * low 32 bits; min/max signed vs unsigned), LR/SC loops, an SC without a reservation, and the runtime's
 * kvsim_atomic.h helpers (CAS, LR/SC fetch-add, spinlock). */
#include "common.h"

long amo_all_w(volatile int32_t *p, long v, long *out);
long amo_all_d(volatile int64_t *p, long v, long *out);
long lrsc_sum_d(volatile int64_t *p, long n);
long lrsc_sum_w(volatile int32_t *p, long n);
long sc_no_reservation(volatile int64_t *p);
long lr_w_sign(volatile int32_t *p);

static volatile int32_t w32[4] __attribute__((aligned(8)));
static volatile int64_t w64[4];

int main(void) {
    static const long v[] = {0, 1, -1, 0x7fffffff, -0x80000000L, 0x80000000L, 0x123456789L,
                             0x7fffffffffffffffL, (long)0x8000000000000000ull, (long)0xdeadbeefcafef00dull};
    const unsigned n = sizeof v / sizeof v[0];
    long out[9];
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            w32[1] = (int32_t)v[i];
            w32[0] = w32[2] = 0x55555555;      /* neighbours must not change */
            dg((uint64_t)amo_all_w(&w32[1], v[j], out));
            for (int k = 0; k < 9; k++)
                dg((uint64_t)out[k]);
            dg((uint64_t)w32[0] << 32 | (uint32_t)w32[2]);
        }
    dg_print("amo.w");
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            w64[1] = v[i];
            dg((uint64_t)amo_all_d(&w64[1], v[j], out));
            for (int k = 0; k < 9; k++)
                dg((uint64_t)out[k]);
        }
    dg_print("amo.d");
    w32[1] = -5;
    amo_all_w(&w32[1], -3, out);
    printf("amo.w(-5,-3): %lx %lx %lx %lx %lx %lx %lx %lx %lx\n", out[0], out[1], out[2], out[3], out[4], out[5],
           out[6], out[7], out[8]);
    w64[1] = 0;
    long f1 = lrsc_sum_d(&w64[1], 1000);
    w32[1] = 0x7fff0000;
    long f2 = lrsc_sum_w(&w32[1], 1000);
    printf("lr/sc sums: d=%ld w=%d (failures %ld %ld)\n", (long)w64[1], (int)w32[1], f1, f2);
    w64[2] = 40;
    long sc = sc_no_reservation(&w64[2]);
    printf("sc after sc: %lx  mem %ld\n", sc, (long)w64[2]);
    w32[3] = (int32_t)0x80000001;
    printf("lr.w sign: %lx\n", lr_w_sign(&w32[3]));

    /* kvsim_atomic.h helpers */
    volatile int64_t c = 10;
    volatile int32_t cw = 7;
    long s1 = cas_d(&c, 10, 20), s2 = cas_d(&c, 10, 30);
    long s3 = cas_w(&cw, 7, -8), s4 = cas_w(&cw, 7, 9);
    long s5 = lrsc_fetch_add_d(&c, 5);
    long s6 = amoadd_d(&c, 100), s7 = amoswap_w(&cw, 1234), s8 = amominu_d((volatile uint64_t *)&c, 3);
    printf("helpers: %ld %ld %ld %ld %ld %ld %ld %ld -> c=%ld cw=%d\n", s1, s2, s3, s4, s5, s6, s7, s8, (long)c,
           (int)cw);
    spinlock_t lock = SPINLOCK_INIT;
    spin_lock(&lock);
    int held = lock.word;
    spin_unlock(&lock);
    printf("spinlock: held=%d after=%d\n", held, (int)lock.word);
    return 21;
}
