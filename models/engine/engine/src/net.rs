//! The network side of a machine: its NICs and the ghost client, stepped between scheduling quanta: each NIC
//! sends what its TX rings hold to the client, the client checks it and sends new frames to the port of each
//! request's partition, and each NIC moves frames from its RX FIFOs into its RX rings.

use kvsim_base::error::SimError;
use kvsim_client::{Client, ClientConfig, ClientEvent, NicPort};
use kvsim_devices::bus::{AgentPort, DeviceBus};
use kvsim_devices::nic::{DmaFault, Nic, NicRegs, QueueRegs};
use kvsim_isa::memory::Memory;

/// What the machine should do after a network step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetEvent {
    Nothing,
    /// The client's bulk load is over, nothing in flight (a checkpoint may be taken).
    Loaded,
    MeasureStart,
    ClientDone,
}

pub struct Net {
    /// NIC k of the system (`System.nics[k]`); its registers are `DeviceBus::nics[k]`.
    pub nics: Vec<Nic>,
    pub client: Option<Client>,
    /// Queue of each hart (None: it owns none) and port of each queue, numbered over all NICs (NIC 0's first).
    pub hart_queue: Vec<Option<usize>>,
    pub queue_port: Vec<u64>,
    /// Global queue -> (NIC, queue in it); global port -> (NIC, port in it); NIC k's queues in global numbers.
    pub queue_at: Vec<(usize, usize)>,
    pub port_at: Vec<(usize, usize)>,
    pub nic_queues: Vec<Vec<usize>>,
    /// NIC k's queue l -> the hart owning it (its DMA is done for that hart's core), None when no hart does.
    pub nic_queue_owner: Vec<Vec<Option<usize>>>,
    /// Bytes of each NIC's buffer SRAM (`Nic.sram_size`; 0: none).
    pub sram: Vec<u64>,
    /// Instructions (all harts) when the measured phase started.
    pub measure_insts: Option<u64>,
    /// NIC k's queues as a run of global queues (first, count) when they are one (the usual case): a timed step
    /// then hands the NIC its slice of the queue times instead of a copy.
    nic_queue_run: Vec<Option<(usize, usize)>>,
    /// Buffers a step reuses (each turn's step would otherwise allocate them): the queue times the scheduler
    /// fills, a NIC's queue times when its queues are not one run, and a NIC's sent frames.
    pub(crate) queue_time_buf: Vec<u64>,
    times_buf: Vec<u64>,
    out_buf: Vec<(usize, Vec<u8>, u64)>,
}

/// The NICs as the client sees them: ports and queues in global numbers (NIC 0's first).
pub struct Nics<'a> {
    pub nics: &'a mut [Nic],
    pub regs: &'a mut [NicRegs],
    pub queue_at: &'a [(usize, usize)],
    pub port_at: &'a [(usize, usize)],
}

impl NicPort for Nics<'_> {
    /// Put a frame on global port `port`'s wire at `t` (detailed timing); returns when it starts. Behind a KVD
    /// switch the frame crosses the switch's uplink and the switch first (devices: kvd_switch.rs).
    fn wire_send(&mut self, port: usize, frame: Vec<u8>, t: u64) -> u64 {
        let (k, p) = self.port_at[port];
        self.nics[k].arrive_from_network(p, frame, t)
    }

    /// A frame arrives at global port `port` (functional): the queue in its NIC, or None if dropped.
    fn receive(&mut self, port: usize, frame: Vec<u8>) -> Option<usize> {
        let (k, p) = self.port_at[port];
        self.nics[k].receive(&mut self.regs[k], p, frame)
    }

    fn rx_posted(&self, q: usize) -> bool {
        let x = self.queue(q);
        x.enabled && x.rx_tail != 0
    }

    fn queue_drained(&self, q: usize) -> bool {
        let x = self.queue(q);
        x.rx_free() + 1 == x.rx_ring.1 && x.tx_head == x.tx_tail
    }

    fn fifo_frames(&self) -> usize {
        self.nics.iter().map(|n| n.fifo_frames()).sum()
    }

    fn frames_in_flight(&self) -> usize {
        self.nics.iter().map(|n| n.frames_in_flight()).sum()
    }
}

