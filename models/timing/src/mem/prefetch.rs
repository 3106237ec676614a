//! Hardware prefetchers, a component of a cache as its replacement policy is (parameters `Prefetcher` in
//! `models/prefetch.py`). Each watches the accesses its cache sees and names lines to fetch; `issue` sends them
//! through the cache's `PrefetchPort` (`prefetch_port.rs`), which the hierarchy implements by fetching them like
//! misses of that cache (`prefetch_fill.rs`) and counting what became of them.
//!
//! Ivy Bridge's four (Intel's optimization manual, "Data Prefetching"), none crossing a 4 KB page:
//! * next-line (the L1D's DCU prefetcher): a second load in a row to one line, at a higher offset than the first,
//!   fetches the next line. Intel's SDM (vol. 3C, IA32_MISC_ENABLE bit 37, "DCU Prefetcher Disable"): "when the
//!   DCU prefetcher detects multiple loads from the same line done within a time limit, [it] assumes the next line
//!   will be required"; the optimization manual: "triggered by an ascending access to very recently loaded data".
//!   A first load to the line after the last one seen is not such a load and fetches nothing. The time limit is not
//!   published: two loads in a row of the L1D's load stream stand for it;
//! * IP-based stride (L1D): a load PC seen twice with one stride of at most 2 KB fetches address + stride x degree;
//! * streamer (L2): a second access in one direction within a 4 KB page confirms a stream; every later access in
//!   it fetches the next `degree` lines not yet fetched, at most `distance` lines ahead of the access;
//! * adjacent line (L2's spatial prefetcher): a miss fetches the other line of its 128-byte pair.
//!
//! When the L1D's prefetchers may send what they name (`hold`): Intel's optimization manual, Sandy Bridge
//! microarchitecture (which Ivy Bridge keeps), "Data Prefetching" > "Data Prefetch to L1 Data Cache": "Data
//! prefetching is triggered by load operations when the following conditions are met: Load is from writeback memory
//! type. The prefetched data is within the same 4K byte page as the load instruction that triggered it. No fence is
//! in progress in the pipeline. Not many other load misses are in progress. There is not a continuous stream of
//! stores." The page rule is above; "not many load misses" is `max_misses_in_flight` (the cache's MSHRs); the fence
//! (`hold_during_fence`: the core says when a load issues under one, `MemPort::fence_in_flight`) and the store stream
//! (`hold_after_stores`: the core's stores since its last load, as this cache sees them) are per platform. Only timed
//! accesses are held back: warming fills as before. The Core microarchitecture's list (the manual's earlier chapter)
//! adds "or lock" and "the bus is not very busy"; Sandy Bridge's list has neither, so neither is modelled. "Triggered
//! by load operations": a page walk's PTE read (through the L1D, but no load) is shown to them only where
//! `trained_by_page_walks` is on (`prefetch_fill.rs`).
//!
//! A non-temporal access (a software NTA prefetch, which the L2 does not allocate) is not shown to a cache's
//! prefetchers unless `trained_by_non_temporal` is on (`watches`): Intel's streamer monitors loads, stores and
//! hardware prefetches, and its spatial prefetcher pairs lines fetched into the L2 (`models/prefetch.py`).

use super::prefetch_port::{PrefetchInto, PrefetchPort};
use super::Mode;
use crate::{StatSink, Tick};
use kvsim_params::Prefetcher as PrefetchParams;

/// Lines per 4 KB page (the page-boundary rule) for 64-byte lines; set from the line size.
const PAGE_BYTES: u64 = 4096;
/// The farthest stride the IP prefetcher follows (Intel: half a 4 KB page).
const MAX_STRIDE: i64 = 2048;

/// What became of a cache's hardware prefetches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrefetchStats {
    /// Prefetches sent (the line was absent and an MSHR was free).
    pub issued: u64,
    /// Prefetched lines a demand access then used (first use).
    pub useful: u64,
    /// Of those, used before their data had arrived (the demand merged with the prefetch).
    pub late: u64,
    /// Prefetched lines evicted or invalidated before any use.
    pub useless: u64,
    /// Candidates dropped because every MSHR was busy.
    pub dropped: u64,
    /// Candidates dropped because `Prefetcher.max_misses_in_flight` MSHRs or more were busy (0 where that bound
    /// is not set: a true count, the bound held nothing back).
    pub throttled: u64,
    /// Candidates not sent because their load issued while a fence was in flight (`Prefetcher.hold_during_fence`).
    pub held_by_fence: u64,
    /// Candidates not sent because their load followed a stream of stores (`Prefetcher.hold_after_stores`).
    pub held_by_stores: u64,
}

/// Why the prefetchers send nothing for one load (`Prefetchers::hold`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// A fence of the core was in flight when the load issued.
    Fence,
    /// The load followed `hold_after_stores` stores or more with no load between.
    Stores,
}

#[derive(Debug, Clone, Copy, Default)]
struct StrideEntry {
    pc: u64,
    last: u64,
    stride: i64,
}

