/* Multi-hart: NV virtual harts (argv[1], default 8) each do K atomic increments of a shared counter (AMO and
 * LR/SC), and K lock-protected updates (an LR/SC spinlock) of a shared checksum and a shared history array.
 * Real hart h runs the virtual harts v = h, h + n, h + 2n, ... (n = NUM_HARTS), so under qemu (1 hart) one hart
 * does all the work in sequence. Every update is order-independent (sums, xors, per-slot results), so the
 * printed result depends only on the total work, not on the hart count or interleaving.
 *
 * Hart 0 waits until every hart has finished, checks and prints; the other harts end with hart_exit(), so the
 * process exit status is hart 0's. */
#include "common.h"

#define K 300
#define MAX_V 64

static volatile int64_t counter_amo;
static volatile int64_t counter_lrsc;
static volatile int32_t counter_w;
static spinlock_t lock = SPINLOCK_INIT;
static uint64_t checksum_sum, checksum_xor, in_lock;
static uint64_t per_vhart[MAX_V];       /* each virtual hart's own result, written under the lock */
static volatile int64_t finished;        /* real harts done */
static volatile int64_t max_inside;      /* must stay 1: mutual exclusion */

static void work(long v) {
    uint64_t local = (uint64_t)v * 0x9e3779b97f4a7c15ull;
    for (long i = 0; i < K; i++) {
        amoadd_d(&counter_amo, 1);
        lrsc_fetch_add_d(&counter_lrsc, 2);
        amoadd_w(&counter_w, 3);
        local = mix64(local + (uint64_t)i);
        spin_lock(&lock);
        in_lock++;
        if ((int64_t)in_lock > max_inside)
            max_inside = (int64_t)in_lock;
        checksum_sum += local;
        checksum_xor ^= local * (uint64_t)(v + 1);
        per_vhart[v] = mix64(per_vhart[v] ^ local);
        in_lock--;
        spin_unlock(&lock);
    }
}

int main(int argc, char **argv) {
    long nv = argc > 1 ? (long)kvsim_parse_size(argv[1]) : 8;
    if (nv < 1 || nv > MAX_V)
        nv = 8;
    long me = kvsim_hart_id(), n = kvsim_num_harts();
    for (long v = me; v < nv; v += n)
        work(v);
    amoadd_d(&finished, 1);
    if (me != 0)
        hart_exit(0);
    while (finished < n)
        ;   /* hart 0 waits for the others */
    fence();
    uint64_t hist = 0;
    for (long v = 0; v < nv; v++)
        hist = mix64(hist ^ per_vhart[v]);
    printf("virtual harts %ld, K %d\n", nv, K);
    printf("counter amo.d  %ld (expect %ld)\n", (long)counter_amo, nv * K);
    printf("counter lr/sc  %ld (expect %ld)\n", (long)counter_lrsc, 2 * nv * K);
    printf("counter amo.w  %d (expect %ld)\n", (int)counter_w, 3 * nv * K);
    printf("checksum sum %016lx xor %016lx history %016lx\n", checksum_sum, checksum_xor, hist);
    printf("mutual exclusion held: %d, lock free at end: %d\n", max_inside == 1, (int)lock.word == 0);
    int ok = counter_amo == nv * K && counter_lrsc == 2 * nv * K && counter_w == 3 * nv * K && max_inside == 1;
    return ok ? 0 : 1;
}
