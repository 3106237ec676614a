//! A PCIe link between a NIC and the root complex: generation and lanes give the raw bandwidth, every transaction
//! layer packet (TLP) adds a fixed overhead, and each direction is a timestamped resource (a transfer starts when
//! both it is ready and the direction is free, and holds the direction for its bytes' serialization time). One link
//! per NIC, shared by its ports. Times are in ps.
//!
//! Requests reach the link slightly out of time order (TX work is stamped with its hart's time, RX work with the
//! least hart time), so a direction is not one "free at" time, which would make an early request wait behind a
//! later one: it is a calendar of 16 ns slots, each holding 16 ns of transfer; a transfer fills the slots from its
//! start time on, and ends where its last byte fits.

/// Bytes per second one lane carries after line encoding, for PCIe generation `gen`.
pub fn lane_bytes_per_s(gen: u64) -> f64 {
    let (gts, enc) = match gen {
        1 => (2.5e9, 8.0 / 10.0),
        2 => (5.0e9, 8.0 / 10.0),
        3 => (8.0e9, 128.0 / 130.0),
        4 => (16.0e9, 128.0 / 130.0),
        _ => (32.0e9, 128.0 / 130.0),
    };
    gts * enc / 8.0
}

/// What a transfer on the link carries: each has its own byte and TLP counters, so a run shows where the link's
/// time goes (the statistics `pcie.up_bytes.<name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traffic {
    /// RX frames written into host buffers.
    RxData,
    /// RX descriptor write-backs (len, DD), coalesced per Nic.rx_wb_threshold.
    RxWriteback,
    /// RX descriptor prefetch (read request up, descriptors down).
    RxDescFetch,
    /// TX descriptors read after a doorbell.
    TxDescFetch,
    /// TX frames read from host buffers (read request up, frame down).
    TxData,
    /// TX completion: a descriptor's DD write-back, or the TX head write-back.
    TxCompletion,
}

impl Traffic {
    pub const ALL: [Traffic; 6] = [
        Traffic::RxData,
        Traffic::RxWriteback,
        Traffic::RxDescFetch,
        Traffic::TxDescFetch,
        Traffic::TxData,
        Traffic::TxCompletion,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Traffic::RxData => "rx_data",
            Traffic::RxWriteback => "rx_writeback",
            Traffic::RxDescFetch => "rx_desc_fetch",
            Traffic::TxDescFetch => "tx_desc_fetch",
            Traffic::TxData => "tx_data",
            Traffic::TxCompletion => "tx_completion",
        }
    }
}

/// Bytes and TLPs of one kind of traffic in one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrafficCount {
    pub bytes: u64,
    pub tlps: u64,
}

/// Slot length of a link direction's calendar (ps).
const SLOT: u64 = 16_000;
/// Slots kept (older ones are forgotten; requests before them count from the oldest kept).
const SLOTS_KEPT: usize = 1 << 16;

/// One direction of a link: time slots and how much of each is taken.
#[derive(Debug, Clone, Default)]
pub struct Calendar {
    base: u64,
    used: std::collections::VecDeque<u64>,
}

impl Calendar {
    /// Take `dur` ps of the direction from time `t` on: returns when the transfer ends.
    pub fn reserve(&mut self, t: u64, dur: u64) -> u64 {
        let mut i = (t / SLOT).max(self.base);
        let mut off = if i == t / SLOT { t % SLOT } else { 0 };
        // Forget now the slots the loop below would forget after filling the gap up to slot i: a first request
        // far ahead of the calendar (the first after a long functional phase or a restored checkpoint, seconds of
        // simulated time in) would otherwise push, then drop, a slot per 16 ns of the gap (a GB per 2 s).
        let keep_from = (i + 1).saturating_sub(SLOTS_KEPT as u64);
        if keep_from > self.base {
            let drop = (keep_from - self.base).min(self.used.len() as u64) as usize;
            self.used.drain(..drop);
            self.base = keep_from;
        }
        let mut rem = dur;
        loop {
            let k = (i - self.base) as usize;
            while self.used.len() <= k {
                self.used.push_back(0);
            }
            let used = &mut self.used[k];
            let from = off.max(*used);
            let take = rem.min(SLOT - from.min(SLOT));
            *used = from + take;
            rem -= take;
            if rem == 0 {
                let end = i * SLOT + from + take;
                while self.used.len() > SLOTS_KEPT {
                    self.used.pop_front();
                    self.base += 1;
                }
                return end;
            }
            i += 1;
            off = 0;
        }
    }
}

