//! The NIC's timing (detailed mode): line rate, the bounded RX FIFO in time, PCIe DMA and DDIO, doorbells.
//!
//! * RX: a frame the client sends at time t is serialized on the port's wire at line rate: it has arrived when
//!   `max(t, wire free) + (bytes + 24) * 8 / rate` has passed (24 bytes: preamble and start delimiter 8, FCS 4,
//!   inter-frame gap 12; frames are padded to 60 bytes without FCS). It is steered and enters the port's RX FIFO,
//!   which holds `rx_fifo_frames` frames from their arrival until their DMA has left the PCIe link; a frame that
//!   arrives at a full FIFO is dropped (counted per port and queue). A frame whose queue owns a free descriptor
//!   is DMA-written over the NIC's PCIe link, shared by its ports; the RX descriptors are prefetched 8 at a time
//!   (their fetch occupies the link but not the frame's path). The frame's lines go to the memory system as I/O
//!   writes (DDIO into the LLC, or memory). Its descriptor write-back is coalesced as Intel's 82598/82599 do it
//!   (WTHRESH and the ITR flush): a queue's completed descriptors wait on the NIC until `rx_wb_threshold` of them
//!   are ready, or until `rx_wb_timer` after the first, and then go up in one PCIe write (two when the group wraps
//!   the ring). The guest sees the frame (DD, RX_HEAD) once its write-back has reached the host: `Nic::advance`
//!   applies a delivery when the simulated time reaches it.
//! * TX: the NIC starts a queue's TX work `mmio_latency` after the doorbell (taken as the time of the queue's
//!   hart at the step), reads the new descriptors in one PCIe read, then each frame (I/O reads: LLC or memory),
//!   and serializes it on the port's wire; the client receives it at the end of its serialization. TX completion
//!   (`Nic.tx_completion`): one 16-byte descriptor write-back per batch of a queue (descriptor mode), one 4-byte
//!   head write-back per batch, which also reaches the memory system (head pointer), or one 16-byte write-back per
//!   descriptor the driver marked RS (report status).
//! * Every transfer on the link is counted by kind (`pcie::Traffic`): `pcie.up_bytes.<kind>` and friends show
//!   where the link's time goes.
//!
//! Events are processed in time order up to the step's time (the least time of the live harts). Descriptor
//! ownership is the guest's state at the step (steps come after every scheduling turn).

use std::collections::VecDeque;

use crate::nic::regs::{
    complete_rx, complete_tx_descriptor, write_back_tx_head, DmaFault, NicRegs, PortStats, DESC_LEN, MAX_FRAME,
    MIN_FRAME, TX_COMPLETION_DESCRIPTOR, TX_HEAD_WB_LEN,
};
use crate::on_die_mac::NicLink;
use crate::pcie::Traffic;
use kvsim_isa::memory::Memory;

pub use kvsim_base::frame::WIRE_OVERHEAD;

/// The NIC's DMA port into the memory system (`dma::DmaPort`).
pub type IoFn<'a> = &'a mut dyn crate::dma::DmaPort;

/// A DMA port that notes, per queue, every distinct line its accesses touch (the queue's I/O footprint: its
/// descriptor rings, packet buffers and head write-back word) before passing them on.
struct Footprint<'a, 'b> {
    port: &'a mut (dyn crate::dma::DmaPort + 'b),
    lines: &'a mut [std::collections::HashSet<u64>],
}

impl crate::dma::DmaPort for Footprint<'_, '_> {
    fn agent(&self) -> usize {
        self.port.agent()
    }
    fn queue_access(&mut self, queue: usize, addr: u64, write: bool, t: u64) -> u64 {
        if let Some(set) = self.lines.get_mut(queue) {
            set.insert(addr & !63);
        }
        self.port.queue_access(queue, addr, write, t)
    }
    fn access_as(&mut self, agent: usize, owner: Option<usize>, addr: u64, write: bool, t: u64) -> u64 {
        self.port.access_as(agent, owner, addr, write, t)
    }
}

