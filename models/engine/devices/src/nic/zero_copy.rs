//! KeyVault's zero-copy NIC (`Nic.interface = zero_copy`; workloads/ABI.md, "The zero-copy interface"): a NIC on
//! the cache hierarchy with per-queue registers and no descriptor rings.
//!
//! Each queue (one per core: a connection's endpoint) has the register block of the ring NIC (`nic::reg`), read
//! differently: RX_BASE/RX_SIZE and TX_BASE/TX_SIZE name an area of RX_SIZE (TX_SIZE) receive (send) slots of
//! `SLOT_BYTES` each in cacheable memory, slot i at base + i * SLOT_BYTES; RX_TAIL and TX_TAIL are the doorbells
//! that hand slots to the NIC, RX_HEAD and TX_HEAD the NIC's positions, with the ring NIC's conventions (the NIC
//! owns the slots [head, tail)). A slot's first line holds its status word, the frame starts at `FRAME_OFFSET`:
//!
//! * status: `len` u16 @0, `flags` u16 @2. RX: the NIC writes the frame, then `len` and `flags = READY`; the core
//!   polls the word (a cached load that hits until the NIC writes it), works on the frame in place, clears the word
//!   and hands the slot back through RX_TAIL. TX: the core writes the reply at `FRAME_OFFSET` and its `len` with
//!   `flags = 0`, then TX_TAIL; the NIC reads it out, sends it and sets `flags = SENT`.
//!
//! There are no descriptors to fetch or write back, no PCIe link and no DMA through the LLC: in detailed timing the
//! NIC writes an arriving frame's lines, then its status line, into the owning core's caches (the memory system's
//! access as that core: a store of that core's cache controller, write-allocate), starting `mmio_latency` after the
//! frame has arrived (the on-die trip from the NIC to the core), and the core sees the frame once its status line is
//! written. TX starts `mmio_latency` after the doorbell; the NIC reads each slot's status and frame lines from the
//! core's caches, serializes the frame on the port's wire and writes SENT back into the core's caches.
//!
//! A frame that waited in the port's RX FIFO for a free slot starts its write no earlier than the step that found
//! the slot (the core handed it back since the step before).
//!
//! Simplifications (named): a frame leaves the port's RX FIFO when its write into the caches starts; the write of
//! a whole line still fetches the line on a miss, as a core's store would; SENT is set functionally when the NIC
//! takes the frame (as DD bits are in the ring NIC), its write is timed.

use std::collections::VecDeque;

use crate::dma::DmaPort;
use crate::nic::regs::{DmaFault, NicRegs, PortStats, MAX_FRAME, MIN_FRAME};
use crate::nic::timing::{IoFn, NicTiming, WIRE_OVERHEAD};
use kvsim_isa::memory::Memory;

/// Bytes of one receive or send slot.
pub const SLOT_BYTES: u64 = 2048;
/// Where the frame starts in its slot: the status word has the first line to itself.
pub const FRAME_OFFSET: u64 = 64;
/// Longest frame a slot holds.
pub const SLOT_FRAME_MAX: usize = (SLOT_BYTES - FRAME_OFFSET) as usize;
/// RX status flag: the slot holds a frame of `len` bytes.
pub const FLAG_READY: u16 = 1;
/// TX status flag: the NIC has read the slot out (the core may reuse it).
pub const FLAG_SENT: u16 = 1;
const LINE: u64 = 64;

/// A status word that becomes visible to the core at its time.
#[derive(Debug, Clone, Copy)]
struct Ready {
    visible: u64,
    q: usize,
    slot: u64,
    len: u16,
}

/// The zero-copy side of a NIC (`Nic::zero_copy`): whose caches each queue's frames go to, and what is in flight.
#[derive(Debug, Clone, Default)]
pub struct ZeroCopy {
    /// The core (memory-system requester) that owns each of the NIC's queues.
    pub queue_core: Vec<usize>,
    /// Status words written into the caches, by the time the core may see them (sorted, stable).
    pending: VecDeque<Ready>,
    /// Per queue: when its last frame became visible (a later frame never overtakes it).
    last_visible: Vec<u64>,
    /// Per port: when the TX wire is free.
    tx_wire_free: Vec<u64>,
    /// The time of the last step: a frame still waiting for a free slot then got one only later, so its write
    /// starts no earlier than this (slots are handed back between steps).
    slot_floor: u64,
    /// Lines written into (RX) and read from (TX) the cores' caches; timed RX frames and their latency from
    /// arrival at the port to visibility (ps).
    pub rx_lines: u64,
    pub tx_lines: u64,
    pub rx_timed: u64,
    pub rx_latency_ps: u64,
}

