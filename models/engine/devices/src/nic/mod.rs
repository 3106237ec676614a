//! The NIC's functional model (workloads/ABI.md, "The NIC"): per-queue register blocks in the device range (MMIO,
//! 64-bit aligned `ld`/`sd` only), RX/TX descriptor rings in guest memory, a perfect-match steering table from
//! UDP destination port to RX queue, a bounded RX FIFO per port, and DMA of frames into RX buffers and out of TX
//! buffers. Between scheduling quanta the engine calls `Nic::deliver` and `Nic::transmit`. Line rate, PCIe and
//! DDIO timing are the timing model's.
//!
//! The registers (`NicRegs`) sit on the device bus (`bus.rs`, through the isa crate's `Mmio`), which the executor's loads and stores in the device
//! range reach; the rest of the NIC (FIFOs, steering, port counters, its PCIe link) is `Nic`, owned by the machine's
//! network side. A system may have several NICs: each has its own registers at its own base address, its own
//! ports, queues, FIFOs and link, and its statistics under `system.nic{K}` (K: its place in `System.nics`).

#[cfg(test)]
pub(crate) mod fixture;
pub mod timing;
pub mod zero_copy;

use std::collections::{HashMap, VecDeque};

use kvsim_base::abi::DEVICE_BASE;
use kvsim_isa::memory::Memory;
use kvsim_isa::trap::{Access, Trap};

/// Queue q of a NIC has its registers at `base + q * QUEUE_STRIDE` (the NIC's base: `bus::nic_base`).
pub const QUEUE_STRIDE: u64 = 0x1000;
pub const MAX_QUEUES: u64 = 1024;
/// Register offsets inside a queue's block.
pub mod reg {
    pub const RX_BASE: u64 = 0x00;
    pub const RX_SIZE: u64 = 0x08;
    pub const RX_HEAD: u64 = 0x10;
    pub const RX_TAIL: u64 = 0x18;
    pub const TX_BASE: u64 = 0x20;
    pub const TX_SIZE: u64 = 0x28;
    pub const TX_HEAD: u64 = 0x30;
    pub const TX_TAIL: u64 = 0x38;
    pub const CTRL: u64 = 0x40;
    pub const QUEUE_ID: u64 = 0x48;
    pub const PORT_ID: u64 = 0x50;
    pub const RX_DROPS: u64 = 0x58;
    pub const RX_FRAMES: u64 = 0x60;
    pub const TX_FRAMES: u64 = 0x68;
    /// RW: host address (4-byte aligned) | 1 where the NIC writes the queue's TX head in head-pointer mode.
    pub const TX_HEAD_WB: u64 = 0x70;
    /// RO: how TX completion is reported: `TX_COMPLETION_DESCRIPTOR` or `TX_COMPLETION_HEAD_POINTER`.
    pub const TX_COMPLETION: u64 = 0x78;
    /// RO: how the NIC meets the cores: `INTERFACE_RINGS` or `INTERFACE_ZERO_COPY` (nic/zero_copy.rs).
    pub const INTERFACE: u64 = 0x80;
    pub const BLOCK_LEN: u64 = 0x88;
}
/// INTERFACE values: descriptor rings (this file), or KeyVault's zero-copy slots (`Nic.interface`, nic/zero_copy.rs).
pub const INTERFACE_RINGS: u64 = 0;
pub const INTERFACE_ZERO_COPY: u64 = 1;
/// TX_COMPLETION values: DD bits in each sent descriptor; the TX head written to TX_HEAD_WB's address; DD bits only
/// in the sent descriptors whose `cmd` has `TX_CMD_RS` (report status, as the 82599 with WTHRESH = 0).
pub const TX_COMPLETION_DESCRIPTOR: u64 = 0;
pub const TX_COMPLETION_HEAD_POINTER: u64 = 1;
pub const TX_COMPLETION_REPORT_STATUS: u64 = 2;
/// TX descriptor `cmd` (u16 at offset 10) bit 0: report status (write DD back) in report-status mode.
pub const TX_CMD_RS: u16 = 1;
/// TX_HEAD_WB bit 0: head write-back enabled (as TDWBAL.Head_WB_En of Intel's 82599).
pub const TX_HEAD_WB_ENABLE: u64 = 1;
/// Bytes of a TX head write-back: a 32-bit index, as the 82599 writes it.
pub const TX_HEAD_WB_LEN: u64 = 4;
/// Descriptor done (RX and TX `status` bit 0).
pub const DD: u16 = 1;
pub const DESC_LEN: u64 = 16;
pub use kvsim_base::frame::{MAX_FRAME, MIN_FRAME};
/// Histogram buckets of RX batch sizes: 0..=32 descriptors re-posted per doorbell; the last bucket counts more.
pub const BATCH_BUCKETS: usize = 34;

