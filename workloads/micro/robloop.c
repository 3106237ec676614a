/* A memory-latency-bound loop: each iteration loads one line of a large array at an address computed from the
 * loop counter alone (never from loaded data), adds it up, and does a few integer operations. The loads are
 * independent, so how many overlap is set by how many iterations fit in the reorder buffer (and, beyond that, by
 * the L1D's MSHRs): IPC rises with the ROB size, then levels off.
 *   robloop [array bytes (default 64M)] [loads (default 4000)] */
#include "micro.h"

int main(int argc, char **argv) {
    uint64_t bytes = arg_size(argc, argv, 1, 64 << 20);
    uint64_t loads = arg_size(argc, argv, 2, 4000);
    const uint8_t *a = (const uint8_t *)kvsim_alloc_local(bytes, 4096);
    if (!a)
        return 2;
    uint64_t mask = bytes / 64 - 1;          /* bytes is a power of two */
    uint64_t idx = 0, sum = 0;
    measure_begin();
    for (uint64_t i = 0; i < loads; i++) {
        idx = (idx + 0x9e3779b1u) & mask;    /* an odd step: visits every line once per lap, far apart */
        sum += *(const volatile uint64_t *)(a + idx * 64);
        sum ^= i;
    }
    measure_end();
    printf("robloop bytes=%lu loads=%lu sum=%lu\n", (unsigned long)bytes, (unsigned long)loads,
           (unsigned long)sum);
    return 0;
}
