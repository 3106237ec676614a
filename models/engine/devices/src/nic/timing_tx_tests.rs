//! The TX completion modes of the timed NIC (`NicTiming::transmit`): what each writes back and when (split out of
//! timing.rs, which holds the model and its RX tests).
use super::*;
use crate::nic::Nic;
use crate::nic::{reg, DD, TX_CMD_RS, TX_COMPLETION_HEAD_POINTER as HEAD, TX_COMPLETION_REPORT_STATUS as RS};
use kvsim_base::abi::{DEVICE_BASE, PAGE_SIZE};
const DESCRIPTOR: u64 = TX_COMPLETION_DESCRIPTOR;
use crate::nic::fixture::{udp_frame as frame, Rings};
use crate::pcie::{lane_bytes_per_s, TrafficCount};
use kvsim_isa::trap::Access;

const RING: u64 = 0x10_0000;
const TX_RING: u64 = RING + 0x1_0000;
const TX_SIZE: u64 = 16;
const BUFS: u64 = 0x20_0000;
/// The driver's head write-back location (in head-pointer mode).
const HWB: u64 = RING + 0x2_0040;
const LATENCY: u64 = 400_000;
/// The driver asks for a status report on every 16th TX descriptor (as DPDK does every 32nd).
const RS_EVERY: u64 = 16;

/// One queue on a 10 GbE port over PCIe 4.0 x16, RX write-back groups of 4 (2 us timer), a 256-entry RX ring
/// all posted, a 16-entry TX ring; in head-pointer mode the driver registers HWB before enabling the queue.
fn setup(mode: u64) -> (Memory, NicRegs, Nic) {
    let mut mem = Memory::new(1 << 26, false, 1);
    mem.regions.heap_start = RING;
    mem.regions.brk = RING + 1024 * PAGE_SIZE;
    let mut regs = NicRegs::new(&[0]).with_tx_completion(mode);
    let mut nic = Nic::new(0, 1, vec![0], [(0x4000, 0)], 1024);
    let p = kvsim_params::Nic {
        enabled: true,
        port_gbps: 10.0,
        rx_fifo_frames: 1024,
        pcie_gen: 4,
        pcie_lanes: 16,
        pcie_latency: LATENCY,
        mmio_latency: 100_000,
        rx_wb_threshold: 4,
        rx_wb_timer: 2_000_000,
        ..Default::default()
    };
    nic.timing = Some(NicTiming::new(&p, 1, 1));
    let head_wb = (mode == HEAD).then_some(HWB);
    let rings = Rings { rx_ring: RING, rx_size: 256, tx_ring: TX_RING, tx_size: TX_SIZE, bufs: BUFS, head_wb };
    rings.enable(&mut regs, &mut mem);
    (mem, regs, nic)
}

/// The driver queues `n` 88-byte frames at its tail (report status asked on every `RS_EVERY`-th descriptor) and
/// rings TX_TAIL once; the NIC sends them with the doorbell taken at `t`. DMA writes the memory system sees are
/// appended to `writes` as (line, time).
fn send_batch(mem: &mut Memory, regs: &mut NicRegs, nic: &mut Nic, n: u64, t: u64, writes: &mut Vec<(u64, u64)>) {
    let mut tail = regs.queues[0].tx_tail;
    for _ in 0..n {
        let buf = BUFS + 0x10_0000 + tail * 256;
        mem.write_bytes(0, buf, &frame(88)).unwrap();
        let mut d = buf.to_le_bytes().to_vec();
        d.extend_from_slice(&88u16.to_le_bytes());
        let cmd = if (tail + 1).is_multiple_of(RS_EVERY) { TX_CMD_RS } else { 0 };
        d.extend_from_slice(&cmd.to_le_bytes());
        d.extend_from_slice(&[0; 4]);
        mem.write_bytes(0, TX_RING + tail * 16, &d).unwrap();
        tail = (tail + 1) % TX_SIZE;
    }
    regs.store(DEVICE_BASE + reg::TX_TAIL, 8, tail, Access::Store).unwrap();
    let mut out = Vec::new();
    let mut io = |a: u64, w: bool, at: u64| {
        if w {
            writes.push((a, at));
        }
        at
    };
    nic.transmit_timed(regs, mem, &[t], &mut io, &mut out).unwrap();
    assert_eq!(out.len() as u64, n);
}

fn status(mem: &mut Memory, i: u64) -> u16 {
    u16::from_le_bytes(mem.read_bytes(TX_RING + i * 16 + 12, 2).unwrap().try_into().unwrap())
}

fn head_wb(mem: &mut Memory) -> u32 {
    u32::from_le_bytes(mem.read_bytes(HWB, 4).unwrap().try_into().unwrap())
}

