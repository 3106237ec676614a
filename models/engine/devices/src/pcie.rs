//! A PCIe link between a NIC and the root complex, at the protocol level of the PCIe base specification: each
//! direction is a timestamped resource (a transfer starts when both it is ready and the direction is free, and holds
//! the direction for its bytes' serialization time at the generation's line rate after 8b/10b or 128b/130b
//! encoding). What crosses it:
//!
//! * transaction layer packets (TLPs), each its payload plus a header of 3 DW (32-bit addresses, and every
//!   completion) or 4 DW (64-bit addresses), an optional ECRC of 4 bytes, and the data link layer's and physical
//!   layer's 8 bytes: on gen 1-2 STP 1 + sequence number 2 + LCRC 4 + END 1, on gen 3+ an STP token of 4 bytes
//!   (which holds the sequence number) + LCRC 4;
//!   - memory writes (posted, device -> host) split at MaxPayloadSize and at 4 KB boundaries;
//!   - memory read requests (non-posted, header only) split at MaxReadRequestSize and at 4 KB boundaries; each
//!     takes a tag, and a device has `read_tags` of them (32 with the 5-bit tag field, extended tags off): a read
//!     with every tag in use waits for the oldest outstanding read to complete;
//!   - completions with data (host -> device), split at the read completion boundary (RCB) and at MaxPayloadSize;
//! * data link layer packets (DLLPs) of 8 bytes in the other direction (gen 1-2: SDP 1 + 4 + CRC 2 + END 1; gen 3+:
//!   SDP token 2 + 4 + CRC 2): one Ack per Ack latency window, acknowledging every TLP received in it (the
//!   receiver's AckNak latency timer starts at the first unacknowledged TLP), and one UpdateFC per window for each
//!   flow-control credit type a window consumed (posted and non-posted at the root complex; completions at the
//!   device take none, as an endpoint advertises infinite completion credits).
//!
//! One link per NIC, shared by its ports. Times are in ps.
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

/// Bytes a DLLP occupies on the link, framing included (gen 1-2: SDP 1 + 4 + CRC 2 + END 1; gen 3+: SDP 2 + 4 + 2).
pub const DLLP_BYTES: u64 = 8;
/// Data link and physical layer bytes per TLP (gen 1-2: STP 1 + sequence 2 + LCRC 4 + END 1; gen 3+: STP token 4
/// + LCRC 4): the same 8 bytes on every generation.
pub const TLP_FRAMING: u64 = 8;
/// A request may not cross a 4 KB address boundary (PCIe base spec).
const REQUEST_BOUNDARY: u64 = 4096;

/// How long (ps) a read tag remembers a finished read: 64 us, assumed, far longer than the few microseconds by
/// which the NIC's TX reads run ahead of the harts under overload, so every read that can overlap a new one is
/// still known.
const TAG_HISTORY: u64 = 64_000_000;

/// The kinds of TLP the NIC's traffic uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tlp {
    /// Memory write (posted), device -> host.
    MemWrite,
    /// Memory read request (non-posted, no data), device -> host.
    MemRead,
    /// Completion with data, host -> device.
    Completion,
}

/// The protocol facts of one link (from `kvsim_params::Nic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PcieProtocol {
    pub gen: u64,
    pub lanes: u64,
    /// Request header bytes: 16 (4 DW, 64-bit addresses) or 12 (3 DW).
    pub request_header: u64,
    /// 4 with the end-to-end CRC, else 0.
    pub ecrc: u64,
    pub max_payload: u64,
    pub max_read_request: u64,
    pub read_completion_boundary: u64,
    /// The receiver's Ack latency window (ps): one Ack (and one UpdateFC per credit type used) per window.
    pub ack_latency: u64,
    /// Outstanding read requests the device may have (tags of all its functions, one per port).
    pub read_tags: u64,
    /// One-way latency (ps).
    pub latency: u64,
}