/// One queue's register file plus the counters the stats report.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct QueueRegs {
    pub id: u64,
    pub port: u64,
    pub rx_base: u64,
    pub rx_size: u64,
    pub rx_head: u64,
    pub rx_tail: u64,
    pub tx_base: u64,
    pub tx_size: u64,
    pub tx_head: u64,
    pub tx_tail: u64,
    pub enabled: bool,
    /// Ring base and size latched when CTRL was set to 1.
    pub rx_ring: (u64, u64),
    pub tx_ring: (u64, u64),
    pub rx_drops: u64,
    pub rx_frames: u64,
    pub tx_frames: u64,
    /// RX_TAIL doorbells after the first one since enabling (which posts the whole ring), and the descriptors
    /// each re-posted: the RX batch sizes.
    pub rx_primed: bool,
    pub rx_batch_hist: Vec<u64>,
    pub rx_batch_sum: u64,
    pub tx_doorbells: u64,
    /// TX_HEAD_WB as written, and the head write-back address latched when CTRL was set to 1 (0: none).
    #[serde(default)]
    pub tx_head_wb: u64,
    #[serde(default)]
    pub tx_head_wb_addr: u64,
}

impl QueueRegs {
    /// Descriptors the NIC owns in the RX ring (free for frames).
    pub fn rx_free(&self) -> u64 {
        if !self.enabled {
            return 0;
        }
        (self.rx_tail.wrapping_sub(self.rx_head)) & (self.rx_ring.1 - 1)
    }

    pub fn rx_batches(&self) -> u64 {
        self.rx_batch_hist.iter().sum()
    }

    pub fn reset_batch_stats(&mut self) {
        self.rx_batch_hist = vec![0; BATCH_BUCKETS];
        self.rx_batch_sum = 0;
        self.tx_doorbells = 0;
    }
}

/// The register blocks of every queue of one NIC, from its base address on.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct NicRegs {
    pub base: u64,
    pub queues: Vec<QueueRegs>,
    /// How TX completion is reported (`Nic.tx_completion`): a `TX_COMPLETION_*` value, the TX_COMPLETION register.
    #[serde(default)]
    pub tx_completion: u64,
    /// How the NIC meets the cores (`Nic.interface`): an `INTERFACE_*` value, the INTERFACE register.
    #[serde(default)]
    pub interface: u64,
}

fn mmio_fault(addr: u64, size: u8, access: Access, why: &'static str) -> Trap {
    Trap::Mmio { addr, size, access, why }
}

fn ring_ok(base: u64, size: u64) -> bool {
    base.is_multiple_of(16) && size.is_power_of_two() && (8..=4096).contains(&size)
}

impl NicRegs {
    /// The registers of a NIC at the start of the device range (the first NIC's place).
    pub fn new(queue_ports: &[u64]) -> NicRegs {
        NicRegs::at(DEVICE_BASE, queue_ports)
    }

    /// The registers of a NIC whose queue q is on port `queue_ports[q]`, from `base` on.
    pub fn at(base: u64, queue_ports: &[u64]) -> NicRegs {
        NicRegs {
            base,
            queues: queue_ports
                .iter()
                .enumerate()
                .map(|(q, &port)| QueueRegs {
                    id: q as u64,
                    port,
                    rx_batch_hist: vec![0; BATCH_BUCKETS],
                    ..Default::default()
                })
                .collect(),
            tx_completion: TX_COMPLETION_DESCRIPTOR,
            interface: INTERFACE_RINGS,
        }
    }

    /// The same NIC with the given interface (an `INTERFACE_*` value, `Nic.interface`).
    pub fn with_interface(mut self, interface: u64) -> NicRegs {
        self.interface = interface;
        self
    }

    /// The same NIC, reporting TX completion the given way (a `TX_COMPLETION_*` value, `Nic.tx_completion`).
    pub fn with_tx_completion(mut self, mode: u64) -> NicRegs {
        self.tx_completion = mode;
        self
    }