impl Nics<'_> {
    /// The registers of global queue q.
    pub fn queue(&self, q: usize) -> &QueueRegs {
        let (k, l) = self.queue_at[q];
        &self.regs[k].queues[l]
    }
}

/// Simulated time for a step in detailed timing.
pub struct TimedStep<'a> {
    /// The least time of the live harts (ps): events up to it happen.
    pub now: u64,
    /// Per queue: the time of the hart that owns it (its doorbells rang by then).
    pub queue_time: &'a [u64],
    /// The memory system's I/O path (each NIC reaches it through its own `AgentPort`).
    pub io: kvsim_devices::nic::timing::IoFn<'a>,
}

pub enum StepError {
    Dma(DmaFault),
    Client(String),
}

impl Net {
    /// Build the NICs (and the client, if enabled) for `harts` harts; returns the device bus with their registers.
    ///
    /// Queues: when every NIC has `queues` = 0 there is one queue per hart, spread over all ports (NIC 0's ports
    /// first) in contiguous blocks: the paper's core-to-port mapping; otherwise each NIC has its own `queues`,
    /// spread over its ports. Hart h owns global queue h; the client steers core c's requests to UDP port
    /// `steering_base_port + c`, which the NIC holding core c's queue matches.
    pub fn new(
        nics: &[kvsim_params::Nic],
        client: Option<&kvsim_params::Client>,
        harts: usize,
        argv: &[String],
    ) -> Result<(Net, DeviceBus), SimError> {
        let cfg = |m: String| SimError::Config(m);
        if nics.is_empty() || nics.len() as u64 > kvsim_devices::bus::MAX_NICS {
            return Err(cfg(format!(
                "System.nics: {} NICs; the device range holds 1..={}",
                nics.len(),
                kvsim_devices::bus::MAX_NICS
            )));
        }
        let ports: Vec<usize> = nics.iter().map(|n| n.ports.max(1) as usize).collect();
        let first_port: Vec<usize> = ports
            .iter()
            .scan(0, |acc, &p| {
                let f = *acc;
                *acc += p;
                Some(f)
            })
            .collect();
        let total_ports: usize = ports.iter().sum();
        // (NIC, local port) of every global queue, in global order.
        let mut queue_nic_port: Vec<(usize, usize)> = Vec::new();
        if nics.iter().all(|n| n.queues == 0) {
            if total_ports > harts {
                return Err(cfg(format!("System.nics: {total_ports} ports but only {harts} queues (one per hart)")));
            }
            for q in 0..harts {
                let gp = q * total_ports / harts;
                let k = first_port.iter().rposition(|&f| f <= gp).unwrap_or(0);
                queue_nic_port.push((k, gp - first_port[k]));
            }
        } else if nics.iter().all(|n| n.queues > 0) {
            for (k, n) in nics.iter().enumerate() {
                let nq = n.queues as usize;
                if nq < ports[k] {
                    return Err(cfg(format!("System.nics[{k}]: {} ports but only {nq} queues", ports[k])));
                }
                queue_nic_port.extend((0..nq).map(|l| (k, l * ports[k] / nq)));
            }
        } else {
            return Err(cfg("System.nics: give every NIC its queues, or none (one queue per hart)".into()));
        }
        let mut nic_queues: Vec<Vec<usize>> = vec![Vec::new(); nics.len()];
        let mut queue_at = Vec::new();
        for (g, &(k, _)) in queue_nic_port.iter().enumerate() {
            queue_at.push((k, nic_queues[k].len()));
            nic_queues[k].push(g);
        }
        if let Some(k) = (0..nics.len()).find(|&k| nic_queues[k].len() as u64 > kvsim_devices::nic::MAX_QUEUES) {
            return Err(cfg(format!("System.nics[{k}]: {} queues; a NIC holds 1..=1024", nic_queues[k].len())));
        }
        let port_at: Vec<(usize, usize)> = (0..nics.len()).flat_map(|k| (0..ports[k]).map(move |p| (k, p))).collect();
        let queue_port: Vec<u64> = queue_nic_port.iter().map(|&(k, p)| (first_port[k] + p) as u64).collect();
        let nq = queue_port.len();
        let hart_queue: Vec<Option<usize>> = (0..harts).map(|h| (h < nq).then_some(h)).collect();
        let steer: Vec<usize> = hart_queue.iter().flatten().copied().collect();
        let base =
            u16::try_from(nics[0].steering_base_port).map_err(|_| cfg("Nic.steering_base_port > 65535".into()))?;
        if nics.iter().any(|n| n.steering_base_port != nics[0].steering_base_port) {
            return Err(cfg("System.nics: every NIC needs the same steering_base_port (the client uses one)".into()));
        }
        let mut models = Vec::new();
        let mut bus = DeviceBus::default();
        for (k, n) in nics.iter().enumerate() {
            let local_port: Vec<u64> = nic_queues[k].iter().map(|&g| queue_nic_port[g].1 as u64).collect();
            let table = steer
                .iter()
                .enumerate()
                .filter(|&(_, &g)| queue_at[g].0 == k)
                .map(|(c, &g)| (base.wrapping_add(c as u16), queue_at[g].1));
            let mut model = Nic::new(k, ports[k], local_port.clone(), table, n.rx_fifo_frames.max(1) as usize);
            model.agent = harts + k;
            model.timing = Some(kvsim_devices::nic::timing::NicTiming::new(n, ports[k], local_port.len()));
            model.switch = kvsim_devices::kvd_switch::KvdSwitch::new(&n.switch, ports[k]);
            let interface = match n.interface {
                kvsim_params::NicInterface::Rings => kvsim_devices::nic::INTERFACE_RINGS,
                kvsim_params::NicInterface::ZeroCopy => {
                    // Each queue's frames go into its owning core's caches: every queue needs a hart.
                    if let Some(&g) = nic_queues[k].iter().find(|&&g| g >= harts) {
                        return Err(cfg(format!(
                            "System.nics[{k}]: Nic.interface = 'zero_copy' writes each queue's frames into its \
                             core's caches, but queue {g} has no hart ({harts} harts)"
                        )));
                    }
                    model.zero_copy =
                        Some(kvsim_devices::nic::zero_copy::ZeroCopy::new(nic_queues[k].clone(), ports[k]));
                    kvsim_devices::nic::INTERFACE_ZERO_COPY
                }
            };
            models.push(model);
            let mode = match n.tx_completion {
                kvsim_params::NicTxCompletion::Descriptor => kvsim_devices::nic::TX_COMPLETION_DESCRIPTOR,
                kvsim_params::NicTxCompletion::HeadPointer => kvsim_devices::nic::TX_COMPLETION_HEAD_POINTER,
                kvsim_params::NicTxCompletion::ReportStatus => kvsim_devices::nic::TX_COMPLETION_REPORT_STATUS,
            };
            bus.nics.push(
                NicRegs::at(kvsim_devices::bus::nic_base(k), &local_port)
                    .with_tx_completion(mode)
                    .with_interface(interface),
            );
        }
        let client = match client {
            Some(p) => {
                if steer.len() < harts {
                    return Err(cfg(format!(
                        "the ghost client needs a NIC queue for every hart: {harts} harts, {nq} queues"
                    )));
                }
                let qp = queue_port.iter().map(|&p| p as usize).collect();
                Some(Client::new(ClientConfig::resolve(p, argv, harts, base, steer.clone(), qp).map_err(cfg)?))
            }
            None => None,
        };
        // The first hart owning each global queue (hart h owns queue h), by NIC and queue in it.
        let mut owner = vec![None; nq];
        for (h, q) in hart_queue.iter().enumerate().rev() {
            if let Some(o) = q.and_then(|q| owner.get_mut(q)) {
                *o = Some(h);
            }
        }
        let nic_queue_owner = nic_queues.iter().map(|g| g.iter().map(|&g| owner[g]).collect()).collect();
        let nic_queue_run = nic_queues
            .iter()
            .map(|g| {
                let first = g.first().copied().unwrap_or(0);
                g.iter().enumerate().all(|(i, &q)| q == first + i).then_some((first, g.len()))
            })
            .collect();
        let sram = nics.iter().map(|n| n.sram_size).collect();
        let net = Net {
            nics: models,
            client,
            hart_queue,
            queue_port,
            queue_at,
            port_at,
            nic_queues,
            nic_queue_owner,
            sram,
            measure_insts: None,
            nic_queue_run,
            queue_time_buf: Vec::new(),
            times_buf: Vec::new(),
            out_buf: Vec::new(),
        };
        Ok((net, bus))
    }