impl PcieProtocol {
    /// The protocol `Nic`'s parameters describe.
    pub fn from_params(p: &kvsim_params::Nic) -> PcieProtocol {
        PcieProtocol {
            gen: p.pcie_gen,
            lanes: p.pcie_lanes,
            request_header: if p.pcie_addr64 { 16 } else { 12 },
            ecrc: if p.pcie_ecrc { 4 } else { 0 },
            max_payload: p.pcie_max_payload,
            max_read_request: p.pcie_max_read_request,
            read_completion_boundary: p.pcie_read_completion_boundary,
            ack_latency: p.pcie_ack_latency,
            // Each port is a PCI function of its own (as the 82599's two LAN functions), with its own tags: the
            // link's pool is theirs together.
            read_tags: p.pcie_read_tags * p.ports.max(1),
            latency: p.pcie_latency,
        }
    }

    /// Link bytes of one TLP of kind `kind` carrying `payload` bytes.
    pub fn tlp_bytes(&self, kind: Tlp, payload: u64) -> u64 {
        let header = match kind {
            Tlp::MemWrite | Tlp::MemRead => self.request_header,
            Tlp::Completion => 12,
        };
        TLP_FRAMING + header + self.ecrc + payload
    }
}

/// The pieces `[addr, addr + len)` splits into, as (address, bytes): at every multiple of `boundary`, and at most
/// `max` bytes each.
struct Split {
    at: u64,
    end: u64,
    boundary: u64,
    max: u64,
}

fn split(addr: u64, len: u64, boundary: u64, max: u64) -> Split {
    Split { at: addr, end: addr + len, boundary: boundary.max(1), max: max.max(1) }
}

impl Iterator for Split {
    type Item = (u64, u64);
    fn next(&mut self) -> Option<(u64, u64)> {
        if self.at >= self.end {
            return None;
        }
        let piece = (self.end - self.at).min(self.max).min(self.boundary - self.at % self.boundary);
        let a = self.at;
        self.at += piece;
        Some((a, piece))
    }
}

/// DLLPs one receiver owes: the Ack window open until `ack_until`, and per credit type the UpdateFC window.
#[derive(Debug, Clone, Copy, Default)]
struct DllpTimers {
    ack_until: u64,
    fc_until: [u64; 2],
}

/// One read tag's timeline: the reads it carried or carries, (request issued, last completion in), in issue order
/// (reads of one tag may overlap: a read takes a tag free at its own issue time, which a later-booked read may
/// start on before it ends). Beside each read, the latest completion among it and the reads before it: that column
/// only rises, so the first read holding the tag at a time is found by binary search, not by a scan of the
/// tag's whole history (the scans were three quarters of the target socket's measured phase).
#[derive(Debug, Clone, Default)]
struct TagTimeline {
    reads: Vec<(u64, u64)>,
    /// `reach[i]`: the latest completion of `reads[..=i]`.
    reach: Vec<u64>,
}

/// `s.partition_point(pred)` (`pred` true on a prefix of `s`), searched back from the end in doubling steps before
/// bisecting: the times asked about are recent, so the answer lies among a tag's last few reads, whose entries stay
/// in the host's cache, where a bisection of the whole history touched a cache line per step (in a perf profile of
/// the target socket's measured phase, those steps were most of `PcieLink::read`'s 14%).
fn partition_point_near_end<T>(s: &[T], pred: impl Fn(&T) -> bool) -> usize {
    // `pred` is false on s[hi..].
    let (mut hi, mut step) = (s.len(), 1);
    while hi > 0 {
        let probe = hi.saturating_sub(step);
        if pred(&s[probe]) {
            return probe + 1 + s[probe + 1..hi].partition_point(&pred);
        }
        (hi, step) = (probe, step * 2);
    }
    0
}

/// A tag at a time: held by a read (the first in issue order whose request went up by then and whose last
/// completion is not yet in), with that read's end; or free, with the issue time of the next read booked on it
/// (u64::MAX if none).
enum TagAt {
    Held { end: u64 },
    Free { next: u64 },
}

impl TagTimeline {
    /// Forget the leading reads (in issue order) that ended by `floor`.
    fn forget(&mut self, floor: u64) {
        let gone = self.reads.iter().take_while(|&&(_, end)| end <= floor).count();
        if gone > 0 {
            self.reads.drain(..gone);
            self.reach_from(0);
        }
    }

    /// Book a read issued at `issue` whose last completion is in at `arrived` (after the reads issued by then).
    fn book(&mut self, issue: u64, arrived: u64) {
        let at = self.reads.partition_point(|&(s, _)| s <= issue);
        self.reads.insert(at, (issue, arrived));
        self.reach_from(at);
    }

