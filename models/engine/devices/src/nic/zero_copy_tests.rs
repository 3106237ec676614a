use super::*;
use crate::nic::Nic;
use crate::nic::{reg, INTERFACE_RINGS, INTERFACE_ZERO_COPY};
use kvsim_base::abi::{DEVICE_BASE, PAGE_SIZE};
use kvsim_isa::trap::Access;

const RX: u64 = 0x10_0000;
const TX: u64 = RX + 8 * SLOT_BYTES;
/// The core that owns the queue (its caches get the frames).
const CORE: usize = 3;
/// ps per line access of the recording memory system, and the NIC-to-core trip.
const COST: u64 = 5_000;
const MMIO: u64 = 10_000;

/// A memory system that records every access (agent, line, write, time) and takes COST for each.
#[derive(Default)]
struct Recorder {
    log: Vec<(usize, u64, bool, u64)>,
}

impl DmaPort for Recorder {
    fn agent(&self) -> usize {
        99
    }
    fn access_as(&mut self, agent: usize, _owner: Option<usize>, addr: u64, write: bool, t: u64) -> u64 {
        self.log.push((agent, addr, write, t));
        t + COST
    }
}

fn params() -> kvsim_params::Nic {
    kvsim_params::Nic {
        enabled: true,
        port_gbps: 10.0,
        mmio_latency: MMIO,
        interface: kvsim_params::NicInterface::ZeroCopy,
        ..Default::default()
    }
}

/// One zero-copy queue (owned by CORE) on one 10 GbE port: 8 receive and 8 send slots, 7 handed to the NIC.
fn setup() -> (Memory, NicRegs, Nic) {
    let mut mem = Memory::new(1 << 26, false, 1);
    mem.regions.heap_start = RX;
    mem.regions.brk = RX + 64 * PAGE_SIZE;
    let mut regs = NicRegs::new(&[0]).with_interface(INTERFACE_ZERO_COPY);
    let mut nic = Nic::new(0, 1, vec![0], [(0x4000, 0)], 16);
    nic.timing = Some(crate::nic::timing::NicTiming::new(&params(), 1, 1));
    nic.zero_copy = Some(ZeroCopy::new(vec![CORE], 1));
    for (r, v) in [(reg::RX_BASE, RX), (reg::RX_SIZE, 8), (reg::TX_BASE, TX), (reg::TX_SIZE, 8), (reg::CTRL, 1)] {
        regs.store(DEVICE_BASE + r, 8, v, Access::Store).unwrap();
    }
    regs.store(DEVICE_BASE + reg::RX_TAIL, 8, 7, Access::Store).unwrap();
    (mem, regs, nic)
}

fn frame(len: usize, tag: u8) -> Vec<u8> {
    let mut f = vec![tag; len];
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[14] = 0x45;
    f[23] = 17;
    f[36..38].copy_from_slice(&0x4000u16.to_be_bytes());
    f
}

fn status(mem: &mut Memory, slot: u64) -> (u16, u16) {
    let w = mem.read_bytes(slot, 4).unwrap();
    (u16::from_le_bytes([w[0], w[1]]), u16::from_le_bytes([w[2], w[3]]))
}

/// The core writes a reply of `len` bytes into send slot `i` and rings TX_TAIL = i + 1.
fn post_reply(mem: &mut Memory, regs: &mut NicRegs, i: u64, len: u16, tag: u8) {
    let slot = TX + i * SLOT_BYTES;
    mem.write_bytes(0, slot + FRAME_OFFSET, &vec![tag; len as usize]).unwrap();
    mem.write_bytes(0, slot, &[len.to_le_bytes(), 0u16.to_le_bytes()].concat()).unwrap();
    regs.store(DEVICE_BASE + reg::TX_TAIL, 8, (i + 1) & 7, Access::Store).unwrap();
}