#[derive(Debug, Clone)]
pub struct PcieLink {
    /// ps per byte on the link (one direction).
    ps_per_byte: f64,
    pub max_payload: u64,
    pub tlp_overhead: u64,
    /// One-way latency (ps).
    pub latency: u64,
    /// Device -> host (DMA writes, read requests) and host -> device (read completions).
    pub up: Calendar,
    pub down: Calendar,
    /// Bytes moved (payload + overhead) per direction since the last reset, and TLPs.
    pub up_bytes: u64,
    pub down_bytes: u64,
    pub tlps: u64,
    pub up_busy: u64,
    pub down_busy: u64,
    /// The same bytes and TLPs per kind of traffic (indexed by `Traffic as usize`), per direction.
    pub up_by: [TrafficCount; 6],
    pub down_by: [TrafficCount; 6],
}

impl PcieLink {
    pub fn new(gen: u64, lanes: u64, max_payload: u64, tlp_overhead: u64, latency: u64) -> PcieLink {
        let bw = lane_bytes_per_s(gen) * lanes.max(1) as f64;
        PcieLink {
            ps_per_byte: 1e12 / bw,
            max_payload: max_payload.max(1),
            tlp_overhead,
            latency,
            up: Calendar::default(),
            down: Calendar::default(),
            up_bytes: 0,
            down_bytes: 0,
            tlps: 0,
            up_busy: 0,
            down_busy: 0,
            up_by: [TrafficCount::default(); 6],
            down_by: [TrafficCount::default(); 6],
        }
    }

    /// Link bytes (payload plus per-TLP overhead) and TLPs of a transfer of `payload` bytes (0: one header-only
    /// TLP).
    fn wire_bytes(&mut self, payload: u64) -> (u64, u64) {
        let tlps = payload.div_ceil(self.max_payload).max(1);
        self.tlps += tlps;
        (payload + tlps * self.tlp_overhead, tlps)
    }

    fn ser(&self, bytes: u64) -> u64 {
        (bytes as f64 * self.ps_per_byte).round() as u64
    }

    /// A posted write of `payload` bytes from the device, ready at `t`: returns when its last byte has left the
    /// link (add `latency` for its arrival at the host).
    pub fn write_up(&mut self, payload: u64, t: u64, what: Traffic) -> u64 {
        let (b, tlps) = self.wire_bytes(payload);
        let d = self.ser(b);
        self.up_bytes += b;
        self.up_busy += d;
        let c = &mut self.up_by[what as usize];
        c.bytes += b;
        c.tlps += tlps;
        self.up.reserve(t, d)
    }

    /// A DMA read of `payload` bytes issued by the device at `t`: the request goes up, the completions come down.
    /// Returns the time the last completion byte reaches the device. `host` turns the time the request reaches the
    /// host into the time the data are ready there (the memory system's answer).
    pub fn read(&mut self, payload: u64, t: u64, what: Traffic, host: &mut dyn FnMut(u64) -> u64) -> u64 {
        let req = self.write_up(0, t, what);
        let at_host = req + self.latency;
        let ready = host(at_host);
        let (b, tlps) = self.wire_bytes(payload);
        let d = self.ser(b);
        self.down_bytes += b;
        self.down_busy += d;
        let c = &mut self.down_by[what as usize];
        c.bytes += b;
        c.tlps += tlps;
        self.down.reserve(ready, d) + self.latency
    }