    fn at(&self, at: u64) -> TagAt {
        // Every read issued and in by `at` (the common case on a link not short of tags): free, nothing booked after.
        match (self.reads.last(), self.reach.last()) {
            (None, _) => return TagAt::Free { next: u64::MAX },
            (Some(&(last, _)), Some(&latest)) if last <= at && latest <= at => return TagAt::Free { next: u64::MAX },
            _ => {}
        }
        let issued = partition_point_near_end(&self.reads, |&(s, _)| s <= at);
        // The first read issued by `at` that is still in flight: the first whose running latest end passes `at`.
        let first = partition_point_near_end(&self.reach[..issued], |&r| r <= at);
        match first < issued {
            true => TagAt::Held { end: self.reads[first].1 },
            false => TagAt::Free { next: self.reads.get(issued).map_or(u64::MAX, |&(s, _)| s) },
        }
    }

    /// Recompute `reach` from index `from` on.
    fn reach_from(&mut self, from: usize) {
        self.reach.truncate(from);
        let mut latest = from.checked_sub(1).map_or(0, |i| self.reach[i]);
        for &(_, end) in &self.reads[from..] {
            latest = latest.max(end);
            self.reach.push(latest);
        }
    }
}

#[derive(Debug, Clone)]
pub struct PcieLink {
    /// ps per byte on the link (one direction).
    ps_per_byte: f64,
    pub proto: PcieProtocol,
    /// One-way latency (ps).
    pub latency: u64,
    /// Device -> host (DMA writes, read requests) and host -> device (read completions).
    pub up: Calendar,
    pub down: Calendar,
    /// DLLPs the root complex (receiving up) and the device (receiving down) owe.
    rc_dllps: DllpTimers,
    device_dllps: DllpTimers,
    /// Per tag, the reads it carried or carries: (request issued, last completion in), in issue order. A tag is
    /// a timeline, not one "free at" time: TX reads are stamped with their hart's time and reach the link out of
    /// time order (one queue's burst microseconds ahead of another's), and an earlier read must not wait for
    /// tags that later-stamped reads hold only after it.
    /// Reads that ended more than `TAG_HISTORY` before a new read are forgotten.
    tags: Vec<TagTimeline>,
    /// Bytes moved (TLPs and DLLPs) per direction since the last reset, and TLPs.
    pub up_bytes: u64,
    pub down_bytes: u64,
    pub tlps: u64,
    pub up_busy: u64,
    pub down_busy: u64,
    /// The same bytes and TLPs per kind of traffic (indexed by `Traffic as usize`), per direction.
    pub up_by: [TrafficCount; 6],
    pub down_by: [TrafficCount; 6],
    /// TLPs per kind (memory writes, read requests, completions), DLLPs per direction (Acks and UpdateFCs), and
    /// read requests that waited for a free tag.
    pub writes: u64,
    pub read_requests: u64,
    pub completions: u64,
    pub up_dllps: u64,
    pub down_dllps: u64,
    pub tag_waits: u64,
}

/// Which way a transfer goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    Up,
    Down,
}

impl PcieLink {
    pub fn new(proto: PcieProtocol) -> PcieLink {
        let bw = lane_bytes_per_s(proto.gen) * proto.lanes.max(1) as f64;
        PcieLink {
            ps_per_byte: 1e12 / bw,
            proto,
            latency: proto.latency,
            up: Calendar::default(),
            down: Calendar::default(),
            rc_dllps: DllpTimers::default(),
            device_dllps: DllpTimers::default(),
            tags: vec![TagTimeline::default(); proto.read_tags.max(1) as usize],
            up_bytes: 0,
            down_bytes: 0,
            tlps: 0,
            up_busy: 0,
            down_busy: 0,
            up_by: [TrafficCount::default(); 6],
            down_by: [TrafficCount::default(); 6],
            writes: 0,
            read_requests: 0,
            completions: 0,
            up_dllps: 0,
            down_dllps: 0,
            tag_waits: 0,
        }
    }

    /// Serialization time of `bytes` on one direction (ps).
    pub fn ser(&self, bytes: u64) -> u64 {
        (bytes as f64 * self.ps_per_byte).round() as u64
    }

