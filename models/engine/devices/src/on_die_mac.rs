//! The path between a NIC and the host's memory system, for either attachment (`Nic.attach`):
//!
//! * `pcie`: a card on its own PCIe link ([`PcieLink`]): TLPs with their overhead, the link's latency each way.
//! * `on_die`: an Ethernet MAC on the processor's logic die, as Mercury's and Iridium's integrated 10 GbE MAC
//!   ([`OnDieBus`]): no link layer and no TLPs; a transfer holds one direction of the bus between the MAC and the
//!   die's memory system for its bytes at `on_die_bandwidth` and arrives `on_die_latency` later; a read request is a
//!   command, not bytes on the bus, and reaches memory `on_die_latency` after it is issued.
//!
//! The NIC's timing (`nic/timing.rs`) asks its [`NicLink`] for the same three things either way: a posted write up,
//! a read (request up, data down), and the one-way latency. Both directions are booked on a [`Calendar`], so
//! requests that reach the path slightly out of time order do not wait behind later ones.

use crate::pcie::{Calendar, PcieLink, PcieProtocol, Traffic, TrafficCount};

/// The MAC's bus into the die's memory system. Times are in ps.
#[derive(Debug, Clone)]
pub struct OnDieBus {
    ps_per_byte: f64,
    /// One-way latency (ps) between the MAC and the memory system.
    pub latency: u64,
    /// MAC -> memory (DMA writes) and memory -> MAC (read data).
    pub up: Calendar,
    pub down: Calendar,
    /// Bytes moved per direction since the last reset, transfers (both directions), busy time per direction.
    pub up_bytes: u64,
    pub down_bytes: u64,
    pub transfers: u64,
    pub up_busy: u64,
    pub down_busy: u64,
    /// The same per kind of traffic (indexed by `Traffic as usize`); `tlps` counts transfers here.
    pub up_by: [TrafficCount; 6],
    pub down_by: [TrafficCount; 6],
}

impl OnDieBus {
    /// A bus of `gbytes_per_s` each way with `latency` ps one way.
    pub fn new(gbytes_per_s: f64, latency: u64) -> OnDieBus {
        OnDieBus {
            ps_per_byte: 1e12 / (gbytes_per_s.max(1e-3) * 1e9),
            latency,
            up: Calendar::default(),
            down: Calendar::default(),
            up_bytes: 0,
            down_bytes: 0,
            transfers: 0,
            up_busy: 0,
            down_busy: 0,
            up_by: [TrafficCount::default(); 6],
            down_by: [TrafficCount::default(); 6],
        }
    }

    fn ser(&self, bytes: u64) -> u64 {
        (bytes as f64 * self.ps_per_byte).round() as u64
    }

    /// A posted write of `payload` bytes from the MAC, ready at `t`: returns when its last byte has left the MAC's
    /// bus (add `latency` for its arrival in the memory system).
    pub fn write_up(&mut self, payload: u64, t: u64, what: Traffic) -> u64 {
        let d = self.ser(payload);
        self.up_bytes += payload;
        self.up_busy += d;
        self.transfers += 1;
        let c = &mut self.up_by[what as usize];
        c.bytes += payload;
        c.tlps += 1;
        if d == 0 {
            return t;
        }
        self.up.reserve(t, d)
    }

    /// A DMA read of `payload` bytes issued by the MAC at `t`: the request reaches memory `latency` later, `host`
    /// turns that time into the time the data are ready there, and the data cross the bus back. Returns when the
    /// last byte is in the MAC.
    pub fn read(&mut self, payload: u64, t: u64, what: Traffic, host: &mut dyn FnMut(u64) -> u64) -> u64 {
        let ready = host(t + self.latency);
        let d = self.ser(payload);
        self.down_bytes += payload;
        self.down_busy += d;
        self.transfers += 1;
        let c = &mut self.down_by[what as usize];
        c.bytes += payload;
        c.tlps += 1;
        let left = if d == 0 { ready } else { self.down.reserve(ready, d) };
        left + self.latency
    }

