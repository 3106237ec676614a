//! One set-associative cache array: tags, each line's MOESI state and the tick its data arrives, MSHRs, way masks
//! per requester class, and a replacement policy (a component it owns). It answers lookups and installs; what a
//! miss or a state change means for other caches is the hierarchy's business (`hierarchy.rs`).

use super::prefetch::PrefetchStats;
use super::replacement::{Replacement, ReplacementPolicy};
use super::{LineState, Origin};
use crate::{ratio, Clock, ReqClass, StatSink, Tick, NO_OWNER, REQ_CLASSES};
use kvsim_params::Cache as CacheParams;

const INVALID: u64 = u64::MAX;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CacheStats {
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    /// Accesses to a line whose miss is still outstanding (merged into its MSHR).
    pub mshr_merges: u64,
    /// Misses that found every MSHR busy and waited.
    pub mshr_full: u64,
    pub mshr_wait_ticks: Tick,
    pub evictions: u64,
    /// Dirty lines evicted (written back to the next level).
    pub writebacks: u64,
    /// Lines removed by an inclusive lower level's eviction.
    pub back_invalidations: u64,
    pub prefetches: u64,
    pub writes: u64,
    /// Misses by writes (stores' RFOs, atomics, I/O writes); the rest of `misses` are reads and prefetches.
    pub write_misses: u64,
    /// Sum over misses of the ticks their MSHR was held (from the miss leaving to its fill): MSHR occupancy.
    pub mshr_busy_ticks: Tick,
    /// Writes that hit a readable (S or O) copy and asked the directory for write permission.
    pub upgrades: u64,
    /// Lines removed because another agent wrote them (coherence invalidations).
    pub coherence_invalidations: u64,
    /// The LLC's misses by what asked (they sum to `misses`): cores' loads, stores, atomics and instruction fetches
    /// (and their page walks), software prefetches, the private caches' hardware prefetchers, I/O agents' DMA.
    pub demand_misses: u64,
    pub sw_prefetch_misses: u64,
    pub hw_prefetch_misses: u64,
    pub dma_misses: u64,
    /// Every cache's lookups by what asked (the private caches' misses are split as the LLC's are): cores'
    /// demand accesses, software prefetches, and hardware prefetchers' requests (an L1D prefetcher's at the L2;
    /// a prefetcher's fill into its own cache is no lookup of it). I/O agents' lookups are in `accesses` only.
    pub demand_accesses: u64,
    pub sw_prefetch_accesses: u64,
    pub hw_prefetch_accesses: u64,
    /// Remote lines (an LLC slice's copies of lines homed on other sockets): reads of this socket's cores that the
    /// copy served, requests that found no copy here and went on to the home, copies installed, copies this
    /// slice dropped to make room, copies the home invalidated.
    pub remote_hits: u64,
    pub remote_misses: u64,
    pub remote_fills: u64,
    pub remote_evictions: u64,
    pub remote_invalidations: u64,
    /// A private cache's misses of the page walker's reads of page-table entries (a part of its demand read
    /// misses: Intel's walker reads through the L1D, and a PTE read is no retired load).
    pub page_walk_misses: u64,
}

impl CacheStats {
    /// One lookup by `origin`.
    #[inline]
    pub fn count_access(&mut self, origin: Origin) {
        self.accesses += 1;
        match origin {
            Origin::Demand => self.demand_accesses += 1,
            Origin::SwPrefetch => self.sw_prefetch_accesses += 1,
            Origin::HwPrefetch => self.hw_prefetch_accesses += 1,
            Origin::Dma => {}
        }
    }

    /// One miss by `origin`.
    #[inline]
    pub fn count_miss(&mut self, origin: Origin) {
        self.misses += 1;
        match origin {
            Origin::Demand => self.demand_misses += 1,
            Origin::SwPrefetch => self.sw_prefetch_misses += 1,
            Origin::HwPrefetch => self.hw_prefetch_misses += 1,
            Origin::Dma => self.dma_misses += 1,
        }
    }

