//! A virtio network device on the virtio-mmio transport, version 2 (Virtual I/O Device specification 1.x: section
//! 4.2 for the registers, 2.7 for split virtqueues, 5.1 for the network device), with one receive queue (0) and one
//! transmit queue (1) and no offloads: the device offers VIRTIO_F_VERSION_1 and VIRTIO_NET_F_MAC only, so every
//! buffer starts with the 12-byte `virtio_net_hdr` (no checksum or segmentation requests) and descriptors are
//! direct (no indirect tables, no event index: the driver's `VIRTQ_AVAIL_F_NO_INTERRUPT` flag alone suppresses
//! interrupts).
//!
//! The device reaches guest memory only through the machine (`deliver`, `transmit` take the memory): register
//! accesses come through the platform bus, which has no memory, so a write to QueueNotify records the queue and
//! stops the executor (`NET_KICK`) for the machine to serve it at once, at the hart's time.

use std::collections::VecDeque;

use kvsim_isa::memory::Memory;

/// "virt", little-endian.
const MAGIC: u32 = 0x7472_6976;
const VERSION: u32 = 2;
const DEVICE_ID_NET: u32 = 1;
/// The vendor id the device reports ("KVSM", little-endian).
const VENDOR_ID: u32 = 0x4d53_564b;

/// Feature bits (VIRTIO_NET_F_MAC = 5, VIRTIO_F_VERSION_1 = 32).
pub const F_MAC: u64 = 1 << 5;
pub const F_VERSION_1: u64 = 1 << 32;
const OFFERED: u64 = F_MAC | F_VERSION_1;

/// Device status bits.
pub const S_ACKNOWLEDGE: u32 = 1;
pub const S_DRIVER: u32 = 2;
pub const S_DRIVER_OK: u32 = 4;
pub const S_FEATURES_OK: u32 = 8;

/// Descriptor flags and the available ring's flag.
const DESC_NEXT: u16 = 1;
const DESC_WRITE: u16 = 2;
const DESC_INDIRECT: u16 = 4;
const AVAIL_NO_INTERRUPT: u16 = 1;

/// Interrupt status bit: a used buffer was added.
const INT_USED_BUFFER: u32 = 1;

/// The header before every frame in a buffer (`struct virtio_net_hdr_mrg_rxbuf` with VERSION_1: flags, gso_type,
/// hdr_len, gso_size, csum_start, csum_offset, num_buffers).
pub const NET_HDR_LEN: usize = 12;

pub const RX_QUEUE: usize = 0;
pub const TX_QUEUE: usize = 1;
const QUEUES: usize = 2;
/// Entries each queue may have (assumed 256: qemu's virtio-net default ring size).
pub const QUEUE_NUM_MAX: u16 = 256;
/// Frames that arrive while the driver has no receive buffer posted wait in the device, up to this many (assumed
/// 256, one ring's worth, as a NIC's receive FIFO); more are dropped and counted.
pub const RX_BACKLOG_FRAMES: usize = 256;

/// One split virtqueue as the driver set it up.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Queue {
    pub num: u16,
    pub ready: bool,
    pub desc: u64,
    pub avail: u64,
    pub used: u64,
    /// The next available-ring entry the device takes, and the used ring's index.
    pub last_avail: u16,
    pub used_idx: u16,
    /// The driver notified this queue at least once since it became ready.
    pub notified: bool,
}

/// What the device counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NetCounts {
    pub rx_frames: u64,
    pub rx_bytes: u64,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    /// Frames dropped because the backlog was full (the driver posted no buffers for too long).
    pub rx_dropped: u64,
    pub notifications: u64,
    /// Interrupts raised (the interrupt status going from 0 to nonzero).
    pub interrupts: u64,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct VirtioNet {
    pub mac: [u8; 6],
    pub status: u32,
    pub device_features_sel: u32,
    pub driver_features: u64,
    pub driver_features_sel: u32,
    pub queue_sel: u32,
    pub queues: [Queue; QUEUES],
    pub interrupt_status: u32,
    /// Queues notified and not yet served (bit = queue).
    pub kicked: u32,
    /// Frames arrived and waiting for a receive buffer.
    pub backlog: VecDeque<Vec<u8>>,
    pub counts: NetCounts,
}

/// A device error the machine cannot go on from (the driver broke the queue's rules).
pub type DeviceResult<T> = Result<T, String>;