#[derive(Debug, Clone, Copy, Default)]
struct Stream {
    page: u64,
    last: u64,
    /// +1 ascending, -1 descending, 0 not yet known.
    dir: i64,
    confirmed: bool,
    /// The next line the stream will prefetch (beyond those already fetched).
    next: u64,
    stamp: u64,
}

/// The prefetchers of one cache (any subset on).
#[derive(Debug, Clone)]
pub struct Prefetchers {
    next_line: bool,
    adjacent: bool,
    trained_by_non_temporal: bool,
    stride: Vec<StrideEntry>,
    stride_degree: i64,
    streams: Vec<Stream>,
    stream_degree: u64,
    stream_distance: u64,
    clock: u64,
    line_shift: u32,
    lines_per_page_shift: u32,
    last_line: u64,
    last_offset: u64,
    hold_during_fence: bool,
    hold_after_stores: u32,
    trained_by_page_walks: bool,
    /// The core's stores since its last load that these prefetchers saw (saturating).
    store_run: u32,
    /// Whether the core's latest load issued while one of its fences was in flight (`MemPort::fence_in_flight`).
    fence_in_flight: bool,
}

/// Candidate lines of one access (at most this many).
pub const MAX_CANDIDATES: usize = 12;

/// A short list of lines to prefetch, without allocating.
#[derive(Debug, Clone, Copy, Default)]
pub struct Candidates {
    pub lines: [u64; MAX_CANDIDATES],
    pub n: usize,
}

impl Candidates {
    fn push(&mut self, line: u64) {
        if self.n < MAX_CANDIDATES && !self.lines[..self.n].contains(&line) {
            self.lines[self.n] = line;
            self.n += 1;
        }
    }
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.lines[..self.n].iter().copied()
    }
}

impl Prefetchers {
    /// The prefetchers `p` switches on, for `line_size`-byte lines; None when every one is off.
    pub fn new(p: &PrefetchParams, line_size: u64) -> Option<Self> {
        if !(p.next_line || p.ip_stride || p.streamer || p.adjacent_line) {
            return None;
        }
        Some(Prefetchers {
            next_line: p.next_line,
            adjacent: p.adjacent_line,
            trained_by_non_temporal: p.trained_by_non_temporal,
            stride: if p.ip_stride { vec![StrideEntry::default(); p.ip_stride_entries as usize] } else { Vec::new() },
            stride_degree: p.ip_stride_degree as i64,
            streams: if p.streamer { vec![Stream::default(); p.streamer_streams as usize] } else { Vec::new() },
            stream_degree: p.streamer_degree,
            stream_distance: p.streamer_distance,
            clock: 0,
            line_shift: line_size.max(1).trailing_zeros(),
            lines_per_page_shift: (PAGE_BYTES / line_size.max(1)).trailing_zeros(),
            last_line: u64::MAX,
            last_offset: 0,
            hold_during_fence: p.hold_during_fence,
            hold_after_stores: p.hold_after_stores as u32,
            trained_by_page_walks: p.trained_by_page_walks,
            store_run: 0,
            fence_in_flight: false,
        })
    }

    /// The core stored (a timed store this cache saw): one more in the run since its last load.
    #[inline]
    pub fn saw_store(&mut self) {
        self.store_run = self.store_run.saturating_add(1);
    }

    /// Whether the core's next loads issue while one of its fences is in flight.
    #[inline]
    pub fn set_fence_in_flight(&mut self, on: bool) {
        self.fence_in_flight = on;
    }

    /// A timed load was seen: whether its candidates are held back, and why (the fence first); the store run ends.
    #[inline]
    pub fn hold(&mut self) -> Option<Hold> {
        let run = std::mem::take(&mut self.store_run);
        if self.hold_during_fence && self.fence_in_flight {
            Some(Hold::Fence)
        } else if self.hold_after_stores != 0 && run >= self.hold_after_stores {
            Some(Hold::Stores)
        } else {
            None
        }
    }

    /// Whether these prefetchers see the page walker's reads (`Prefetcher.trained_by_page_walks`).
    #[inline]
    pub fn trained_by_page_walks(&self) -> bool {
        self.trained_by_page_walks
    }

    /// Whether these prefetchers see an access (`non_temporal`: one the cache does not allocate).
    #[inline]
    pub fn watches(&self, non_temporal: bool) -> bool {
        !non_temporal || self.trained_by_non_temporal
    }

    #[inline]
    fn same_page(&self, a: u64, b: u64) -> bool {
        a >> self.lines_per_page_shift == b >> self.lines_per_page_shift
    }

