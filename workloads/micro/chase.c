/* Pointer chase: load-to-use latency of the level that holds the working set.
 *   chase [working_set (default 16K)] [loads (default 20000)]
 * The working set is split into 64-byte nodes linked in one random cycle (no stride for a prefetcher, every
 * load depends on the previous one); the measured region follows `loads` links, 8 per loop iteration, so its
 * cycles / loads is the load-to-use latency. */
#include "micro.h"

int main(int argc, char **argv) {
    uint64_t ws = arg_size(argc, argv, 1, 16 << 10);
    uint64_t loads = arg_size(argc, argv, 2, 20000) & ~7ull;
    uint64_t n = ws / sizeof(struct node);
    struct node *nodes = (struct node *)kvsim_alloc_local(n * sizeof(struct node), 4096);
    if (!nodes || n < 2)
        return 2;
    struct node *p = random_cycle(nodes, n, 0, 12345);
    measure_begin();
    for (uint64_t i = 0; i < loads; i += 8) {
        p = p->next; p = p->next; p = p->next; p = p->next;
        p = p->next; p = p->next; p = p->next; p = p->next;
    }
    measure_end();
    printf("chase ws=%lu loads=%lu end=%lu\n", (unsigned long)ws, (unsigned long)loads,
           (unsigned long)(p - nodes));
    return 0;
}