    /// Bytes of the device range the registers take.
    pub fn window(&self) -> u64 {
        self.queues.len() as u64 * QUEUE_STRIDE
    }

    /// Which queue and register an access in the device range names.
    fn decode(&self, addr: u64, size: u8, access: Access) -> Result<(usize, u64), Trap> {
        match access {
            Access::Fetch => {
                return Err(mmio_fault(addr, size, access, "instructions cannot be fetched from the device range"))
            }
            Access::Atomic => return Err(mmio_fault(addr, size, access, "atomics are not supported on NIC registers")),
            _ => {}
        }
        let off = addr - self.base;
        let q = off / QUEUE_STRIDE;
        let r = off % QUEUE_STRIDE;
        if q >= self.queues.len() as u64 || r >= reg::BLOCK_LEN {
            return Err(mmio_fault(addr, size, access, "no NIC register at this address"));
        }
        if size != 8 || !r.is_multiple_of(8) {
            return Err(mmio_fault(addr, size, access, "NIC registers take naturally aligned 64-bit ld/sd only"));
        }
        Ok((q as usize, r))
    }

    pub fn load(&mut self, addr: u64, size: u8, access: Access) -> Result<u64, Trap> {
        let (q, r) = self.decode(addr, size, access)?;
        let x = &self.queues[q];
        Ok(match r {
            reg::RX_BASE => x.rx_base,
            reg::RX_SIZE => x.rx_size,
            reg::RX_HEAD => x.rx_head,
            reg::RX_TAIL => x.rx_tail,
            reg::TX_BASE => x.tx_base,
            reg::TX_SIZE => x.tx_size,
            reg::TX_HEAD => x.tx_head,
            reg::TX_TAIL => x.tx_tail,
            reg::CTRL => x.enabled as u64,
            reg::QUEUE_ID => x.id,
            reg::PORT_ID => x.port,
            reg::RX_DROPS => x.rx_drops,
            reg::RX_FRAMES => x.rx_frames,
            reg::TX_HEAD_WB => x.tx_head_wb,
            reg::TX_COMPLETION => self.tx_completion,
            reg::INTERFACE => self.interface,
            _ => x.tx_frames,
        })
    }

    pub fn store(&mut self, addr: u64, size: u8, val: u64, access: Access) -> Result<(), Trap> {
        let (q, r) = self.decode(addr, size, access)?;
        let head_pointer = self.tx_completion == TX_COMPLETION_HEAD_POINTER;
        let zero_copy = self.interface == INTERFACE_ZERO_COPY;
        let x = &mut self.queues[q];
        match r {
            reg::RX_BASE => x.rx_base = val,
            reg::RX_SIZE => x.rx_size = val,
            reg::TX_BASE => x.tx_base = val,
            reg::TX_SIZE => x.tx_size = val,
            reg::TX_HEAD_WB => x.tx_head_wb = val,
            reg::RX_TAIL => {
                if x.enabled {
                    if val >= x.rx_ring.1 {
                        return Err(mmio_fault(addr, size, access, "RX_TAIL written outside the RX ring"));
                    }
                    let posted = val.wrapping_sub(x.rx_tail) & (x.rx_ring.1 - 1);
                    if x.rx_primed {
                        x.rx_batch_hist[(posted as usize).min(BATCH_BUCKETS - 1)] += 1;
                        x.rx_batch_sum += posted;
                    }
                    x.rx_primed = true;
                }
                x.rx_tail = val;
            }
            reg::TX_TAIL => {
                if x.enabled && val >= x.tx_ring.1 {
                    return Err(mmio_fault(addr, size, access, "TX_TAIL written outside the TX ring"));
                }
                x.tx_doorbells += 1;
                x.tx_tail = val;
            }
            reg::CTRL => {
                if val & 1 == 1 {
                    if !ring_ok(x.rx_base, x.rx_size) || !ring_ok(x.tx_base, x.tx_size) {
                        return Err(mmio_fault(
                            addr,
                            size,
                            access,
                            "CTRL enable with a bad ring: bases must be 16-byte aligned, sizes powers of two in 8..4096",
                        ));
                    }
                    if let Some(why) =
                        zero_copy.then(|| crate::nic::zero_copy::enable_error(x.rx_base, x.tx_base)).flatten()
                    {
                        return Err(mmio_fault(addr, size, access, why));
                    }
                    // The driver must complete TX the way this NIC reports it (TX_COMPLETION): a driver polling DD
                    // bits that never come, or waiting for a head that is never written, would stall silently.
                    let wb = x.tx_head_wb;
                    if head_pointer && (wb & TX_HEAD_WB_ENABLE == 0 || wb & 2 != 0 || wb < 4) {
                        return Err(mmio_fault(
                            addr,
                            size,
                            access,
                            "CTRL enable: this NIC completes TX by head pointer (TX_COMPLETION = 1, \
                             Nic.tx_completion = head_pointer): write TX_HEAD_WB = a 4-byte aligned address | 1 first",
                        ));
                    }
                    if !head_pointer && wb & TX_HEAD_WB_ENABLE != 0 {
                        return Err(mmio_fault(
                            addr,
                            size,
                            access,
                            "CTRL enable: TX_HEAD_WB is enabled but this NIC completes TX by DD bits \
                             (TX_COMPLETION = 0 or 2, Nic.tx_completion = descriptor or report_status)",
                        ));
                    }
                    x.tx_head_wb_addr = if head_pointer { wb & !TX_HEAD_WB_ENABLE } else { 0 };
                    x.rx_ring = (x.rx_base, x.rx_size);
                    x.tx_ring = (x.tx_base, x.tx_size);
                    x.rx_head = 0;
                    x.rx_tail = 0;
                    x.tx_head = 0;
                    x.tx_tail = 0;
                    x.rx_primed = false;
                    x.enabled = true;
                } else {
                    x.enabled = false;
                }
            }
            _ => {} // read-only registers ignore stores
        }
        Ok(())
    }
}

