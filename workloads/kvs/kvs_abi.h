/*
 * kvs_abi.h - the KVS wire format and the NIC contract between the guest (the KVS server) and the engine.
 *
 * Everything here is also written down in workloads/ABI.md ("The NIC" and "The KVS request format"); change both
 * together. Multi-byte fields of the Ethernet/IPv4/UDP headers are big-endian (network order); every other field
 * (batch header, request descriptors, NIC descriptors, registers) is little-endian, the guest's native order.
 */
#ifndef KVS_ABI_H
#define KVS_ABI_H

#include <stdint.h>
#include <stddef.h>

/* ------------------------------------------------------------------------------------------------------------ */
/* Wire format: Ethernet 14 + IPv4 20 + UDP 8 = 42 header bytes, a 6-byte batch header, then the requests.       */
/* ------------------------------------------------------------------------------------------------------------ */

#define KVS_ETH_HDR_LEN      14u
#define KVS_IPV4_HDR_LEN     20u
#define KVS_UDP_HDR_LEN      8u
#define KVS_NET_HDR_LEN      42u   /* Ethernet + IPv4 + UDP */
#define KVS_BATCH_HDR_LEN    6u
#define KVS_PAYLOAD_OFF      48u   /* offset of the first request descriptor in the frame */
#define KVS_REQ_DESC_LEN     24u
#define KVS_MAX_BATCH        32u   /* requests per packet */
#define KVS_MAX_KEY_LEN      255u  /* 8-bit key length */
#define KVS_MAX_VALUE_LEN    0xffffffu /* 24-bit value length field; a packet bounds it much lower in practice */
#define KVS_MAX_FRAME_LEN    1514u /* Ethernet frame without FCS at MTU 1500 */
#define KVS_MIN_FRAME_LEN    60u   /* shorter frames are padded by the NIC; receivers use the IPv4 length */
#define KVS_WIRE_OVERHEAD    24u   /* preamble 7 + SFD 1 + FCS 4 + inter-frame gap 12, per frame on the wire */
#define KVS_ETHERTYPE_IPV4   0x0800u
#define KVS_IPPROTO_UDP      17u
#define KVS_UDP_PORT_BASE    0x4000u /* UDP destination port = KVS_UDP_PORT_BASE + core id (steering) */

/* Round a key or value length up to the 8-byte padding used on the wire and in the log. */
#define KVS_PAD8(n) ((((uint32_t)(n)) + 7u) & ~7u)

/* The 48 bytes before the first request, laid out so that every field is naturally aligned (the IPv4 addresses are
 * only 2-byte aligned in a frame, so they are two 16-bit halves here). */
struct kvs_pkt_hdr {
    uint8_t  eth_dst[6];     /*  0 */
    uint8_t  eth_src[6];     /*  6 */
    uint16_t eth_type;       /* 12 BE: 0x0800 */
    uint8_t  ip_ver_ihl;     /* 14: 0x45 */
    uint8_t  ip_tos;         /* 15 */
    uint16_t ip_total_len;   /* 16 BE: IPv4 header + UDP header + UDP payload */
    uint16_t ip_id;          /* 18 BE */
    uint16_t ip_frag;        /* 20 BE: flags + fragment offset; MF or an offset => not a KVS packet */
    uint8_t  ip_ttl;         /* 22 */
    uint8_t  ip_proto;       /* 23: 17 = UDP */
    uint16_t ip_csum;        /* 24 BE: header checksum (the server fills it in responses) */
    uint16_t ip_src[2];      /* 26 */
    uint16_t ip_dst[2];      /* 30 */
    uint16_t udp_sport;      /* 34 BE */
    uint16_t udp_dport;      /* 36 BE: KVS_UDP_PORT_BASE + the core whose RX queue should get the packet */
    uint16_t udp_len;        /* 38 BE: UDP header + payload = ip_total_len - 20 */
    uint16_t udp_csum;       /* 40: 0 (no checksum) */
    uint8_t  batch_count;    /* 42: number of requests, 1..KVS_MAX_BATCH */
    uint8_t  batch_reserved; /* 43: 0 */
    uint32_t batch_opaque;   /* 44: client's value, echoed unchanged in the response */
};

/* One request (and one response) descriptor. In a request it is followed by the key and the value, each padded to
 * 8 bytes; in a response by the value (padded) when op = GET and result = OK, else by nothing. */
