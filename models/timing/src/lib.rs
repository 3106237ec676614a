//! Timing models. Each model takes requests stamped with a time (in ticks of 1 ps) and answers with the time at
//! which they complete, so models can be swapped without touching their neighbours.
//!
//! * [`core::Core`]: functional-first, timing-directed core (out-of-order or in-order); fed one [`inst::InstInfo`]
//!   per executed instruction, it gives each instruction fetch/dispatch/issue/complete/commit cycles.
//! * [`mem`]: the memory system as components: [`mem::CacheArray`] (one set-associative array with its
//!   replacement policy), the two-level MOESI [`mem::Directory`], and [`mem::MemSystem`] (a socket's private
//!   L1I/L1D/L2 per core, a sliced, inclusive, way-partitionable LLC and the directory, over any backing
//!   [`MemPort`], its messages carried by a [`network::Network`]).
//! * [`dram::Dram`]: DDR3/DDR4 channels, ranks, bank groups, banks, open rows, FR-FCFS, refresh.
//!
//! Every model reports named statistics through a [`StatSink`].

pub mod bpred;
pub mod cache;
pub mod core;
pub mod dram;
pub mod inst;
pub mod interconnect;
pub mod link;
pub mod mem;
pub mod network;
pub mod noc;
pub mod numa;
pub mod parked;
pub mod sampling;
pub mod socket_memory;
pub mod stacked;
pub mod synth;
pub mod system;
pub mod tlb;
pub mod tlb_guest;

/// Simulated time in picoseconds.
pub type Tick = u64;

/// Picoseconds per second: a clock of `f` Hz has a period of `PS_PER_S / f` ticks.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// What a memory request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    Read,
    /// A store (write-allocate: a miss fetches the line first, the RFO) or the write half of an atomic.
    Write,
    /// A software data prefetch: fills like a read and holds an MSHR, but nobody waits for it.
    Prefetch,
    /// An instruction fetch (goes to the L1I).
    IFetch,
}

/// Who is asking, for way partitioning: each class may be confined to a subset of a cache's ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum ReqClass {
    Core = 0,
    /// I/O agents (the NIC's direct cache access, DDIO).
    Io = 1,
}

/// Number of requester classes (size of a cache's way-mask table).
pub const REQ_CLASSES: usize = 2;

/// One memory request. `requester` names the core (index into the memory system's private caches) or agent.
#[derive(Debug, Clone, Copy)]
pub struct MemReq {
    pub addr: u64,
    pub kind: AccessKind,
    /// A non-temporal access (Zihintntl): its fill skips the private mid-level cache.
    pub non_temporal: bool,
    pub requester: u16,
    /// The core on whose behalf the request reaches memory: the requesting core for its own accesses, the core
    /// whose dirty data a writeback carries, the core owning a device queue for that queue's DMA; [`NO_OWNER`]
    /// when no core owns it. A memory that gives each core its own port (the stacks' requester map) routes by it.
    pub owner: u16,
    pub class: ReqClass,
    pub time: Tick,
}

/// `MemReq::owner` of a request no core owns.
pub const NO_OWNER: u16 = u16::MAX;

impl MemReq {
    /// A request of `requester`, which also owns it.
    pub fn new(addr: u64, kind: AccessKind, requester: u16, time: Tick) -> Self {
        MemReq { addr, kind, non_temporal: false, requester, owner: requester, class: ReqClass::Core, time }
    }
}