/// An RX DMA on its way to the guest. While its write-back waits for its group, `visible` is the time its data
/// left the link (the write-back may go from then on).
struct Inflight {
    visible: u64,
    entered: u64,
    q: usize,
    desc: u64,
    buf: u64,
    frame: Vec<u8>,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct PortTimingStats {
    pub rx_arrived: u64,
    pub rx_wire_bytes: u64,
    pub first_rx: Option<u64>,
    pub last_rx: u64,
    pub tx_wire_bytes: u64,
    pub first_tx: Option<u64>,
    pub last_tx: u64,
}

pub struct NicTiming {
    /// ps per byte on each port's wire.
    pub ps_per_byte: f64,
    /// The path to the host: the PCIe link, or the on-die MAC's bus (`Nic.attach`).
    pub link: NicLink,
    pub mmio_latency: u64,
    /// Per port: frames on the wire, with the time they have fully arrived.
    wire_rx: Vec<VecDeque<(u64, Vec<u8>)>>,
    rx_wire_free: Vec<u64>,
    tx_wire_free: Vec<u64>,
    /// Per port: when the frames whose DMA has started leave the FIFO.
    departing: Vec<VecDeque<u64>>,
    /// DMAs written back, by the time the guest may see them (per queue in ring order).
    inflight: VecDeque<Inflight>,
    /// Per queue: DMAs whose data are done and whose descriptor write-back waits for its group.
    pending_wb: Vec<Vec<Inflight>>,
    /// The earliest of the waiting write-back groups' timers (`wb_deadline`), u64::MAX when none waits: the
    /// timers' pass over the queues runs only once it is due (a pass per queue per turn was a share of each step).
    wb_due: u64,
    /// `NicRegs::stores` at the last `note_rx_doorbells`: while unchanged no RX_TAIL moved and no ring changed.
    rx_noted_at: u64,
    /// Per queue: when its last write-back becomes visible (a later group never overtakes it).
    last_visible: Vec<u64>,
    wb_threshold: usize,
    wb_timer: u64,
    /// RX descriptors fetched per PCIe read (`Nic.rx_desc_fetch`).
    rx_desc_fetch: u64,
    /// PCIe writes that carried RX descriptor write-backs.
    pub rx_writebacks: u64,
    /// Per queue: descriptors taken by DMAs not yet visible.
    reserved: Vec<u64>,
    /// Frames the FIFO dropped since the client last took them.
    pub dropped: Vec<Vec<u8>>,
    pub ports: Vec<PortTimingStats>,
    /// DMA (RX) deliveries and their latency from arrival at the port to visibility (sum, ps).
    pub rx_dmas: u64,
    pub rx_dma_ps: u64,
    /// Whether detailed timing ever drove the NIC (its statistics are reported only then).
    pub used: bool,
    /// Per queue: the distinct lines its DMA touched since the last reset (descriptors, buffers, head word).
    io_lines: Vec<std::collections::HashSet<u64>>,
    /// Per queue and RX ring slot: when the slot's descriptor was last handed to the NIC (the time of the RX_TAIL
    /// doorbell that posted it, `note_rx_doorbells`); a frame's DMA into it cannot start before the doorbell has
    /// reached the NIC. Empty until the queue's first doorbell is noted (slots posted before: no constraint).
    rx_posted_at: Vec<Vec<u64>>,
    /// Per queue: RX_TAIL as the NIC last noted it.
    rx_tail_seen: Vec<u64>,
}

impl NicTiming {
    /// Run `f` with the DMA port wrapped so that every line it touches is noted in its queue's I/O footprint.
    fn noting_footprint<R>(&mut self, io: IoFn, f: impl FnOnce(&mut Self, IoFn) -> R) -> R {
        let mut lines = std::mem::take(&mut self.io_lines);
        let r = f(self, &mut Footprint { port: io, lines: &mut lines });
        self.io_lines = lines;
        r
    }

    pub fn new(p: &kvsim_params::Nic, ports: usize, queues: usize) -> NicTiming {
        let bps = p.port_gbps * 1e9;
        NicTiming {
            ps_per_byte: 8.0 * 1e12 / bps,
            link: NicLink::new(p),
            mmio_latency: register_latency(p),
            wire_rx: vec![VecDeque::new(); ports],
            rx_wire_free: vec![0; ports],
            tx_wire_free: vec![0; ports],
            departing: vec![VecDeque::new(); ports],
            inflight: VecDeque::new(),
            pending_wb: (0..queues).map(|_| Vec::new()).collect(),
            wb_due: u64::MAX,
            rx_noted_at: u64::MAX,
            last_visible: vec![0; queues],
            wb_threshold: p.rx_wb_threshold.max(1) as usize,
            wb_timer: p.rx_wb_timer,
            rx_desc_fetch: p.rx_desc_fetch.max(1),
            rx_writebacks: 0,
            reserved: vec![0; queues],
            dropped: Vec::new(),
            ports: vec![PortTimingStats::default(); ports],
            rx_dmas: 0,
            rx_dma_ps: 0,
            used: false,
            io_lines: vec![Default::default(); queues],
            rx_posted_at: vec![Vec::new(); queues],
            rx_tail_seen: vec![0; queues],
        }
    }

    /// Note the RX descriptors the driver has posted since the last call: each slot between the RX_TAIL the NIC
    /// last saw and the current one was handed over at `queue_time[q]` (the doorbell taken at the time of the
    /// queue's hart at the step, as for TX). The first call for a queue (or after its ring changed size) takes
    /// the slots already posted as handed over before timing started.
    pub fn note_rx_doorbells(&mut self, regs: &NicRegs, queue_time: &[u64]) {
        if regs.stores == self.rx_noted_at {
            return; // every queue's RX_TAIL is where the last pass saw it, its ring unchanged
        }
        self.rx_noted_at = regs.stores;
        for (q, x) in regs.queues.iter().enumerate() {
            let size = x.rx_ring.1 as usize;
            let (Some(slots), Some(&t)) = (self.rx_posted_at.get_mut(q), queue_time.get(q)) else { continue };
            if !x.enabled || size == 0 {
                continue;
            }
            if slots.len() != size {
                *slots = vec![0; size];
                self.rx_tail_seen[q] = x.rx_tail;
                continue;
            }
            let mask = x.rx_ring.1 - 1;
            let mut i = self.rx_tail_seen[q] & mask;
            while i != x.rx_tail {
                slots[i as usize] = t;
                i = (i + 1) & mask;
            }
            self.rx_tail_seen[q] = x.rx_tail;
        }
    }

    /// Has `note_rx_doorbells` seen every RX_TAIL and ring of `regs` as they are (no store since its last pass)?
    pub fn rx_doorbells_noted(&self, regs: &NicRegs) -> bool {
        regs.stores == self.rx_noted_at
    }

    /// The earliest time a frame's DMA into RX slot `idx` of queue q may start: once the doorbell that posted the
    /// slot has reached the NIC (`mmio_latency` after it), 0 when no doorbell was noted for it.
    fn rx_slot_ready(&self, q: usize, idx: u64) -> u64 {
        match self.rx_posted_at.get(q).and_then(|slots| slots.get(idx as usize)) {
            Some(&t) if t > 0 => t + self.mmio_latency,
            _ => 0,
        }
    }

