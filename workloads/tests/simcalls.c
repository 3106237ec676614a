/* The simulator calls through runtime/kvsim.h: on one hart they must look the same in the engine and under
 * qemu-riscv64 (where the wrappers fall back: hart 0 of 1, socket 0, mmap for ALLOC_LOCAL, markers ignored).
 * ALLOC_LOCAL memory must be zeroed, writable and aligned as asked. */
#include "common.h"

int main(void) {
    printf("hart %ld of %ld, socket of hart 0: %ld\n", kvsim_hart_id(), kvsim_num_harts(), kvsim_socket_of(0));
    kvsim_stats_reset();
    kvsim_roi_begin();
    uint64_t acc = 0;
    static const size_t sizes[] = {1, 100, 4096, 65536, 3 << 20};
    static const size_t aligns[] = {8, 64, 4096, 1 << 16, 1 << 21};
    for (int i = 0; i < 5; i++) {
        uint8_t *p = kvsim_alloc_local(sizes[i], aligns[i]);
        int aligned = ((uintptr_t)p & (aligns[i] - 1)) == 0;
        int zero = 1;
        for (size_t k = 0; k < sizes[i]; k += 61)
            zero &= p[k] == 0;
        for (size_t k = 0; k < sizes[i]; k += 61)
            p[k] = (uint8_t)(k + i);
        for (size_t k = 0; k < sizes[i]; k += 61)
            acc = acc * 31 + p[k];
        printf("alloc_local(%zu, %zu): non-null %d aligned %d zeroed %d\n", sizes[i], aligns[i], p != 0, aligned,
               zero);
    }
    kvsim_stats_dump();
    kvsim_roi_end();
    printf("checksum %016lx\n", acc);
    return 0;
}