    /// Add `b`'s counts to these (LLC slices into one total).
    pub fn add(&mut self, b: &CacheStats) {
        self.accesses += b.accesses;
        self.hits += b.hits;
        self.misses += b.misses;
        self.mshr_merges += b.mshr_merges;
        self.mshr_full += b.mshr_full;
        self.mshr_wait_ticks += b.mshr_wait_ticks;
        self.evictions += b.evictions;
        self.writebacks += b.writebacks;
        self.back_invalidations += b.back_invalidations;
        self.prefetches += b.prefetches;
        self.writes += b.writes;
        self.write_misses += b.write_misses;
        self.mshr_busy_ticks += b.mshr_busy_ticks;
        self.upgrades += b.upgrades;
        self.coherence_invalidations += b.coherence_invalidations;
        self.demand_misses += b.demand_misses;
        self.sw_prefetch_misses += b.sw_prefetch_misses;
        self.hw_prefetch_misses += b.hw_prefetch_misses;
        self.dma_misses += b.dma_misses;
        self.demand_accesses += b.demand_accesses;
        self.sw_prefetch_accesses += b.sw_prefetch_accesses;
        self.hw_prefetch_accesses += b.hw_prefetch_accesses;
        self.remote_hits += b.remote_hits;
        self.remote_misses += b.remote_misses;
        self.remote_fills += b.remote_fills;
        self.remote_evictions += b.remote_evictions;
        self.remote_invalidations += b.remote_invalidations;
        self.page_walk_misses += b.page_walk_misses;
    }
}

/// One set-associative cache array.
#[derive(Debug, Clone)]
pub struct CacheArray {
    sets: u64,
    assoc: usize,
    set_mask: Option<u64>,
    /// Line numbers are divided by this before picking a set (the slice count for an LLC slice).
    set_div: u64,
    tags: Vec<u64>,
    /// Per set: the way of its latest hit through `find_hinted` (a hint: a line is in at most one way of its set,
    /// so a way whose tag matches is the answer, whatever has moved since).
    hint: Vec<u8>,
    ready: Vec<Tick>,
    state: Vec<LineState>,
    repl: ReplacementPolicy,
    way_masks: [u64; REQ_CLASSES],
    mshr: Vec<Tick>,
    /// Per slot: the core whose data the line holds (`MemReq::owner` of its writeback). Empty unless
    /// `track_owners` was called (only a memory that routes by owner needs it).
    owners: Vec<u16>,
    /// Per slot: brought by a hardware prefetch and not used since. Empty unless the cache has prefetchers.
    prefetched: Vec<bool>,
    /// What became of this cache's hardware prefetches.
    pub pf: PrefetchStats,
    /// A prefetch is sent only while fewer MSHRs than this are busy (0: whenever one is free).
    pub pf_busy_limit: usize,
    /// Hit latency in cycles of this cache's clock, and the same in ticks.
    pub hit_cycles: u64,
    pub hit_ticks: Tick,
    pub stats: CacheStats,
}

impl CacheArray {
    /// `capacity` bytes (this array's share: an LLC slice's), from the params' assoc, line size and policy.
    pub fn new(p: &CacheParams, capacity: u64, set_div: u64, clock_hz: u64, seed: u64) -> Self {
        let assoc = p.assoc as usize;
        let sets = (capacity / (p.assoc * p.line_size)).max(1);
        let policy = Replacement::from_param(p.replacement);
        let n = sets as usize * assoc;
        CacheArray {
            sets,
            assoc,
            set_mask: if sets.is_power_of_two() && set_div == 1 { Some(sets - 1) } else { None },
            set_div: set_div.max(1),
            tags: vec![INVALID; n],
            hint: vec![0; sets as usize],
            ready: vec![0; n],
            state: vec![LineState::Invalid; n],
            repl: ReplacementPolicy::new(policy, sets as usize, assoc, seed),
            way_masks: [all_ways(assoc); REQ_CLASSES],
            mshr: vec![0; p.mshrs as usize],
            owners: Vec::new(),
            prefetched: Vec::new(),
            pf: PrefetchStats::default(),
            pf_busy_limit: p.prefetch.max_misses_in_flight as usize,
            hit_cycles: p.hit_latency,
            hit_ticks: Clock::new(clock_hz).ticks(p.hit_latency),
            stats: CacheStats::default(),
        }
    }