    /// A demand access (a load, or for a lower level a request from the level above) to byte `addr` of `line` by
    /// instruction `pc` (0: unknown), a miss or not: the lines to prefetch.
    pub fn observe(&mut self, addr: u64, line: u64, pc: u64, miss: bool) -> Candidates {
        let mut out = Candidates::default();
        let offset = addr & ((1 << self.line_shift) - 1);
        if self.next_line {
            // Loads of one line, the later at a higher offset (the module's note: Intel's SDM and manual).
            let ascending = line == self.last_line && offset > self.last_offset;
            if ascending && self.same_page(line, line + 1) {
                out.push(line + 1);
            }
            (self.last_line, self.last_offset) = (line, offset);
        }
        if !self.stride.is_empty() && pc != 0 {
            let k = ((pc >> 1) ^ (pc >> 9)) as usize % self.stride.len();
            let e = &mut self.stride[k];
            if e.pc == pc {
                let stride = addr.wrapping_sub(e.last) as i64;
                if stride != 0 && stride == e.stride && stride.abs() <= MAX_STRIDE {
                    let target = addr.wrapping_add((stride * self.stride_degree) as u64);
                    let target_line = target >> self.line_shift;
                    if target_line != line
                        && target_line >> self.lines_per_page_shift == line >> self.lines_per_page_shift
                    {
                        out.push(target_line);
                    }
                }
                e.stride = stride;
            } else {
                *e = StrideEntry { pc, last: addr, stride: 0 };
            }
            e.last = addr;
        }
        if !self.streams.is_empty() {
            self.stream(line, &mut out);
        }
        if self.adjacent && miss {
            out.push(line ^ 1);
        }
        out
    }

    fn stream(&mut self, line: u64, out: &mut Candidates) {
        self.clock += 1;
        let page = line >> self.lines_per_page_shift;
        let Some(i) = self.streams.iter().position(|s| s.page == page && s.stamp != 0) else {
            let i = (0..self.streams.len()).min_by_key(|&i| self.streams[i].stamp).unwrap_or(0);
            self.streams[i] = Stream { page, last: line, dir: 0, confirmed: false, next: line, stamp: self.clock };
            return;
        };
        let s = &mut self.streams[i];
        s.stamp = self.clock;
        let dir = (line as i64 - s.last as i64).signum();
        if dir == 0 {
            return;
        }
        s.confirmed = dir == s.dir;
        if !s.confirmed {
            (s.dir, s.next) = (dir, line);
        }
        s.last = line;
        if !s.confirmed {
            return;
        }
        // The lines ahead of the access not yet fetched: `degree` of them, no farther than `distance`.
        let (degree, distance, shift) = (self.stream_degree, self.stream_distance as i64, self.lines_per_page_shift);
        let mut next = if (s.next as i64 - line as i64) * dir > 0 { s.next } else { (line as i64 + dir) as u64 };
        for _ in 0..degree {
            if (next as i64 - line as i64) * dir > distance || next >> shift != page {
                break;
            }
            out.push(next);
            next = (next as i64 + dir) as u64;
        }
        s.next = next;
    }
}

/// Send every candidate `core`'s cache `into` does not hold through `port`, in the order the prefetchers named
/// them.
#[inline]
pub fn issue(
    port: &mut impl PrefetchPort,
    core: usize,
    into: PrefetchInto,
    candidates: &Candidates,
    t: Tick,
    mode: Mode,
) {
    for line in candidates.iter() {
        if !port.holds(core, into, line) {
            port.fetch(core, into, line, t, mode);
        }
    }
}

/// How many of `candidates` `issue` would have sent (those `core`'s cache `into` does not hold): what a hold keeps
/// back.
pub fn hold_back(port: &impl PrefetchPort, core: usize, into: PrefetchInto, candidates: &Candidates) -> u64 {
    candidates.iter().filter(|&line| !port.holds(core, into, line)).count() as u64
}

/// A cache's prefetch counters under `prefix` (e.g. "system.core0.l2.prefetcher.").
pub fn write_prefetch_stats(s: &PrefetchStats, prefix: &str, out: &mut StatSink) {
    out.add(prefix, "issued", s.issued as f64, "hardware prefetches sent (line absent, an MSHR free)");
    out.add(prefix, "useful", s.useful as f64, "prefetched lines a demand access then used");
    out.add(prefix, "late", s.late as f64, "useful prefetches whose data had not yet arrived at the first use");
    out.add(prefix, "useless", s.useless as f64, "prefetched lines evicted or invalidated before any use");
    out.add(prefix, "dropped", s.dropped as f64, "prefetches not sent: every MSHR was busy");
    // Written whether or not the cache bounds its prefetches (`max_misses_in_flight`): without the bound nothing is
    // held back, and 0 is that count.
    out.add(prefix, "throttled", s.throttled as f64, "prefetches not sent: too many misses in flight");
    // Written whether or not the conditions are on (`hold_during_fence`, `hold_after_stores`): 0 where off.
    out.add(prefix, "held_by_fence", s.held_by_fence as f64, "prefetches not sent: the load issued under a fence");
    out.add(prefix, "held_by_stores", s.held_by_stores as f64, "prefetches not sent: the load followed a store stream");
}