/// Per-port counters.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct PortStats {
    pub rx_frames: u64,
    pub rx_bytes: u64,
    /// Frames dropped at the port: RX FIFO overflow or no steering match.
    pub rx_drops: u64,
    pub rx_no_match: u64,
    pub rx_fifo_overflows: u64,
    pub rx_too_long: u64,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    /// TX descriptors with a length above 1514 (undefined by the ABI): skipped, marked done.
    pub tx_bad_len: u64,
}

/// A DMA access that faulted: the queue and what it was doing.
#[derive(Debug, Clone, PartialEq)]
pub struct DmaFault {
    pub queue: usize,
    pub what: &'static str,
    pub trap: Trap,
}

/// The NIC apart from its registers: steering, FIFOs, counters.
pub struct Nic {
    /// Statistics prefix: `system.nic{K}`.
    pub name: String,
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
    /// The KVD switch between the ports and the network (`Nic.switch`, kvd_switch.rs), if enabled.
    pub switch: Option<crate::kvd_switch::KvdSwitch>,
}

/// A frame lands in queue q's ring: the frame into its buffer, then `len`, then `status = DD`, then RX_HEAD moves
/// on (functional delivery at once; timed delivery when the write-back reaches the host).
pub(crate) fn complete_rx(
    regs: &mut NicRegs,
    mem: &mut Memory,
    q: usize,
    desc: u64,
    buf: u64,
    frame: &[u8],
) -> Result<(), DmaFault> {
    let fault = |what, trap| DmaFault { queue: q, what, trap };
    mem.write_bytes(usize::MAX, buf, frame).map_err(|t| fault("writing a frame into an RX buffer", t))?;
    mem.write_bytes(usize::MAX, desc + 10, &(frame.len() as u16).to_le_bytes())
        .map_err(|t| fault("writing an RX descriptor", t))?;
    mem.write_bytes(usize::MAX, desc + 12, &DD.to_le_bytes()).map_err(|t| fault("writing an RX descriptor", t))?;
    let x = &mut regs.queues[q];
    x.rx_head = (x.rx_head + 1) & (x.rx_ring.1 - 1);
    x.rx_frames += 1;
    Ok(())
}

/// A sent TX descriptor (`bytes`: its 16 bytes as fetched) is done: `status = DD` in descriptor mode; in
/// report-status mode only when its `cmd` asks for it (then returns true: the NIC wrote it back on its own);
/// nothing in head-pointer mode (the head write-back of its batch, `write_back_tx_head`, tells the driver).
pub(crate) fn complete_tx_descriptor(
    mode: u64,
    mem: &mut Memory,
    q: usize,
    desc: u64,
    bytes: &[u8],
) -> Result<bool, DmaFault> {
    let report = u16::from_le_bytes([bytes[10], bytes[11]]) & TX_CMD_RS != 0;
    match mode {
        TX_COMPLETION_HEAD_POINTER => return Ok(false),
        TX_COMPLETION_REPORT_STATUS if !report => return Ok(false),
        _ => {}
    }
    mem.write_bytes(usize::MAX, desc + 12, &DD.to_le_bytes()).map_err(|trap| DmaFault {
        queue: q,
        what: "writing a TX descriptor",
        trap,
    })?;
    Ok(mode == TX_COMPLETION_REPORT_STATUS)
}

