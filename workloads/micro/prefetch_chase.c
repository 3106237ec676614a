/* Pointer chase with prefetchable addresses: the nodes (one per line, over a region much larger than the caches)
 * are linked in a random order that is also kept in an array, so the node `distance` links ahead is known without
 * following the chain. With distance > 0 the loop issues a software prefetch (Zicbop prefetch.r) for it before
 * each dependent load, hiding the memory latency; with 0 it is a plain chase.
 *   prefetch_chase [distance (default 0)] [links (default 4000)] [region bytes (default 64M)] */
#include "micro.h"

int main(int argc, char **argv) {
    uint64_t dist = arg_size(argc, argv, 1, 0);
    uint64_t links = arg_size(argc, argv, 2, 4000);
    uint64_t bytes = arg_size(argc, argv, 3, 64 << 20);
    uint64_t n = bytes / sizeof(struct node);
    struct node *nodes = (struct node *)kvsim_alloc_local(bytes, 4096);
    uint32_t *order = (uint32_t *)kvsim_alloc_local((n + 64) * sizeof(uint32_t), 64);
    if (!nodes || !order || links + dist > n)
        return 2;
    struct node *p = random_cycle(nodes, n, order, 4242);
    measure_begin();
    if (dist == 0) {
        for (uint64_t i = 0; i < links; i++)
            p = p->next;
    } else {
        for (uint64_t i = 0; i < links; i++) {
            kvsim_prefetch_r(&nodes[order[i + dist]]);
            p = p->next;
        }
    }
    measure_end();
    printf("prefetch_chase distance=%lu links=%lu end=%lu\n", (unsigned long)dist, (unsigned long)links,
           (unsigned long)(p - nodes));
    return 0;
}