/// Anything that answers a request with its completion time: a cache hierarchy, a DRAM, a fixed latency.
/// Writebacks of dirty lines are posted: `access` with `Write` to a memory returns when the write is accepted.
pub trait MemPort {
    fn access(&mut self, req: &MemReq) -> Tick;
    /// A core's software prefetch: performed as `access` does, returning instead the tick it leaves the core, when
    /// its miss is sent (its L1 grants it an MSHR: later than `req.time` when every one is busy). A real core holds
    /// the prefetch in its load buffer until a fill buffer takes it. A memory without MSHRs takes it at once.
    #[inline]
    fn prefetch(&mut self, req: &MemReq) -> Tick {
        self.access(req);
        req.time
    }
    /// The core `requester` is about to issue a load of the instruction at `pc` (an IP-based prefetcher keys on it;
    /// nothing else needs it).
    #[inline]
    fn set_pc(&mut self, _requester: u16, _pc: u64) {}
    /// Whether the core `requester`'s next loads issue while one of its fences is in flight (dispatched, not yet
    /// committed): the L1D's prefetchers may hold back (`Prefetcher.hold_during_fence`). Said only on a change.
    #[inline]
    fn fence_in_flight(&mut self, _requester: u16, _on: bool) {}
    /// The core `requester`'s page walker starts (`on`) or ends its read of a page-table entry: the accesses
    /// between are that read (the caches count its misses apart, `page_walk_misses`; nothing else needs it).
    #[inline]
    fn page_walk(&mut self, _requester: u16, _on: bool) {}
    /// Append this model's statistics, each name prefixed with `prefix` (e.g. "system.mem.").
    /// `now` is the simulated time the run reached, for rates and bandwidths.
    fn stats(&self, _prefix: &str, _now: Tick, _out: &mut StatSink) {}
    /// The channel of the line at `addr` and the number of channels (the memory system sends a line's requests to
    /// the memory controller endpoint that serves its channel): one channel unless the model has several.
    fn channel_of(&self, _addr: u64) -> (usize, usize) {
        (0, 1)
    }
    /// The socket whose memory holds `addr` (a line's NUMA home): socket 0 unless the memory spans sockets.
    #[inline]
    fn home_socket(&self, _addr: u64) -> u16 {
        0
    }
    /// Whether this memory picks its port by the request's owning core (`MemReq::owner`): the memory system then
    /// remembers which core's data each LLC line holds, so its eviction reaches that core's port. False for
    /// memories that map by address alone (DDR), which thus pay nothing for it.
    fn routes_by_owner(&self) -> bool {
        false
    }
    /// Whether `addr` is uncached (a device register: the doorbells): a core that orders its uncached stores
    /// (`Core.ordered_uncached_stores`) sends such a store only once it is the oldest in the store buffer. None is
    /// unless the model has a device range.
    #[inline]
    fn uncached(&self, _addr: u64) -> bool {
        false
    }
    /// End of the run: perform posted writes so the statistics count them (a DRAM's write queue).
    fn flush_posted(&mut self, _now: Tick) {}
    /// Start the statistics afresh at `now`; state is kept.
    fn reset_port_stats(&mut self, _now: Tick) {}
}

/// A memory with one fixed latency: for tests and for idealised studies.
#[derive(Debug, Clone, Default)]
pub struct FixedLatency {
    pub latency: Tick,
    pub reads: u64,
    pub writes: u64,
}

impl FixedLatency {
    pub fn new(latency: Tick) -> Self {
        FixedLatency { latency, reads: 0, writes: 0 }
    }
}

impl MemPort for FixedLatency {
    fn access(&mut self, req: &MemReq) -> Tick {
        if req.kind == AccessKind::Write {
            self.writes += 1;
        } else {
            self.reads += 1;
        }
        req.time + self.latency
    }
    fn stats(&self, prefix: &str, _now: Tick, out: &mut StatSink) {
        out.add(prefix, "reads", self.reads as f64, "line reads served");
        out.add(prefix, "writes", self.writes as f64, "line writes (writebacks) served");
    }
}

/// Named statistics, gem5 style: (name, value, description).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatSink {
    pub entries: Vec<(String, f64, String)>,
}

impl StatSink {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn add(&mut self, prefix: &str, name: &str, value: f64, desc: &str) {
        self.entries.push((format!("{prefix}{name}"), value, desc.to_string()));
    }
    /// The value of a statistic by its full name.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.entries.iter().find(|(n, _, _)| n == name).map(|e| e.1)
    }
}

/// A ratio that is 0 when the denominator is.
pub(crate) fn ratio(num: f64, den: f64) -> f64 {
    if den == 0.0 {
        0.0
    } else {
        num / den
    }
}

/// Converts between a clock's cycles and ticks; the clock may change (DVFS) without moving past cycles.
/// The period is kept in fixed point (ps / 2^64, rounded up) so the hot path multiplies instead of dividing; a
/// cycle that starts on a whole ps gets exactly that ps.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    freq_hz: u64,
    period_q64: u128,
    /// The period in whole ps when it is one (2.5 GHz: 400), else 0: then `span` is one 64-bit multiply.
    whole_ps: u64,
    cycles_per_tick: f64,
    base_cycle: u64,
    base_tick: Tick,
}