    pub fn sets(&self) -> u64 {
        self.sets
    }
    pub fn assoc(&self) -> usize {
        self.assoc
    }

    /// Re-time the hit latency for a new clock (DVFS of the owning core).
    pub fn set_clock(&mut self, clock_hz: u64) {
        self.hit_ticks = Clock::new(clock_hz).ticks(self.hit_cycles);
    }

    /// Confine allocations by `class` to the ways whose bits are set in `mask` (hits may use any way).
    pub fn set_way_mask(&mut self, class: ReqClass, mask: u64) {
        let all = all_ways(self.assoc);
        assert!(mask & all != 0, "a way mask must leave at least one way");
        self.way_masks[class as usize] = mask & all;
    }

    #[inline]
    fn set_of(&self, line: u64) -> usize {
        match self.set_mask {
            Some(m) => (line & m) as usize,
            None => ((line / self.set_div) % self.sets) as usize,
        }
    }

    /// The slot (set * assoc + way) holding `line`, if any.
    #[inline]
    pub fn find(&self, line: u64) -> Option<usize> {
        let base = self.set_of(line) * self.assoc;
        self.tags[base..base + self.assoc].iter().position(|&t| t == line).map(|w| base + w)
    }

    /// `find`, for a core's L1 hit path (`l1_hit.rs`): the way of the set's latest hit is tried first, then the
    /// set is searched and the way found noted. The same answer as `find` (the hint is only an order of search).
    #[inline(always)]
    pub fn find_hinted(&mut self, line: u64) -> Option<usize> {
        let set = self.set_of(line);
        let base = set * self.assoc;
        let hinted = base + self.hint.get(set).copied().unwrap_or(0) as usize;
        if self.tags.get(hinted) == Some(&line) {
            return Some(hinted);
        }
        let way = self.tags[base..base + self.assoc].iter().position(|&t| t == line)?;
        if let Some(h) = self.hint.get_mut(set) {
            *h = way as u8;
        }
        Some(base + way)
    }

    /// The way of a slot.
    pub fn way_of(&self, slot: usize) -> usize {
        slot % self.assoc
    }

    pub fn is_dirty(&self, slot: usize) -> bool {
        self.state[slot].dirty()
    }

    #[inline]
    pub fn state(&self, slot: usize) -> LineState {
        self.state[slot]
    }

    #[inline]
    pub fn set_state(&mut self, slot: usize, s: LineState) {
        self.state[slot] = s;
    }

    /// The state of `line` here (Invalid when absent).
    #[inline]
    pub fn state_of(&self, line: u64) -> LineState {
        self.find(line).map_or(LineState::Invalid, |s| self.state[s])
    }

    #[inline]
    pub fn ready(&self, slot: usize) -> Tick {
        self.ready[slot]
    }

    /// Mark a slot most recently used.
    #[inline(always)]
    pub fn touch(&mut self, slot: usize) {
        self.repl.touch(slot);
    }

    /// Install `line` (absent) for `class` in state `state`, its data arriving at `ready`. Returns the slot and
    /// the displaced line with its state, if a valid line was displaced.
    pub fn insert_state(
        &mut self,
        line: u64,
        ready: Tick,
        state: LineState,
        class: ReqClass,
    ) -> (usize, Option<(u64, LineState)>) {
        let set = self.set_of(line);
        let base = set * self.assoc;
        let tags = &self.tags;
        let way = self.repl.victim(set, self.way_masks[class as usize], |w| tags[base + w] == INVALID);
        let slot = base + way;
        let old = self.tags[slot];
        if let Some(m) = self.prefetched.get_mut(slot) {
            if std::mem::take(m) && old != INVALID {
                self.pf.useless += 1;
            }
        }
        let victim = if old == INVALID {
            None
        } else {
            self.stats.evictions += 1;
            if self.state[slot].dirty() {
                self.stats.writebacks += 1;
            }
            Some((old, self.state[slot]))
        };
        self.tags[slot] = line;
        self.ready[slot] = ready;
        self.state[slot] = state;
        self.repl.touch(slot);
        (slot, victim)
    }

