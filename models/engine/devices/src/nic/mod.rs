//! The NIC's functional model (workloads/ABI.md, "The NIC"): per-queue register blocks in the device range (MMIO,
//! 64-bit aligned `ld`/`sd` only), RX/TX descriptor rings in guest memory, a perfect-match steering table from
//! UDP destination port to RX queue, a bounded RX FIFO per port, and DMA of frames into RX buffers and out of TX
//! buffers. Between scheduling quanta the engine calls `Nic::deliver` and `Nic::transmit`. Line rate, PCIe and
//! DDIO timing are the timing model's.
//!
//! The registers (`NicRegs`, nic/regs.rs) sit on the device bus (`bus.rs`, through the isa crate's `Mmio`), which
//! the executor's loads and stores in the device range reach; the rest of the NIC (FIFOs, steering, port counters)
//! is `Nic`, owned by the machine's network side. `Nic` owns its parts as fields and delegates to them, each a
//! struct with its own methods over the state it needs: `timing::NicTiming` (wire, FIFO in time, PCIe or on-die
//! link, DMA and write-back), `zero_copy::ZeroCopy` (KeyVault's slots in the cores' caches) and
//! `kvd_switch::KvdSwitch` (the switch in front of the ports).
//!
//! A system may have several NICs: each has its own registers at its own base address, its own ports, queues,
//! FIFOs and link, and its statistics under `system.nic{K}` (K: its place in `System.nics`).

#[cfg(test)]
pub(crate) mod fixture;
pub mod regs;
pub mod timing;
pub mod zero_copy;

pub use regs::*;

use std::collections::{HashMap, VecDeque};

use kvsim_isa::memory::Memory;

use crate::nic::regs::{complete_rx, complete_tx_descriptor, write_back_tx_head};
use crate::nic::timing::IoFn;

/// The NIC apart from its registers: steering, FIFOs, counters.
pub struct Nic {
    /// Statistics prefix: `kvsim_params::paths::nic` (`system.nic{K}.`).
    pub stats_prefix: String,
    /// Agent id of its DMA (`dma::DmaPort`): after the cores'.
    pub agent: usize,
    pub ports: usize,
    pub queue_port: Vec<u64>,
    /// UDP destination port -> queue.
    pub steering: HashMap<u16, usize>,
    pub(crate) fifo_depth: usize,
    /// Per port: (queue, frame, time it entered the FIFO; 0 untimed).
    pub fifos: Vec<VecDeque<(usize, Vec<u8>, u64)>>,
    /// The timing side (used when the engine passes simulated time: detailed timing).
    pub timing: Option<crate::nic::timing::NicTiming>,
    pub port_stats: Vec<PortStats>,
    pub port_base: Vec<PortStats>,
    /// Queue counters at the last stats reset: (rx_frames, rx_drops, tx_frames).
    pub queue_base: Vec<(u64, u64, u64)>,
    /// The zero-copy interface (`Nic.interface = zero_copy`, nic/zero_copy.rs); None: descriptor rings.
    pub zero_copy: Option<crate::nic::zero_copy::ZeroCopy>,
    /// `NicRegs::stores` when a TX pass (functional or timed) last left every enabled queue's TX ring empty: while
    /// it is unchanged no frame can be waiting, and the pass is skipped.
    tx_drained_at: u64,
    /// Frames admitted to the RX FIFOs so far, and (`NicRegs::stores`, `NicRegs::rx_landed`, this count) when a
    /// functional delivery (`deliver`) last left no FIFO frame whose queue had a free descriptor: while all three
    /// are unchanged no descriptor was posted or freed and no frame came, so the next delivery has nothing to move
    /// and is skipped (the FIFOs hold frames for full rings during a bulk load, and every turn rescanned them).
    admitted: u64,
    rx_stuck_at: Option<(u64, u64, u64)>,
    /// The KVD switch between the ports and the network (`Nic.switch`, kvd_switch.rs), if enabled.
    pub switch: Option<crate::kvd_switch::KvdSwitch>,
}

pub use kvsim_base::frame::udp_dst_port;

impl Nic {
    /// NIC `index` of the system; `queue_port[q]` is queue q's port; `steering` the perfect-match table (UDP
    /// destination port, queue).
    pub fn new(
        index: usize,
        ports: usize,
        queue_port: Vec<u64>,
        steering: impl IntoIterator<Item = (u16, usize)>,
        fifo_depth: usize,
    ) -> Nic {
        let steering = steering.into_iter().collect();
        let nq = queue_port.len();
        Nic {
            stats_prefix: kvsim_params::paths::nic(index),
            agent: index,
            ports,
            queue_port,
            steering,
            fifo_depth,
            fifos: vec![VecDeque::new(); ports],
            timing: None,
            port_stats: vec![PortStats::default(); ports],
            port_base: vec![PortStats::default(); ports],
            queue_base: vec![(0, 0, 0); nq],
            zero_copy: None,
            switch: None,
            tx_drained_at: u64::MAX,
            admitted: 0,
            rx_stuck_at: None,
        }
    }

    /// A frame arrives at `port` from the wire (functional): steer it to a queue of that port and put it in the
    /// port's RX FIFO. Returns the queue, or None when it was dropped (no match, or the FIFO is full).
    pub fn receive(&mut self, regs: &mut NicRegs, port: usize, frame: Vec<u8>) -> Option<usize> {
        self.admit(regs, port, frame, 0, 0).ok()
    }

