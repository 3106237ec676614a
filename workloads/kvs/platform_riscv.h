/* platform_riscv.h - guest-only extras of the riscv platform: queue identity, and the software queue the
 * self-test uses when there is no NIC (qemu-riscv64). */
#ifndef KVS_PLATFORM_RISCV_H
#define KVS_PLATFORM_RISCV_H

#include <stdint.h>
#include "platform.h"

/* The NIC discovery calls go through this (the simulator by default); the self-test installs a fake NIC. */
extern long (*plat_nic_simcall)(long nr, long arg);

/* fake_nic.c: a software NIC queue behind the real driver, for qemu-riscv64. */
int fake_nic_install(void);
void fake_nic_report_status(void);
uint64_t fake_nic_tx_writebacks(void);
int fake_nic_deliver(const uint8_t *frame, uint32_t len);
int fake_nic_transmit(uint8_t *out, uint32_t cap, uint32_t *len);

/* The driver's set-up, before any queue opens: TX descriptors reclaimed in groups of `tx_rs` (RS once per group, in
 * report-status mode), one group at a time and only when fewer than `tx_free` TX descriptors are free (DPDK's
 * tx_free_thresh; 0: 32, at most the ring; tx_free = the ring size reclaims at every burst), and each packet buffer a `meta`-byte metadata header, `headroom` bytes, then `data` bytes of
 * data room (the RX descriptors post the data room). */
void plat_set_driver(unsigned tx_rs, unsigned tx_free, unsigned data, unsigned headroom, unsigned meta);
/* Report-status reclaim so far: the groups whose RS descriptor the driver found done and freed, and the descriptors
 * freed in them (the self-test checks one reclaim per group, a whole group each); the most TX descriptors a burst
 * found free when it reclaimed (below tx_free), and the most that held a buffer at once. */
void plat_tx_reclaim_counts(const struct plat_queue *q, uint64_t *groups, uint64_t *descriptors,
                            unsigned *most_free_at_reclaim, unsigned *most_held);

unsigned plat_queue_id(const struct plat_queue *q);
unsigned plat_queue_port(const struct plat_queue *q);
struct plat_queue *plat_soft_queue_open(unsigned nbufs);
int plat_soft_inject(struct plat_queue *q, const uint8_t *frame, uint32_t len);
int plat_soft_collect(struct plat_queue *q, uint8_t *out, uint32_t cap, uint32_t *len);

#endif