    /// Serialization time of a frame of `len` bytes (without FCS) on a port.
    pub fn wire_ps(&self, len: usize) -> u64 {
        ((len.max(MIN_FRAME) as u64 + WIRE_OVERHEAD) as f64 * self.ps_per_byte).round() as u64
    }

    pub fn reset_stats(&mut self) {
        for s in &mut self.ports {
            *s = PortTimingStats::default();
        }
        self.link.reset_stats();
        self.rx_dmas = 0;
        self.rx_dma_ps = 0;
        self.rx_writebacks = 0;
        self.io_lines.iter_mut().for_each(|s| s.clear());
    }

    /// Frames still on their way (wire, FIFO departure, DMA, waiting for their write-back).
    pub fn busy(&self) -> bool {
        !self.inflight.is_empty()
            || self.pending_wb.iter().any(|g| !g.is_empty())
            || self.wire_rx.iter().any(|w| !w.is_empty())
    }

    /// When queue q's waiting write-back group must go (the timer of its first descriptor), if it has one.
    fn wb_deadline(&self, q: usize) -> Option<u64> {
        self.pending_wb[q].first().map(|f| f.visible + self.wb_timer)
    }

    /// Write queue q's waiting descriptors back, starting at `at`: one PCIe write per run of adjacent descriptors
    /// (the group is one run unless it wraps the ring). The frames become visible when the last write arrives.
    fn flush_writeback(&mut self, q: usize, at: u64, io: IoFn) {
        let group = std::mem::take(&mut self.pending_wb[q]);
        if group.is_empty() {
            return;
        }
        self.wb_due = (0..self.pending_wb.len()).filter_map(|q| self.wb_deadline(q)).min().unwrap_or(u64::MAX);
        let mut done = at;
        let mut run_start = 0;
        for i in 1..=group.len() {
            if i == group.len() || group[i].desc != group[i - 1].desc + DESC_LEN {
                let (first, bytes) = (group[run_start].desc, (i - run_start) as u64 * DESC_LEN);
                done = done.max(self.link.write_up(first, bytes, at, Traffic::RxWriteback));
                self.rx_writebacks += 1;
                run_start = i;
            }
        }
        let visible = (done + self.link.latency()).max(self.last_visible[q]);
        self.last_visible[q] = visible;
        let mut line = u64::MAX;
        for f in &group {
            if f.desc & !63 != line {
                line = f.desc & !63;
                io.queue_access(q, line, true, visible);
            }
        }
        // Keep `inflight` sorted by visibility (stable: equal times keep their order).
        let at = self.inflight.partition_point(|f| f.visible <= visible);
        for (k, mut f) in group.into_iter().enumerate() {
            self.rx_dma_ps += visible - f.entered;
            f.visible = visible;
            self.inflight.insert(at + k, f);
        }
    }

    /// The client puts a frame on port `port`'s wire at time `t`; it goes out when the wire is free (a sender
    /// cannot exceed line rate). Returns that time.
    pub fn wire_send(&mut self, port: usize, frame: Vec<u8>, t: u64) -> u64 {
        let start = t.max(self.rx_wire_free[port]);
        let done = start + self.wire_ps(frame.len());
        self.rx_wire_free[port] = done;
        self.wire_rx[port].push_back((done, frame));
        start
    }

    /// Frames on the wire, in DMA, or waiting for their write-back.
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
            + self.pending_wb.iter().map(|g| g.len()).sum::<usize>()
            + self.wire_rx.iter().map(|w| w.len()).sum::<usize>()
    }

    /// The earliest frame that has fully arrived by `now`: (its time, its port), the lower port first among equals.
    pub fn next_arrival(&self, now: u64) -> Option<(u64, usize)> {
        (0..self.wire_rx.len())
            .filter_map(|p| self.wire_rx[p].front().map(|(t, _)| (*t, p)))
            .filter(|&(t, _)| t <= now)
            .min()
    }

    /// Take the frame at the head of port `port`'s wire (`next_arrival` named it) and count its arrival at `t`.
    /// Returns the frame and how many FIFO places frames whose DMA has not left the link still hold.
    pub fn arrive(&mut self, port: usize, t: u64) -> (Vec<u8>, usize) {
        let (_, frame) = self.wire_rx[port].pop_front().expect("a frame on the wire");
        let ps = &mut self.ports[port];
        ps.rx_arrived += 1;
        ps.rx_wire_bytes += frame.len().max(MIN_FRAME) as u64 + WIRE_OVERHEAD;
        ps.first_rx.get_or_insert(t);
        ps.last_rx = t;
        let dep = &mut self.departing[port];
        while dep.front().is_some_and(|&d| d <= t) {
            dep.pop_front();
        }
        (frame, dep.len())
    }

    /// Write-back groups whose timer has expired by `now` go up; then the deliveries whose write-back has reached
    /// the host by `now` land in their rings.
    pub fn complete(&mut self, regs: &mut NicRegs, mem: &mut Memory, now: u64, io: IoFn) -> Result<(), DmaFault> {
        self.noting_footprint(io, |me, io| me.complete_noting(regs, mem, now, io))
    }

    fn complete_noting(&mut self, regs: &mut NicRegs, mem: &mut Memory, now: u64, io: IoFn) -> Result<(), DmaFault> {
        if self.wb_due <= now {
            for q in 0..self.pending_wb.len() {
                if let Some(due) = self.wb_deadline(q).filter(|&d| d <= now) {
                    self.flush_writeback(q, due, io);
                }
            }
        }
        while self.inflight.front().is_some_and(|f| f.visible <= now) {
            let f = self.inflight.pop_front().unwrap();
            self.reserved[f.q] -= 1;
            complete_rx(regs, mem, f.q, f.desc, f.buf, &f.frame)?;
        }
        Ok(())
    }

