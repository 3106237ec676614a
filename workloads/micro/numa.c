/* NUMA placement, seen from the guest (workloads/ABI.md, "NUMA"). Every hart asks SOCKET_OF for itself, allocates
 * (hart + 1) pages with ALLOC_LOCAL, touches them, and asks SOCKET_OF_ADDR where they and its own stack landed;
 * hart 0 also allocates 2 pages on every socket with ALLOC_ON. After a barrier, hart 0 prints one line per hart and
 * one per socket (addresses in hex, so the test can look them up in the engine's page map) and the number of
 * placements that disagree with the socket asked for (0 when the ABI keeps its word).
 *
 * argv[1] = K (optional): hart 0 first calls ALLOC_ON for socket K, which must stop the run when K does not exist.
 * Under qemu (one hart, no simulator calls) everything is on socket 0. */
#include "micro.h"

#define MAX_HARTS 256
#define MAX_SOCKETS 64
#define PAGE 4096

struct hart_report {
    long socket;            /* SOCKET_OF(hart), asked by the hart itself */
    long socket_by_0;       /* SOCKET_OF(hart), asked by hart 0 */
    uint64_t local;         /* ALLOC_LOCAL's block */
    long local_socket;      /* SOCKET_OF_ADDR(local) */
    long stack_socket;      /* SOCKET_OF_ADDR(an address on the hart's stack) */
};

static struct hart_report reports[MAX_HARTS];
static uint64_t arrived __attribute__((aligned(64)));

static uint64_t parse_u64(const char *s) {
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (uint64_t)(*s - '0');
    return v;
}

int main(int argc, char **argv) {
    long me = kvsim_hart_id(), harts = kvsim_num_harts();
    if (harts > MAX_HARTS) {
        printf("numa: %ld harts, at most %d\n", harts, MAX_HARTS);
        return 1;
    }
    if (me == 0 && argc > 1) {
        unsigned bad = (unsigned)parse_u64(argv[1]);
        void *p = kvsim_alloc_on(PAGE, PAGE, bad);
        printf("numa: ALLOC_ON socket %u returned %p\n", bad, p);
    }
    volatile uint64_t on_stack = 0;
    struct hart_report *r = &reports[me];
    r->socket = kvsim_socket_of(me);
    uint64_t bytes = (uint64_t)(me + 1) * PAGE;
    uint8_t *local = kvsim_alloc_local(bytes, PAGE);
    if (local) {
        for (uint64_t i = 0; i < bytes; i += PAGE)
            local[i] = (uint8_t)me;
    }
    r->local = (uint64_t)local;
    r->local_socket = kvsim_socket_of_addr(local);
    r->stack_socket = kvsim_socket_of_addr((const void *)&on_stack);
    __atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL);
    if (me != 0)
        hart_exit(0);
    while (__atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < (uint64_t)harts)
        ;
    long sockets = 0, wrong = 0;
    for (long h = 0; h < harts; h++) {
        struct hart_report *x = &reports[h];
        x->socket_by_0 = kvsim_socket_of(h);
        if (x->socket + 1 > sockets)
            sockets = x->socket + 1;
        wrong += x->socket != x->socket_by_0 || x->local == 0 || x->local_socket != x->socket ||
                 x->stack_socket != x->socket;
        printf("hart %ld socket %ld local 0x%lx bytes %lu local_socket %ld stack_socket %ld\n", h, x->socket,
               (unsigned long)x->local, (unsigned long)((h + 1) * PAGE), x->local_socket, x->stack_socket);
    }
    if (sockets > MAX_SOCKETS)
        sockets = MAX_SOCKETS;
    for (long k = 0; k < sockets; k++) {
        uint8_t *p = kvsim_alloc_on(2 * PAGE, 2 * PAGE, (unsigned)k);
        long where = p ? kvsim_socket_of_addr(p) : -1;
        if (p)
            p[PAGE] = 1;
        wrong += p == 0 || where != k || ((uint64_t)p & (2 * PAGE - 1)) != 0;
        printf("socket %ld on 0x%lx bytes %d addr_socket %ld\n", k, (unsigned long)p, 2 * PAGE, where);
    }
    /* The loader's image (this program's data) is on socket 0 by the ABI's rule. */
    long image_socket = kvsim_socket_of_addr(reports);
    wrong += image_socket != 0;
    printf("numa: %ld harts, %ld sockets, image on socket %ld, %ld wrong\n", harts, sockets, image_socket, wrong);
    return wrong != 0;
}