#[test]
fn the_interface_register_tells_the_driver_and_slot_areas_must_be_line_aligned() {
    let (_, mut regs, _) = setup();
    assert_eq!(regs.load(DEVICE_BASE + reg::INTERFACE, 8, Access::Load).unwrap(), INTERFACE_ZERO_COPY);
    regs.store(DEVICE_BASE + reg::INTERFACE, 8, 0, Access::Store).unwrap(); // RO: ignored
    assert_eq!(regs.load(DEVICE_BASE + reg::INTERFACE, 8, Access::Load).unwrap(), INTERFACE_ZERO_COPY);
    assert_eq!(NicRegs::new(&[0]).load(DEVICE_BASE + reg::INTERFACE, 8, Access::Load).unwrap(), INTERFACE_RINGS);
    regs.store(DEVICE_BASE + reg::RX_BASE, 8, RX + 16, Access::Store).unwrap();
    let err = regs.store(DEVICE_BASE + reg::CTRL, 8, 1, Access::Store).unwrap_err();
    assert!(err.reason().contains("64-byte aligned"), "{}", err.reason());
    // The ring NIC takes the same 16-byte aligned base.
    let mut rings = NicRegs::new(&[0]);
    for (r, v) in [(reg::RX_BASE, RX + 16), (reg::RX_SIZE, 8), (reg::TX_BASE, TX), (reg::TX_SIZE, 8)] {
        rings.store(DEVICE_BASE + r, 8, v, Access::Store).unwrap();
    }
    rings.store(DEVICE_BASE + reg::CTRL, 8, 1, Access::Store).unwrap();
}

#[test]
fn functional_rx_fills_the_next_slot_and_tx_sends_from_the_send_slot() {
    let (mut mem, mut regs, mut nic) = setup();
    for i in 0..9u8 {
        assert_eq!(nic.receive(&mut regs, 0, frame(100 + i as usize, i)), Some(0));
    }
    nic.deliver(&mut regs, &mut mem).unwrap();
    // 7 slots were handed to the NIC: 7 frames land, in order, each with its ready word; 2 wait in the FIFO.
    assert_eq!((regs.queues[0].rx_head, regs.queues[0].rx_frames, nic.fifo_frames()), (7, 7, 2));
    for i in 0..7u64 {
        let slot = RX + i * SLOT_BYTES;
        assert_eq!(status(&mut mem, slot), (100 + i as u16, FLAG_READY));
        assert_eq!(mem.read_bytes(slot + FRAME_OFFSET, 100 + i).unwrap(), frame(100 + i as usize, i as u8));
    }
    assert_eq!(status(&mut mem, RX + 7 * SLOT_BYTES), (0, 0), "the slot the NIC does not own stays empty");
    // The core hands two slots back: the waiting frames land in slots 7 and 0.
    regs.store(DEVICE_BASE + reg::RX_TAIL, 8, 1, Access::Store).unwrap();
    nic.deliver(&mut regs, &mut mem).unwrap();
    assert_eq!((regs.queues[0].rx_head, nic.fifo_frames()), (1, 0));
    assert_eq!(mem.read_bytes(RX + FRAME_OFFSET, 108).unwrap(), frame(108, 8));
    // TX: two replies, one doorbell; they come out in order, SENT set, TX_HEAD moved on.
    post_reply(&mut mem, &mut regs, 0, 72, 0xa);
    post_reply(&mut mem, &mut regs, 1, 40, 0xb);
    let mut out = Vec::new();
    nic.transmit_zero_copy(&mut regs, &mut mem, None, &mut out).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!((out[0].1.clone(), out[0].2), (vec![0xa; 72], 0));
    assert_eq!(out[1].1.len(), MIN_FRAME, "a short reply is padded");
    assert_eq!(&out[1].1[..40], &[0xb; 40][..]);
    assert_eq!((status(&mut mem, TX), status(&mut mem, TX + SLOT_BYTES)), ((72, FLAG_SENT), (40, FLAG_SENT)));
    assert_eq!((regs.queues[0].tx_head, regs.queues[0].tx_frames, nic.port_stats[0].tx_frames), (2, 2, 2));
    // A reply longer than 1514 bytes is skipped and counted, and its slot still comes back.
    post_reply(&mut mem, &mut regs, 2, 1600, 0xc);
    nic.transmit_zero_copy(&mut regs, &mut mem, None, &mut out).unwrap();
    assert_eq!((out.len(), nic.port_stats[0].tx_bad_len, status(&mut mem, TX + 2 * SLOT_BYTES).1), (2, 1, FLAG_SENT));
}