    /// As `insert_state`, with a dirty flag (M) or clean (E); the victim with its dirtiness.
    pub fn insert(&mut self, line: u64, ready: Tick, dirty: bool, class: ReqClass) -> (usize, Option<(u64, bool)>) {
        let state = if dirty { LineState::Modified } else { LineState::Exclusive };
        let (slot, victim) = self.insert_state(line, ready, state, class);
        (slot, victim.map(|(v, s)| (v, s.dirty())))
    }

    /// Remove `line` if present; returns the state it had.
    pub fn invalidate(&mut self, line: u64) -> Option<LineState> {
        let slot = self.find(line)?;
        if let Some(m) = self.prefetched.get_mut(slot) {
            self.pf.useless += std::mem::take(m) as u64;
        }
        self.tags[slot] = INVALID;
        self.repl.forget(slot);
        Some(std::mem::replace(&mut self.state[slot], LineState::Invalid))
    }

    pub fn mark_dirty(&mut self, slot: usize) {
        self.state[slot] = LineState::Modified;
    }

    /// Keep each line's owning core from now on (every slot starts with none).
    pub fn track_owners(&mut self) {
        self.owners = vec![NO_OWNER; self.tags.len()];
    }

    /// The core whose data `slot` holds: the last one to bring or write it, [`NO_OWNER`] if untracked. After
    /// `insert_state` and before `set_owner`, the displaced line's.
    #[inline]
    pub fn owner(&self, slot: usize) -> u16 {
        self.owners.get(slot).copied().unwrap_or(NO_OWNER)
    }

    /// `slot` now holds `owner`'s data (nothing when untracked).
    #[inline]
    pub fn set_owner(&mut self, slot: usize, owner: u16) {
        if let Some(o) = self.owners.get_mut(slot) {
            *o = owner;
        }
    }

    /// Keep track of lines hardware prefetches bring (the cache has prefetchers).
    pub fn track_prefetches(&mut self) {
        self.prefetched = vec![false; self.tags.len()];
    }

    /// `slot` was filled by a hardware prefetch.
    #[inline]
    pub fn mark_prefetched(&mut self, slot: usize) {
        if let Some(m) = self.prefetched.get_mut(slot) {
            *m = true;
        }
    }

    /// A demand access used `slot`: a prefetched line's first use counts as useful (late if its data was still on
    /// the way).
    #[inline]
    pub fn demand_use(&mut self, slot: usize, late: bool) {
        if let Some(m) = self.prefetched.get_mut(slot) {
            if std::mem::take(m) {
                self.pf.useful += 1;
                self.pf.late += late as u64;
            }
        }
    }

    /// The MSHR a hardware prefetch at `t` takes: Some(None) when untimed (warming holds none), Some(Some(i)) for
    /// one free at `t`, None (the prefetch is dropped and counted) when every one is busy, or `pf_busy_limit` or
    /// more are: a prefetch never waits.
    #[inline]
    pub fn prefetch_mshr(&mut self, t: Tick, timed: bool) -> Option<Option<usize>> {
        if !timed {
            return Some(None);
        }
        if self.pf_busy_limit != 0 && self.mshr.iter().filter(|&&busy| busy > t).count() >= self.pf_busy_limit {
            self.pf.throttled += 1;
            return None;
        }
        let free = self.mshr.iter().position(|&busy| busy <= t);
        self.pf.dropped += free.is_none() as u64;
        free.map(Some)
    }