    /// The one RX entry, functional and timed: count the frame at the port, steer it (perfect match on the UDP
    /// destination port, to a queue of this port), and admit it to the port's FIFO at time `t` if the FIFO has
    /// room besides the `held` places of frames whose DMA is still under way (timed; 0 untimed). Returns the
    /// queue, or the frame back when it was dropped.
    pub(crate) fn admit(
        &mut self,
        regs: &mut NicRegs,
        port: usize,
        mut frame: Vec<u8>,
        t: u64,
        held: usize,
    ) -> Result<usize, Vec<u8>> {
        let st = &mut self.port_stats[port];
        st.rx_frames += 1;
        st.rx_bytes += frame.len() as u64;
        let q = match udp_dst_port(&frame).and_then(|p| self.steering.get(&p).copied()) {
            Some(q) if self.queue_port[q] == port as u64 => q,
            _ => {
                st.rx_no_match += 1;
                st.rx_drops += 1;
                return Err(frame);
            }
        };
        if self.fifos[port].len() + held >= self.fifo_depth {
            st.rx_fifo_overflows += 1;
            st.rx_drops += 1;
            regs.queues[q].rx_drops += 1;
            return Err(frame);
        }
        if frame.len() < MIN_FRAME {
            frame.resize(MIN_FRAME, 0); // the sender pads short frames
        }
        self.fifos[port].push_back((q, frame, t));
        self.admitted += 1;
        Ok(q)
    }

    /// Frames waiting in the RX FIFOs.
    pub fn fifo_frames(&self) -> usize {
        self.fifos.iter().map(|f| f.len()).sum()
    }

    /// Move frames from the RX FIFOs into their queues' RX rings (functional: DMA-write the frame, then `len`,
    /// then `status = DD`, then advance RX_HEAD, at once). A frame whose queue owns no free descriptor stays in
    /// the FIFO.
    pub fn deliver(&mut self, regs: &mut NicRegs, mem: &mut Memory) -> Result<(), DmaFault> {
        let now = (regs.stores, regs.rx_landed, self.admitted);
        if self.rx_stuck_at == Some(now) {
            return Ok(());
        }
        self.drain(regs, mem, u64::MAX, None)?;
        // The zero-copy interface lands frames its own way (nic/zero_copy.rs): not remembered.
        if self.zero_copy.is_none() {
            self.rx_stuck_at = Some((regs.stores, regs.rx_landed, self.admitted));
        }
        Ok(())
    }

    /// The one RX path from the FIFOs to the rings: repeatedly take the earliest frame (by FIFO entry, the lower
    /// port first) whose queue owns a descriptor not yet taken, up to `horizon`. Untimed (`io` None) the frame
    /// lands at once; timed, its DMA starts and it lands when its write-back reaches the host (nic/timing.rs).
    pub(crate) fn drain(
        &mut self,
        regs: &mut NicRegs,
        mem: &mut Memory,
        horizon: u64,
        mut io: Option<IoFn>,
    ) -> Result<(), DmaFault> {
        if io.is_some() {
            // A timed pass reserves descriptors for DMAs under way (`reserved`), which no count above follows.
            self.rx_stuck_at = None;
        }
        loop {
            let mut best: Option<(u64, usize, usize)> = None; // (entered, port, index in FIFO)
            for p in 0..self.ports {
                let pos = self.fifos[p].iter().position(|(q, _, _)| regs.queues[*q].rx_free() > self.reserved(*q));
                if let Some(i) = pos {
                    let s = self.fifos[p][i].2;
                    if best.is_none_or(|(b, _, _)| s < b) {
                        best = Some((s, p, i));
                    }
                }
            }
            let Some((s, p, i)) = best else { return Ok(()) };
            if s > horizon {
                return Ok(());
            }
            let (q, frame, entered) = self.fifos[p].remove(i).unwrap();
            if let Some(zc) = self.zero_copy.as_mut() {
                let timed = io.as_deref_mut().map(|io| (self.timing.as_ref().expect("a timed NIC").mmio_latency, io));
                zc.land(regs, mem, q, (frame, entered), timed, &mut self.port_stats[p])?;
                continue;
            }
            let x = &regs.queues[q];
            let idx = (x.rx_head + self.reserved(q)) & (x.rx_ring.1 - 1);
            let d = x.rx_ring.0 + idx * DESC_LEN;
            let desc =
                mem.read_bytes(d, 16).map_err(|t| DmaFault { queue: q, what: "reading an RX descriptor", trap: t })?;
            let buf = u64::from_le_bytes(desc[0..8].try_into().unwrap());
            let buf_size = u16::from_le_bytes([desc[8], desc[9]]) as usize;
            if frame.len() > buf_size {
                regs.queues[q].rx_drops += 1;
                self.port_stats[p].rx_too_long += 1;
                continue;
            }
            match io.as_deref_mut() {
                None => complete_rx(regs, mem, q, d, buf, &frame)?,
                Some(io) => self.timing.as_mut().unwrap().start_dma(q, p, idx, d, buf, frame, (s, entered), io),
            }
        }
    }