    /// Every NIC has its timing side (detailed timing may drive it).
    pub fn timed(&self) -> bool {
        self.nics.iter().all(|n| n.timing.is_some())
    }

    /// Does the next timed step read `TimedStep::queue_time` (some NIC's TX or RX doorbell pass would run, or a
    /// NIC is zero-copy)? When not, the scheduler need not work the times out: the step does not look at them.
    pub fn needs_queue_times(&self, bus: &DeviceBus) -> bool {
        self.nics.iter().zip(&bus.nics).any(|(nic, regs)| nic.needs_queue_times(regs))
    }

    /// Queue q's slice of its NIC's buffer SRAM: (base, bytes), (0, 0) without one.
    pub fn queue_sram(&self, q: usize) -> Option<(u64, u64)> {
        let &(k, l) = self.queue_at.get(q)?;
        Some(kvsim_devices::mac_sram::queue_slice(k, l, self.nic_queues[k].len(), self.sram[k]))
    }

    /// Address of global queue q's registers.
    pub fn queue_regs(&self, q: usize) -> Option<u64> {
        let &(k, l) = self.queue_at.get(q)?;
        Some(kvsim_devices::bus::nic_base(k) + l as u64 * kvsim_devices::nic::QUEUE_STRIDE)
    }

    /// One step between quanta.
    pub fn step(
        &mut self,
        mem: &mut Memory,
        total_insts: u64,
        clock: Option<TimedStep>,
    ) -> Result<NetEvent, StepError> {
        let mut bus = DeviceBus::take(mem).expect("a machine with a NIC has its device bus");
        let r = self.step_with(&mut bus, mem, total_insts, clock);
        bus.put_back(mem);
        r
    }