    /// Take an MSHR for a miss sent at `t`: returns the MSHR and the tick the miss can go (later if all are busy).
    #[inline]
    pub fn mshr_acquire(&mut self, t: Tick) -> (usize, Tick) {
        let (mut best, mut free_at) = (0, Tick::MAX);
        for (i, &busy) in self.mshr.iter().enumerate() {
            if busy <= t {
                return (i, t);
            }
            if busy < free_at {
                free_at = busy;
                best = i;
            }
        }
        self.stats.mshr_full += 1;
        self.stats.mshr_wait_ticks += free_at - t;
        (best, free_at)
    }

    /// The tick `mshr_acquire(t)` would send a miss at, without taking the MSHR: `t` if one is free, else when
    /// the earliest busy one frees.
    #[inline]
    pub fn mshr_grant(&self, t: Tick) -> Tick {
        self.mshr.iter().copied().min().map_or(t, |free| free.max(t))
    }

    /// The miss held by MSHR `i` is filled at `fill`.
    #[inline]
    pub fn mshr_hold(&mut self, i: usize, fill: Tick) {
        self.mshr[i] = fill;
    }

    /// As `mshr_hold`, also counting the ticks the MSHR is busy (occupancy statistics).
    #[inline]
    pub fn mshr_hold_from(&mut self, i: usize, start: Tick, fill: Tick) {
        self.mshr[i] = fill;
        self.stats.mshr_busy_ticks += fill.saturating_sub(start);
    }

    /// The lines held in `line`'s set, with their states: the victims an insertion of `line` may pick (a probe).
    pub fn set_lines(&self, line: u64) -> impl Iterator<Item = (u64, LineState)> + '_ {
        let base = self.set_of(line) * self.assoc;
        (base..base + self.assoc).filter(move |&s| self.tags[s] != INVALID).map(move |s| (self.tags[s], self.state[s]))
    }

    /// Is the line present (its data may still be on the way)?
    pub fn contains(&self, line: u64) -> bool {
        self.find(line).is_some()
    }

    /// Every line held (for checks).
    pub fn lines(&self) -> impl Iterator<Item = u64> + '_ {
        self.tags.iter().copied().filter(|&t| t != INVALID)
    }

    /// MSHRs busy at `t`.
    pub fn mshrs_busy(&self, t: Tick) -> usize {
        self.mshr.iter().filter(|&&b| b > t).count()
    }

    /// Append this array's statistics; `insts` (if known) gives misses per kilo-instruction.
    pub fn stats(&self, prefix: &str, insts: Option<u64>, out: &mut StatSink) {
        write_stats(&self.stats, prefix, insts, None, out)
    }
}

fn all_ways(assoc: usize) -> u64 {
    if assoc >= 64 {
        u64::MAX
    } else {
        (1u64 << assoc) - 1
    }
}