    /// Send every frame queued in the TX rings (DMA-read it, write `status = DD`, advance TX_HEAD), appending
    /// (queue, frame) to `out` in queue order.
    pub fn transmit(
        &mut self,
        regs: &mut NicRegs,
        mem: &mut Memory,
        out: &mut Vec<(usize, Vec<u8>)>,
    ) -> Result<(), DmaFault> {
        if regs.stores == self.tx_drained_at {
            return Ok(());
        }
        let mode = regs.tx_completion;
        for (q, x) in regs.queues.iter_mut().enumerate() {
            if !x.enabled {
                continue;
            }
            let port = x.port as usize;
            let sent_any = x.tx_head != x.tx_tail;
            while x.tx_head != x.tx_tail {
                let fault = |what, trap| DmaFault { queue: q, what, trap };
                let d = x.tx_ring.0 + x.tx_head * DESC_LEN;
                let desc = mem.read_bytes(d, 16).map_err(|t| fault("reading a TX descriptor", t))?;
                let addr = u64::from_le_bytes(desc[0..8].try_into().unwrap());
                let len = u16::from_le_bytes([desc[8], desc[9]]) as usize;
                if len > MAX_FRAME {
                    self.port_stats[port].tx_bad_len += 1;
                } else {
                    let mut frame =
                        mem.read_bytes(addr, len as u64).map_err(|t| fault("reading a frame from a TX buffer", t))?;
                    if frame.len() < MIN_FRAME {
                        frame.resize(MIN_FRAME, 0);
                    }
                    self.port_stats[port].tx_frames += 1;
                    self.port_stats[port].tx_bytes += frame.len() as u64;
                    x.tx_frames += 1;
                    out.push((q, frame));
                }
                complete_tx_descriptor(mode, mem, q, d, &desc)?;
                x.tx_head = (x.tx_head + 1) & (x.tx_ring.1 - 1);
            }
            if sent_any {
                write_back_tx_head(x, mem, q)?;
            }
        }
        self.tx_drained_at = regs.stores;
        Ok(())
    }

    /// The client puts a frame on port `port`'s wire at time `t` (detailed timing: `NicTiming::wire_send`).
    pub fn wire_send(&mut self, port: usize, frame: Vec<u8>, t: u64) -> u64 {
        self.timing.as_mut().expect("a timed NIC").wire_send(port, frame, t)
    }

    /// Frames on the wire, in the FIFOs, in DMA, or written into a core's cache but not yet visible (zero-copy).
    pub fn frames_in_flight(&self) -> usize {
        self.fifo_frames()
            + self.timing.as_ref().map_or(0, |t| t.in_flight())
            + self.zero_copy.as_ref().map_or(0, |z| z.in_flight())
    }

    /// Advance the RX side to time `now` (detailed timing): arrivals in time order, each admitted to its port's
    /// FIFO (steering) with the places of frames still in DMA held; the DMAs that can start by each arrival; then
    /// the write-backs and deliveries the guest may now see (nic/timing.rs).
    pub fn advance(&mut self, regs: &mut NicRegs, mem: &mut Memory, now: u64, io: IoFn) -> Result<(), DmaFault> {
        self.timing.as_mut().expect("a timed NIC").used = true;
        loop {
            let next = self.timing.as_ref().expect("a timed NIC").next_arrival(now);
            let horizon = next.map_or(now, |(t, _)| t);
            self.drain(regs, mem, horizon, Some(&mut *io))?;
            let Some((t, p)) = next else { break };
            let (frame, held) = self.timing.as_mut().unwrap().arrive(p, t);
            if let Err(frame) = self.admit(regs, p, frame, t, held) {
                self.timing.as_mut().unwrap().dropped.push(frame);
            }
        }
        self.timing.as_mut().unwrap().complete(regs, mem, now, io)
    }

    /// Descriptors of queue q taken by DMAs the guest cannot see yet.
    fn reserved(&self, q: usize) -> u64 {
        self.timing.as_ref().map_or(0, |t| t.reserved(q))
    }

    /// Send what the TX rings hold (detailed timing: `NicTiming::transmit`): `queue_time[q]` is when queue q's
    /// doorbell is taken to have rung. Appends (queue, frame, time the client has it).
    pub fn transmit_timed(
        &mut self,
        regs: &mut NicRegs,
        mem: &mut Memory,
        queue_time: &[u64],
        io: IoFn,
        out: &mut Vec<(usize, Vec<u8>, u64)>,
    ) -> Result<(), DmaFault> {
        if regs.stores == self.tx_drained_at {
            return Ok(());
        }
        let tm = self.timing.as_mut().expect("a timed NIC");
        tm.transmit(regs, mem, queue_time, io, &mut self.port_stats, out)?;
        self.tx_drained_at = regs.stores;
        Ok(())
    }