impl VirtioNet {
    pub fn new(mac: [u8; 6]) -> VirtioNet {
        VirtioNet {
            mac,
            status: 0,
            device_features_sel: 0,
            driver_features: 0,
            driver_features_sel: 0,
            queue_sel: 0,
            queues: Default::default(),
            interrupt_status: 0,
            kicked: 0,
            backlog: VecDeque::new(),
            counts: NetCounts::default(),
        }
    }

    fn reset(&mut self) {
        let (mac, counts, backlog) = (self.mac, self.counts, std::mem::take(&mut self.backlog));
        *self = VirtioNet::new(mac);
        self.counts = counts;
        // Frames on the wire do not vanish with a driver reset; they wait for the next receive buffers.
        self.backlog = backlog;
    }

    pub fn irq_line(&self) -> bool {
        self.interrupt_status != 0
    }

    /// The driver is up and has handed the device receive buffers (what a sender waits for).
    pub fn rx_posted(&self) -> bool {
        self.status & S_DRIVER_OK != 0 && self.queues[RX_QUEUE].ready && self.queues[RX_QUEUE].notified
    }

    fn selected(&mut self) -> Option<&mut Queue> {
        self.queues.get_mut(self.queue_sel as usize)
    }

    /// A register read at offset `off` (`size` bytes); None: no such register (or a wrong size).
    pub fn load(&mut self, off: u64, size: u8) -> Option<u64> {
        if off >= 0x100 {
            // The device configuration: mac[6], then status (u16, only with VIRTIO_NET_F_STATUS: not offered).
            let mut config = [0u8; 8];
            config[..6].copy_from_slice(&self.mac);
            let at = (off - 0x100) as usize;
            let bytes = config.get(at..at + size as usize)?;
            return Some(bytes.iter().rev().fold(0u64, |v, &b| v << 8 | b as u64));
        }
        if size != 4 {
            return None;
        }
        let sel = self.queue_sel as usize;
        let q = self.queues.get(sel);
        Some(match off {
            0x000 => MAGIC as u64,
            0x004 => VERSION as u64,
            0x008 => DEVICE_ID_NET as u64,
            0x00c => VENDOR_ID as u64,
            0x010 => match self.device_features_sel {
                0 => OFFERED & 0xffff_ffff,
                1 => OFFERED >> 32,
                _ => 0,
            },
            0x034 => q.map_or(0, |_| QUEUE_NUM_MAX as u64),
            0x044 => q.is_some_and(|q| q.ready) as u64,
            0x060 => self.interrupt_status as u64,
            0x070 => self.status as u64,
            // Shared memory regions: none (a length of all ones says "no such region").
            0x0b0 | 0x0b4 => 0xffff_ffff,
            0x0b8 | 0x0bc => 0,
            0x0fc => 0,
            _ => return None,
        })
    }

    /// A register write; Some(true) when it notified a queue (the machine serves it at once).
    pub fn store(&mut self, off: u64, size: u8, val: u64) -> Option<bool> {
        if size != 4 {
            return None;
        }
        let v = val as u32;
        let lo = |x: u64| (x & !0xffff_ffff) | v as u64;
        let hi = |x: u64| (x & 0xffff_ffff) | (v as u64) << 32;
        match off {
            0x014 => self.device_features_sel = v,
            0x020 => match self.driver_features_sel {
                0 => self.driver_features = lo(self.driver_features),
                1 => self.driver_features = hi(self.driver_features),
                _ => {}
            },
            0x024 => self.driver_features_sel = v,
            0x030 => self.queue_sel = v,
            0x038 => {
                if let Some(q) = self.selected() {
                    q.num = v.min(QUEUE_NUM_MAX as u32) as u16;
                }
            }
            0x044 => {
                if let Some(q) = self.selected() {
                    q.ready = v & 1 != 0;
                    if !q.ready {
                        (q.last_avail, q.used_idx, q.notified) = (0, 0, false);
                    }
                }
            }
            0x050 => {
                if (v as usize) < QUEUES {
                    self.kicked |= 1 << v;
                    self.counts.notifications += 1;
                    return Some(true);
                }
            }
            0x064 => self.interrupt_status &= !v,
            0x070 => {
                if v == 0 {
                    self.reset();
                } else {
                    let mut s = v;
                    // FEATURES_OK stays set only for a subset of the offered features that includes VERSION_1
                    // (a version-2 transport has no legacy interface).
                    let acceptable = self.driver_features & !OFFERED == 0 && self.driver_features & F_VERSION_1 != 0;
                    if s & S_FEATURES_OK != 0 && !acceptable {
                        s &= !S_FEATURES_OK;
                    }
                    self.status = s;
                }
            }
            0x080..=0x0a4 if off.is_multiple_of(4) => {
                let q = self.selected()?;
                let field = match off & !7 {
                    0x080 => &mut q.desc,
                    0x090 => &mut q.avail,
                    0x0a0 => &mut q.used,
                    _ => return None,
                };
                *field = if off.is_multiple_of(8) { lo(*field) } else { hi(*field) };
            }
            0x0ac => {}
            _ => return None,
        }
        Some(false)
    }