    /// Put one DLLP on direction `dir` at `t`.
    fn dllp(&mut self, dir: Dir, t: u64) {
        let d = self.ser(DLLP_BYTES);
        match dir {
            Dir::Up => {
                self.up_bytes += DLLP_BYTES;
                self.up_busy += d;
                self.up_dllps += 1;
                self.up.reserve(t, d);
            }
            Dir::Down => {
                self.down_bytes += DLLP_BYTES;
                self.down_busy += d;
                self.down_dllps += 1;
                self.down.reserve(t, d);
            }
        }
    }

    /// A TLP received at `at` on direction `dir`: the receiver's Ack (and, for a posted or non-posted request,
    /// UpdateFC) go the other way once per Ack latency window.
    fn owe_dllps(&mut self, dir: Dir, kind: Tlp, at: u64) {
        let window = self.proto.ack_latency;
        let back = if dir == Dir::Up { Dir::Down } else { Dir::Up };
        let timers = if dir == Dir::Up { &mut self.rc_dllps } else { &mut self.device_dllps };
        let owe = |until: &mut u64| {
            (at >= *until).then(|| {
                *until = at + window;
                *until
            })
        };
        let ack = owe(&mut timers.ack_until);
        let update_fc = match kind {
            Tlp::MemWrite => owe(&mut timers.fc_until[0]),
            Tlp::MemRead => owe(&mut timers.fc_until[1]),
            Tlp::Completion => None,
        };
        for t in [ack, update_fc].into_iter().flatten() {
            self.dllp(back, t);
        }
    }

    /// Send one TLP of `kind` with `payload` bytes on `dir` from `t`: when its last byte has left.
    fn tlp(&mut self, dir: Dir, kind: Tlp, payload: u64, t: u64, what: Traffic) -> u64 {
        let b = self.proto.tlp_bytes(kind, payload);
        let d = self.ser(b);
        self.tlps += 1;
        match kind {
            Tlp::MemWrite => self.writes += 1,
            Tlp::MemRead => self.read_requests += 1,
            Tlp::Completion => self.completions += 1,
        }
        let (cal, bytes, busy, by) = match dir {
            Dir::Up => (&mut self.up, &mut self.up_bytes, &mut self.up_busy, &mut self.up_by),
            Dir::Down => (&mut self.down, &mut self.down_bytes, &mut self.down_busy, &mut self.down_by),
        };
        *bytes += b;
        *busy += d;
        let c = &mut by[what as usize];
        c.bytes += b;
        c.tlps += 1;
        let end = cal.reserve(t, d);
        self.owe_dllps(dir, kind, end);
        end
    }

    /// A posted write of `payload` bytes to host address `addr` from the device, ready at `t`: memory-write TLPs
    /// split at MaxPayloadSize and 4 KB boundaries. Returns when its last byte has left the link (add `latency`
    /// for its arrival at the host).
    pub fn write_up(&mut self, addr: u64, payload: u64, t: u64, what: Traffic) -> u64 {
        let mut end = t;
        for (_, n) in split(addr, payload.max(1), REQUEST_BOUNDARY, self.proto.max_payload) {
            end = end.max(self.tlp(Dir::Up, Tlp::MemWrite, n.min(payload), t, what));
        }
        end
    }

    /// A DMA read of `payload` bytes at host address `addr` issued by the device at `t`: read requests split at
    /// MaxReadRequestSize and 4 KB boundaries go up (each once a tag is free), and each one's completions, split
    /// at the read completion boundary, come down once the host has the data. Returns the time the last
    /// completion byte reaches the device. `host` turns the time a request reaches the host into the time its data
    /// are ready there (the memory system's answer).
    pub fn read(&mut self, addr: u64, payload: u64, t: u64, what: Traffic, host: &mut dyn FnMut(u64) -> u64) -> u64 {
        let mut done = t;
        for (a, n) in split(addr, payload.max(1), REQUEST_BOUNDARY, self.proto.max_read_request) {
            let (tag, issue) = self.take_tag(t);
            let req = self.tlp(Dir::Up, Tlp::MemRead, 0, issue, what);
            let ready = host(req + self.latency);
            let mut last = ready;
            for (_, m) in split(a, n, self.proto.read_completion_boundary, self.proto.max_payload) {
                last = last.max(self.tlp(Dir::Down, Tlp::Completion, m, ready, what));
            }
            let arrived = last + self.latency;
            self.tags[tag].book(issue, arrived);
            done = done.max(arrived);
        }
        done
    }