struct kvs_req_desc {
    uint8_t  op;             /*  0: KVS_OP_* */
    uint8_t  result;         /*  1: 0 in requests; KVS_RES_* in responses */
    uint16_t reserved;       /*  2: 0 */
    uint32_t kv_len;         /*  4: key length << 24 | value length (24 bits) */
    uint64_t keyhash;        /*  8: KVS_KEYHASH(key), computed by the client */
    uint32_t expire;         /* 16: expire time (stored with the item, echoed; cache mode does not enforce it) */
    uint32_t reserved2;      /* 20: 0 */
};

#define KVS_KV_LEN(klen, vlen)  ((uint32_t)(klen) << 24 | ((uint32_t)(vlen) & 0xffffffu))
#define KVS_KEY_LEN(kv_len)     ((uint32_t)(kv_len) >> 24)
#define KVS_VALUE_LEN(kv_len)   ((uint32_t)(kv_len) & 0xffffffu)

/* Operations. */
#define KVS_OP_GET     1u  /* request: key, no value (value length 0); response: the value on a hit */
#define KVS_OP_PUT     2u  /* request: key and value; response: descriptor only */
#define KVS_OP_DELETE  3u  /* request: key, no value; response: descriptor only (OK or NOT_FOUND) */

/* Results (0 is never a result: a response with result 0 was not processed). */
#define KVS_RES_OK              1u  /* GET hit (value follows), PUT stored, DELETE removed */
#define KVS_RES_NOT_FOUND       2u  /* GET/DELETE miss (never stored, or evicted) */
#define KVS_RES_BAD_OP          3u  /* unknown operation */
#define KVS_RES_BAD_LENGTH      4u  /* key length 0, or a value given with GET/DELETE */
#define KVS_RES_WRONG_PARTITION 5u  /* request steered to a core that may not serve it (EREW: any op for another
                                       core's partition; CREW: a PUT/DELETE for another core's partition) */
#define KVS_RES_TOO_LARGE       6u  /* PUT: the item does not fit the partition's log (> log size / 4) */
#define KVS_RES_NO_ROOM         7u  /* GET hit whose value does not fit the response frame (value length = 0) */
#define KVS_RES_BUSY            8u  /* CREW reader gave up waiting for a consistent bucket (not expected) */

/* The keyhash: XXH64 of the key bytes with seed 0 (keyhash.c; vectors in keyhash_vectors.txt). */
#define KVS_KEYHASH_SEED 0u
/* partition = (keyhash >> 48) % partitions; bucket = (keyhash >> 16) % buckets (a power of two; with buckets_used=
 * fewer, ((keyhash >> 16) % 2^32) * buckets_used >> 32: kvs_bucket_of); tag = keyhash & 0xffff, 0 replaced by 1. */

/* ------------------------------------------------------------------------------------------------------------ */
/* The NIC: one RX and one TX descriptor ring per queue, in guest memory; per-queue registers in the device range.*/
/* ------------------------------------------------------------------------------------------------------------ */

#define KVS_NIC_MMIO_BASE     0x3000000000ull   /* start of the device range of ABI.md */
#define KVS_NIC_MMIO_END      0x30ffffffffull
#define KVS_NIC_QUEUE_STRIDE  0x1000ull         /* queue q's registers at KVS_NIC_MMIO_BASE + q * stride */
#define KVS_NIC_MAX_QUEUES    1024u

/* Register offsets inside a queue's block. Every register is 64 bits wide and is accessed only with naturally
 * aligned 64-bit loads and stores (ld/sd); other widths are undefined. RO = read-only (stores ignored). */
#define KVS_NIC_REG_RX_BASE    0x00u  /* RW: guest address of the RX descriptor ring (16-byte aligned) */
#define KVS_NIC_REG_RX_SIZE    0x08u  /* RW: RX ring entries, a power of two, 8..4096 */
#define KVS_NIC_REG_RX_HEAD    0x10u  /* RO: next RX descriptor the NIC will fill (index, 0..size-1) */
#define KVS_NIC_REG_RX_TAIL    0x18u  /* RW doorbell: one past the last RX descriptor given to the NIC */
#define KVS_NIC_REG_TX_BASE    0x20u  /* RW: guest address of the TX descriptor ring (16-byte aligned) */
#define KVS_NIC_REG_TX_SIZE    0x28u  /* RW: TX ring entries, a power of two, 8..4096 */
#define KVS_NIC_REG_TX_HEAD    0x30u  /* RO: next TX descriptor the NIC will send */
#define KVS_NIC_REG_TX_TAIL    0x38u  /* RW doorbell: one past the last TX descriptor queued for sending */
#define KVS_NIC_REG_CTRL       0x40u  /* RW: bit 0 = enable; writing 1 resets all heads and tails to 0 */
#define KVS_NIC_REG_QUEUE_ID   0x48u  /* RO: this queue's id */
#define KVS_NIC_REG_PORT_ID    0x50u  /* RO: the global index of the Ethernet port the queue belongs to */
#define KVS_NIC_REG_RX_DROPS   0x58u  /* RO: frames for this queue dropped (no RX descriptor / FIFO overflow / too
                                         long for the buffer) */