#[test]
fn timed_rx_writes_the_frame_then_its_status_line_into_the_owning_cores_caches_at_exact_ticks() {
    let (mut mem, mut regs, mut nic) = setup();
    let mut io = Recorder::default();
    nic.wire_send(0, frame(100, 7), 0);
    // 10 GbE: 800 ps per byte, (100 + 24) bytes on the wire.
    let arrived = 124 * 800;
    let start = arrived + MMIO;
    // Both frame lines (slot + 64 and slot + 128) from `start`, then the status line once they are written.
    let visible = start + COST + COST;
    nic.advance(&mut regs, &mut mem, visible - 1, &mut io).unwrap();
    nic.publish_zero_copy(&mut mem, visible - 1).unwrap();
    assert_eq!(status(&mut mem, RX), (0, 0), "not visible before its status line is written");
    assert_eq!(
        io.log,
        vec![(CORE, RX + 64, true, start), (CORE, RX + 128, true, start), (CORE, RX, true, start + COST)],
        "frame lines, then the status line, all into core {CORE}'s caches"
    );
    nic.advance(&mut regs, &mut mem, visible, &mut io).unwrap();
    nic.publish_zero_copy(&mut mem, visible).unwrap();
    assert_eq!(status(&mut mem, RX), (100, FLAG_READY));
    assert_eq!(mem.read_bytes(RX + FRAME_OFFSET, 100).unwrap(), frame(100, 7));
    let zc = nic.zero_copy.as_ref().unwrap();
    assert_eq!((zc.rx_lines, zc.rx_timed, zc.rx_latency_ps), (3, 1, visible - arrived));
}

#[test]
fn timed_tx_reads_the_send_slot_from_the_cores_caches_and_sends_it_at_exact_ticks() {
    let (mut mem, mut regs, mut nic) = setup();
    let mut io = Recorder::default();
    post_reply(&mut mem, &mut regs, 0, 100, 0x5);
    let rang = 1_000_000;
    let mut out = Vec::new();
    let timed: (&[u64], IoFn) = (&[rang], &mut io);
    nic.transmit_zero_copy(&mut regs, &mut mem, Some(timed), &mut out).unwrap();
    let start = rang + MMIO;
    // The status line, then both frame lines, then the frame's 124 bytes on the wire.
    let got = start + COST + COST;
    assert_eq!(out, vec![(0, vec![0x5; 100], got + 124 * 800)]);
    assert_eq!(
        io.log,
        vec![
            (CORE, TX, false, start),
            (CORE, TX + 64, false, start + COST),
            (CORE, TX + 128, false, start + COST),
            (CORE, TX, true, got)
        ]
    );
    // A second reply right after waits for the wire.
    post_reply(&mut mem, &mut regs, 1, 100, 0x6);
    let timed: (&[u64], IoFn) = (&[rang], &mut io);
    nic.transmit_zero_copy(&mut regs, &mut mem, Some(timed), &mut out).unwrap();
    assert_eq!(out[1].2, got + 2 * 124 * 800);
}