    /// Timing statistics under the NIC's name.
    pub fn timing_stats(&self, out: &mut Vec<(String, f64, &'static str)>) {
        if let Some(tm) = &self.timing {
            tm.stats(&self.stats_prefix, out);
        }
    }

    /// The zero-copy interface's slots become visible to their cores up to `now` (`ZeroCopy::publish`).
    pub fn publish_zero_copy(&mut self, mem: &mut Memory, now: u64) -> Result<(), DmaFault> {
        match self.zero_copy.as_mut() {
            Some(zc) => zc.publish(mem, now),
            None => Ok(()),
        }
    }

    /// Would a timed step read its queues' doorbell times? Only a TX pass or an RX doorbell pass reads them, and
    /// they are skipped while no register store came since they last ran (`NicRegs::stores`); a zero-copy NIC's
    /// send slots are read every step.
    pub fn needs_queue_times(&self, regs: &NicRegs) -> bool {
        self.zero_copy.is_some()
            || regs.stores != self.tx_drained_at
            || self.timing.as_ref().is_some_and(|t| !t.rx_doorbells_noted(regs))
    }

    /// Send what the zero-copy send slots hold (`ZeroCopy::transmit`; timed: each queue's doorbell time and the
    /// memory system).
    pub fn transmit_zero_copy(
        &mut self,
        regs: &mut NicRegs,
        mem: &mut Memory,
        timed: Option<(&[u64], IoFn)>,
        out: &mut Vec<(usize, Vec<u8>, u64)>,
    ) -> Result<(), DmaFault> {
        let zc = self.zero_copy.as_mut().expect("a zero-copy NIC");
        let timing = &mut self.timing;
        let timed = timed.map(|(queue_time, io)| (queue_time, io, timing.as_mut().expect("a timed NIC")));
        zc.transmit(regs, mem, timed, &mut self.port_stats, out)
    }

    /// A frame from the network for port `port`, sent at `t` (detailed timing): behind a KVD switch it crosses
    /// this stack's share of the switch's uplink and the switch first (`KvdSwitch::to_stack`), then the port's
    /// wire. Returns when it starts on the first of them.
    pub fn arrive_from_network(&mut self, port: usize, frame: Vec<u8>, t: u64) -> u64 {
        match self.switch.as_mut() {
            Some(sw) => {
                let (start, forwarded) = sw.to_stack(port, frame.len(), t);
                self.wire_send(port, frame, forwarded);
                start
            }
            None => self.wire_send(port, frame, t),
        }
    }

    /// Frames sent from the ports, (queue, frame, time its last byte left the port), as the network has them
    /// (detailed timing): behind a KVD switch, once the switch has forwarded them (`KvdSwitch::to_network`).
    pub fn forward_to_network(&mut self, regs: &NicRegs, sent: &mut [(usize, Vec<u8>, u64)]) {
        if let Some(sw) = self.switch.as_mut() {
            for (q, f, t) in sent {
                *t = sw.to_network(regs.queues[*q].port as usize, f.len(), *t);
            }
        }
    }

    /// Forget the counters so far, the parts' too (the measured phase starts).
    pub fn reset_stats(&mut self, regs: &mut NicRegs) {
        self.port_base = self.port_stats.clone();
        for (q, x) in regs.queues.iter_mut().enumerate() {
            self.queue_base[q] = (x.rx_frames, x.rx_drops, x.tx_frames);
            x.reset_batch_stats();
        }
        if let Some(t) = self.timing.as_mut() {
            t.reset_stats();
        }
        if let Some(z) = self.zero_copy.as_mut() {
            z.reset_stats();
        }
        if let Some(sw) = self.switch.as_mut() {
            sw.reset_stats();
        }
    }

    /// The parts' statistics under the NIC's name: timing, zero-copy interface, KVD switch.
    pub fn parts_stats(&self, out: &mut Vec<(String, f64, &'static str)>) {
        self.timing_stats(out);
        if let Some(z) = &self.zero_copy {
            z.stats(&self.stats_prefix, out);
        }
        if let Some(sw) = &self.switch {
            sw.stats(&self.stats_prefix, out);
        }
    }

    /// (name, value, description) statistics under the NIC's name.
    pub fn stats(&self, regs: &NicRegs) -> Vec<(String, f64, &'static str)> {
        let mut out = Vec::new();
        type Field = fn(&PortStats) -> u64;
        const PORT_STATS: [(&str, Field, &str); 9] = [
            ("rx_frames", |s| s.rx_frames, "frames that arrived at the port"),
            ("rx_bytes", |s| s.rx_bytes, "bytes that arrived at the port (without FCS)"),
            ("rx_drops", |s| s.rx_drops, "frames dropped at the port: RX FIFO overflow or no steering match"),
            ("rx_no_match", |s| s.rx_no_match, "frames no steering entry matched (dropped)"),
            ("rx_fifo_overflows", |s| s.rx_fifo_overflows, "frames dropped because the RX FIFO was full"),
            ("rx_too_long", |s| s.rx_too_long, "frames longer than their RX buffer (dropped)"),
            ("tx_frames", |s| s.tx_frames, "frames sent from the port"),
            ("tx_bytes", |s| s.tx_bytes, "bytes sent from the port (without FCS)"),
            ("tx_bad_len", |s| s.tx_bad_len, "TX descriptors longer than 1514 bytes (skipped)"),
        ];
        for (p, (now, base)) in self.port_stats.iter().zip(&self.port_base).enumerate() {
            for (name, field, desc) in PORT_STATS {
                let pre = self.stats_prefix.clone() + &kvsim_params::paths::nic_port(p);
                out.push((pre + name, (field(now) - field(base)) as f64, desc));
            }
        }
        for (q, x) in regs.queues.iter().enumerate() {
            let pre = self.stats_prefix.clone() + &kvsim_params::paths::nic_queue(q);
            let (rf, rd, tf) = self.queue_base[q];
            let batches = x.rx_batches();
            out.push((format!("{pre}rx_frames"), (x.rx_frames - rf) as f64, "frames delivered into the RX ring"));
            out.push((
                format!("{pre}rx_drops"),
                (x.rx_drops - rd) as f64,
                "frames for this queue dropped (FIFO overflow, too long)",
            ));
            out.push((format!("{pre}tx_frames"), (x.tx_frames - tf) as f64, "frames sent from the TX ring"));
            out.push((format!("{pre}tx_doorbells"), x.tx_doorbells as f64, "TX_TAIL doorbell writes"));
            out.push((
                format!("{pre}rx_batches"),
                batches as f64,
                "RX_TAIL doorbells (after the first): non-empty polls",
            ));
            let mean = if batches > 0 { x.rx_batch_sum as f64 / batches as f64 } else { 0.0 };
            out.push((
                format!("{pre}rx_batch_mean"),
                mean,
                "mean RX batch size: descriptors re-posted per RX_TAIL doorbell",
            ));
            let max = x.rx_batch_hist.iter().rposition(|&n| n > 0).unwrap_or(0);
            out.push((format!("{pre}rx_batch_max"), max as f64, "largest RX batch (33 = more than 32)"));
        }
        for k in 0..BATCH_BUCKETS {
            let n: u64 = regs.queues.iter().map(|x| x.rx_batch_hist[k]).sum();
            let name = if k + 1 == BATCH_BUCKETS { "more".to_string() } else { k.to_string() };
            out.push((
                format!("{}rx_batch_size::{name}", self.stats_prefix),
                n as f64,
                "RX_TAIL doorbells (all queues) that re-posted this many descriptors: the RX batch size distribution",
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvsim_base::abi::DEVICE_BASE;
    use kvsim_base::abi::PAGE_SIZE;
    use kvsim_isa::trap::{Access, Trap};

    const RING: u64 = 0x10_0000;
    const BUFS: u64 = 0x10_4000;

    fn setup(nq: usize) -> (Memory, NicRegs, Nic) {
        let mut mem = Memory::new(1 << 24, false, 1);
        mem.regions.heap_start = RING;
        mem.regions.brk = RING + 256 * PAGE_SIZE;
        let ports: Vec<u64> = (0..nq as u64).map(|q| q * 2 / nq as u64).collect();
        let regs = NicRegs::new(&ports);
        let steer: Vec<usize> = (0..nq).collect();
        let nic = Nic::new(0, 2, ports, steer.iter().map(|&q| (0x4000 + q as u16, q)), 4);
        (mem, regs, nic)
    }

    fn q_addr(q: u64, r: u64) -> u64 {
        DEVICE_BASE + q * QUEUE_STRIDE + r
    }

    /// Enable queue q with 8-entry rings and post `n` RX buffers of `buf` bytes.
    fn open(regs: &mut NicRegs, mem: &mut Memory, q: u64, n: u64, buf: u16) {
        let rx = RING + q * 0x400;
        let tx = rx + 0x200;
        regs.store(q_addr(q, reg::RX_BASE), 8, rx, Access::Store).unwrap();
        regs.store(q_addr(q, reg::RX_SIZE), 8, 8, Access::Store).unwrap();
        regs.store(q_addr(q, reg::TX_BASE), 8, tx, Access::Store).unwrap();
        regs.store(q_addr(q, reg::TX_SIZE), 8, 8, Access::Store).unwrap();
        regs.store(q_addr(q, reg::CTRL), 8, 1, Access::Store).unwrap();
        for i in 0..8 {
            let mut d = (BUFS + (q * 8 + i) * 2048).to_le_bytes().to_vec();
            d.extend_from_slice(&buf.to_le_bytes());
            d.extend_from_slice(&[0; 6]);
            mem.write_bytes(0, rx + 16 * i, &d).unwrap();
        }
        regs.store(q_addr(q, reg::RX_TAIL), 8, n, Access::Store).unwrap();
    }

    fn frame(dport: u16, len: usize, fill: u8) -> Vec<u8> {
        let mut f = vec![fill; len];
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        f[14] = 0x45;
        f[23] = 17;
        f[36..38].copy_from_slice(&dport.to_be_bytes());
        f
    }

    #[test]
    fn registers_decode_and_fault_clearly() {
        let (_, mut regs, _) = setup(2);
        assert_eq!(regs.load(q_addr(1, reg::QUEUE_ID), 8, Access::Load).unwrap(), 1);
        assert_eq!(regs.load(q_addr(1, reg::PORT_ID), 8, Access::Load).unwrap(), 1);
        regs.store(q_addr(1, reg::RX_FRAMES), 8, 99, Access::Store).unwrap(); // RO: ignored
        assert_eq!(regs.load(q_addr(1, reg::RX_FRAMES), 8, Access::Load).unwrap(), 0);
        let why = |t: Trap| t.reason();
        assert!(why(regs.load(q_addr(0, reg::RX_HEAD), 4, Access::Load).unwrap_err()).contains("64-bit"));
        assert!(why(regs.load(q_addr(0, 0x88), 8, Access::Load).unwrap_err()).contains("no NIC register"));
        assert_eq!(regs.load(q_addr(0, reg::INTERFACE), 8, Access::Load).unwrap(), INTERFACE_RINGS);
        assert!(why(regs.load(q_addr(2, 0), 8, Access::Load).unwrap_err()).contains("no NIC register"));
        assert!(why(regs.store(q_addr(0, 4), 8, 0, Access::Store).unwrap_err()).contains("64-bit"));
        // a bad ring is refused when the queue is enabled
        regs.store(q_addr(0, reg::RX_SIZE), 8, 100, Access::Store).unwrap();
        assert!(why(regs.store(q_addr(0, reg::CTRL), 8, 1, Access::Store).unwrap_err()).contains("bad ring"));
    }

    #[test]
    fn steering_rings_and_dma() {
        let (mut mem, mut regs, mut nic) = setup(4); // queues 0,1 on port 0; 2,3 on port 1
        open(&mut regs, &mut mem, 1, 3, 2048);
        open(&mut regs, &mut mem, 2, 7, 100);
        // steering: UDP port 0x4001 -> queue 1 (port 0); arriving at port 1 it matches nothing there
        assert_eq!(nic.receive(&mut regs, 0, frame(0x4001, 80, 1)), Some(1));
        assert_eq!(nic.receive(&mut regs, 1, frame(0x4001, 80, 2)), None);
        assert_eq!(nic.receive(&mut regs, 0, frame(0x5000, 80, 3)), None);
        assert_eq!(nic.port_stats[1].rx_no_match, 1);
        assert_eq!(nic.port_stats[0].rx_no_match, 1);
        let mut bad = frame(0x4001, 80, 4);
        bad[23] = 1; // ICMP: no port, no filter match
        assert_eq!(nic.receive(&mut regs, 0, bad), None);
        // TCP keeps its destination port where UDP does: the filter matches it too.
        let mut tcp = frame(0x4001, 80, 4);
        tcp[23] = 6;
        assert_eq!(udp_dst_port(&tcp), Some(0x4001));
        // four more for queue 1: it has 3 descriptors, so 1 waits in the FIFO (depth 4)
        for i in 0..3 {
            assert_eq!(nic.receive(&mut regs, 0, frame(0x4001, 70 + i, 10 + i as u8)), Some(1));
        }
        assert_eq!(nic.fifo_frames(), 4);
        assert_eq!(nic.receive(&mut regs, 0, frame(0x4001, 40, 20)), None, "FIFO full: dropped");
        assert_eq!((nic.port_stats[0].rx_fifo_overflows, regs.queues[1].rx_drops), (1, 1));
        nic.deliver(&mut regs, &mut mem).unwrap();
        assert_eq!(nic.fifo_frames(), 1);
        assert_eq!((regs.queues[1].rx_head, regs.queues[1].rx_frames), (3, 3));
        let rx = RING + 0x400;
        let desc = mem.read_bytes(rx + 16, 16).unwrap();
        assert_eq!(u16::from_le_bytes([desc[10], desc[11]]), 70, "len");
        assert_eq!(u16::from_le_bytes([desc[12], desc[13]]), DD, "status");
        let buf = mem.read_bytes(BUFS + 9 * 2048, 70).unwrap();
        assert_eq!(buf, frame(0x4001, 70, 10));
        // the driver re-posts 2: the waiting frame lands; the batch histogram records 2
        regs.store(q_addr(1, reg::RX_TAIL), 8, 5, Access::Store).unwrap();
        nic.deliver(&mut regs, &mut mem).unwrap();
        assert_eq!((nic.fifo_frames(), regs.queues[1].rx_head), (0, 4));
        assert_eq!((regs.queues[1].rx_batches(), regs.queues[1].rx_batch_sum), (1, 2));
        // short frames are padded to 60; a frame longer than its buffer is dropped without using the descriptor
        assert_eq!(nic.receive(&mut regs, 1, frame(0x4002, 40, 5)), Some(2));
        assert_eq!(nic.receive(&mut regs, 1, frame(0x4002, 200, 6)), Some(2));
        nic.deliver(&mut regs, &mut mem).unwrap();
        assert_eq!((regs.queues[2].rx_head, regs.queues[2].rx_drops, regs.queues[2].rx_frames), (1, 1, 1));
        let d2 = mem.read_bytes(RING + 0x800, 16).unwrap();
        assert_eq!(u16::from_le_bytes([d2[10], d2[11]]), 60);
        // TX: two descriptors, one doorbell; frames come out in order, DD set, TX_HEAD advanced
        let tx = RING + 0x400 + 0x200;
        for (i, len) in [(0u64, 72u16), (1, 90)] {
            mem.write_bytes(0, BUFS + 0x8000 + i * 2048, &vec![i as u8 + 1; len as usize]).unwrap();
            let mut d = (BUFS + 0x8000 + i * 2048).to_le_bytes().to_vec();
            d.extend_from_slice(&len.to_le_bytes());
            d.extend_from_slice(&[0; 6]);
            mem.write_bytes(0, tx + 16 * i, &d).unwrap();
        }
        regs.store(q_addr(1, reg::TX_TAIL), 8, 2, Access::Store).unwrap();
        let mut out = Vec::new();
        nic.transmit(&mut regs, &mut mem, &mut out).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].0, out[0].1.len(), out[1].1[0]), (1, 72, 2));
        assert_eq!((regs.queues[1].tx_head, regs.queues[1].tx_frames), (2, 2));
        assert_eq!(u16::from_le_bytes(mem.read_bytes(tx + 16 + 12, 2).unwrap().try_into().unwrap()), DD);
        // a DMA to an unmapped buffer is a clear fault, not a panic
        mem.write_bytes(0, RING + 0x800 + 16, &0x7000_0000u64.to_le_bytes()).unwrap();
        assert_eq!(nic.receive(&mut regs, 1, frame(0x4002, 64, 7)), Some(2));
        let err = nic.deliver(&mut regs, &mut mem).unwrap_err();
        assert_eq!((err.queue, err.what), (2, "writing a frame into an RX buffer"));
    }

    #[test]
    fn tx_completion_mode_is_reported_and_a_driver_that_ignores_it_faults() {
        let why = |t: Trap| t.reason();
        let (mut mem, mut regs, _) = setup(1);
        assert_eq!(regs.load(q_addr(0, reg::TX_COMPLETION), 8, Access::Load).unwrap(), TX_COMPLETION_DESCRIPTOR);
        open(&mut regs, &mut mem, 0, 4, 2048); // descriptor mode: no TX_HEAD_WB needed
        regs.store(q_addr(0, reg::TX_HEAD_WB), 8, 0x20_0000 | TX_HEAD_WB_ENABLE, Access::Store).unwrap();
        assert!(why(regs.store(q_addr(0, reg::CTRL), 8, 1, Access::Store).unwrap_err()).contains("by DD bits"));
        let (_, regs, _) = setup(1);
        let mut regs = regs.with_tx_completion(TX_COMPLETION_HEAD_POINTER);
        assert_eq!(regs.load(q_addr(0, reg::TX_COMPLETION), 8, Access::Load).unwrap(), TX_COMPLETION_HEAD_POINTER);
        regs.store(q_addr(0, reg::TX_COMPLETION), 8, 0, Access::Store).unwrap(); // RO: ignored
        assert_eq!(regs.load(q_addr(0, reg::TX_COMPLETION), 8, Access::Load).unwrap(), TX_COMPLETION_HEAD_POINTER);
        for (r, v) in [(reg::RX_BASE, RING), (reg::RX_SIZE, 8), (reg::TX_BASE, RING + 0x200), (reg::TX_SIZE, 8)] {
            regs.store(q_addr(0, r), 8, v, Access::Store).unwrap();
        }
        // Not registered, registered without the enable bit, or not 4-byte aligned: the queue does not start.
        for wb in [0, 0x20_0000, 0x20_0002 | TX_HEAD_WB_ENABLE] {
            regs.store(q_addr(0, reg::TX_HEAD_WB), 8, wb, Access::Store).unwrap();
            let err = regs.store(q_addr(0, reg::CTRL), 8, 1, Access::Store).unwrap_err();
            assert!(why(err).contains("head pointer"), "TX_HEAD_WB = {wb:#x}");
            assert!(!regs.queues[0].enabled);
        }
        regs.store(q_addr(0, reg::TX_HEAD_WB), 8, 0x20_0004 | TX_HEAD_WB_ENABLE, Access::Store).unwrap();
        regs.store(q_addr(0, reg::CTRL), 8, 1, Access::Store).unwrap();
        assert_eq!(regs.load(q_addr(0, reg::TX_HEAD_WB), 8, Access::Load).unwrap(), 0x20_0005);
        assert_eq!(regs.queues[0].tx_head_wb_addr, 0x20_0004);
    }

    #[test]
    fn functional_tx_completes_by_head_pointer_without_dd_bits() {
        let (mut mem, regs, mut nic) = setup(2);
        let mut regs = regs.with_tx_completion(TX_COMPLETION_HEAD_POINTER);
        let hwb = RING + 0x1000;
        mem.write_bytes(0, hwb, &0xdead_beefu32.to_le_bytes()).unwrap();
        regs.store(q_addr(1, reg::TX_HEAD_WB), 8, hwb | TX_HEAD_WB_ENABLE, Access::Store).unwrap();
        open(&mut regs, &mut mem, 1, 0, 2048);
        let tx = RING + 0x400 + 0x200;
        for i in 0..3u64 {
            mem.write_bytes(0, BUFS + 0x8000 + i * 2048, &[i as u8; 64]).unwrap();
            let mut d = (BUFS + 0x8000 + i * 2048).to_le_bytes().to_vec();
            d.extend_from_slice(&64u16.to_le_bytes());
            d.extend_from_slice(&[0; 6]);
            mem.write_bytes(0, tx + 16 * i, &d).unwrap();
        }
        let head = |mem: &mut Memory| u32::from_le_bytes(mem.read_bytes(hwb, 4).unwrap().try_into().unwrap());
        let mut out = Vec::new();
        nic.transmit(&mut regs, &mut mem, &mut out).unwrap();
        assert_eq!((out.len(), head(&mut mem)), (0, 0xdead_beef), "nothing sent, nothing written");
        regs.store(q_addr(1, reg::TX_TAIL), 8, 2, Access::Store).unwrap();
        nic.transmit(&mut regs, &mut mem, &mut out).unwrap();
        assert_eq!((out.len(), head(&mut mem)), (2, 2));
        regs.store(q_addr(1, reg::TX_TAIL), 8, 3, Access::Store).unwrap();
        nic.transmit(&mut regs, &mut mem, &mut out).unwrap();
        assert_eq!((out.len(), head(&mut mem)), (3, 3));
        for i in 0..3 {
            assert_eq!(u16::from_le_bytes(mem.read_bytes(tx + 16 * i + 12, 2).unwrap().try_into().unwrap()), 0);
        }
        // A head write-back address that is not mapped is a clear fault.
        regs.queues[1].tx_head_wb_addr = 0x7000_0000;
        regs.store(q_addr(1, reg::TX_TAIL), 8, 4, Access::Store).unwrap();
        let err = nic.transmit(&mut regs, &mut mem, &mut out).unwrap_err();
        assert_eq!((err.queue, err.what), (1, "writing the TX head write-back"));
    }

    #[test]
    fn disabled_queues_hold_frames_and_ctrl_resets_indices() {
        let (mut mem, mut regs, mut nic) = setup(2);
        assert_eq!(nic.receive(&mut regs, 0, frame(0x4000, 64, 1)), Some(0));
        nic.deliver(&mut regs, &mut mem).unwrap();
        assert_eq!(nic.fifo_frames(), 1, "queue 0 is not enabled yet");
        open(&mut regs, &mut mem, 0, 4, 2048);
        nic.deliver(&mut regs, &mut mem).unwrap();
        assert_eq!((nic.fifo_frames(), regs.queues[0].rx_head), (0, 1));
        regs.store(q_addr(0, reg::CTRL), 8, 1, Access::Store).unwrap();
        assert_eq!((regs.queues[0].rx_head, regs.queues[0].rx_tail), (0, 0));
        assert!(regs.store(q_addr(0, reg::RX_TAIL), 8, 8, Access::Store).is_err(), "tail outside the ring");
    }

    #[test]
    fn a_skipped_delivery_leaves_the_state_a_full_pass_would() {
        // The same frames, re-posts and deliveries on two NICs: `deliver` (which skips a pass that can move
        // nothing) and the pass itself every time. Queues 0, 1 on port 0, 2, 3 on port 1; 4-frame FIFOs, so
        // frames wait for descriptors and some are dropped.
        let (mut mem_a, mut regs_a, mut nic_a) = setup(4);
        let (mut mem_b, mut regs_b, mut nic_b) = setup(4);
        for q in 0..4 {
            open(&mut regs_a, &mut mem_a, q, 2, 2048);
            open(&mut regs_b, &mut mem_b, q, 2, 2048);
        }
        let mut s = 0x1234_5678_9abc_def0u64;
        let (mut skipped, mut moved) = (0, 0);
        for step in 0..4000u32 {
            let r = kvsim_base::random::splitmix64(&mut s);
            let q = (r % 4) as u64;
            match (r >> 8) % 8 {
                0..=2 => {
                    let f = frame(0x4000 + q as u16, 60 + (r >> 16) as usize % 64, step as u8);
                    let port = (q / 2) as usize;
                    assert_eq!(nic_a.receive(&mut regs_a, port, f.clone()), nic_b.receive(&mut regs_b, port, f));
                }
                3 => {
                    // The driver hands back every descriptor it has read (tail just behind head).
                    let tail = (regs_a.queues[q as usize].rx_head + 7) % 8;
                    regs_a.store(q_addr(q, reg::RX_TAIL), 8, tail, Access::Store).unwrap();
                    regs_b.store(q_addr(q, reg::RX_TAIL), 8, tail, Access::Store).unwrap();
                }
                _ => {
                    let before = nic_a.fifo_frames();
                    let would_skip = nic_a.rx_stuck_at == Some((regs_a.stores, regs_a.rx_landed, nic_a.admitted));
                    nic_a.deliver(&mut regs_a, &mut mem_a).unwrap();
                    nic_b.drain(&mut regs_b, &mut mem_b, u64::MAX, None).unwrap();
                    skipped += would_skip as u32;
                    moved += (nic_a.fifo_frames() < before) as u32;
                }
            }
            assert_eq!(nic_a.fifo_frames(), nic_b.fifo_frames(), "step {step}");
            for (a, b) in regs_a.queues.iter().zip(&regs_b.queues) {
                let key = |x: &QueueRegs| (x.rx_head, x.rx_tail, x.rx_frames, x.rx_drops);
                assert_eq!(key(a), key(b), "step {step}");
            }
        }
        assert!(skipped > 100 && moved > 100, "both kinds of delivery happen: {skipped} skipped, {moved} moved");
        for q in 0..4u64 {
            let (rx, bufs) = (RING + q * 0x400, BUFS + q * 8 * 2048);
            assert_eq!(mem_a.read_bytes(rx, 128).unwrap(), mem_b.read_bytes(rx, 128).unwrap(), "queue {q}'s ring");
            assert_eq!(mem_a.read_bytes(bufs, 8 * 2048).unwrap(), mem_b.read_bytes(bufs, 8 * 2048).unwrap());
        }
    }
}