    /// The timed half of an RX DMA: frame `frame` of queue q (from port p, in the FIFO since `entered`) goes to
    /// descriptor `d` (ring index `idx`), buffer `buf`, starting at `s`. Its data cross the link now; the guest
    /// sees it when its descriptor's write-back group has been written.
    #[allow(clippy::too_many_arguments)]
    pub fn start_dma(
        &mut self,
        q: usize,
        p: usize,
        idx: u64,
        d: u64,
        buf: u64,
        frame: Vec<u8>,
        (s, entered): (u64, u64),
        io: IoFn,
    ) {
        self.noting_footprint(io, |me, io| me.start_dma_noting(q, p, idx, d, buf, frame, (s, entered), io))
    }

    #[allow(clippy::too_many_arguments)]
    fn start_dma_noting(
        &mut self,
        q: usize,
        p: usize,
        idx: u64,
        d: u64,
        buf: u64,
        frame: Vec<u8>,
        (s, entered): (u64, u64),
        io: IoFn,
    ) {
        // A frame that waited in the FIFO for a descriptor starts when the doorbell posting it reached the NIC,
        // not when the frame arrived (its FIFO entry time `s`).
        let s = s.max(self.rx_slot_ready(q, idx));
        // Descriptor prefetch: RX descriptors are fetched 8 at a time (one 128-byte read per 8 frames), on the
        // link but off the frame's path.
        let lat = self.link.latency();
        if idx.is_multiple_of(self.rx_desc_fetch) {
            let bytes = self.rx_desc_fetch * DESC_LEN;
            self.link.read(d, bytes, s, Traffic::RxDescFetch, &mut |t| {
                let mut ready = t;
                for line in (d & !63..d + bytes).step_by(64) {
                    ready = ready.max(io.queue_access(q, line, false, t));
                }
                ready
            });
        }
        let data_done = self.link.write_up(buf, frame.len() as u64, s, Traffic::RxData);
        let at_host = data_done + lat;
        let mut line = buf & !63;
        while line < buf + frame.len() as u64 {
            io.queue_access(q, line, true, at_host);
            line += 64;
        }
        self.departing[p].push_back(data_done);
        self.reserved[q] += 1;
        self.rx_dmas += 1;
        // A group whose timer expired before this descriptor completed went up without it.
        if let Some(due) = self.wb_deadline(q).filter(|&d| d < data_done) {
            self.flush_writeback(q, due, io);
        }
        self.pending_wb[q].push(Inflight { visible: data_done, entered, q, desc: d, buf, frame });
        if self.pending_wb[q].len() == 1 {
            self.wb_due = self.wb_due.min(self.wb_deadline(q).expect("a group"));
        }
        if self.pending_wb[q].len() >= self.wb_threshold {
            self.flush_writeback(q, data_done, io);
        }
    }

    /// Descriptors of queue q taken by DMAs the guest cannot see yet.
    pub fn reserved(&self, q: usize) -> u64 {
        self.reserved[q]
    }

    /// Send what the TX rings hold: `queue_time[q]` is when queue q's doorbell is taken to have rung; the ports'
    /// frame counters are the NIC's `port_stats`. Appends (queue, frame, time the client has it).
    pub fn transmit(
        &mut self,
        regs: &mut NicRegs,
        mem: &mut Memory,
        queue_time: &[u64],
        io: IoFn,
        port_stats: &mut [PortStats],
        out: &mut Vec<(usize, Vec<u8>, u64)>,
    ) -> Result<(), DmaFault> {
        self.noting_footprint(io, |me, io| me.transmit_noting(regs, mem, queue_time, io, port_stats, out))
    }