    fn raise(&mut self) {
        if self.interrupt_status == 0 {
            self.counts.interrupts += 1;
        }
        self.interrupt_status |= INT_USED_BUFFER;
    }

    /// A frame arrives from the wire: into a receive buffer now if the driver posted one, else into the backlog
    /// (dropped and counted when full).
    pub fn arrive(&mut self, mem: &mut Memory, frame: Vec<u8>) -> DeviceResult<()> {
        if self.backlog.len() >= RX_BACKLOG_FRAMES {
            self.counts.rx_dropped += 1;
            return Ok(());
        }
        self.backlog.push_back(frame);
        self.drain_backlog(mem)
    }

    /// Move waiting frames into the receive buffers the driver posted.
    pub fn drain_backlog(&mut self, mem: &mut Memory) -> DeviceResult<()> {
        while let Some(frame) = self.backlog.pop_front() {
            if !self.receive_one(mem, &frame)? {
                self.backlog.push_front(frame);
                break;
            }
        }
        Ok(())
    }

    /// Write `frame` (after its header) into the next receive buffer and return it in the used ring. False: the
    /// driver is not up or has no buffer posted.
    fn receive_one(&mut self, mem: &mut Memory, frame: &[u8]) -> DeviceResult<bool> {
        if self.status & S_DRIVER_OK == 0 || !self.queues[RX_QUEUE].ready {
            return Ok(false);
        }
        let q = self.queues[RX_QUEUE].clone();
        let (avail_flags, avail_idx) = (read16(mem, q.avail)?, read16(mem, q.avail + 2)?);
        if q.last_avail == avail_idx {
            return Ok(false);
        }
        let head = self.avail_entry(mem, RX_QUEUE, q.last_avail)?;
        let mut data = vec![0u8; NET_HDR_LEN];
        data[10] = 1; // num_buffers: one buffer holds the whole frame
        data.extend_from_slice(frame);
        let mut written = 0usize;
        for (addr, len, flags) in self.chain(mem, RX_QUEUE, head)? {
            if flags & DESC_WRITE == 0 {
                return Err(format!("virtio-net: receive descriptor chain {head} has a device-readable buffer"));
            }
            let n = (len as usize).min(data.len() - written);
            mem.write_bytes(0, addr, &data[written..written + n]).map_err(|t| dma_fault("receive", addr, t))?;
            written += n;
            if written == data.len() {
                break;
            }
        }
        if written < data.len() {
            return Err(format!(
                "virtio-net: a frame of {} bytes does not fit receive buffer {head} ({written} bytes with its header)",
                frame.len()
            ));
        }
        self.put_used(mem, RX_QUEUE, head, written as u32)?;
        self.queues[RX_QUEUE].last_avail = q.last_avail.wrapping_add(1);
        self.counts.rx_frames += 1;
        self.counts.rx_bytes += frame.len() as u64;
        if avail_flags & AVAIL_NO_INTERRUPT == 0 {
            self.raise();
        }
        Ok(true)
    }