    /// The tag a read ready at `t` takes and when: the first time from `t` on at which some tag holds no read
    /// (waiting, if every tag is held at `t`, for the earliest of their reads to end, as the oldest outstanding
    /// read frees the tag in time order). Of the tags free then, the one whose next booked read starts latest.
    fn take_tag(&mut self, t: u64) -> (usize, u64) {
        let floor = t.saturating_sub(TAG_HISTORY);
        for held in &mut self.tags {
            held.forget(floor);
        }
        // The first time from `t` on at which some tag is free: the earliest of the tags' own first free times,
        // each found going from the end of the read holding it to the end of the one holding it then (a tag
        // stops being followed once it is held past the earliest found so far). The same time as stepping all
        // tags at once to the earliest end of their holders until one is free (no tag is free before either).
        let mut at = u64::MAX;
        for held in &self.tags {
            let mut free = t;
            while free < at {
                match held.at(free) {
                    TagAt::Held { end } => free = end,
                    TagAt::Free { .. } => break,
                }
            }
            at = at.min(free);
        }
        let mut best: Option<(usize, u64)> = None;
        for (k, held) in self.tags.iter().enumerate() {
            if let TagAt::Free { next } = held.at(at) {
                if best.is_none_or(|(_, n)| next > n) {
                    best = Some((k, next));
                    if next == u64::MAX {
                        break; // no later tag can be chosen over it
                    }
                }
            }
        }
        let (k, _) = best.expect("a tag is free at the earliest time one frees");
        if at > t {
            self.tag_waits += 1;
        }
        (k, at)
    }

    pub fn reset_stats(&mut self) {
        (self.up_bytes, self.down_bytes, self.tlps, self.up_busy, self.down_busy) = (0, 0, 0, 0, 0);
        self.up_by = [TrafficCount::default(); 6];
        self.down_by = [TrafficCount::default(); 6];
        (self.writes, self.read_requests, self.completions) = (0, 0, 0);
        (self.up_dllps, self.down_dllps, self.tag_waits) = (0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded xorshift draw in [0, n): the random tests' reads, the same on every host.
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        }
    }

    /// A link of generation `gen`, `lanes` wide, 256-byte payloads, 512-byte read requests, 64-byte completions,
    /// a 240 ns Ack window, 32 tags, no latency.
    fn proto(gen: u64, lanes: u64) -> PcieProtocol {
        PcieProtocol {
            gen,
            lanes,
            request_header: 16,
            ecrc: 0,
            max_payload: 256,
            max_read_request: 512,
            read_completion_boundary: 64,
            ack_latency: 240_000,
            read_tags: 32,
            latency: 0,
        }
    }

    #[test]
    fn bandwidth_per_generation_and_tlp_overhead() {
        // Gen3 x8: 8 GT/s x 128/130 / 8 = 0.985 GB/s per lane, 7.88 GB/s.
        let mut l = PcieLink::new(proto(3, 8));
        let done = l.write_up(0, 256 * 100, 0, Traffic::RxData);
        let bytes = 256 * 100 + 100 * 24;
        let want = bytes as f64 / (8e9 * 128.0 / 130.0);
        // Each of the 100 TLPs is rounded to the picosecond: at most 0.5 ps each.
        assert!((done as f64 * 1e-12 - want).abs() <= 100.0 * 0.5e-12, "{done}");
        // Back to back writes queue on the link
        let t2 = l.write_up(0, 64, 0, Traffic::RxData);
        assert_eq!(
            l.up_by[Traffic::RxData as usize],
            TrafficCount { bytes: 256 * 100 + 100 * 24 + 64 + 24, tlps: 101 }
        );
        assert!(t2 > done);
        // Gen2 x8 is slower (8b/10b): 4 GB/s
        assert!((lane_bytes_per_s(2) * 8.0 - 4e9).abs() < 1.0);
        assert!((lane_bytes_per_s(4) * 8.0 - 15.75e9).abs() < 1e7);
    }

    /// Gen 2 x8 (4 GB/s): 250 ps a byte, so every count of bytes below is a count of quarter nanoseconds.
    const PS_PER_BYTE: u64 = 250;