#[test]
fn a_frame_that_waited_for_a_slot_is_written_from_the_step_that_found_one() {
    let (mut mem, mut regs, mut nic) = setup();
    let mut io = Recorder::default();
    for i in 0..8u8 {
        nic.wire_send(0, frame(100, i), 0);
    }
    let first = 5_000_000;
    nic.advance(&mut regs, &mut mem, first, &mut io).unwrap();
    nic.publish_zero_copy(&mut mem, first).unwrap();
    assert_eq!((regs.queues[0].rx_frames, nic.fifo_frames()), (7, 1), "7 slots: the 8th frame waits");
    // The core takes slot 0 and hands it back; the next step finds it.
    mem.write_bytes(0, RX, &[0; 4]).unwrap();
    regs.store(DEVICE_BASE + reg::RX_TAIL, 8, 0, Access::Store).unwrap();
    io.log.clear();
    let second = 9_000_000;
    nic.advance(&mut regs, &mut mem, second, &mut io).unwrap();
    nic.publish_zero_copy(&mut mem, second).unwrap();
    // It goes to slot 7, the one the NIC now owns ([7, 0)). It arrived at 8 x 124 x 800 ps, long before; its write
    // starts from the first step on, not from its arrival.
    let slot7 = RX + 7 * SLOT_BYTES;
    assert_eq!(io.log[0], (CORE, slot7 + 64, true, first + MMIO));
    assert_eq!(io.log[2], (CORE, slot7, true, first + MMIO + COST));
    assert_eq!(status(&mut mem, slot7), (100, FLAG_READY));
    assert_eq!(mem.read_bytes(slot7 + FRAME_OFFSET, 100).unwrap(), frame(100, 7));
}

#[test]
fn a_zero_copy_round_trip_has_no_descriptor_or_pcie_traffic() {
    let (mut mem, mut regs, mut nic) = setup();
    let mut io = Recorder::default();
    let mut sent = Vec::new();
    let mut now = 0;
    for i in 0..40u64 {
        nic.wire_send(0, frame(100, i as u8), now);
        now += 2_000_000;
        nic.advance(&mut regs, &mut mem, now, &mut io).unwrap();
        nic.publish_zero_copy(&mut mem, now).unwrap();
        // The core takes the frame, answers in the send slot and hands the receive slot back.
        let slot = RX + (i % 8) * SLOT_BYTES;
        assert_eq!(status(&mut mem, slot), (100, FLAG_READY), "frame {i}");
        assert_eq!(mem.read_bytes(slot + FRAME_OFFSET, 100).unwrap(), frame(100, i as u8));
        mem.write_bytes(0, slot, &[0; 4]).unwrap();
        regs.store(DEVICE_BASE + reg::RX_TAIL, 8, (i + 8) % 8, Access::Store).unwrap();
        post_reply(&mut mem, &mut regs, i % 8, 80, i as u8);
        let timed: (&[u64], IoFn) = (&[now], &mut io);
        nic.transmit_zero_copy(&mut regs, &mut mem, Some(timed), &mut sent).unwrap();
    }
    assert_eq!(sent.len(), 40);
    // Every access is the owning core's, to a slot: nothing else in memory is touched (no descriptors, no
    // write-backs), and the PCIe link carried nothing.
    let slots = |base: u64, a: u64| a >= base && a < base + 8 * SLOT_BYTES;
    assert!(io.log.iter().all(|&(agent, a, _, _)| agent == CORE && (slots(RX, a) || slots(TX, a))), "{:?}", io.log);
    assert_eq!(io.log.len(), 40 * (3 + 4));
    let mut stats = Vec::new();
    nic.timing_stats(&mut stats);
    let get = |k: &str| stats.iter().find(|s| s.0 == k).unwrap_or_else(|| panic!("no stat {k}")).1;
    assert_eq!((get("system.nic0.pcie.up_bytes"), get("system.nic0.pcie.down_bytes")), (0.0, 0.0));
    assert_eq!((get("system.nic0.pcie.tlps"), get("system.nic0.rx_writebacks")), (0.0, 0.0));
}