    fn step_with(
        &mut self,
        bus: &mut DeviceBus,
        mem: &mut Memory,
        total_insts: u64,
        mut clock: Option<TimedStep>,
    ) -> Result<NetEvent, StepError> {
        let mut sent = Vec::new();
        let mut out = std::mem::take(&mut self.out_buf);
        for (k, nic) in self.nics.iter_mut().enumerate() {
            let global = &self.nic_queues[k];
            let dma = |f: DmaFault| StepError::Dma(DmaFault { queue: global[f.queue], ..f });
            out.clear();
            match clock.as_mut() {
                Some(c) if nic.zero_copy.is_some() => {
                    let times = nic_times(self.nic_queue_run[k], global, c.queue_time, &mut self.times_buf);
                    let queue_owner = &self.nic_queue_owner[k];
                    let mut port = AgentPort { agent: nic.agent, queue_owner, memory: &mut *c.io };
                    let timed: (&[u64], kvsim_devices::nic::timing::IoFn) = (times, &mut port);
                    nic.transmit_zero_copy(&mut bus.nics[k], mem, Some(timed), &mut out).map_err(dma)?;
                }
                None if nic.zero_copy.is_some() => {
                    nic.transmit_zero_copy(&mut bus.nics[k], mem, None, &mut out).map_err(dma)?;
                }
                Some(c) => {
                    let times = nic_times(self.nic_queue_run[k], global, c.queue_time, &mut self.times_buf);
                    let queue_owner = &self.nic_queue_owner[k];
                    let mut port = AgentPort { agent: nic.agent, queue_owner, memory: &mut *c.io };
                    nic.transmit_timed(&mut bus.nics[k], mem, times, &mut port, &mut out).map_err(dma)?;
                }
                None => {
                    let mut plain = Vec::new();
                    nic.transmit(&mut bus.nics[k], mem, &mut plain).map_err(dma)?;
                    out.extend(plain.into_iter().map(|(q, f)| (q, f, 0)));
                }
            }
            if clock.is_some() {
                nic.forward_to_network(&bus.nics[k], &mut out);
            }
            sent.extend(out.drain(..).map(|(q, f, t)| (global[q], f, t)));
        }
        self.out_buf = out;
        let now = clock.as_ref().map(|c| c.now);
        let mut event = NetEvent::Nothing;
        if let Some(c) = self.client.as_mut() {
            let mut dropped = Vec::new();
            for nic in &mut self.nics {
                if let Some(t) = nic.timing.as_mut() {
                    dropped.append(&mut t.dropped);
                }
            }
            let mut nics =
                Nics { nics: &mut self.nics, regs: &mut bus.nics, queue_at: &self.queue_at, port_at: &self.port_at };
            match c.step(&mut nics, sent, dropped, total_insts, now).map_err(StepError::Client)? {
                ClientEvent::Nothing => {}
                ClientEvent::Loaded => event = NetEvent::Loaded,
                ClientEvent::MeasureStart => {
                    c.reset_stats();
                    for (nic, regs) in self.nics.iter_mut().zip(bus.nics.iter_mut()) {
                        nic.reset_stats(regs);
                    }
                    self.measure_insts = Some(total_insts);
                    event = NetEvent::MeasureStart;
                }
                ClientEvent::Done => event = NetEvent::ClientDone,
            }
        }
        for (k, nic) in self.nics.iter_mut().enumerate() {
            let global = &self.nic_queues[k];
            let dma = |f: DmaFault| StepError::Dma(DmaFault { queue: global[f.queue], ..f });
            match clock.as_mut() {
                Some(c) => {
                    if let Some(t) = nic.timing.as_mut() {
                        let times = nic_times(self.nic_queue_run[k], global, c.queue_time, &mut self.times_buf);
                        t.note_rx_doorbells(&bus.nics[k], times);
                    }
                    let queue_owner = &self.nic_queue_owner[k];
                    let mut port = AgentPort { agent: nic.agent, queue_owner, memory: &mut *c.io };
                    nic.advance(&mut bus.nics[k], mem, c.now, &mut port).map_err(dma)?;
                    nic.publish_zero_copy(mem, c.now).map_err(dma)?;
                }
                None => nic.deliver(&mut bus.nics[k], mem).map_err(dma)?,
            }
        }
        Ok(event)
    }