    #[test]
    fn each_tlp_kind_occupies_the_link_for_exactly_its_bytes() {
        // A memory write of 64 bytes: 8 framing + 16 (4-DW header) + 64 = 88 bytes up.
        let mut l = PcieLink::new(proto(2, 8));
        assert_eq!(l.write_up(0x1000, 64, 0, Traffic::RxData), 88 * PS_PER_BYTE);
        assert_eq!((l.up_bytes, l.up_busy, l.writes, l.tlps), (88, 88 * PS_PER_BYTE, 1, 1));
        // 3-DW headers (32-bit addresses) save 4 bytes; ECRC costs 4.
        let mut short = PcieLink::new(PcieProtocol { request_header: 12, ..proto(2, 8) });
        assert_eq!(short.write_up(0x1000, 64, 0, Traffic::RxData), 84 * PS_PER_BYTE);
        let mut ecrc = PcieLink::new(PcieProtocol { ecrc: 4, ..proto(2, 8) });
        assert_eq!(ecrc.write_up(0x1000, 64, 0, Traffic::RxData), 92 * PS_PER_BYTE);
        // A read of 128 aligned bytes: a header-only request up (24 bytes), two completions of 64 bytes with 3-DW
        // headers down (2 x (8 + 12 + 64) = 168 bytes), back to back once the host answers 1 us after the request
        // arrives.
        let mut r = PcieLink::new(proto(2, 8));
        let done = r.read(0x2000, 128, 0, Traffic::TxData, &mut |t| t + 1_000_000);
        assert_eq!(done, 24 * PS_PER_BYTE + 1_000_000 + 168 * PS_PER_BYTE);
        assert_eq!(r.up_by[Traffic::TxData as usize], TrafficCount { bytes: 24, tlps: 1 });
        assert_eq!(r.down_by[Traffic::TxData as usize], TrafficCount { bytes: 168, tlps: 2 });
        assert_eq!((r.read_requests, r.completions), (1, 2));
        // 88 bytes from 16 bytes before a 64-byte boundary: completions of 16, 64 and 8 bytes (3 x 20 overhead).
        let mut m = PcieLink::new(proto(2, 8));
        m.read(0x2030, 88, 0, Traffic::TxData, &mut |t| t);
        assert_eq!(m.down_by[Traffic::TxData as usize], TrafficCount { bytes: 88 + 60, tlps: 3 });
    }

    #[test]
    fn requests_split_at_max_payload_max_read_request_and_4k() {
        let mut l = PcieLink::new(proto(2, 8));
        // 600 bytes: 256 + 256 + 88, each its own 24 bytes.
        l.write_up(0, 600, 0, Traffic::RxData);
        assert_eq!(l.up_by[Traffic::RxData as usize], TrafficCount { bytes: 600 + 3 * 24, tlps: 3 });
        // 128 bytes across a 4 KB boundary: two writes.
        l.write_up(4096 - 64, 128, 0, Traffic::RxWriteback);
        assert_eq!(l.up_by[Traffic::RxWriteback as usize].tlps, 2);
        // A 1 KB read: two 512-byte requests, 16 completions of 64 bytes.
        l.read(0x10_0000, 1024, 0, Traffic::TxDescFetch, &mut |t| t);
        assert_eq!(l.up_by[Traffic::TxDescFetch as usize], TrafficCount { bytes: 48, tlps: 2 });
        assert_eq!(l.down_by[Traffic::TxDescFetch as usize], TrafficCount { bytes: 1024 + 16 * 20, tlps: 16 });
    }