impl Clock {
    pub fn new(freq_hz: u64) -> Self {
        assert!(freq_hz > 0, "a clock needs a frequency");
        let period_q64 = ((PS_PER_S as u128) << 64).div_ceil(freq_hz as u128);
        let whole_ps = if period_q64 as u64 == 0 { (period_q64 >> 64) as u64 } else { 0 };
        Clock {
            freq_hz,
            period_q64,
            whole_ps,
            cycles_per_tick: freq_hz as f64 / PS_PER_S as f64,
            base_cycle: 0,
            base_tick: 0,
        }
    }
    pub fn freq_hz(&self) -> u64 {
        self.freq_hz
    }
    /// Ticks of `cycles` cycles: (cycles x period) in ps, rounded down. With a whole-ps period the fixed-point
    /// product has no fraction, so it is the 64-bit product (truncated to 64 bits like the general one).
    #[inline]
    fn span(&self, cycles: u64) -> Tick {
        if self.whole_ps != 0 {
            return cycles.wrapping_mul(self.whole_ps);
        }
        ((cycles as u128 * self.period_q64) >> 64) as Tick
    }
    /// The tick at which `cycle` starts.
    #[inline]
    pub fn tick(&self, cycle: u64) -> Tick {
        self.base_tick + self.span(cycle.saturating_sub(self.base_cycle))
    }
    /// The first cycle that starts at or after `tick`.
    #[inline]
    pub fn cycle_at_or_after(&self, tick: Tick) -> u64 {
        if tick <= self.base_tick {
            return self.base_cycle;
        }
        let d = tick - self.base_tick;
        if self.whole_ps != 0 {
            // The first c with c x period >= d, exactly (ticks stay far below 2^64, so the product never wraps).
            return self.base_cycle + d.div_ceil(self.whole_ps);
        }
        // A floating-point guess (truncated: `ceil` is a library call on the baseline x86-64 target, and this is
        // called for every memory access), corrected to be exact against `span`.
        let mut c = (d as f64 * self.cycles_per_tick) as u64;
        while self.span(c) < d {
            c += 1;
        }
        while c > 0 && self.span(c - 1) >= d {
            c -= 1;
        }
        self.base_cycle + c
    }
    /// Ticks taken by `cycles` cycles at the current frequency (rounded down to a whole ps).
    pub fn ticks(&self, cycles: u64) -> Tick {
        self.span(cycles)
    }
    /// Change frequency from `cycle` on; earlier cycles keep their ticks.
    pub fn set_freq(&mut self, cycle: u64, freq_hz: u64) {
        let (t, c) = (self.tick(cycle), cycle);
        *self = Clock::new(freq_hz);
        self.base_tick = t;
        self.base_cycle = c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_converts_cycles_and_ticks_exactly() {
        let c = Clock::new(2_500_000_000);
        assert_eq!(c.tick(10), 4000);
        assert_eq!(c.cycle_at_or_after(4000), 10);
        assert_eq!(c.cycle_at_or_after(4001), 11);
        // A period that is not a whole number of ps (2.7 GHz: 370.37 ps) round-trips cycle -> tick -> cycle.
        let c = Clock::new(2_700_000_000);
        for cycle in [0u64, 1, 2, 3, 27, 1_000_003, 10_000_000_019] {
            assert_eq!(c.cycle_at_or_after(c.tick(cycle)), cycle);
        }
        assert_eq!(c.tick(27_000_000_000), 10_000_000_000_000); // 10 s
    }

    #[test]
    fn a_whole_ps_period_converts_exactly_as_the_fixed_point_one() {
        // The whole-ps shortcut (one 64-bit multiply) against the general fixed-point path on the same clock, at
        // cycles and ticks on and around period boundaries, small and large, and after a DVFS change.
        for hz in [2_500_000_000u64, 1_000_000_000, 4_000_000_000, 400_000_000, 1_000_000_000_000] {
            let mut fast = Clock::new(hz);
            assert!(fast.whole_ps != 0, "{hz} Hz has a whole-ps period");
            fast.set_freq(12_345, hz);
            let general = Clock { whole_ps: 0, ..fast };
            let mut x = 1u64;
            for _ in 0..2_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                for v in [x % 1_000, x % 10_000_000, x >> 24, (x >> 24) + 1, (x >> 24).saturating_sub(1)] {
                    assert_eq!(fast.tick(v), general.tick(v), "{hz} Hz, tick({v})");
                    assert_eq!(fast.cycle_at_or_after(v), general.cycle_at_or_after(v), "{hz} Hz, cycle of {v}");
                }
            }
        }
        assert_eq!(Clock::new(2_700_000_000).whole_ps, 0, "370.37 ps is not whole");
    }

    #[test]
    fn dvfs_keeps_past_cycles_and_retimes_later_ones() {
        let mut c = Clock::new(2_500_000_000);
        c.set_freq(1000, 1_250_000_000);
        assert_eq!(c.tick(1000), 400_000);
        assert_eq!(c.tick(1010), 400_000 + 10 * 800);
        assert_eq!(c.cycle_at_or_after(400_000 + 10 * 800), 1010);
    }
}