    fn transmit_noting(
        &mut self,
        regs: &mut NicRegs,
        mem: &mut Memory,
        queue_time: &[u64],
        io: IoFn,
        port_stats: &mut [PortStats],
        out: &mut Vec<(usize, Vec<u8>, u64)>,
    ) -> Result<(), DmaFault> {
        let mode = regs.tx_completion;
        for (q, x) in regs.queues.iter_mut().enumerate() {
            if !x.enabled || x.tx_head == x.tx_tail {
                continue;
            }
            let port = x.port as usize;
            let t0 = queue_time[q] + self.mmio_latency;
            let n = (x.tx_tail.wrapping_sub(x.tx_head)) & (x.tx_ring.1 - 1);
            let first = x.tx_ring.0 + x.tx_head * DESC_LEN;
            let descs_at = self.link.read(first, n * DESC_LEN, t0, Traffic::TxDescFetch, &mut |t| {
                // The descriptors' lines (a batch that wraps the ring is read as if contiguous: assumed).
                let mut ready = t;
                for line in (first & !63..first + n * DESC_LEN).step_by(64) {
                    ready = ready.max(io.queue_access(q, line, false, t));
                }
                ready
            });
            // When the batch's last frame has reached the NIC: its TX completion is written back then.
            let mut batch_done = descs_at;
            while x.tx_head != x.tx_tail {
                let fault = |what, trap| DmaFault { queue: q, what, trap };
                let d = x.tx_ring.0 + x.tx_head * DESC_LEN;
                let desc = mem.read_bytes(d, 16).map_err(|t| fault("reading a TX descriptor", t))?;
                let addr = u64::from_le_bytes(desc[0..8].try_into().unwrap());
                let len = u16::from_le_bytes([desc[8], desc[9]]) as usize;
                let mut frame_got = batch_done;
                if len > MAX_FRAME {
                    port_stats[port].tx_bad_len += 1;
                } else {
                    let mut frame =
                        mem.read_bytes(addr, len as u64).map_err(|t| fault("reading a frame from a TX buffer", t))?;
                    if frame.len() < MIN_FRAME {
                        frame.resize(MIN_FRAME, 0);
                    }
                    let got = self.link.read(addr, len as u64, descs_at, Traffic::TxData, &mut |t| {
                        let mut ready = t;
                        let mut line = addr & !63;
                        while line < addr + len as u64 {
                            ready = ready.max(io.queue_access(q, line, false, t));
                            line += 64;
                        }
                        ready
                    });
                    let done = got.max(self.tx_wire_free[port]) + self.wire_ps(frame.len());
                    self.tx_wire_free[port] = done;
                    let ps = &mut self.ports[port];
                    ps.tx_wire_bytes += frame.len() as u64 + WIRE_OVERHEAD;
                    ps.first_tx.get_or_insert(done);
                    ps.last_tx = done;
                    port_stats[port].tx_frames += 1;
                    port_stats[port].tx_bytes += frame.len() as u64;
                    x.tx_frames += 1;
                    batch_done = batch_done.max(got);
                    frame_got = got;
                    out.push((q, frame, done));
                }
                // Report-status mode: a descriptor that asked for it is written back once its frame is read.
                if complete_tx_descriptor(mode, mem, q, d, &desc)? {
                    self.link.write_up(d, DESC_LEN, frame_got, Traffic::TxCompletion);
                }
                x.tx_head = (x.tx_head + 1) & (x.tx_ring.1 - 1);
            }
            // Descriptor and head-pointer modes: one TX completion write per batch of a queue (the report-status
            // point is the batch's last descriptor): its 16-byte descriptor with DD (the DD bits of the batch's other
            // descriptors are set functionally but not charged), or the 4-byte head to TX_HEAD_WB's address, which
            // lands in the memory system like any DMA write (the driver reads it there).
            match write_back_tx_head(x, mem, q)? {
                Some(at) => {
                    let left = self.link.write_up(at, TX_HEAD_WB_LEN, batch_done, Traffic::TxCompletion);
                    io.queue_access(q, at & !63, true, left + self.link.latency());
                }
                None if mode == TX_COMPLETION_DESCRIPTOR => {
                    let last = x.tx_ring.0 + ((x.tx_head + x.tx_ring.1 - 1) & (x.tx_ring.1 - 1)) * DESC_LEN;
                    self.link.write_up(last, DESC_LEN, batch_done, Traffic::TxCompletion);
                }
                None => {}
            }
        }
        Ok(())
    }