    #[test]
    fn acks_and_flow_control_updates_go_the_other_way_once_per_window() {
        let mut l = PcieLink::new(proto(2, 8));
        // A write ends at 88 bytes: the root complex owes an Ack and an UpdateFC (posted) 240 ns later, 8 bytes
        // each on the way down.
        let end = l.write_up(0, 64, 0, Traffic::RxData);
        assert_eq!((l.down_dllps, l.down_bytes, l.down_busy), (2, 16, 16 * PS_PER_BYTE));
        // Their exact place: a completion ready just then waits for them.
        let mut probe = l.clone();
        assert_eq!(probe.down.reserve(end + 240_000, 4 * PS_PER_BYTE), end + 240_000 + 20 * PS_PER_BYTE);
        // A second write inside the window is acknowledged by the same DLLPs; one after it owes two more.
        l.write_up(0, 64, end, Traffic::RxData);
        assert_eq!(l.down_dllps, 2);
        l.write_up(0, 64, end + 300_000, Traffic::RxData);
        assert_eq!(l.down_dllps, 4);
        // A read: the root complex owes an Ack and an UpdateFC (non-posted) down; the device acknowledges the
        // completions up, with no UpdateFC (an endpoint's completion credits are infinite).
        let mut r = PcieLink::new(proto(2, 8));
        r.read(0, 64, 0, Traffic::TxData, &mut |t| t);
        assert_eq!((r.down_dllps, r.up_dllps), (2, 1));
        assert_eq!(r.up_bytes, 24 + 8);
        assert_eq!(r.down_bytes, 84 + 16);
        assert_eq!(r.tlps, 2, "DLLPs are not TLPs");
    }

    #[test]
    fn a_read_waits_for_a_free_tag() {
        let lat = 500_000;
        let mut l = PcieLink::new(PcieProtocol { read_tags: 2, latency: lat, ..proto(2, 8) });
        let a = l.read(0, 64, 0, Traffic::TxData, &mut |t| t);
        l.read(64, 64, 0, Traffic::TxData, &mut |t| t);
        assert_eq!(l.tag_waits, 0);
        // The third read's request goes up only when the first read's data are in.
        let mut asked = 0;
        l.read(128, 64, 0, Traffic::TxData, &mut |t| {
            asked = t;
            t
        });
        assert_eq!(l.tag_waits, 1);
        assert!(asked >= a + lat, "request at the host at {asked}, first read done at {a}");
    }

    #[test]
    fn an_earlier_read_does_not_wait_for_tags_held_only_by_later_reads() {
        let lat = 500_000;
        let mut l = PcieLink::new(PcieProtocol { read_tags: 2, latency: lat, ..proto(2, 8) });
        // Two reads stamped 5 us ahead take both tags from 5 us on (another hart's burst, reaching the link first).
        let ahead = 5_000_000;
        l.read(0, 64, ahead, Traffic::TxData, &mut |t| t);
        l.read(64, 64, ahead, Traffic::TxData, &mut |t| t);
        // A read stamped at 0 arrives afterwards: both tags are free at 0, so its request goes up at once.
        let mut asked = 0;
        let done = l.read(128, 64, 0, Traffic::TxData, &mut |t| {
            asked = t;
            t
        });
        assert_eq!(l.tag_waits, 0);
        // Its request TLP leaves the link one serialization time after 0 and reaches the host a latency later.
        let req_end = l.ser(l.proto.tlp_bytes(Tlp::MemRead, 0));
        assert_eq!(asked, req_end + lat, "request at the host at {asked}");
        assert!(done < ahead, "done at {done}");
        // A read at 5 us still waits: both tags are held then, until the first of those reads is in.
        let mut asked2 = 0;
        l.read(192, 64, ahead, Traffic::TxData, &mut |t| {
            asked2 = t;
            t
        });
        assert_eq!(l.tag_waits, 1);
        assert!(asked2 >= ahead + 2 * lat, "request at the host at {asked2}");
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
        let mut l = PcieLink::new(PcieProtocol { latency: 500_000, ..proto(4, 8) });
        let done = l.read(0, 64, 1000, Traffic::TxData, &mut |t| t + 80_000);
        assert!(done > 1000 + 2 * 500_000 + 80_000, "{done}");
        // A header-only request up, the data with one completion's overhead down.
        assert_eq!(l.up_by[Traffic::TxData as usize], TrafficCount { bytes: 24, tlps: 1 });
        assert_eq!(l.down_by[Traffic::TxData as usize], TrafficCount { bytes: 64 + 20, tlps: 1 });
    }

    /// The search back from the end gives the standard library's partition point on every sorted array up to 40
    /// entries and every threshold (in and between its values, below and above all of them).
    #[test]
    fn searching_from_the_end_finds_the_same_partition_point() {
        for n in 0..40u64 {
            let v: Vec<u64> = (0..n).map(|i| 2 * i + (i % 3 == 0) as u64).collect();
            for x in 0..2 * n + 3 {
                assert_eq!(partition_point_near_end(&v, |&e| e <= x), v.partition_point(|&e| e <= x), "{n} {x}");
            }
        }
    }