/// 64 requests in, 64 responses out in 8 batches of 8: (RX write-back, TX completion) upstream counters.
fn per_frame(mode: u64) -> (TrafficCount, TrafficCount, Memory) {
    let (mut mem, mut regs, mut nic) = setup(mode);
    for _ in 0..64 {
        nic.wire_send(0, frame(88), 0);
    }
    nic.advance(&mut regs, &mut mem, 1_000_000_000, &mut |_, _, t| t).unwrap();
    assert_eq!(regs.queues[0].rx_frames, 64);
    let mut writes = Vec::new();
    for b in 0..8u64 {
        send_batch(&mut mem, &mut regs, &mut nic, 8, 1_000_000_000 + b * 10_000_000, &mut writes);
        if mode == HEAD {
            assert_eq!(head_wb(&mut mem) as u64, (b + 1) * 8 % TX_SIZE, "the head after each batch");
        }
    }
    let l = nic.timing.as_ref().unwrap().link.pcie().unwrap();
    (l.up_by[Traffic::RxWriteback as usize], l.up_by[Traffic::TxCompletion as usize], mem)
}

#[test]
fn write_backs_per_frame_in_each_tx_completion_mode() {
    // RX is the same in both modes: 64 descriptors in groups of 4, one 64-byte write + 24 bytes of TLP each.
    // TX: one completion write per batch of 8: a 16-byte descriptor, or a 4-byte head, + 24 bytes.
    // Report status: one 16-byte descriptor written back per descriptor that asked (every 16th: 4 of 64).
    let (rx_d, tx_d, mut mem_d) = per_frame(DESCRIPTOR);
    let (rx_h, tx_h, mut mem_h) = per_frame(HEAD);
    let (rx_r, tx_r, mut mem_r) = per_frame(RS);
    assert_eq!(rx_d, TrafficCount { tlps: 16, bytes: 16 * (64 + 24) });
    assert_eq!((rx_h, rx_r), (rx_d, rx_d));
    assert_eq!(tx_d, TrafficCount { tlps: 8, bytes: 8 * (16 + 24) });
    assert_eq!(tx_h, TrafficCount { tlps: 8, bytes: 8 * (4 + 24) });
    assert_eq!(tx_r, TrafficCount { tlps: 4, bytes: 4 * (16 + 24) });
    // Per frame: 24/64 write-back TLPs and 27 bytes (descriptor), 24/64 and 25.5 (head pointer), 20/64 and 24.5
    // (report status).
    assert_eq!((rx_d.bytes + tx_d.bytes) as f64 / 64.0, 27.0);
    assert_eq!((rx_h.bytes + tx_h.bytes) as f64 / 64.0, 25.5);
    assert_eq!((rx_r.bytes + tx_r.bytes) as f64 / 64.0, 24.5);
    // Descriptor mode sets DD in every sent descriptor; head-pointer mode leaves them untouched; report status
    // sets it only where asked.
    assert!((0..TX_SIZE).all(|i| status(&mut mem_d, i) == DD));
    assert!((0..TX_SIZE).all(|i| status(&mut mem_h, i) == 0));
    assert!((0..TX_SIZE).all(|i| status(&mut mem_r, i) == if i == TX_SIZE - 1 { DD } else { 0 }));
    assert_eq!((head_wb(&mut mem_d), head_wb(&mut mem_r)), (0, 0), "only head-pointer mode writes the head");
}

#[test]
fn the_head_write_back_reaches_memory_at_its_exact_tick() {
    // One frame at doorbell time 0 on an idle PCIe 4.0 x16 link (31.5 GB/s, 400 ns each way, MMIO 100 ns):
    // descriptor read (a 24-byte 4-DW request up, a completion of 16 + 20 down), frame read (24 up; the 88
    // bytes come down as two completions, split at the 64-byte completion boundary: 64 + 20 and 24 + 20), then
    // the head (4 + 24 up) arrives 400 ns after it has left. The Acks and flow-control updates each side owes
    // go 240 ns after what they acknowledge, off these transfers' way.
    let (mut mem, mut regs, mut nic) = setup(HEAD);
    let ser = |b: u64| (b as f64 * 1e12 / (lane_bytes_per_s(4) * 16.0)).round() as u64;
    let descs_at = 100_000 + ser(24) + LATENCY + ser(16 + 20) + LATENCY;
    let got = descs_at + ser(24) + LATENCY + ser(64 + 20) + ser(24 + 20) + LATENCY;
    let mut writes = Vec::new();
    send_batch(&mut mem, &mut regs, &mut nic, 1, 0, &mut writes);
    assert_eq!(writes, vec![(HWB & !63, got + ser(4 + 24) + LATENCY)]);
    assert_eq!((head_wb(&mut mem), status(&mut mem, 0)), (1, 0));
}