fn fault(queue: usize, what: &'static str) -> impl Fn(kvsim_isa::trap::Trap) -> DmaFault {
    move |trap| DmaFault { queue, what, trap }
}

/// The status word (`len`, `flags`) of a slot.
fn write_status(
    mem: &mut Memory,
    q: usize,
    slot: u64,
    len: u16,
    flags: u16,
    what: &'static str,
) -> Result<(), DmaFault> {
    let mut word = len.to_le_bytes().to_vec();
    word.extend_from_slice(&flags.to_le_bytes());
    mem.write_bytes(usize::MAX, slot, &word).map_err(fault(q, what))
}

/// The lines of `len` bytes from `addr`.
fn lines(addr: u64, len: u64) -> impl Iterator<Item = u64> {
    let first = addr & !(LINE - 1);
    (first..addr + len).step_by(LINE as usize)
}

impl ZeroCopy {
    pub fn new(queue_core: Vec<usize>, ports: usize) -> ZeroCopy {
        let queues = queue_core.len();
        ZeroCopy { queue_core, last_visible: vec![0; queues], tx_wire_free: vec![0; ports], ..Default::default() }
    }

    /// Frames written into the caches whose status word the core cannot see yet.
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    pub fn reset_stats(&mut self) {
        self.rx_lines = 0;
        self.tx_lines = 0;
        self.rx_timed = 0;
        self.rx_latency_ps = 0;
    }