    pub fn reset_stats(&mut self) {
        (self.up_bytes, self.down_bytes, self.tlps, self.up_busy, self.down_busy) = (0, 0, 0, 0, 0);
        self.up_by = [TrafficCount::default(); 6];
        self.down_by = [TrafficCount::default(); 6];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bandwidth_per_generation_and_tlp_overhead() {
        // Gen3 x8: 8 GT/s x 128/130 / 8 = 0.985 GB/s per lane, 7.88 GB/s.
        let mut l = PcieLink::new(3, 8, 256, 24, 0);
        let done = l.write_up(256 * 100, 0, Traffic::RxData);
        let bytes = 256 * 100 + 100 * 24;
        let want = bytes as f64 / (8e9 * 128.0 / 130.0);
        assert!((done as f64 * 1e-12 - want).abs() / want < 1e-6, "{done}");
        // Back to back writes queue on the link
        let t2 = l.write_up(64, 0, Traffic::RxData);
        assert_eq!(
            l.up_by[Traffic::RxData as usize],
            TrafficCount { bytes: 256 * 100 + 100 * 24 + 64 + 24, tlps: 101 }
        );
        assert!(t2 > done);
        // Gen2 x8 is slower (8b/10b): 4 GB/s
        assert!((lane_bytes_per_s(2) * 8.0 - 4e9).abs() < 1.0);
        assert!((lane_bytes_per_s(4) * 8.0 - 15.75e9).abs() < 1e7);
    }

    #[test]
    fn a_later_reservation_does_not_delay_an_earlier_request() {
        let mut c = Calendar::default();
        assert_eq!(c.reserve(1_000_000, 40_000), 1_040_000);
        assert_eq!(c.reserve(0, 10_000), 10_000);
        // Back to back at the same time: the second follows the first.
        assert_eq!(c.reserve(0, 10_000), 20_000);
        // A transfer spanning the busy stretch goes around it.
        assert_eq!(c.reserve(990_000, 20_000), 1_040_000 + 18_000, "2 ns fit before it, 18 after");
    }

    /// The calendar as it was before the gap was skipped: fill up to the slot, then forget the oldest.
    fn reference_reserve(base: &mut u64, used: &mut std::collections::VecDeque<u64>, t: u64, dur: u64) -> u64 {
        let mut i = (t / SLOT).max(*base);
        let mut off = if i == t / SLOT { t % SLOT } else { 0 };
        let mut rem = dur;
        loop {
            let k = (i - *base) as usize;
            while used.len() <= k {
                used.push_back(0);
            }
            let from = off.max(used[k]);
            let take = rem.min(SLOT - from.min(SLOT));
            used[k] = from + take;
            rem -= take;
            if rem == 0 {
                while used.len() > SLOTS_KEPT {
                    used.pop_front();
                    *base += 1;
                }
                return i * SLOT + from + take;
            }
            i += 1;
            off = 0;
        }
    }

    #[test]
    fn a_request_far_ahead_skips_the_gap_and_books_as_before() {
        let (mut c, mut base, mut used) = (Calendar::default(), 0u64, std::collections::VecDeque::new());
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut t = 0u64;
        for n in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly near the last time (some before it), now and then far ahead (up to 10 ms: 600k slots).
            t = match n % 997 {
                0 => t + (x % 10_000_000_000),
                _ => (t + x % 3_000_000).saturating_sub(1_000_000),
            };
            let dur = 1 + x % 50_000;
            assert_eq!(c.reserve(t, dur), reference_reserve(&mut base, &mut used, t, dur), "request {n} at {t}");
            assert_eq!((c.base, &c.used), (base, &used));
        }
        // Seconds of simulated time in, the calendar holds its window, not the gap.
        let mut fresh = Calendar::default();
        fresh.reserve(2_000_000_000_000, 1000);
        assert!(fresh.used.capacity() <= 2 * SLOTS_KEPT, "{}", fresh.used.capacity());
    }

    #[test]
    fn a_read_takes_a_round_trip() {
        let mut l = PcieLink::new(4, 8, 256, 24, 500_000);
        let done = l.read(64, 1000, Traffic::TxData, &mut |t| t + 80_000);
        assert!(done > 1000 + 2 * 500_000 + 80_000, "{done}");
        // A header-only request up, the data with one TLP's overhead down.
        assert_eq!(l.up_by[Traffic::TxData as usize], TrafficCount { bytes: 24, tlps: 1 });
        assert_eq!(l.down_by[Traffic::TxData as usize], TrafficCount { bytes: 64 + 24, tlps: 1 });
    }
}