    /// The tag timeline's binary searches answer as a scan of its reads does: the first read (in issue order)
    /// issued by a time and not yet in holds the tag; else the next read booked after it. Reads overlap and come
    /// out of time order, and leading reads are forgotten, as on the link.
    #[test]
    fn a_tag_timeline_finds_the_read_holding_it_as_a_scan_does() {
        let mut draw = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut tl = TagTimeline::default();
        let mut reads: Vec<(u64, u64)> = vec![];
        let (mut held, mut free) = (0, 0);
        for round in 0..2_000u64 {
            let issue = round * 50 + draw(200);
            let arrived = issue + 1 + draw(80);
            tl.book(issue, arrived);
            let at = reads.partition_point(|&(s, _)| s <= issue);
            reads.insert(at, (issue, arrived));
            if round % 97 == 0 {
                let floor = round * 50 - round.min(40) * 20;
                tl.forget(floor);
                let gone = reads.iter().take_while(|&&(_, end)| end <= floor).count();
                reads.drain(..gone);
            }
            for _ in 0..4 {
                let q = (round * 50 + 100).saturating_sub(draw(300));
                let scan_held = reads.iter().find(|&&(s, e)| s <= q && q < e).map(|&(_, e)| e);
                let scan_next = reads.iter().map(|&(s, _)| s).find(|&s| s > q).unwrap_or(u64::MAX);
                match tl.at(q) {
                    TagAt::Held { end } => {
                        assert_eq!(Some(end), scan_held, "at {q}");
                        held += 1;
                    }
                    TagAt::Free { next } => {
                        assert_eq!((None, next), (scan_held, scan_next), "at {q}");
                        free += 1;
                    }
                }
            }
        }
        assert_eq!(tl.reads, reads);
        assert!(held > 1_000 && free > 1_000, "both answers exercised: {held} held, {free} free");
    }

    /// Tags taken as the first algorithm took them (every tag stepped at once to the earliest end of their holders
    /// until one is free, each tag's holder found by scanning its reads): the same tag at the same time, on a busy
    /// link whose reads overlap and come out of time order.
    #[test]
    fn tags_are_taken_as_by_stepping_every_tag_at_once() {
        fn reference(tags: &mut [Vec<(u64, u64)>], t: u64) -> (usize, u64) {
            let floor = t.saturating_sub(TAG_HISTORY);
            for held in tags.iter_mut() {
                let gone = held.iter().take_while(|&&(_, end)| end <= floor).count();
                held.drain(..gone);
            }
            let mut at = t;
            loop {
                let mut best: Option<(usize, u64)> = None;
                let mut first_end = u64::MAX;
                for (k, held) in tags.iter().enumerate() {
                    if let Some(&(_, end)) = held.iter().find(|&&(s, e)| s <= at && at < e) {
                        first_end = first_end.min(end);
                        continue;
                    }
                    let next = held.iter().map(|&(s, _)| s).find(|&s| s > at).unwrap_or(u64::MAX);
                    if best.is_none_or(|(_, n)| next > n) {
                        best = Some((k, next));
                    }
                }
                if let Some((k, _)) = best {
                    return (k, at);
                }
                at = first_end;
            }
        }
        let mut l = PcieLink::new(PcieProtocol { read_tags: 6, ..proto(2, 8) });
        let mut tags: Vec<Vec<(u64, u64)>> = vec![vec![]; 6];
        let mut draw = xorshift(0x2545_f491_4f6c_dd1du64);
        let mut waited = 0;
        for i in 0..5_000u64 {
            // Reads stamped up to 3 us behind or ahead of the link's time, long enough that the tags run out.
            let t = (i * 300_000 + 3_000_000).saturating_sub(draw(6_000_000));
            let (k, at) = l.take_tag(t);
            assert_eq!((k, at), reference(&mut tags, t), "read {i} at {t}");
            waited += (at > t) as u64;
            let arrived = at + 600_000 + draw(2_400_000);
            l.tags[k].book(at, arrived);
            let pos = tags[k].partition_point(|&(s, _)| s <= at);
            tags[k].insert(pos, (at, arrived));
        }
        assert!(waited > 500 && waited < 4_500, "reads that waited for a tag: {waited}");
        assert_eq!(l.tag_waits, waited);
    }
}