    /// Statistics under the NIC's prefix `name` (`kvsim_params::paths::nic`) and `paths::zero_copy`.
    pub fn stats(&self, name: &str, out: &mut Vec<(String, f64, &'static str)>) {
        let zc = name.to_owned() + &kvsim_params::paths::zero_copy();
        out.push((
            format!("{zc}rx_lines"),
            self.rx_lines as f64,
            "lines the zero-copy NIC wrote into the cores' caches (frames and status words)",
        ));
        out.push((
            format!("{zc}tx_lines"),
            self.tx_lines as f64,
            "lines the zero-copy NIC read from the cores' caches (status words and frames)",
        ));
        let mean = if self.rx_timed > 0 { self.rx_latency_ps as f64 / self.rx_timed as f64 * 1e-3 } else { 0.0 };
        out.push((
            format!("{zc}rx_latency_ns"),
            mean,
            "mean time from a frame's arrival at the port to its status word in the core's cache, ns",
        ));
    }

    /// A frame of queue q (it arrived at `arrived` at port `port`) lands in the queue's next receive slot (the caller
    /// checked that the NIC owns one); `port` counts it when it is too long for a slot. Untimed (`timed` None) the core
    /// sees it at once; timed (the NIC's register latency and its DMA port), the NIC writes it into the owning
    /// core's caches from `arrived + mmio_latency` on and the core sees it when `publish` reaches the time its
    /// status line was written.
    pub fn land<'d>(
        &mut self,
        regs: &mut NicRegs,
        mem: &mut Memory,
        q: usize,
        (frame, arrived): (Vec<u8>, u64),
        timed: Option<(u64, &mut (dyn DmaPort + 'd))>,
        port: &mut PortStats,
    ) -> Result<(), DmaFault> {
        if frame.len() > SLOT_FRAME_MAX {
            regs.queues[q].rx_drops += 1;
            port.rx_too_long += 1;
            return Ok(());
        }
        let x = &mut regs.queues[q];
        let slot = x.rx_ring.0 + x.rx_head * SLOT_BYTES;
        mem.write_bytes(usize::MAX, slot + FRAME_OFFSET, &frame)
            .map_err(fault(q, "writing a frame into a receive slot"))?;
        x.rx_head = (x.rx_head + 1) & (x.rx_ring.1 - 1);
        x.rx_frames += 1;
        regs.rx_landed += 1;
        let len = frame.len() as u16;
        let Some((mmio_latency, io)) = timed else {
            return write_status(mem, q, slot, len, FLAG_READY, "writing a receive slot's status");
        };
        let start = arrived.max(self.slot_floor) + mmio_latency;
        let core = self.queue_core[q];
        let mut written = start;
        for line in lines(slot + FRAME_OFFSET, len as u64) {
            written = written.max(io.access_as(core, Some(core), line, true, start));
            self.rx_lines += 1;
        }
        // The status line goes last: the core must never see READY before the frame.
        let visible = io.access_as(core, Some(core), slot, true, written).max(self.last_visible[q]);
        self.rx_lines += 1;
        self.last_visible[q] = visible;
        self.rx_timed += 1;
        self.rx_latency_ps += visible - arrived;
        let at = self.pending.partition_point(|r| r.visible <= visible);
        self.pending.insert(at, Ready { visible, q, slot, len });
        Ok(())
    }

    /// Timed, after each step's `advance`: the status words whose line has been written by `now` become visible to
    /// their cores.
    pub fn publish(&mut self, mem: &mut Memory, now: u64) -> Result<(), DmaFault> {
        self.slot_floor = now;
        while self.pending.front().is_some_and(|r| r.visible <= now) {
            let r = self.pending.pop_front().unwrap();
            write_status(mem, r.q, r.slot, r.len, FLAG_READY, "writing a receive slot's status")?;
        }
        Ok(())
    }

    /// Send what the send slots hold, [TX_HEAD, TX_TAIL) of every queue, in queue order: appends (queue, frame,
    /// time the frame has left the port: 0 untimed); `port_stats` are the NIC's port counters. Timed (`timed`: each
    /// queue's doorbell time, the memory system and the NIC's wire timing), the NIC starts `mmio_latency` after the
    /// doorbell and reads the slots from the core's caches.
    pub fn transmit(
        &mut self,
        regs: &mut NicRegs,
        mem: &mut Memory,
        mut timed: Option<(&[u64], IoFn, &mut NicTiming)>,
        port_stats: &mut [PortStats],
        out: &mut Vec<(usize, Vec<u8>, u64)>,
    ) -> Result<(), DmaFault> {
        for (q, x) in regs.queues.iter_mut().enumerate() {
            if !x.enabled {
                continue;
            }
            let port = x.port as usize;
            while x.tx_head != x.tx_tail {
                let slot = x.tx_ring.0 + x.tx_head * SLOT_BYTES;
                let word = mem.read_bytes(slot, 2).map_err(fault(q, "reading a send slot's status"))?;
                let len = u16::from_le_bytes([word[0], word[1]]) as usize;
                if len > MAX_FRAME {
                    port_stats[port].tx_bad_len += 1;
                } else {
                    let mut frame = mem
                        .read_bytes(slot + FRAME_OFFSET, len as u64)
                        .map_err(fault(q, "reading a frame from a send slot"))?;
                    if frame.len() < MIN_FRAME {
                        frame.resize(MIN_FRAME, 0);
                    }
                    let left = match timed.as_mut() {
                        None => 0,
                        Some((queue_time, io, tm)) => {
                            self.send_timed(q, port, slot, (&frame, len), queue_time[q], *io, tm)
                        }
                    };
                    port_stats[port].tx_frames += 1;
                    port_stats[port].tx_bytes += frame.len() as u64;
                    x.tx_frames += 1;
                    out.push((q, frame, left));
                }
                mem.write_bytes(usize::MAX, slot + 2, &FLAG_SENT.to_le_bytes())
                    .map_err(fault(q, "writing a send slot's status"))?;
                x.tx_head = (x.tx_head + 1) & (x.tx_ring.1 - 1);
            }
        }
        Ok(())
    }

    /// The timed part of sending one slot's frame (`len` bytes in the slot; `frame` as padded for the wire) on the
    /// NIC's wire (`tm`): returns when its last byte has left the port.
    #[allow(clippy::too_many_arguments)]
    fn send_timed(
        &mut self,
        q: usize,
        port: usize,
        slot: u64,
        (frame, len): (&[u8], usize),
        rang: u64,
        io: IoFn,
        tm: &mut NicTiming,
    ) -> u64 {
        tm.used = true;
        let start = rang + tm.mmio_latency;
        let core = self.queue_core[q];
        let status = io.access_as(core, Some(core), slot, false, start);
        let mut got = status;
        for line in lines(slot + FRAME_OFFSET, len as u64) {
            got = got.max(io.access_as(core, Some(core), line, false, status));
            self.tx_lines += 1;
        }
        self.tx_lines += 1;
        io.access_as(core, Some(core), slot, true, got); // SENT, into the core's cache
        let left = got.max(self.tx_wire_free[port]) + tm.wire_ps(frame.len());
        self.tx_wire_free[port] = left;
        let ps = &mut tm.ports[port];
        ps.tx_wire_bytes += frame.len() as u64 + WIRE_OVERHEAD;
        ps.first_tx.get_or_insert(left);
        ps.last_tx = left;
        left
    }
}

#[cfg(test)]
#[path = "zero_copy_tests.rs"]
mod tests;