#define KVS_NIC_REG_RX_FRAMES  0x60u  /* RO: frames delivered to this queue */
#define KVS_NIC_REG_TX_FRAMES  0x68u  /* RO: frames sent from this queue */
#define KVS_NIC_REG_TX_HEAD_WB 0x70u  /* RW: head-pointer mode: guest address (4-byte aligned) | 1 of a uint32_t
                                         where the NIC writes TX_HEAD after each TX batch; set before CTRL enable */
#define KVS_NIC_REG_TX_COMPLETION 0x78u /* RO: how sent TX descriptors are reported (KVS_NIC_TX_COMPLETION_*) */
#define KVS_NIC_REG_INTERFACE  0x80u  /* RO: how the NIC meets the cores (KVS_NIC_INTERFACE_*, Nic.interface) */
#define KVS_NIC_REG_BLOCK_LEN  0x88u

#define KVS_NIC_CTRL_ENABLE    1u
#define KVS_NIC_INTERFACE_RINGS      0u  /* descriptor rings (this file) */
#define KVS_NIC_INTERFACE_ZERO_COPY  1u  /* KeyVault's zero-copy slots (ABI.md, "The zero-copy interface") */
#define KVS_NIC_TX_HEAD_WB_ENABLE          1u
#define KVS_NIC_TX_COMPLETION_DESCRIPTOR   0u  /* status = DD in each sent descriptor */
#define KVS_NIC_TX_COMPLETION_HEAD_POINTER 1u  /* TX_HEAD written to TX_HEAD_WB's address; descriptors untouched */
#define KVS_NIC_TX_COMPLETION_REPORT_STATUS 2u /* status = DD only in sent descriptors with KVS_NIC_TX_CMD_RS */

/* RX descriptor (16 bytes). The driver writes addr and buf_size and clears status; the NIC writes the frame to
 * addr (at most buf_size bytes), then len, then status = DD. */
struct kvs_nic_rx_desc {
    uint64_t addr;      /*  0: guest address of the buffer */
    uint16_t buf_size;  /*  8: buffer capacity in bytes (driver) */
    uint16_t len;       /* 10: frame length in bytes, without FCS (NIC) */
    uint16_t status;    /* 12: KVS_NIC_DESC_DD when the NIC has filled it (NIC); driver clears it */
    uint16_t reserved;  /* 14 */
};

/* TX descriptor (16 bytes). The driver writes addr, len and cmd and clears status, then moves TX_TAIL past it; the
 * NIC reads the frame and then, when the buffer may be reused, writes status = DD (descriptor mode; report-status
 * mode only if cmd has KVS_NIC_TX_CMD_RS) or, after the batch, its new TX head to the TX_HEAD_WB address
 * (head-pointer mode, no DD). */
struct kvs_nic_tx_desc {
    uint64_t addr;      /*  0: guest address of the frame */
    uint16_t len;       /*  8: frame length in bytes, without FCS; the NIC pads frames shorter than 60 */
    uint16_t cmd;       /* 10: KVS_NIC_TX_CMD_RS: report status (report-status mode); 0 otherwise (driver) */
    uint16_t status;    /* 12: KVS_NIC_DESC_DD when sent (NIC) */
    uint16_t reserved2; /* 14 */
};

#define KVS_NIC_DESC_DD        1u     /* descriptor done */
#define KVS_NIC_TX_CMD_RS      1u     /* TX cmd: report status (DD) for this descriptor in report-status mode */
#define KVS_NIC_BUF_SIZE       2048u  /* the server's packet buffers (MTU-sized) */

/* Simulator calls for NIC queue discovery (ecall, a7 = number, argument in a0, result in a0). Under qemu-riscv64
 * they return -ENOSYS (-38), meaning "no NIC". */