    /// Timing statistics under the NIC's prefix `name` (`kvsim_params::paths::nic`; none unless detailed timing
    /// drove the NIC).
    pub fn stats(&self, name: &str, out: &mut Vec<(String, f64, &'static str)>) {
        if !self.used {
            return;
        }
        for (p, s) in self.ports.iter().enumerate() {
            let pre = name.to_owned() + &kvsim_params::paths::nic_port(p);
            let span = |first: Option<u64>, last: u64| first.map_or(0, |f| last - f);
            let rx_span = span(s.first_rx, s.last_rx);
            let tx_span = span(s.first_tx, s.last_tx);
            let rate = |n: f64, ps: u64| if ps > 0 { n / (ps as f64 * 1e-12) } else { 0.0 };
            out.push((
                format!("{pre}rx_frames_per_s"),
                rate(s.rx_arrived.saturating_sub(1) as f64, rx_span),
                "frames per second arriving at the port in detailed timing (first to last arrival)",
            ));
            out.push((
                format!("{pre}rx_wire_gbps"),
                rate(s.rx_wire_bytes as f64 * 8e-9, rx_span),
                "RX wire bandwidth used in detailed timing, Gbit/s (frame + 24 bytes per frame)",
            ));
            out.push((
                format!("{pre}tx_wire_gbps"),
                rate(s.tx_wire_bytes as f64 * 8e-9, tx_span),
                "TX wire bandwidth used in detailed timing, Gbit/s (frame + 24 bytes per frame)",
            ));
        }
        match &self.link {
            NicLink::Pcie(l) => pcie_stats(name, l, out),
            NicLink::OnDie(b) => b.stats(name, out),
        }
        for (q, lines) in self.io_lines.iter().enumerate() {
            out.push((
                format!("{name}{}io_lines", kvsim_params::paths::nic_queue(q)),
                lines.len() as f64,
                "distinct lines the queue's DMA touched in the measured phase (its I/O footprint: RX/TX descriptors, \
                 packet buffers, the TX head word)",
            ));
        }
        out.push((
            format!("{name}rx_writebacks"),
            self.rx_writebacks as f64,
            "PCIe writes carrying RX descriptor write-backs (coalesced per Nic.rx_wb_threshold / rx_wb_timer)",
        ));
        let per = if self.rx_dmas > 0 { self.rx_writebacks as f64 / self.rx_dmas as f64 } else { 0.0 };
        out.push((
            format!("{name}rx_writebacks_per_frame"),
            per,
            "RX descriptor write-back PCIe writes per frame DMA-written",
        ));
        let mean = if self.rx_dmas > 0 { self.rx_dma_ps as f64 / self.rx_dmas as f64 * 1e-3 } else { 0.0 };
        out.push((
            format!("{name}rx_dma_latency_ns"),
            mean,
            "mean time from arrival at the port to visibility in the RX ring (FIFO wait, PCIe), ns",
        ));
    }
}

/// The PCIe link's statistics under the NIC's prefix `name` and `kvsim_params::paths::pcie`.
fn pcie_stats(name: &str, l: &crate::pcie::PcieLink, out: &mut Vec<(String, f64, &'static str)>) {
    let pcie = name.to_owned() + &kvsim_params::paths::pcie();
    out.push((
        format!("{pcie}up_bytes"),
        l.up_bytes as f64,
        "bytes device -> host on the PCIe link (TLPs with their headers and framing, and DLLPs)",
    ));
    out.push((
        format!("{pcie}down_bytes"),
        l.down_bytes as f64,
        "bytes host -> device on the PCIe link (TLPs with their headers and framing, and DLLPs)",
    ));
    out.push((format!("{pcie}tlps"), l.tlps as f64, "TLPs on the PCIe link (both directions)"));
    let kinds: [(&str, u64, &'static str); 6] = [
        ("tlps.mem_write", l.writes, "memory-write TLPs (posted, device -> host)"),
        ("tlps.mem_read", l.read_requests, "memory-read request TLPs (non-posted, device -> host)"),
        ("tlps.completion", l.completions, "completion-with-data TLPs (host -> device)"),
        ("up_dllps", l.up_dllps, "DLLPs device -> host (the device's Acks of completions), 8 bytes each"),
        ("down_dllps", l.down_dllps, "DLLPs host -> device (the root complex's Acks and UpdateFCs), 8 bytes each"),
        ("read_tag_waits", l.tag_waits, "read requests that waited for a free tag (Nic.pcie_read_tags)"),
    ];
    for (leaf, v, desc) in kinds {
        out.push((format!("{pcie}{leaf}"), v as f64, desc));
    }
    for what in Traffic::ALL {
        let (up, down) = (l.up_by[what as usize], l.down_by[what as usize]);
        let t = what.name();
        out.push((
            format!("{pcie}up_bytes.{t}"),
            up.bytes as f64,
            "bytes device -> host of this kind of traffic (TLP overhead included)",
        ));
        out.push((format!("{pcie}up_tlps.{t}"), up.tlps as f64, "TLPs device -> host of this kind of traffic"));
        out.push((
            format!("{pcie}down_bytes.{t}"),
            down.bytes as f64,
            "bytes host -> device of this kind of traffic (TLP overhead included)",
        ));
    }
    out.push((format!("{pcie}up_busy_ps"), l.up_busy as f64, "time the device -> host direction was busy (ps)"));
    out.push((format!("{pcie}down_busy_ps"), l.down_busy as f64, "time the host -> device direction was busy (ps)"));
}

/// One-way time of a core's uncached access to the NIC's registers, for its attachment (`Nic.attach`).
pub fn register_latency(p: &kvsim_params::Nic) -> u64 {
    match p.attach {
        kvsim_params::NicAttach::Pcie => p.mmio_latency,
        kvsim_params::NicAttach::OnDie => p.on_die_mmio_latency,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::fixture::{udp_frame as frame, Rings};
    use crate::nic::Nic;
    use kvsim_base::abi::PAGE_SIZE;

    const RING: u64 = 0x10_0000;
    const BUFS: u64 = 0x10_4000;

    fn params(gbps: f64, fifo: u64) -> kvsim_params::Nic {
        kvsim_params::Nic {
            enabled: true,
            port_gbps: gbps,
            rx_fifo_frames: fifo,
            pcie_gen: 4,
            pcie_lanes: 16,
            pcie_max_payload: 256,
            pcie_latency: 400_000,
            mmio_latency: 100_000,
            ..Default::default()
        }
    }

    /// One queue on one port with a 4096-entry ring, all posted.
    fn setup(gbps: f64, fifo: u64) -> (Memory, NicRegs, Nic) {
        setup_wb(gbps, fifo, 1, 0)
    }

    /// The same, with RX write-back coalescing (threshold, timer in ps).
    fn setup_wb(gbps: f64, fifo: u64, wb_threshold: u64, wb_timer: u64) -> (Memory, NicRegs, Nic) {
        let mut mem = Memory::new(1 << 26, false, 1);
        mem.regions.heap_start = RING;
        mem.regions.brk = RING + 4096 * PAGE_SIZE;
        let mut regs = NicRegs::new(&[0]);
        let mut nic = Nic::new(0, 1, vec![0], [(0x4000, 0)], fifo as usize);
        let mut p = params(gbps, fifo);
        (p.rx_wb_threshold, p.rx_wb_timer) = (wb_threshold, wb_timer);
        nic.timing = Some(NicTiming::new(&p, 1, 1));
        let rings =
            Rings { rx_ring: RING, rx_size: 4096, tx_ring: RING + 0x10000, tx_size: 8, bufs: BUFS, head_wb: None };
        rings.enable(&mut regs, &mut mem);
        (mem, regs, nic)
    }

    /// Feed `n` frames of `len` bytes all at time 0 (far faster than line rate); the arrival rate is the line rate.
    fn arrival_rate(gbps: f64, len: usize, n: usize) -> f64 {
        let (mut mem, mut regs, mut nic) = setup(gbps, 1 << 16);
        for _ in 0..n {
            nic.wire_send(0, frame(len), 0);
        }
        nic.advance(&mut regs, &mut mem, u64::MAX / 4, &mut |_, _, t| t).unwrap();
        let mut out = Vec::new();
        nic.timing_stats(&mut out);
        assert_eq!(nic.timing.as_ref().unwrap().ports[0].rx_arrived, n as u64);
        out.iter().find(|s| s.0 == "system.nic0.port0.rx_frames_per_s").unwrap().1
    }

    #[test]
    fn a_nic_fed_faster_than_line_rate_delivers_exactly_line_rate() {
        let r100 = arrival_rate(100.0, 88, 2000);
        assert!((r100 / 1e6 - 111.607).abs() < 0.01, "100 GbE, 88-byte frames: {} Mfps", r100 / 1e6);
        let r10 = arrival_rate(10.0, 88, 2000);
        assert!((r10 / 1e6 - 11.1607).abs() < 0.001, "10 GbE: {} Mfps", r10 / 1e6);
    }

    #[test]
    fn a_slow_consumer_makes_the_fifo_drop() {
        // 16-frame FIFO, 8 free descriptors, 100 frames at line rate: 8 delivered, 16 wait, the rest dropped.
        let (mut mem, mut regs, mut nic) = setup(10.0, 16);
        regs.queues[0].rx_tail = 8;
        for _ in 0..100 {
            nic.wire_send(0, frame(64), 0);
        }
        nic.advance(&mut regs, &mut mem, 1_000_000_000, &mut |_, _, t| t).unwrap();
        assert_eq!(regs.queues[0].rx_frames, 8);
        assert_eq!(nic.fifo_frames(), 16);
        assert_eq!(nic.port_stats[0].rx_fifo_overflows, 76);
        assert_eq!(regs.queues[0].rx_drops, 76);
        assert_eq!(nic.timing.as_ref().unwrap().dropped.len(), 76);
    }

    #[test]
    fn deliveries_become_visible_at_their_time_and_dma_lines_go_to_memory() {
        let (mut mem, mut regs, mut nic) = setup(100.0, 64);
        nic.wire_send(0, frame(200), 0);
        let mut writes = Vec::new();
        // Before the frame has crossed the wire, PCIe and latency: nothing visible.
        nic.advance(&mut regs, &mut mem, 100_000, &mut |a, w, t| {
            if w {
                writes.push(a)
            }
            t
        })
        .unwrap();
        assert_eq!(regs.queues[0].rx_head, 0);
        assert_eq!(writes, vec![BUFS, BUFS + 64, BUFS + 128, BUFS + 192, RING], "4 data lines, then the descriptor");
        nic.advance(&mut regs, &mut mem, 2_000_000, &mut |_, _, t| t).unwrap();
        assert_eq!(regs.queues[0].rx_head, 1);
        assert_eq!(mem.read_bytes(BUFS, 200).unwrap(), frame(200));
        // The queue's I/O footprint: the frame's 4 buffer lines and the 2 lines of the 8 descriptors fetched (the
        // written-back descriptor is in the first of them).
        let mut out = Vec::new();
        nic.timing_stats(&mut out);
        assert_eq!(out.iter().find(|s| s.0 == "system.nic0.queue0.io_lines").unwrap().1, 6.0);
    }

    /// Exact ticks at a closure DMA port: the RX data lines of a 200-byte frame reach the port when the frame has
    /// crossed the 100 GbE wire (224 bytes with the preamble, FCS and gap, 80 ps a byte: 17.92 ns) and then the
    /// PCIe link (after the descriptor prefetch that the ring's first frame starts), plus the link's latency; the
    /// descriptor write-back reaches the port at the tick the guest sees the frame, and not a picosecond before.
    #[test]
    fn rx_dma_writes_reach_a_closure_port_at_exact_ticks() {
        let (mut mem, mut regs, mut nic) = setup(100.0, 64);
        let arrival = 224 * 80;
        assert_eq!(nic.timing.as_ref().unwrap().wire_ps(200), arrival);
        let mut link = nic.timing.as_ref().unwrap().link.clone();
        link.read(RING, 8 * DESC_LEN, arrival, Traffic::RxDescFetch, &mut |t| t);
        let at_host = link.write_up(BUFS, 200, arrival, Traffic::RxData) + link.latency();
        let visible = link.write_up(RING, DESC_LEN, at_host - link.latency(), Traffic::RxWriteback) + link.latency();
        nic.wire_send(0, frame(200), 0);
        let log: std::cell::RefCell<Vec<(u64, bool, u64)>> = Default::default();
        let mut port = |addr: u64, write: bool, t: u64| {
            log.borrow_mut().push((addr, write, t));
            t
        };
        nic.advance(&mut regs, &mut mem, arrival - 1, &mut port).unwrap();
        assert!(log.borrow().is_empty(), "nothing before the frame has crossed the wire: {log:?}");
        nic.advance(&mut regs, &mut mem, visible - 1, &mut port).unwrap();
        let data: Vec<_> = log.borrow().iter().filter(|x| x.1 && x.0 >= BUFS).copied().collect();
        let lines: Vec<_> = (0..4).map(|i| (BUFS + 64 * i, true, at_host)).collect();
        assert_eq!(data, lines, "four 64-byte lines, all at the tick the data reach the host");
        assert_eq!(log.borrow().iter().filter(|x| x.1 && x.0 == RING).map(|x| x.2).collect::<Vec<_>>(), vec![visible]);
        assert_eq!(regs.queues[0].rx_head, 0, "not visible one picosecond early");
        nic.advance(&mut regs, &mut mem, visible, &mut port).unwrap();
        assert_eq!(regs.queues[0].rx_head, 1);
    }

    /// A frame that arrives while its queue owns no descriptor waits in the FIFO; its DMA starts when the doorbell
    /// that posts a descriptor has reached the NIC (the doorbell's time + mmio_latency), not at its arrival: the
    /// data lines reach the port at exactly that start + the PCIe transfer + latency, and the DMA latency counts
    /// the wait. (Before, the DMA was dated at the frame's arrival, microseconds before the descriptor existed.)
    #[test]
    fn a_frame_waiting_for_a_descriptor_starts_its_dma_after_the_doorbell() {
        let (mut mem, mut regs, mut nic) = setup(100.0, 64);
        regs.queues[0].rx_tail = 0; // the driver has posted nothing
        nic.timing.as_mut().unwrap().note_rx_doorbells(&regs, &[1]);
        nic.wire_send(0, frame(200), 0);
        let log: std::cell::RefCell<Vec<(u64, bool, u64)>> = Default::default();
        let mut port = |addr: u64, write: bool, t: u64| {
            log.borrow_mut().push((addr, write, t));
            t
        };
        let doorbell = 10_000_000; // 10 us
        nic.advance(&mut regs, &mut mem, doorbell, &mut port).unwrap();
        assert!(log.borrow().is_empty(), "no descriptor, no DMA: {log:?}");
        assert_eq!(nic.fifo_frames(), 1);
        let mut link = nic.timing.as_ref().unwrap().link.clone();
        regs.store(kvsim_base::abi::DEVICE_BASE + crate::nic::reg::RX_TAIL, 8, 1, kvsim_isa::trap::Access::Store)
            .unwrap();
        nic.timing.as_mut().unwrap().note_rx_doorbells(&regs, &[doorbell]);
        let start = doorbell + 100_000; // the doorbell reaches the NIC mmio_latency later
        link.read(RING, 8 * DESC_LEN, start, Traffic::RxDescFetch, &mut |t| t);
        let at_host = link.write_up(BUFS, 200, start, Traffic::RxData) + link.latency();
        nic.advance(&mut regs, &mut mem, 2 * doorbell, &mut port).unwrap();
        let data: Vec<_> = log.borrow().iter().filter(|x| x.1 && x.0 >= BUFS).map(|x| x.2).collect();
        assert_eq!(data, vec![at_host; 4], "four data lines, after the doorbell");
        assert_eq!(regs.queues[0].rx_head, 1);
        let mut out = Vec::new();
        nic.timing_stats(&mut out);
        let latency_ns = out.iter().find(|s| s.0 == "system.nic0.rx_dma_latency_ns").unwrap().1;
        assert!(latency_ns > 10_000.0, "the wait for the descriptor counts: {latency_ns} ns");
    }

    /// `n` frames sent at once at 10 GbE with the given coalescing, run to the end: (write-back PCIe writes,
    /// frames the guest sees, TLPs on the link).
    fn writebacks(threshold: u64, timer: u64, n: usize) -> (u64, u64, u64) {
        let (mut mem, mut regs, mut nic) = setup_wb(10.0, 1 << 16, threshold, timer);
        for _ in 0..n {
            nic.wire_send(0, frame(88), 0);
        }
        nic.advance(&mut regs, &mut mem, u64::MAX / 4, &mut |_, _, t| t).unwrap();
        let tm = nic.timing.as_ref().unwrap();
        assert!(!tm.busy());
        (tm.rx_writebacks, regs.queues[0].rx_frames, tm.link.pcie().unwrap().tlps)
    }

    #[test]
    fn coalescing_writes_back_threshold_descriptors_per_pcie_write() {
        let timer = 1_000_000_000; // 1 ms: only the last partial group waits for it
        let (one, seen, tlps_one) = writebacks(1, 0, 64);
        assert_eq!((one, seen), (64, 64), "without coalescing every descriptor is its own write");
        let (four, seen, tlps_four) = writebacks(4, timer, 64);
        assert_eq!((four, seen), (16, 64));
        assert_eq!(tlps_one - tlps_four, 48, "48 fewer write TLPs, nothing else changes");
        assert_eq!(writebacks(16, timer, 64).0, 4);
        // 64 = 12 x 5 + 4: twelve full groups and the rest when the timer fires.
        assert_eq!(writebacks(5, timer, 64), (13, 64, tlps_one - 51));
        let mut out = Vec::new();
        let (mut mem, mut regs, mut nic) = setup_wb(10.0, 64, 4, timer);
        for _ in 0..8 {
            nic.wire_send(0, frame(88), 0);
        }
        nic.advance(&mut regs, &mut mem, u64::MAX / 4, &mut |_, _, t| t).unwrap();
        nic.timing_stats(&mut out);
        let get = |k: &str| out.iter().find(|s| s.0 == k).unwrap().1;
        assert_eq!(get("system.nic0.rx_writebacks"), 2.0);
        assert_eq!(get("system.nic0.rx_writebacks_per_frame"), 0.25);
    }

    #[test]
    fn a_partial_group_becomes_visible_when_its_timer_fires() {
        let timer = 2_000_000; // 2 us
        let (mut mem, mut regs, mut nic) = setup_wb(100.0, 64, 4, timer);
        for _ in 0..3 {
            nic.wire_send(0, frame(88), 0);
        }
        // All three frames are on the NIC with their data written well before 1.9 us; none is visible.
        nic.advance(&mut regs, &mut mem, 1_900_000, &mut |_, _, t| t).unwrap();
        let first_done = nic.timing.as_ref().unwrap().pending_wb[0][0].visible;
        assert_eq!(nic.timing.as_ref().unwrap().pending_wb[0].len(), 3);
        let due = first_done + timer;
        nic.advance(&mut regs, &mut mem, due - 1, &mut |_, _, t| t).unwrap();
        assert_eq!((nic.timing.as_ref().unwrap().rx_writebacks, regs.queues[0].rx_head), (0, 0));
        // At the deadline one write of 3 x 16 bytes + 24 bytes of TLP overhead leaves on PCIe 4.0 x16 (31.5 GB/s)
        // and arrives 400 ns later.
        let ser = (72.0f64 * 1e12 / (16e9 * 128.0 / 130.0 / 8.0 * 16.0)).round() as u64;
        let visible = due + ser + 400_000;
        nic.advance(&mut regs, &mut mem, visible - 1, &mut |_, _, t| t).unwrap();
        assert_eq!((nic.timing.as_ref().unwrap().rx_writebacks, regs.queues[0].rx_head), (1, 0));
        nic.advance(&mut regs, &mut mem, visible, &mut |_, _, t| t).unwrap();
        assert_eq!(regs.queues[0].rx_head, 3, "the whole group at once");
    }
}

#[cfg(test)]
#[path = "timing_tx_tests.rs"]
mod tx_completion_tests;