    /// Statistics of the NICs and the client; `measured_insts` is the instruction count of the measured phase,
    /// `poll_insts` (when the server marks its polls) the instructions of its polls that found frames and of those
    /// that found none.
    pub fn stats(
        &self,
        bus: &DeviceBus,
        measured_insts: u64,
        poll_insts: Option<(u64, u64)>,
    ) -> Vec<(String, f64, &'static str)> {
        let mut out = Vec::new();
        for (nic, regs) in self.nics.iter().zip(&bus.nics) {
            out.extend(nic.stats(regs));
            nic.parts_stats(&mut out);
        }
        if let Some(c) = &self.client {
            out.extend(c.stats());
            let req = c.stats.requests;
            let per = if req > 0 { measured_insts as f64 / req as f64 } else { 0.0 };
            out.push((
                kvsim_params::paths::client() + "insts_per_request",
                per,
                "instructions of all harts in the measured phase per measured request (idle polling included; \
                 run with get_ratio 1.0 or 0.0 for GETs or PUTs alone)",
            ));
            if let (Some((busy, idle)), true) = (poll_insts, req > 0) {
                out.push((
                    kvsim_params::paths::client() + "insts_per_request_work",
                    busy as f64 / req as f64,
                    "instructions of the server's polls that found frames (receiving, processing and answering \
                     them) per measured request (the server's poll-end hints, workloads/ABI.md)",
                ));
                out.push((
                    kvsim_params::paths::client() + "insts_per_request_idle",
                    idle as f64 / req as f64,
                    "instructions of the server's polls that found no frame (idle polling) per measured request",
                ));
            }
        }
        out
    }
}