#define KVS_SIMCALL_NIC_NUM_QUEUES  0x4b560008u /* () -> number of NIC queues in the system (0: no NIC) */
#define KVS_SIMCALL_NIC_QUEUE_OF    0x4b560009u /* (hart) -> the queue id that hart owns, or -19 (-ENODEV) */
#define KVS_SIMCALL_NIC_QUEUE_REGS  0x4b56000au /* (queue) -> guest address of its register block, or -19 */
#define KVS_SIMCALL_NIC_QUEUE_PORT  0x4b56000bu /* (queue) -> global port index of the queue, or -19 */
#define KVS_SIMCALL_NIC_COUNT       0x4b56000cu /* () -> number of NICs in the system (0: none) */
#define KVS_SIMCALL_NIC_QUEUE_NIC   0x4b56000du /* (queue) -> index of the NIC the queue belongs to, or -19 */
/* () -> 0; ends the hart's turn, then the engine writes System.checkpoint_to (the whole functional state) */
#define KVS_SIMCALL_CHECKPOINT      0x4b56000eu
/* The integrated MAC's buffer SRAM (Nic.sram_size; ABI.md "The MAC's buffer SRAM"): the queue's slice, where the
 * driver places its descriptor rings and packet buffers. */
#define KVS_SIMCALL_NIC_QUEUE_SRAM       0x4b560020u /* (queue) -> base address of its slice, 0 (none) or -19 */
#define KVS_SIMCALL_NIC_QUEUE_SRAM_BYTES 0x4b560021u /* (queue) -> bytes of its slice, 0 (none) or -19 */

/* ------------------------------------------------------------------------------------------------------------ */
/* Static checks: sizes and offsets are the contract.                                                            */
/* ------------------------------------------------------------------------------------------------------------ */
_Static_assert(sizeof(struct kvs_pkt_hdr) == KVS_PAYLOAD_OFF, "packet header is 48 bytes");
_Static_assert(offsetof(struct kvs_pkt_hdr, eth_type) == 12, "ethertype offset");
_Static_assert(offsetof(struct kvs_pkt_hdr, ip_ver_ihl) == KVS_ETH_HDR_LEN, "IPv4 header offset");
_Static_assert(offsetof(struct kvs_pkt_hdr, ip_total_len) == 16, "IPv4 total length offset");
_Static_assert(offsetof(struct kvs_pkt_hdr, ip_proto) == 23, "IPv4 protocol offset");
_Static_assert(offsetof(struct kvs_pkt_hdr, ip_csum) == 24, "IPv4 checksum offset");
_Static_assert(offsetof(struct kvs_pkt_hdr, ip_src) == 26, "IPv4 source offset");
_Static_assert(offsetof(struct kvs_pkt_hdr, ip_dst) == 30, "IPv4 destination offset");
_Static_assert(offsetof(struct kvs_pkt_hdr, udp_sport) == KVS_ETH_HDR_LEN + KVS_IPV4_HDR_LEN, "UDP offset");
_Static_assert(offsetof(struct kvs_pkt_hdr, udp_len) == 38, "UDP length offset");
_Static_assert(offsetof(struct kvs_pkt_hdr, batch_count) == KVS_NET_HDR_LEN, "batch header offset");
_Static_assert(offsetof(struct kvs_pkt_hdr, batch_opaque) == 44, "batch opaque offset");
_Static_assert(sizeof(struct kvs_req_desc) == KVS_REQ_DESC_LEN, "request descriptor is 24 bytes");
_Static_assert(offsetof(struct kvs_req_desc, kv_len) == 4, "kv_len offset");
_Static_assert(offsetof(struct kvs_req_desc, keyhash) == 8, "keyhash offset");
_Static_assert(offsetof(struct kvs_req_desc, expire) == 16, "expire offset");
_Static_assert(sizeof(struct kvs_nic_rx_desc) == 16, "RX descriptor is 16 bytes");
_Static_assert(offsetof(struct kvs_nic_rx_desc, buf_size) == 8, "RX buf_size offset");
_Static_assert(offsetof(struct kvs_nic_rx_desc, len) == 10, "RX len offset");
_Static_assert(offsetof(struct kvs_nic_rx_desc, status) == 12, "RX status offset");
_Static_assert(sizeof(struct kvs_nic_tx_desc) == 16, "TX descriptor is 16 bytes");
_Static_assert(offsetof(struct kvs_nic_tx_desc, len) == 8, "TX len offset");
_Static_assert(offsetof(struct kvs_nic_tx_desc, status) == 12, "TX status offset");
_Static_assert(KVS_NIC_REG_BLOCK_LEN <= KVS_NIC_QUEUE_STRIDE, "register block fits its stride");
_Static_assert(KVS_NIC_MMIO_BASE + KVS_NIC_MAX_QUEUES * KVS_NIC_QUEUE_STRIDE - 1 <= KVS_NIC_MMIO_END,
               "all queue blocks inside the device range");
_Static_assert(KVS_PAYLOAD_OFF % 8 == 0, "descriptors are 8-byte aligned in a buffer");

#endif