    /// Every frame the driver queued for transmission, without its header; the buffers go back in the used ring.
    pub fn transmit(&mut self, mem: &mut Memory) -> DeviceResult<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        let q = &self.queues[TX_QUEUE];
        if self.status & S_DRIVER_OK == 0 || !q.ready {
            return Ok(out);
        }
        let avail = q.avail;
        let avail_flags = read16(mem, avail)?;
        let avail_idx = read16(mem, avail + 2)?;
        while self.queues[TX_QUEUE].last_avail != avail_idx {
            let at = self.queues[TX_QUEUE].last_avail;
            let head = self.avail_entry(mem, TX_QUEUE, at)?;
            let mut data = Vec::new();
            for (addr, len, flags) in self.chain(mem, TX_QUEUE, head)? {
                if flags & DESC_WRITE != 0 {
                    return Err(format!("virtio-net: transmit descriptor chain {head} has a device-writable buffer"));
                }
                data.extend(mem.read_bytes(addr, len as u64).map_err(|t| dma_fault("transmit", addr, t))?);
            }
            if data.len() < NET_HDR_LEN {
                return Err(format!(
                    "virtio-net: transmit buffer {head} is {} bytes, shorter than its header",
                    data.len()
                ));
            }
            self.put_used(mem, TX_QUEUE, head, 0)?;
            self.queues[TX_QUEUE].last_avail = at.wrapping_add(1);
            let frame = data.split_off(NET_HDR_LEN);
            self.counts.tx_frames += 1;
            self.counts.tx_bytes += frame.len() as u64;
            out.push(frame);
        }
        if !out.is_empty() && avail_flags & AVAIL_NO_INTERRUPT == 0 {
            self.raise();
        }
        Ok(out)
    }

    /// The descriptor index in available-ring entry `at` of queue `qi`.
    fn avail_entry(&self, mem: &mut Memory, qi: usize, at: u16) -> DeviceResult<u16> {
        let q = &self.queues[qi];
        let num = q.num.max(1);
        let head = read16(mem, q.avail + 4 + 2 * (at % num) as u64)?;
        if head >= num {
            return Err(format!("virtio-net: queue {qi}'s available ring names descriptor {head} of {num}"));
        }
        Ok(head)
    }

    /// The buffers (address, length, flags) of the descriptor chain starting at `head`.
    fn chain(&self, mem: &mut Memory, qi: usize, head: u16) -> DeviceResult<Vec<(u64, u32, u16)>> {
        let q = &self.queues[qi];
        let mut out = Vec::new();
        let mut i = head;
        loop {
            if out.len() >= q.num as usize {
                return Err(format!("virtio-net: queue {qi}'s descriptor chain from {head} loops"));
            }
            let d = mem.read_bytes(q.desc + 16 * i as u64, 16).map_err(|t| dma_fault("descriptor", q.desc, t))?;
            let addr = u64::from_le_bytes(d[0..8].try_into().unwrap());
            let len = u32::from_le_bytes(d[8..12].try_into().unwrap());
            let flags = u16::from_le_bytes([d[12], d[13]]);
            let next = u16::from_le_bytes([d[14], d[15]]);
            if flags & DESC_INDIRECT != 0 {
                return Err(format!("virtio-net: descriptor {i} of queue {qi} is indirect (not negotiated)"));
            }
            out.push((addr, len, flags));
            if flags & DESC_NEXT == 0 {
                return Ok(out);
            }
            if next >= q.num {
                return Err(format!("virtio-net: descriptor {i} of queue {qi} chains to {next} of {}", q.num));
            }
            i = next;
        }
    }

    fn put_used(&mut self, mem: &mut Memory, qi: usize, head: u16, len: u32) -> DeviceResult<()> {
        let q = &mut self.queues[qi];
        let slot = q.used + 4 + 8 * (q.used_idx % q.num.max(1)) as u64;
        let mut entry = (head as u32).to_le_bytes().to_vec();
        entry.extend_from_slice(&len.to_le_bytes());
        mem.write_bytes(0, slot, &entry).map_err(|t| dma_fault("used ring", slot, t))?;
        q.used_idx = q.used_idx.wrapping_add(1);
        mem.write_bytes(0, q.used + 2, &q.used_idx.to_le_bytes()).map_err(|t| dma_fault("used ring", q.used, t))
    }
}

fn read16(mem: &mut Memory, addr: u64) -> DeviceResult<u16> {
    let b = mem.read_bytes(addr, 2).map_err(|t| dma_fault("ring", addr, t))?;
    Ok(u16::from_le_bytes([b[0], b[1]]))
}

fn dma_fault(what: &str, addr: u64, t: kvsim_isa::trap::Trap) -> String {
    format!("virtio-net: the device's {what} access at {addr:#x} failed: {}", t.reason())
}
