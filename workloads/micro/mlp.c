/* Memory-level parallelism: k independent pointer chases advanced in turn. Each chain is a random cycle over its
 * own share of a region much larger than the caches, so every link is a DRAM access and the k chains' misses may
 * overlap: up to k at a time, and never more than the L1D's MSHRs.
 *   mlp [chains k (default 1, at most 32)] [links per chain (default 1000)] [region bytes (default 64M)] */
#include "micro.h"

int main(int argc, char **argv) {
    uint64_t k = arg_size(argc, argv, 1, 1);
    uint64_t links = arg_size(argc, argv, 2, 1000);
    uint64_t bytes = arg_size(argc, argv, 3, 64 << 20);
    if (k < 1 || k > 32)
        return 2;
    uint64_t per = bytes / sizeof(struct node) / k;
    struct node *nodes = (struct node *)kvsim_alloc_local(bytes, 4096);
    uint32_t *perm = (uint32_t *)kvsim_alloc_local(per * sizeof(uint32_t), 64);
    if (!nodes || !perm)
        return 2;
    struct node *q[32];
    for (uint64_t j = 0; j < k; j++)
        q[j] = random_cycle(nodes + j * per, per, perm, 777 + j);
    measure_begin();
    for (uint64_t i = 0; i < links; i++)
        for (uint64_t j = 0; j < k; j++)
            q[j] = q[j]->next;
    measure_end();
    uint64_t x = 0;
    for (uint64_t j = 0; j < k; j++)
        x += (uint64_t)(q[j] - nodes);
    printf("mlp k=%lu links=%lu end=%lu\n", (unsigned long)k, (unsigned long)links, (unsigned long)x);
    return 0;
}