    pub fn reset_stats(&mut self) {
        (self.up_bytes, self.down_bytes, self.transfers, self.up_busy, self.down_busy) = (0, 0, 0, 0, 0);
        self.up_by = [TrafficCount::default(); 6];
        self.down_by = [TrafficCount::default(); 6];
    }

    /// Statistics under the NIC's prefix `name` and `kvsim_params::paths::on_die` (they replace the PCIe link's:
    /// an on-die MAC has no link).
    pub fn stats(&self, name: &str, out: &mut Vec<(String, f64, &'static str)>) {
        let pre = name.to_owned() + &kvsim_params::paths::on_die();
        out.push((format!("{pre}up_bytes"), self.up_bytes as f64, "bytes MAC -> memory system on the on-die bus"));
        out.push((format!("{pre}down_bytes"), self.down_bytes as f64, "bytes memory system -> MAC on the on-die bus"));
        out.push((format!("{pre}transfers"), self.transfers as f64, "DMA transfers on the on-die bus (both ways)"));
        for what in Traffic::ALL {
            let (up, down) = (self.up_by[what as usize], self.down_by[what as usize]);
            let t = what.name();
            out.push((format!("{pre}up_bytes.{t}"), up.bytes as f64, "bytes MAC -> memory of this kind of traffic"));
            out.push((
                format!("{pre}down_bytes.{t}"),
                down.bytes as f64,
                "bytes memory -> MAC of this kind of traffic",
            ));
        }
        out.push((format!("{pre}up_busy_ps"), self.up_busy as f64, "time the MAC -> memory direction was busy (ps)"));
        out.push((
            format!("{pre}down_busy_ps"),
            self.down_busy as f64,
            "time the memory -> MAC direction was busy (ps)",
        ));
    }
}

/// The NIC's path to the host, by its attachment.
#[derive(Debug, Clone)]
pub enum NicLink {
    Pcie(PcieLink),
    OnDie(OnDieBus),
}

impl NicLink {
    /// The path `Nic.attach` names.
    pub fn new(p: &kvsim_params::Nic) -> NicLink {
        match p.attach {
            kvsim_params::NicAttach::Pcie => NicLink::Pcie(PcieLink::new(PcieProtocol::from_params(p))),
            kvsim_params::NicAttach::OnDie => NicLink::OnDie(OnDieBus::new(p.on_die_bandwidth, p.on_die_latency)),
        }
    }

    /// One-way latency of the path (ps).
    #[inline]
    pub fn latency(&self) -> u64 {
        match self {
            NicLink::Pcie(l) => l.latency,
            NicLink::OnDie(b) => b.latency,
        }
    }

    /// A posted write up to host address `addr`: when its last byte has left the device (add `latency()` for its
    /// arrival).
    #[inline]
    pub fn write_up(&mut self, addr: u64, payload: u64, t: u64, what: Traffic) -> u64 {
        match self {
            NicLink::Pcie(l) => l.write_up(addr, payload, t, what),
            NicLink::OnDie(b) => b.write_up(payload, t, what),
        }
    }

    /// A DMA read at host address `addr`: when its last byte is back in the device.
    #[inline]
    pub fn read(&mut self, addr: u64, payload: u64, t: u64, what: Traffic, host: &mut dyn FnMut(u64) -> u64) -> u64 {
        match self {
            NicLink::Pcie(l) => l.read(addr, payload, t, what, host),
            NicLink::OnDie(b) => b.read(payload, t, what, host),
        }
    }

    pub fn reset_stats(&mut self) {
        match self {
            NicLink::Pcie(l) => l.reset_stats(),
            NicLink::OnDie(b) => b.reset_stats(),
        }
    }