/// The times of a NIC's queues (its `global` queue numbers) out of every queue's `queue_time`: the slice of its run
/// (`run`: first global queue and count) when its queues are one, else a copy in `buf`.
fn nic_times<'t>(
    run: Option<(usize, usize)>,
    global: &[usize],
    queue_time: &'t [u64],
    buf: &'t mut Vec<u64>,
) -> &'t [u64] {
    match run {
        Some((first, n)) => &queue_time[first..first + n],
        None => {
            buf.clear();
            buf.extend(global.iter().map(|&g| queue_time[g]));
            buf
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvsim_base::abi::PAGE_SIZE;
    use kvsim_devices::nic::reg;
    use kvsim_isa::mmio::Mmio;
    use kvsim_isa::trap::Access;

    const MEM: u64 = 0x10_0000;
    const RING: u64 = 4096;

    fn params(gbps: f64) -> kvsim_params::Nic {
        kvsim_params::Nic {
            enabled: true,
            port_gbps: gbps,
            pcie_gen: 4,
            pcie_lanes: 8,
            pcie_latency: 400_000,
            mmio_latency: 100_000,
            ..Default::default()
        }
    }

    /// A frame to UDP port `dport`, 88 bytes, its last byte `tag`.
    fn frame(dport: u16, tag: u8) -> Vec<u8> {
        let mut f = vec![0u8; 88];
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        f[14] = 0x45;
        f[23] = 17;
        f[36..38].copy_from_slice(&dport.to_be_bytes());
        f[87] = tag;
        f
    }

    #[test]
    fn two_nics_steer_and_deliver_independently_each_at_its_own_line_rate() {
        // NIC 0: one 10 GbE port; NIC 1: one 40 GbE port. Two harts: queue 0 (core 0) on NIC 0, queue 1 on NIC 1.
        let (mut net, mut bus) = Net::new(&[params(10.0), params(40.0)], None, 2, &[]).unwrap();
        assert_eq!((net.queue_port.clone(), net.queue_at.clone()), (vec![0, 1], vec![(0, 0), (1, 0)]));
        let mut mem = Memory::new(1 << 28, false, 2);
        mem.regions.heap_start = MEM;
        mem.regions.brk = MEM + 2 * (RING * 16 + RING * 256) + PAGE_SIZE;
        for q in 0..2u64 {
            let regs = net.queue_regs(q as usize).unwrap();
            assert_eq!(regs, kvsim_devices::bus::nic_base(q as usize), "each NIC's first queue at its window's base");
            let ring = MEM + q * (RING * 16 + RING * 256);
            let bufs = ring + RING * 16;
            for i in 0..RING {
                let mut d = (bufs + i * 256).to_le_bytes().to_vec();
                d.extend_from_slice(&256u16.to_le_bytes());
                d.extend_from_slice(&[0; 6]);
                mem.write_bytes(0, ring + 16 * i, &d).unwrap();
            }
            for (r, v) in [(reg::RX_BASE, ring), (reg::RX_SIZE, RING), (reg::TX_BASE, ring), (reg::TX_SIZE, 8)] {
                bus.store(regs + r, 8, v, Access::Store).unwrap();
            }
            bus.store(regs + reg::CTRL, 8, 1, Access::Store).unwrap();
            bus.store(regs + reg::RX_TAIL, 8, RING - 1, Access::Store).unwrap();
        }
        // 2000 frames for each core's port at once, far faster than either line rate; and one frame for core 1
        // sent to NIC 0's port, which NIC 0's table does not match (each NIC steers only its own queues).
        let n = 2000u64;
        {
            let mut nics =
                Nics { nics: &mut net.nics, regs: &mut bus.nics, queue_at: &net.queue_at, port_at: &net.port_at };
            for i in 0..n {
                nics.wire_send(0, frame(0x4000, i as u8), 0);
                nics.wire_send(1, frame(0x4001, i as u8), 0);
            }
            nics.wire_send(0, frame(0x4001, 0xee), 0);
        }
        mem.devices = Some(Box::new(bus));
        let mut io = |_: u64, _: bool, t: u64| t;
        let clock = TimedStep { now: 1_000_000_000, queue_time: &[0, 0], io: &mut io };
        assert!(matches!(net.step(&mut mem, 0, Some(clock)), Ok(NetEvent::Nothing)));
        let bus = DeviceBus::take(&mut mem).unwrap();
        assert_eq!((bus.nics[0].queues[0].rx_frames, bus.nics[1].queues[0].rx_frames), (n, n));
        assert_eq!((net.nics[0].port_stats[0].rx_no_match, net.nics[1].port_stats[0].rx_no_match), (1, 0));
        // Each queue's last frame landed in its own ring (the frames carry their index in their last byte).
        let ring1 = MEM + (RING * 16 + RING * 256);
        let last = mem.read_bytes(ring1 + RING * 16 + (n - 1) * 256, 88).unwrap();
        assert_eq!(last, frame(0x4001, (n - 1) as u8));
        let stats = net.stats(&bus, 0, None);
        let get = |k: &str| stats.iter().find(|s| s.0 == k).unwrap_or_else(|| panic!("no stat {k}")).1;
        // Line rate with 88-byte frames: 10 (40) Gbit/s / 8 / (88 + 24) bytes.
        // Exact up to the last bit of the floating-point division.
        let exact = |got: f64, want: f64| assert!((got - want).abs() <= want * 1e-15, "{got} vs {want}");
        exact(get("system.nic0.port0.rx_frames_per_s"), 10e9 / 8.0 / 112.0);
        exact(get("system.nic1.port0.rx_frames_per_s"), 40e9 / 8.0 / 112.0);
        assert_eq!(get("system.nic1.queue0.rx_frames"), n as f64);
        assert!(get("system.nic1.pcie.up_bytes") > 0.0 && get("system.nic0.pcie.up_bytes") > 0.0);
    }

    #[test]
    fn queues_spread_over_all_nics_ports_in_blocks() {
        // 6 harts over NICs of 1 and 2 ports: 3 ports in all, two queues each.
        let mut two = params(10.0);
        two.ports = 2;
        let (net, bus) = Net::new(&[params(10.0), two.clone()], None, 6, &[]).unwrap();
        assert_eq!(net.queue_port, vec![0, 0, 1, 1, 2, 2]);
        assert_eq!(net.queue_at, vec![(0, 0), (0, 1), (1, 0), (1, 1), (1, 2), (1, 3)]);
        assert_eq!(bus.nics[1].queues.iter().map(|q| q.port).collect::<Vec<_>>(), vec![0, 0, 1, 1]);
        assert_eq!(net.nics[1].steering.get(&0x4005), Some(&3));
        assert_eq!(net.nics[0].steering.get(&0x4005), None);
        assert_eq!((net.nics[0].agent, net.nics[1].agent), (6, 7), "DMA agent ids follow the cores'");
        assert!(Net::new(&[params(10.0), two.clone()], None, 2, &[]).is_err(), "3 ports, 2 queues");
        // Each NIC's queues are one run of global queues: a timed step hands it its slice of the queue times.
        assert_eq!(net.nic_queue_run, vec![Some((0, 2)), Some((2, 4))]);
        let times = [10, 11, 12, 13, 14, 15];
        let mut buf = Vec::new();
        assert_eq!(nic_times(net.nic_queue_run[1], &net.nic_queues[1], &times, &mut buf), &[12, 13, 14, 15]);
        assert_eq!(nic_times(None, &[4, 1], &times, &mut buf), &[14, 11], "queues out of order: copied");
    }

    /// A DMA port that records every access: (agent, owning hart, address, write).
    #[derive(Default)]
    struct Recorder(Vec<(usize, Option<usize>, u64, bool)>);

    impl kvsim_devices::dma::DmaPort for Recorder {
        fn agent(&self) -> usize {
            usize::MAX
        }
        fn access_as(&mut self, agent: usize, owner: Option<usize>, addr: u64, write: bool, t: u64) -> u64 {
            self.0.push((agent, owner, addr, write));
            t
        }
    }

    #[test]
    fn every_dma_of_a_queue_is_done_for_the_hart_owning_the_queue() {
        // One NIC with one port and four harts: hart q owns queue q. Queue q's RX ring, RX buffers, TX ring and
        // TX buffer are in region q. Each queue receives one frame and sends one.
        const SLOTS: u64 = 16;
        const REGION: u64 = SLOTS * 16 + SLOTS * 256 + 8 * 16 + 256;
        let harts = 4;
        let (mut net, mut bus) = Net::new(&[params(10.0)], None, harts, &[]).unwrap();
        assert_eq!(net.nic_queue_owner, vec![vec![Some(0), Some(1), Some(2), Some(3)]]);
        let mut mem = Memory::new(1 << 28, false, harts);
        mem.regions.heap_start = MEM;
        mem.regions.brk = MEM + harts as u64 * REGION + PAGE_SIZE;
        for q in 0..harts as u64 {
            let regs = net.queue_regs(q as usize).unwrap();
            let ring = MEM + q * REGION;
            let (bufs, tx_ring) = (ring + SLOTS * 16, ring + SLOTS * 16 + SLOTS * 256);
            let tx_buf = tx_ring + 8 * 16;
            for i in 0..SLOTS {
                let mut d = (bufs + i * 256).to_le_bytes().to_vec();
                d.extend_from_slice(&256u16.to_le_bytes());
                d.extend_from_slice(&[0; 6]);
                mem.write_bytes(0, ring + 16 * i, &d).unwrap();
            }
            let mut d = tx_buf.to_le_bytes().to_vec();
            d.extend_from_slice(&88u16.to_le_bytes());
            d.extend_from_slice(&[0; 6]);
            mem.write_bytes(0, tx_ring, &d).unwrap();
            mem.write_bytes(0, tx_buf, &frame(0x5000, q as u8)).unwrap();
            for (r, v) in [(reg::RX_BASE, ring), (reg::RX_SIZE, SLOTS), (reg::TX_BASE, tx_ring), (reg::TX_SIZE, 8)] {
                bus.store(regs + r, 8, v, Access::Store).unwrap();
            }
            bus.store(regs + reg::CTRL, 8, 1, Access::Store).unwrap();
            bus.store(regs + reg::RX_TAIL, 8, SLOTS - 1, Access::Store).unwrap();
            bus.store(regs + reg::TX_TAIL, 8, 1, Access::Store).unwrap();
        }
        {
            let mut nics =
                Nics { nics: &mut net.nics, regs: &mut bus.nics, queue_at: &net.queue_at, port_at: &net.port_at };
            for q in 0..harts {
                nics.wire_send(0, frame(0x4000 + q as u16, q as u8), 0);
            }
        }
        mem.devices = Some(Box::new(bus));
        let mut io = Recorder::default();
        let clock = TimedStep { now: 1_000_000_000, queue_time: &[0; 4], io: &mut io };
        assert!(matches!(net.step(&mut mem, 0, Some(clock)), Ok(NetEvent::Nothing)));
        let bus = DeviceBus::take(&mut mem).unwrap();
        for q in 0..harts {
            assert_eq!((bus.nics[0].queues[q].rx_frames, bus.nics[0].queues[q].tx_frames), (1, 1), "queue {q}");
        }
        // Every access is the NIC's (agent harts + 0), in one queue's region, and done for that queue's hart.
        assert!(!io.0.is_empty());
        for &(agent, owner, addr, _) in &io.0 {
            assert_eq!(agent, harts, "the NIC's agent id");
            assert_eq!(owner, Some(((addr - MEM) / REGION) as usize), "the DMA at {addr:#x}");
        }
        // Each queue had its frame written (RX), its descriptors fetched and its TX frame read.
        for q in 0..harts {
            let ours = |w: bool| io.0.iter().filter(|a| a.1 == Some(q) && a.3 == w).count();
            assert!(ours(true) >= 2 && ours(false) >= 3, "queue {q}: {} writes, {} reads", ours(true), ours(false));
        }
    }

    #[test]
    fn a_request_reaches_the_nic_after_its_uplink_share_the_switch_and_the_stacks_own_link() {
        let nic = kvsim_params::Nic {
            enabled: true,
            port_gbps: 10.0,
            switch: kvsim_params::KvdSwitch { enabled: true, stacks: 12, latency: 200_000, ..Default::default() },
            ..Default::default()
        };
        let (mut net, mut bus) = super::Net::new(&[nic], None, 1, &[]).unwrap();
        let mut nics =
            super::Nics { nics: &mut net.nics, regs: &mut bus.nics, queue_at: &net.queue_at, port_at: &net.port_at };
        assert_eq!(nics.wire_send(0, vec![0; 100], 1_000), 1_000, "the client's send starts on the uplink");
        // 124 bytes at 10/12 Gbit/s (9600 ps per byte), the forwarding latency, 124 bytes at 10 Gbit/s.
        let arrives = 1_000 + 124 * 9600 + 200_000 + 124 * 800;
        let mut mem = kvsim_isa::memory::Memory::new(1 << 20, false, 1);
        let mut io = |_: u64, _: bool, t: u64| t;
        let nic = &mut net.nics[0];
        nic.advance(&mut bus.nics[0], &mut mem, arrives - 1, &mut io).unwrap();
        assert_eq!(nic.port_stats[0].rx_frames, 0);
        nic.advance(&mut bus.nics[0], &mut mem, arrives, &mut io).unwrap();
        assert_eq!(nic.port_stats[0].rx_frames, 1);
    }
}