/// After a batch of TX descriptors (head-pointer mode): the queue's TX head, a 32-bit index, goes to the address
/// the driver registered in TX_HEAD_WB. Returns that address (None in descriptor mode).
pub(crate) fn write_back_tx_head(x: &QueueRegs, mem: &mut Memory, q: usize) -> Result<Option<u64>, DmaFault> {
    let at = x.tx_head_wb_addr;
    if at == 0 {
        return Ok(None);
    }
    mem.write_bytes(usize::MAX, at, &(x.tx_head as u32).to_le_bytes()).map_err(|trap| DmaFault {
        queue: q,
        what: "writing the TX head write-back",
        trap,
    })?;
    Ok(Some(at))
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
            name: format!("system.nic{index}"),
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
        self.drain(regs, mem, u64::MAX, None)
    }

    /// The one RX path from the FIFOs to the rings: repeatedly take the earliest frame (by FIFO entry, the lower
    /// port first) whose queue owns a descriptor not yet taken, up to `horizon`. Untimed (`io` None) the frame
    /// lands at once; timed, its DMA starts and it lands when its write-back reaches the host (nic/timing.rs).
    pub(crate) fn drain(
        &mut self,
        regs: &mut NicRegs,
        mem: &mut Memory,
        horizon: u64,
        mut io: Option<crate::nic::timing::IoFn>,
    ) -> Result<(), DmaFault> {
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
            if self.zero_copy.is_some() {
                self.land_zero_copy(regs, mem, (q, p), frame, entered, io.as_deref_mut())?;
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
                Some(io) => self.start_dma(q, p, idx, d, buf, frame, (s, entered), io),
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
        Ok(())
    }

    /// Forget the counters so far (the measured phase starts).
    pub fn reset_stats(&mut self, regs: &mut NicRegs) {
        self.port_base = self.port_stats.clone();
        for (q, x) in regs.queues.iter_mut().enumerate() {
            self.queue_base[q] = (x.rx_frames, x.rx_drops, x.tx_frames);
            x.reset_batch_stats();
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
                out.push((format!("{}.port{p}.{name}", self.name), (field(now) - field(base)) as f64, desc));
            }
        }
        for (q, x) in regs.queues.iter().enumerate() {
            let pre = format!("{}.queue{q}", self.name);
            let (rf, rd, tf) = self.queue_base[q];
            let batches = x.rx_batches();
            out.push((format!("{pre}.rx_frames"), (x.rx_frames - rf) as f64, "frames delivered into the RX ring"));
            out.push((
                format!("{pre}.rx_drops"),
                (x.rx_drops - rd) as f64,
                "frames for this queue dropped (FIFO overflow, too long)",
            ));
            out.push((format!("{pre}.tx_frames"), (x.tx_frames - tf) as f64, "frames sent from the TX ring"));
            out.push((format!("{pre}.tx_doorbells"), x.tx_doorbells as f64, "TX_TAIL doorbell writes"));
            out.push((
                format!("{pre}.rx_batches"),
                batches as f64,
                "RX_TAIL doorbells (after the first): non-empty polls",
            ));
            let mean = if batches > 0 { x.rx_batch_sum as f64 / batches as f64 } else { 0.0 };
            out.push((
                format!("{pre}.rx_batch_mean"),
                mean,
                "mean RX batch size: descriptors re-posted per RX_TAIL doorbell",
            ));
            let max = x.rx_batch_hist.iter().rposition(|&n| n > 0).unwrap_or(0);
            out.push((format!("{pre}.rx_batch_max"), max as f64, "largest RX batch (33 = more than 32)"));
        }
        for k in 0..BATCH_BUCKETS {
            let n: u64 = regs.queues.iter().map(|x| x.rx_batch_hist[k]).sum();
            let name = if k + 1 == BATCH_BUCKETS { "more".to_string() } else { k.to_string() };
            out.push((
                format!("{}.rx_batch_size::{name}", self.name),
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
    use kvsim_base::abi::PAGE_SIZE;

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
}