/// `ticks`, if known, is the measured interval (for the average MSHR occupancy).
pub fn write_stats(s: &CacheStats, prefix: &str, insts: Option<u64>, ticks: Option<Tick>, out: &mut StatSink) {
    out.add(prefix, "accesses", s.accesses as f64, "lookups (demand, prefetch and write)");
    out.add(prefix, "reads", (s.accesses - s.writes) as f64, "read lookups (loads, fetches, prefetches)");
    out.add(prefix, "writes", s.writes as f64, "write lookups (stores, atomics, I/O writes)");
    out.add(prefix, "read_misses", (s.misses - s.write_misses) as f64, "misses of reads and prefetches");
    out.add(prefix, "write_misses", s.write_misses as f64, "misses of writes");
    out.add(prefix, "hits", s.hits as f64, "lookups that found the line with its data");
    out.add(prefix, "misses", s.misses as f64, "lookups that missed and sent a request to the next level");
    out.add(prefix, "miss_rate", ratio(s.misses as f64, s.accesses as f64), "misses / accesses");
    out.add(prefix, "mshr_merges", s.mshr_merges as f64, "accesses merged into an outstanding miss to the same line");
    out.add(prefix, "mshr_full", s.mshr_full as f64, "misses that waited for a free MSHR");
    out.add(prefix, "mshr_wait_ticks", s.mshr_wait_ticks as f64, "ps spent waiting for a free MSHR");
    out.add(prefix, "evictions", s.evictions as f64, "valid lines replaced");
    out.add(prefix, "writebacks", s.writebacks as f64, "dirty lines written back on eviction");
    out.add(prefix, "back_invalidations", s.back_invalidations as f64, "lines invalidated by an inclusive level below");
    out.add(prefix, "upgrades", s.upgrades as f64, "writes to a shared or owned copy that asked for write permission");
    out.add(
        prefix,
        "coherence_invalidations",
        s.coherence_invalidations as f64,
        "copies removed because another agent wrote the line",
    );
    out.add(prefix, "prefetches", s.prefetches as f64, "software prefetch requests");
    let by_origin = [
        ("demand", s.demand_accesses, s.demand_misses, "cores' loads, stores, atomics, fetches (and page walks)"),
        ("sw_prefetch", s.sw_prefetch_accesses, s.sw_prefetch_misses, "software prefetches (prefetch.r/.w/.i)"),
        ("hw_prefetch", s.hw_prefetch_accesses, s.hw_prefetch_misses, "the private caches' hardware prefetchers"),
    ];
    for (name, accesses, misses, doc) in by_origin {
        out.add(prefix, &format!("{name}_accesses"), accesses as f64, &format!("lookups by {doc}"));
        out.add(prefix, &format!("{name}_misses"), misses as f64, &format!("misses of {doc}"));
    }
    out.add(
        prefix,
        "demand_miss_rate",
        ratio(s.demand_misses as f64, s.demand_accesses as f64),
        "demand_misses / demand_accesses (prefetches of either kind left out)",
    );
    if let Some(n) = insts {
        out.add(prefix, "mpki", ratio(s.misses as f64 * 1000.0, n as f64), "misses per thousand instructions");
    }
    if let Some(t) = ticks {
        out.add(
            prefix,
            "mshr_occupancy_avg",
            ratio(s.mshr_busy_ticks as f64, t as f64),
            "average MSHRs busy (misses outstanding) over the measured interval",
        );
    }
}

/// The LLC's statistics: a cache's ([`write_stats`]), its misses split by what asked, each also per thousand
/// instructions when `insts` is known (the definitions: `models/stats_paths.py`, LLC_METRICS), and its remote
/// lines' counters.
pub fn write_llc_stats(s: &CacheStats, prefix: &str, insts: Option<u64>, ticks: Option<Tick>, out: &mut StatSink) {
    write_stats(s, prefix, insts, ticks, out);
    // (The demand and prefetch misses are a cache's own counters, written by `write_stats`.)
    let dma = "DMA accesses that missed: DDIO write allocations, writes to memory, reads from memory";
    out.add(prefix, "dma_misses", s.dma_misses as f64, dma);
    let split = [
        ("demand", s.demand_misses),
        ("sw_prefetch", s.sw_prefetch_misses),
        ("hw_prefetch", s.hw_prefetch_misses),
        ("dma", s.dma_misses),
    ];
    for (name, n) in split {
        if let Some(i) = insts {
            out.add(prefix, &format!("{name}_mpki"), ratio(n as f64 * 1000.0, i as f64), "per thousand instructions");
        }
    }
    out.add(prefix, "remote_hits", s.remote_hits as f64, "reads served by this LLC's copy of another socket's line");
    out.add(prefix, "remote_misses", s.remote_misses as f64, "requests for another socket's line that found no copy");
    out.add(prefix, "remote_fills", s.remote_fills as f64, "copies of other sockets' lines installed");
    out.add(prefix, "remote_evictions", s.remote_evictions as f64, "copies of other sockets' lines replaced");
    out.add(prefix, "remote_invalidations", s.remote_invalidations as f64, "copies the home invalidated for a write");
}
