/* Litmus tests of the memory model on two harts, argv[1] = "mp" or "sb", argv[2] = rounds (default 500).
 *
 * MP (message passing): hart 0 writes data then flag, with fence w,w between; hart 1 reads flag then data, with
 * fence r,r between. RVWMO forbids flag == 1 && data == 0.
 * SB (store buffering): hart 0 writes x then reads y, hart 1 writes y then reads x, each with fence rw,rw between.
 * RVWMO forbids both reads returning 0.
 *
 * Each round starts both harts together (a sense-reversing barrier on an AMO counter) so their accesses race.
 * The program prints the rounds and how many gave a forbidden outcome (which must be 0) and exits 1 if any did.
 * Outcome counts other than the forbidden one depend on the interleaving, so they are not printed: the output is
 * the same under qemu (one hart runs both threads' code in turn) and on any number of simulated harts. */
#include "micro.h"

#define ROUNDS_MAX 100000

static volatile uint64_t x __attribute__((aligned(64)));
static volatile uint64_t y __attribute__((aligned(64)));
static volatile int64_t arrived __attribute__((aligned(64)));
static volatile int64_t sense __attribute__((aligned(64)));
static uint64_t r0[ROUNDS_MAX], r1[ROUNDS_MAX];

static void barrier(long parties, int64_t *local_sense) {
    *local_sense = !*local_sense;
    if (amoadd_d(&arrived, 1) == parties - 1) {
        arrived = 0;
        fence();
        sense = *local_sense;
    } else {
        while (sense != *local_sense)
            ;
    }
}

/* Thread 0 and thread 1 of round i. */
static void thread0(int mp, long i) {
    if (mp) {
        x = 1;                                  /* data */
        __asm__ volatile("fence w, w" ::: "memory");
        y = 1;                                  /* flag */
    } else {
        x = 1;
        fence();
        r0[i] = y;
    }
}

static void thread1(int mp, long i) {
    if (mp) {
        uint64_t flag = y;
        __asm__ volatile("fence r, r" ::: "memory");
        r0[i] = flag;
        r1[i] = x;
    } else {
        y = 1;
        fence();
        r1[i] = x;
    }
}

int main(int argc, char **argv) {
    int mp = argc > 1 && argv[1][0] == 'm';
    long rounds = argc > 2 ? (long)kvsim_parse_size(argv[2]) : 500;
    if (rounds < 1 || rounds > ROUNDS_MAX)
        rounds = 500;
    long me = kvsim_hart_id(), harts = kvsim_num_harts();
    long parties = harts >= 2 ? 2 : 1;
    if (me >= 2)
        hart_exit(0);
    int64_t local_sense = 0;
    for (long i = 0; i < rounds; i++) {
        barrier(parties, &local_sense);
        if (parties == 1) {
            thread0(mp, i);
            thread1(mp, i);
        } else if (me == 0) {
            thread0(mp, i);
        } else {
            thread1(mp, i);
        }
        barrier(parties, &local_sense);
        if (me == 0) {
            x = 0;
            y = 0;
        }
    }
    if (me != 0)
        hart_exit(0);
    long forbidden = 0;
    for (long i = 0; i < rounds; i++)
        forbidden += mp ? (r0[i] == 1 && r1[i] == 0) : (r0[i] == 0 && r1[i] == 0);
    printf("%s: %ld rounds, forbidden outcomes %ld\n", mp ? "message passing" : "store buffering", rounds, forbidden);
    return forbidden ? 1 : 0;
}
