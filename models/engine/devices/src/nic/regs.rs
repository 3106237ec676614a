//! The NIC as the guest sees it (workloads/ABI.md, "The NIC"): per-queue register blocks (`NicRegs`, on the device
//! bus), the descriptor formats and the steps that complete a ring's descriptor, the per-port counters and DMA
//! faults. Every other part of the NIC (`Nic` in nic/mod.rs, its timing, its zero-copy interface) builds on these.

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
    /// Stores to any of its registers so far. Only a store changes a queue's tails, rings or enable, so a pass over
    /// the queues (TX, RX doorbells) that saw this count last time has nothing new to find while it is unchanged:
    /// the NIC's step then skips the pass (a pass per queue per turn was most of a step on a many-queue NIC).
    /// Restored registers start it again (and the passes' remembered counts are not saved).
    #[serde(skip)]
    pub stores: u64,
    /// Frames landed in any RX ring so far (RX_HEAD moves): with `stores`, what can change a queue's free
    /// descriptors (`Nic::deliver` skips a pass while neither moved and no frame came). Not saved, as `stores`.
    #[serde(skip)]
    pub rx_landed: u64,
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
            stores: 0,
            rx_landed: 0,
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
        self.stores += 1;
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
                    if let Some(why) = zero_copy.then(|| zero_copy_enable_error(x.rx_base, x.tx_base)).flatten() {
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
    regs.rx_landed += 1;
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

/// Why a queue cannot start in zero-copy mode (checked when CTRL enables it: the slot areas of nic/zero_copy.rs
/// must be line aligned), or None.
pub fn zero_copy_enable_error(rx_base: u64, tx_base: u64) -> Option<&'static str> {
    (!rx_base.is_multiple_of(64) || !tx_base.is_multiple_of(64))
        .then_some("CTRL enable: zero-copy slot areas (RX_BASE, TX_BASE) must be 64-byte aligned")
}
