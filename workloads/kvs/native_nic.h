/* native_nic.h - the native platform's controls: which simulated core is running, and the software loopback NIC
 * (one RX/TX queue pair per core) that tests drive as the client. */
#ifndef KVS_NATIVE_NIC_H
#define KVS_NATIVE_NIC_H

#include <stdint.h>
#include "platform.h"

void native_platform_init(unsigned num_cores, unsigned sockets);
void native_set_core(unsigned core);          /* plat_core_id() answers this */
void native_platform_free_all(void);          /* frees every allocation and queue */

/* Create core's queue pair: nbufs packet buffers of KVS_NIC_BUF_SIZE bytes, FIFOs of fifo_cap frames. */
struct plat_queue *native_queue_create(unsigned core, unsigned nbufs, unsigned fifo_cap);
/* Client side: put a frame on the RX FIFO (copied into a free buffer). 0, or -1 when dropped (no buffer, FIFO
 * full, or longer than a buffer). */
int native_inject(struct plat_queue *q, const uint8_t *frame, uint32_t len);
/* Client side: take the oldest sent frame (copied out, at most cap bytes). 1 if one was there, else 0. */
int native_collect(struct plat_queue *q, uint8_t *out, uint32_t cap, uint32_t *len);
unsigned native_rx_pending(const struct plat_queue *q);
unsigned native_tx_pending(const struct plat_queue *q);
unsigned native_bufs_free(const struct plat_queue *q);
unsigned native_bufs_total(const struct plat_queue *q);

#endif
