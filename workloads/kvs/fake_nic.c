/*
 * fake_nic.c - a software model of one NIC queue that follows workloads/ABI.md ("The NIC") from the device's side,
 * for the riscv64 self-test under qemu-riscv64 (which has no device range): the register block is an ordinary
 * page, the NIC discovery calls are answered here, and the "device" runs when the self-test calls it. It drives
 * the real poll-mode driver of platform_riscv.c, so ring set-up, wrap-around, refill, doorbells, DD handling, TX
 * reclaim and RX drops are exercised. It is also a small executable reading of the ABI for the engine side.
 */
#include "kvsim.h"
#include "kvsim_libc.h"
#include "kvs_abi.h"
#include "platform_riscv.h"

static struct {
    volatile uint64_t *regs;
    int enabled;
    uint64_t rx_head, tx_head, rx_size, tx_size;
    struct kvs_nic_rx_desc *rx;
    struct kvs_nic_tx_desc *tx;
    uint64_t tx_writebacks; /* TX descriptors whose DD this NIC wrote */
} fn;

#define REG(off) fn.regs[(off) / 8]

static long fake_call(long nr, long arg)
{
    switch (nr) {
    case KVS_SIMCALL_NIC_NUM_QUEUES:
        return 1;
    case KVS_SIMCALL_NIC_QUEUE_OF:
        return arg == 0 ? 0 : -19;
    case KVS_SIMCALL_NIC_QUEUE_REGS:
        return arg == 0 ? (long)(uintptr_t)fn.regs : -19;
    case KVS_SIMCALL_NIC_QUEUE_PORT:
        return arg == 0 ? 0 : -19;
    default:
        return -38;
    }
}

int fake_nic_install(void)
{
    fn.regs = kvsim_alloc_local(4096, 4096);
    if (!fn.regs)
        return -1;
    /* Descriptor mode (DD in every sent descriptor) unless fake_nic_report_status switches it. */
    REG(KVS_NIC_REG_TX_COMPLETION) = KVS_NIC_TX_COMPLETION_DESCRIPTOR;
    REG(KVS_NIC_REG_QUEUE_ID) = 0;
    REG(KVS_NIC_REG_PORT_ID) = 0;
    plat_nic_simcall = fake_call;
    return 0;
}

/* The device notices a CTRL change (a real NIC sees the store itself). */
static int sync_ctrl(void)
{
    int on = (int)(REG(KVS_NIC_REG_CTRL) & KVS_NIC_CTRL_ENABLE);
    if (on && !fn.enabled) {
        fn.rx = (struct kvs_nic_rx_desc *)(uintptr_t)REG(KVS_NIC_REG_RX_BASE);
        fn.tx = (struct kvs_nic_tx_desc *)(uintptr_t)REG(KVS_NIC_REG_TX_BASE);
        fn.rx_size = REG(KVS_NIC_REG_RX_SIZE);
        fn.tx_size = REG(KVS_NIC_REG_TX_SIZE);
        fn.rx_head = fn.tx_head = 0;
        REG(KVS_NIC_REG_RX_HEAD) = REG(KVS_NIC_REG_TX_HEAD) = 0;
    }
    fn.enabled = on;
    return on;
}

int fake_nic_deliver(const uint8_t *frame, uint32_t len)
{
    if (!sync_ctrl())
        return -1;
    if (fn.rx_head == REG(KVS_NIC_REG_RX_TAIL)) { /* no descriptor: this model has no FIFO, it drops */
        REG(KVS_NIC_REG_RX_DROPS)++;
        return -1;
    }
    struct kvs_nic_rx_desc *d = &fn.rx[fn.rx_head];
    if (len > d->buf_size) {
        REG(KVS_NIC_REG_RX_DROPS)++;
        return -1;
    }
    memcpy((void *)(uintptr_t)d->addr, frame, len);
    d->len = (uint16_t)len;
    d->status = KVS_NIC_DESC_DD;
    fn.rx_head = (fn.rx_head + 1) & (fn.rx_size - 1);
    REG(KVS_NIC_REG_RX_HEAD) = fn.rx_head;
    REG(KVS_NIC_REG_RX_FRAMES)++;
    return 0;
}

int fake_nic_transmit(uint8_t *out, uint32_t cap, uint32_t *len)
{
    if (!sync_ctrl() || fn.tx_head == REG(KVS_NIC_REG_TX_TAIL))
        return 0;
    struct kvs_nic_tx_desc *d = &fn.tx[fn.tx_head];
    *len = d->len;
    memcpy(out, (const void *)(uintptr_t)d->addr, d->len < cap ? d->len : cap);
    if (REG(KVS_NIC_REG_TX_COMPLETION) != KVS_NIC_TX_COMPLETION_REPORT_STATUS || (d->cmd & KVS_NIC_TX_CMD_RS)) {
        d->status = KVS_NIC_DESC_DD;
        fn.tx_writebacks++;
    }
    fn.tx_head = (fn.tx_head + 1) & (fn.tx_size - 1);
    REG(KVS_NIC_REG_TX_HEAD) = fn.tx_head;
    REG(KVS_NIC_REG_TX_FRAMES)++;
    return 1;
}

/* Report-status mode, before the queue opens: DD only in sent descriptors whose cmd has RS (the 82599's). */
void fake_nic_report_status(void) { REG(KVS_NIC_REG_TX_COMPLETION) = KVS_NIC_TX_COMPLETION_REPORT_STATUS; }

uint64_t fake_nic_tx_writebacks(void) { return fn.tx_writebacks; }