    /// The PCIe link, for a PCIe NIC.
    pub fn pcie(&self) -> Option<&PcieLink> {
        match self {
            NicLink::Pcie(l) => Some(l),
            NicLink::OnDie(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_holds_the_bus_for_its_bytes_and_a_read_takes_the_latency_each_way() {
        // 16 GB/s: 62.5 ps per byte; 4 ns each way.
        let mut b = OnDieBus::new(16.0, 4_000);
        assert_eq!(b.write_up(64, 1_000, Traffic::RxData), 1_000 + 4_000);
        // A second write at the same time waits for the first.
        assert_eq!(b.write_up(64, 1_000, Traffic::RxData), 1_000 + 8_000);
        // A read: request at memory 4 ns after it is issued, memory answers 30 ns later, 128 bytes back (8 ns),
        // then 4 ns to the MAC.
        let mut at_memory = 0;
        let done = b.read(128, 10_000, Traffic::TxData, &mut |t| {
            at_memory = t;
            t + 30_000
        });
        assert_eq!(at_memory, 14_000);
        assert_eq!(done, 14_000 + 30_000 + 8_000 + 4_000);
        assert_eq!(b.up_by[Traffic::RxData as usize], TrafficCount { bytes: 128, tlps: 2 });
        assert_eq!(b.down_by[Traffic::TxData as usize], TrafficCount { bytes: 128, tlps: 1 });
        assert_eq!((b.up_bytes, b.down_bytes, b.transfers), (128, 128, 3), "no per-transfer overhead");
    }
}

/// A frame's RX and TX paths through an on-die MAC, to the tick, and its line rate for small frames.
#[cfg(test)]
mod mac_tests {
    use crate::nic::fixture::{udp_frame as frame, Rings};
    use crate::nic::timing::NicTiming;
    use crate::nic::{reg, Nic, NicRegs, TX_COMPLETION_HEAD_POINTER};
    use kvsim_base::abi::{DEVICE_BASE, PAGE_SIZE};
    use kvsim_isa::memory::Memory;
    use kvsim_isa::trap::Access;

    const RING: u64 = 0x10_0000;
    const TX_RING: u64 = 0x18_0000;
    const TX_SIZE: u64 = 64;
    const BUFS: u64 = 0x20_0000;
    const HWB: u64 = 0x1f_0040;
    /// 10 GbE: 800 ps per byte on the wire. The MAC's bus: 16 GB/s (62.5 ps per byte), 4 ns each way; its
    /// registers 10 ns away.
    const WIRE_PS: u64 = 800;
    const BUS_LAT: u64 = 4_000;
    const MMIO: u64 = 10_000;

    fn bus_ps(bytes: u64) -> u64 {
        (bytes as f64 * 62.5).round() as u64
    }

    /// One queue on a 10 GbE on-die MAC, an RX ring of `ring` descriptors all posted (256-byte buffers), a TX ring
    /// of 64; `mode` is the TX completion mode (in head-pointer mode the driver registers HWB).
    fn setup(ring: u64, fifo: usize, mode: u64) -> (Memory, NicRegs, Nic) {
        let mut mem = Memory::new(1 << 27, false, 1);
        mem.regions.heap_start = RING;
        mem.regions.brk = RING + 16384 * PAGE_SIZE;
        let mut regs = NicRegs::new(&[0]).with_tx_completion(mode);
        let mut nic = Nic::new(0, 1, vec![0], [(0x4000, 0)], fifo);
        let p = kvsim_params::Nic {
            enabled: true,
            port_gbps: 10.0,
            rx_fifo_frames: fifo as u64,
            attach: kvsim_params::NicAttach::OnDie,
            on_die_latency: BUS_LAT,
            on_die_bandwidth: 16.0,
            on_die_mmio_latency: MMIO,
            ..Default::default()
        };
        nic.timing = Some(NicTiming::new(&p, 1, 1));
        assert_eq!(nic.timing.as_ref().unwrap().mmio_latency, MMIO, "the MAC's registers, not a PCIe card's");
        let head_wb = (mode == TX_COMPLETION_HEAD_POINTER).then_some(HWB);
        let rings = Rings { rx_ring: RING, rx_size: ring, tx_ring: TX_RING, tx_size: TX_SIZE, bufs: BUFS, head_wb };
        rings.enable(&mut regs, &mut mem);
        (mem, regs, nic)
    }

    #[test]
    fn an_rx_frame_reaches_the_guest_at_its_exact_tick_without_pcie() {
        let (mut mem, mut regs, mut nic) = setup(64, 512, 0);
        nic.wire_send(0, frame(200), 0);
        // On the wire: 200 + 24 bytes. Its 200 bytes leave the MAC's bus 12.5 ns later and land 4 ns after that;
        // its 16-byte descriptor write-back follows on the bus (1 ns) and lands 4 ns later: then the guest sees it.
        let arrived = 224 * WIRE_PS;
        let data_left = arrived + bus_ps(200);
        let visible = data_left + bus_ps(16) + BUS_LAT;
        let mut writes = Vec::new();
        let mut io = |a: u64, w: bool, t: u64| {
            if w {
                writes.push((a, t));
            }
            t
        };
        nic.advance(&mut regs, &mut mem, visible - 1, &mut io).unwrap();
        assert_eq!(regs.queues[0].rx_head, 0, "not visible a tick early");
        let at_memory = data_left + BUS_LAT;
        let data: Vec<(u64, u64)> = (0..4).map(|k| (BUFS + 64 * k, at_memory)).collect();
        assert_eq!(writes[..4], data[..], "four data lines reach the memory system when they land");
        assert_eq!(writes[4], (RING, visible), "then the descriptor");
        nic.advance(&mut regs, &mut mem, visible, &mut |_, _, t| t).unwrap();
        assert_eq!(regs.queues[0].rx_head, 1);
        assert_eq!(mem.read_bytes(BUFS, 200).unwrap(), frame(200));
        // The statistics say the MAC was on the die: its bus, no PCIe link.
        let mut out = Vec::new();
        nic.timing_stats(&mut out);
        let get = |k: &str| out.iter().find(|s| s.0 == k).map(|s| s.1);
        assert!(out.iter().all(|s| !s.0.contains(".pcie.")), "no PCIe counters on an on-die MAC");
        assert_eq!(get("system.nic0.on_die.up_bytes.rx_data"), Some(200.0));
        assert_eq!(get("system.nic0.on_die.up_bytes.rx_writeback"), Some(16.0));
        assert_eq!(get("system.nic0.on_die.down_bytes.rx_desc_fetch"), Some(128.0), "8 descriptors prefetched");
        assert_eq!(get("system.nic0.rx_dma_latency_ns"), Some((visible - arrived) as f64 * 1e-3));
    }

    /// The driver queues `n` 88-byte frames and rings TX_TAIL once; the doorbell is taken at `t`. Returns the
    /// frames with the time the client has each, and the DMA writes (line, time).
    fn send(mem: &mut Memory, regs: &mut NicRegs, nic: &mut Nic, n: u64, t: u64) -> (Vec<u64>, Vec<(u64, u64)>) {
        let mut tail = regs.queues[0].tx_tail;
        for _ in 0..n {
            let buf = BUFS + 0x40_0000 + tail * 256;
            mem.write_bytes(0, buf, &frame(88)).unwrap();
            let mut d = buf.to_le_bytes().to_vec();
            d.extend_from_slice(&88u16.to_le_bytes());
            d.extend_from_slice(&[0; 6]);
            mem.write_bytes(0, TX_RING + tail * 16, &d).unwrap();
            tail = (tail + 1) % TX_SIZE;
        }
        regs.store(DEVICE_BASE + reg::TX_TAIL, 8, tail, Access::Store).unwrap();
        let (mut out, mut writes) = (Vec::new(), Vec::new());
        let mut io = |a: u64, w: bool, at: u64| {
            if w {
                writes.push((a, at));
            }
            at
        };
        nic.transmit_timed(regs, mem, &[t], &mut io, &mut out).unwrap();
        (out.into_iter().map(|(_, _, at)| at).collect(), writes)
    }

    #[test]
    fn a_tx_frame_leaves_at_its_exact_tick_without_pcie() {
        let (mut mem, mut regs, mut nic) = setup(64, 512, TX_COMPLETION_HEAD_POINTER);
        // Doorbell at 0, seen by the MAC 10 ns later; the descriptor read reaches memory 4 ns after that, its 16
        // bytes cross the bus (1 ns) and 4 ns; the frame read the same with 88 bytes (5.5 ns); then 88 + 24 bytes on
        // the wire. The 4-byte head write-back leaves the bus after the frame is in (0.25 ns) and lands 4 ns later.
        let descs = MMIO + BUS_LAT + bus_ps(16) + BUS_LAT;
        let got = descs + BUS_LAT + bus_ps(88) + BUS_LAT;
        let (sent, writes) = send(&mut mem, &mut regs, &mut nic, 1, 0);
        assert_eq!(sent, vec![got + 112 * WIRE_PS]);
        assert_eq!(writes, vec![(HWB & !63, got + bus_ps(4) + BUS_LAT)]);
        let mut out = Vec::new();
        nic.timing_stats(&mut out);
        assert!(out.is_empty(), "stats appear once advance has driven the NIC");
        nic.advance(&mut regs, &mut mem, 0, &mut |_, _, t| t).unwrap();
        nic.timing_stats(&mut out);
        let get = |k: &str| out.iter().find(|s| s.0 == k).map(|s| s.1);
        assert_eq!(get("system.nic0.on_die.down_bytes.tx_data"), Some(88.0));
        assert_eq!(get("system.nic0.on_die.up_bytes.tx_completion"), Some(4.0));
        assert_eq!(get("system.nic0.pcie.tlps"), None);
    }

    #[test]
    fn an_on_die_mac_sustains_10_gbe_line_rate_for_minimum_size_frames() {
        // 20,000 minimum-size frames (60 bytes + 24 on the wire: 14.88 M frames/s) offered at once; the guest
        // re-posts each descriptor as soon as it sees its frame; every frame echoes back out through TX.
        const N: u64 = 20_000;
        const RING_LEN: u64 = 1024;
        let (mut mem, mut regs, mut nic) = setup(RING_LEN, 64, 0);
        for _ in 0..N {
            nic.wire_send(0, frame(60), 0);
        }
        let step = 10_000; // the guest polls every 10 ns
        let (mut now, mut seen, mut echoed) = (0u64, 0u64, 0u64);
        let (mut first_seen, mut last_seen, mut last_sent) = (None, 0u64, 0u64);
        while seen < N && now < 10_000_000_000 {
            now += step;
            nic.advance(&mut regs, &mut mem, now, &mut |_, _, t| t).unwrap();
            let head = regs.queues[0].rx_frames;
            if head > seen {
                first_seen.get_or_insert(now);
                last_seen = now;
                let n = head - seen;
                seen = head;
                let tail = (regs.queues[0].rx_tail + n) % RING_LEN;
                regs.store(DEVICE_BASE + reg::RX_TAIL, 8, tail, Access::Store).unwrap();
                // Echo: at most the TX ring's room per poll.
                let burst = n.min(TX_SIZE - 1);
                let (sent, _) = send(&mut mem, &mut regs, &mut nic, burst, now);
                echoed += burst;
                last_sent = last_sent.max(*sent.last().unwrap());
            }
        }
        assert_eq!(seen, N, "every frame delivered");
        assert_eq!(nic.port_stats[0].rx_drops, 0, "no FIFO overflow with a 64-frame MAC buffer");
        let line = 10e9 / 8.0 / 84.0;
        let mut out = Vec::new();
        nic.timing_stats(&mut out);
        let get = |k: &str| out.iter().find(|s| s.0 == k).unwrap().1;
        assert!((get("system.nic0.port0.rx_frames_per_s") / line - 1.0).abs() < 1e-4, "arrivals at line rate");
        let delivered = (N - 1) as f64 / ((last_seen - first_seen.unwrap()) as f64 * 1e-12);
        assert!((delivered / line - 1.0).abs() < 1e-3, "delivered {delivered} frames/s, line {line}");
        // TX at line rate too: the 88-byte echoes would need 13.3 Gbit/s, so they go out back to back at 10.
        let tx = get("system.nic0.port0.tx_wire_gbps");
        assert!((tx / 10.0 - 1.0).abs() < 1e-2, "TX wire {tx} Gbit/s");
        assert!(echoed > N / 2 && last_sent > 0);
    }
}
