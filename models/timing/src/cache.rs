//! Caches: [`CacheArray`] is one set-associative, write-back, write-allocate array with MSHRs and way masks;
//! [`MemSystem`] arranges a socket's caches (private L1I/L1D and an optional private L2 per core, a shared LLC
//! in slices with static line interleaving, inclusive of the private levels by back-invalidation) over any
//! backing [`MemPort`] (a [`crate::dram::Dram`], a [`crate::FixedLatency`], ...).
//!
//! Timing: a lookup costs the level's hit latency; a miss leaves for the next level after it, so a level's
//! load-to-use latency is the sum of the hit latencies down to it (plus memory's). A line is installed when its
//! miss is sent, with the tick its data arrives ("ready"): a later access to it before then is an MSHR hit
//! (merged with the outstanding miss) and completes when the data arrives. A miss holds one of the level's MSHRs
//! until its fill; with all MSHRs busy it waits for the first to free, which bounds memory-level parallelism.

use crate::{ratio, AccessKind, Clock, MemPort, MemReq, ReqClass, StatSink, Tick, REQ_CLASSES};
use kvsim_params::{Cache as CacheParams, CacheHierarchy};

const INVALID: u64 = u64::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replacement {
    Lru,
    Plru,
    Random,
}

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
}

impl CacheStats {
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
    ready: Vec<Tick>,
    stamp: Vec<u64>,
    dirty: Vec<bool>,
    /// LLC only: which cores (bit = core % 64) may hold the line in their private caches.
    sharers: Vec<u64>,
    plru: Vec<u64>,
    counter: u64,
    /// Sharers of the line the last `insert` displaced (LLC only).
    pub last_victim_sharers: u64,
    rng: u64,
    policy: Replacement,
    way_masks: [u64; REQ_CLASSES],
    mshr: Vec<Tick>,
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
        let policy = match p.replacement {
            kvsim_params::CacheReplacement::Lru => Replacement::Lru,
            kvsim_params::CacheReplacement::Plru => Replacement::Plru,
            kvsim_params::CacheReplacement::Random => Replacement::Random,
        };
        assert!(policy != Replacement::Plru || assoc.is_power_of_two(), "tree PLRU needs power-of-two ways");
        let n = sets as usize * assoc;
        let all = if assoc == 64 { u64::MAX } else { (1u64 << assoc) - 1 };
        CacheArray {
            sets,
            assoc,
            set_mask: if sets.is_power_of_two() && set_div == 1 { Some(sets - 1) } else { None },
            set_div: set_div.max(1),
            tags: vec![INVALID; n],
            ready: vec![0; n],
            stamp: vec![0; n],
            dirty: vec![false; n],
            sharers: Vec::new(),
            plru: if policy == Replacement::Plru { vec![0; sets as usize] } else { Vec::new() },
            counter: 0,
            last_victim_sharers: 0,
            rng: seed | 1,
            policy,
            way_masks: [all; REQ_CLASSES],
            mshr: vec![0; p.mshrs as usize],
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
        let all = if self.assoc == 64 { u64::MAX } else { (1u64 << self.assoc) - 1 };
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

    /// The way of a slot.
    pub fn way_of(&self, slot: usize) -> usize {
        slot % self.assoc
    }

    pub fn is_dirty(&self, slot: usize) -> bool {
        self.dirty[slot]
    }

    pub fn ready(&self, slot: usize) -> Tick {
        self.ready[slot]
    }

    /// Mark a slot most recently used.
    #[inline]
    pub fn touch(&mut self, slot: usize) {
        match self.policy {
            Replacement::Lru => {
                self.counter += 1;
                self.stamp[slot] = self.counter;
            }
            Replacement::Plru => {
                let set = slot / self.assoc;
                let way = slot % self.assoc;
                // Walk from the root; at each node point the bit away from the side holding `way`.
                let mut node = 1usize;
                let mut lo = 0usize;
                let mut span = self.assoc;
                let bits = &mut self.plru[set];
                while span > 1 {
                    span /= 2;
                    let right = way >= lo + span;
                    if right {
                        *bits &= !(1u64 << node); // next victim search goes left
                        lo += span;
                        node = 2 * node + 1;
                    } else {
                        *bits |= 1u64 << node; // next victim search goes right
                        node *= 2;
                    }
                }
            }
            Replacement::Random => {}
        }
    }

    fn victim_way(&mut self, set: usize, allowed: u64) -> usize {
        let base = set * self.assoc;
        // An invalid allowed way first. (LRU finds it in its own scan: an invalid way's stamp is 0, below every
        // valid line's.)
        if self.policy != Replacement::Lru {
            for w in 0..self.assoc {
                if allowed >> w & 1 == 1 && self.tags[base + w] == INVALID {
                    return w;
                }
            }
        }
        match self.policy {
            Replacement::Lru => {
                let mut best = usize::MAX;
                let mut best_stamp = u64::MAX;
                for w in 0..self.assoc {
                    if allowed >> w & 1 == 1 && self.stamp[base + w] < best_stamp {
                        best_stamp = self.stamp[base + w];
                        best = w;
                    }
                }
                best
            }
            Replacement::Plru => {
                let bits = self.plru[set];
                let mut node = 1usize;
                let mut lo = 0usize;
                let mut span = self.assoc;
                while span > 1 {
                    span /= 2;
                    let left_mask = ((1u64 << span) - 1) << lo;
                    let right_mask = ((1u64 << span) - 1) << (lo + span);
                    let mut go_right = bits >> node & 1 == 1;
                    if go_right && allowed & right_mask == 0 {
                        go_right = false;
                    } else if !go_right && allowed & left_mask == 0 {
                        go_right = true;
                    }
                    if go_right {
                        lo += span;
                        node = 2 * node + 1;
                    } else {
                        node *= 2;
                    }
                }
                lo
            }
            Replacement::Random => {
                // xorshift64: deterministic for a given seed.
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                let mut k = (self.rng % allowed.count_ones() as u64) as u32;
                let mut m = allowed;
                loop {
                    let w = m.trailing_zeros();
                    if k == 0 {
                        return w as usize;
                    }
                    k -= 1;
                    m &= m - 1;
                }
            }
        }
    }

    /// Install `line` (absent) for `class`, its data arriving at `ready`. Returns the slot and the evicted line
    /// with its dirtiness, if a valid line was displaced.
    pub fn insert(&mut self, line: u64, ready: Tick, dirty: bool, class: ReqClass) -> (usize, Option<(u64, bool)>) {
        let set = self.set_of(line);
        let way = self.victim_way(set, self.way_masks[class as usize]);
        let slot = set * self.assoc + way;
        let old = self.tags[slot];
        let victim = if old == INVALID {
            None
        } else {
            self.stats.evictions += 1;
            if self.dirty[slot] {
                self.stats.writebacks += 1;
            }
            Some((old, self.dirty[slot]))
        };
        self.tags[slot] = line;
        self.ready[slot] = ready;
        self.dirty[slot] = dirty;
        if !self.sharers.is_empty() {
            self.last_victim_sharers = std::mem::replace(&mut self.sharers[slot], 0);
        }
        self.touch(slot);
        (slot, victim)
    }

    /// Remove `line` if present; returns whether it was dirty.
    pub fn invalidate(&mut self, line: u64) -> Option<bool> {
        let slot = self.find(line)?;
        self.tags[slot] = INVALID;
        self.stamp[slot] = 0;
        Some(std::mem::replace(&mut self.dirty[slot], false))
    }

    /// A lookup of `line` at `t` (a write dirties it). On a hit, touches the line, counts a hit (or an MSHR merge
    /// when its fill is still on the way) and returns when the data is available; None on a miss.
    pub fn lookup(&mut self, line: u64, write: bool, t: Tick) -> Option<Tick> {
        let slot = self.find(line)?;
        self.touch(slot);
        if write {
            self.mark_dirty(slot);
        }
        let (ready, done) = (self.ready(slot), t + self.hit_ticks);
        if ready <= t {
            self.stats.hits += 1;
            Some(done)
        } else {
            self.stats.mshr_merges += 1;
            Some(ready.max(done))
        }
    }

    pub fn mark_dirty(&mut self, slot: usize) {
        self.dirty[slot] = true;
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

    /// The miss held by MSHR `i`, sent at `start`, is filled at `fill`.
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

    /// Warming (no time): find or install `line`, updating replacement state and dirtiness. Returns whether it
    /// hit and the displaced line with its dirtiness.
    #[inline]
    pub fn warm(&mut self, line: u64, write: bool, class: ReqClass) -> (bool, Option<(u64, bool)>) {
        if let Some(slot) = self.find(line) {
            self.touch(slot);
            if write {
                self.mark_dirty(slot);
            }
            return (true, None);
        }
        let (_, victim) = self.insert(line, 0, write, class);
        (false, victim)
    }

    /// Is the line present (its data may still be on the way)?
    pub fn contains(&self, line: u64) -> bool {
        self.find(line).is_some()
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

/// `ticks`, if known, is the measured interval (for the average MSHR occupancy).
fn write_stats(s: &CacheStats, prefix: &str, insts: Option<u64>, ticks: Option<Tick>, out: &mut StatSink) {
    {
        out.add(prefix, "accesses", s.accesses as f64, "lookups (demand, prefetch and write)");
        out.add(prefix, "reads", (s.accesses - s.writes) as f64, "read lookups (loads, fetches, prefetches)");
        out.add(prefix, "writes", s.writes as f64, "write lookups (stores, atomics, I/O writes)");
        out.add(prefix, "read_misses", (s.misses - s.write_misses) as f64, "misses of reads and prefetches");
        out.add(prefix, "write_misses", s.write_misses as f64, "misses of writes");
        out.add(prefix, "hits", s.hits as f64, "lookups that found the line with its data");
        out.add(prefix, "misses", s.misses as f64, "lookups that missed and sent a request to the next level");
        out.add(prefix, "miss_rate", ratio(s.misses as f64, s.accesses as f64), "misses / accesses");
        out.add(
            prefix,
            "mshr_merges",
            s.mshr_merges as f64,
            "accesses merged into an outstanding miss to the same line",
        );
        out.add(prefix, "mshr_full", s.mshr_full as f64, "misses that waited for a free MSHR");
        out.add(prefix, "mshr_wait_ticks", s.mshr_wait_ticks as f64, "ps spent waiting for a free MSHR");
        out.add(prefix, "evictions", s.evictions as f64, "valid lines replaced");
        out.add(prefix, "writebacks", s.writebacks as f64, "dirty lines written back on eviction");
        out.add(
            prefix,
            "back_invalidations",
            s.back_invalidations as f64,
            "lines invalidated by an inclusive level below",
        );
        out.add(prefix, "prefetches", s.prefetches as f64, "software prefetch requests");
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
}

/// One core's private caches.
#[derive(Debug, Clone)]
pub struct PrivateCaches {
    pub l1i: CacheArray,
    pub l1d: CacheArray,
    pub l2: Option<CacheArray>,
}

/// A socket's cache hierarchy over a backing memory `M`. Core `i`'s requests carry `requester = i`.
#[derive(Debug, Clone)]
pub struct MemSystem<M: MemPort> {
    pub cores: Vec<PrivateCaches>,
    pub llc: Vec<CacheArray>,
    llc_inclusive: bool,
    line_shift: u32,
    pub mem: M,
    /// DDIO: I/O writes allocate or update LLC lines (within the I/O class's ways); off: they go to memory and
    /// invalidate cached copies.
    pub ddio: bool,
    /// Lines an I/O agent wrote that no core has read since (to tell whether the core's read hits, and to count
    /// the ones the LLC evicts first: leaky DMA).
    io_fresh: std::collections::HashSet<u64>,
    pub io: IoStats,
    /// Addresses [start, end) of device registers: core accesses there bypass the caches and take
    /// `uncached_ticks` one way (none by default).
    pub uncached: (u64, u64),
    pub uncached_ticks: Tick,
}

/// What I/O (DMA) traffic did in the LLC.
#[derive(Debug, Clone, Copy, Default)]
pub struct IoStats {
    pub write_hits: u64,
    pub write_allocs: u64,
    pub writes_to_memory: u64,
    pub read_hits: u64,
    pub read_misses: u64,
    pub core_read_hits: u64,
    pub core_read_misses: u64,
    pub leaky_evictions: u64,
    pub mmio_accesses: u64,
}

impl<M: MemPort> MemSystem<M> {
    /// `core_clocks[i]` is core i's clock in Hz (its private caches run at it).
    pub fn new(p: &CacheHierarchy, core_clocks: &[u64], mem: M) -> Self {
        let cores = core_clocks
            .iter()
            .enumerate()
            .map(|(i, &hz)| PrivateCaches {
                l1i: CacheArray::new(&p.l1i, p.l1i.size, 1, hz, 0x1111 + i as u64),
                l1d: CacheArray::new(&p.l1d, p.l1d.size, 1, hz, 0x2222 + i as u64),
                l2: p.l2_enabled.then(|| CacheArray::new(&p.l2, p.l2.size, 1, hz, 0x3333 + i as u64)),
            })
            .collect();
        let slices = p.llc_slices.max(1);
        let llc = (0..slices)
            .map(|s| {
                let mut c = CacheArray::new(&p.llc, p.llc.size / slices, slices, p.uncore_clock, 0x4444 + s);
                c.sharers = vec![0; c.tags.len()];
                c
            })
            .collect();
        MemSystem {
            cores,
            llc,
            llc_inclusive: p.llc.inclusive,
            line_shift: p.l1d.line_size.trailing_zeros(),
            mem,
            ddio: true,
            io_fresh: Default::default(),
            io: IoStats::default(),
            uncached: (0, 0),
            uncached_ticks: 0,
        }
    }

    pub fn line_size(&self) -> u64 {
        1 << self.line_shift
    }

    /// Core `core` changed its clock: its private caches follow.
    pub fn set_core_clock(&mut self, core: usize, hz: u64) {
        let p = &mut self.cores[core];
        p.l1i.set_clock(hz);
        p.l1d.set_clock(hz);
        if let Some(l2) = &mut p.l2 {
            l2.set_clock(hz);
        }
    }

    /// Confine `class`'s LLC allocations to `mask`'s ways in every slice (e.g. DDIO: the NIC's 10%).
    pub fn set_llc_way_mask(&mut self, class: ReqClass, mask: u64) {
        for s in &mut self.llc {
            s.set_way_mask(class, mask);
        }
    }

    #[inline]
    fn slice_of(&self, line: u64) -> usize {
        (line % self.llc.len() as u64) as usize
    }

    /// Load-to-use ticks of a hit at each level for `core`: (L1D, L2 if any, LLC).
    pub fn hit_latencies(&self, core: usize) -> (Tick, Option<Tick>, Tick) {
        let p = &self.cores[core];
        let l1 = p.l1d.hit_ticks;
        let l2 = p.l2.as_ref().map(|c| l1 + c.hit_ticks);
        (l1, l2, l2.unwrap_or(l1) + self.llc[0].hit_ticks)
    }

    /// A core's request: L1 (I or D), then L2, LLC, memory.
    fn core_access(&mut self, req: &MemReq) -> Tick {
        if req.addr >= self.uncached.0 && req.addr < self.uncached.1 {
            // A device register (MMIO): uncached; a store (doorbell) is posted once it reaches the device, a load
            // waits for the round trip.
            self.io.mmio_accesses += 1;
            let trip = if req.kind == AccessKind::Write { self.uncached_ticks } else { 2 * self.uncached_ticks };
            return req.time + trip;
        }
        let line = req.addr >> self.line_shift;
        let t = req.time;
        let core = req.requester as usize;
        let ifetch = req.kind == AccessKind::IFetch;
        let write = req.kind == AccessKind::Write;
        let l1 = if ifetch { &mut self.cores[core].l1i } else { &mut self.cores[core].l1d };
        l1.stats.accesses += 1;
        match req.kind {
            AccessKind::Prefetch => l1.stats.prefetches += 1,
            AccessKind::Write => l1.stats.writes += 1,
            _ => {}
        }
        let lat = l1.hit_ticks;
        if let Some(done) = l1.lookup(line, write, t) {
            return done;
        }
        l1.stats.misses += 1;
        if write {
            l1.stats.write_misses += 1;
        }
        let (mshr, start) = l1.mshr_acquire(t);
        let fill = self.below_l1(core, line, req.non_temporal, req.class, start + lat);
        let l1 = if ifetch { &mut self.cores[core].l1i } else { &mut self.cores[core].l1d };
        l1.mshr_hold_from(mshr, start, fill);
        let (_, victim) = l1.insert(line, fill, write, req.class);
        if let Some((v, true)) = victim {
            self.writeback_from_l1(core, v, start);
        }
        fill
    }

    /// An L1 miss for `line` leaves the L1 at `t`: returns when its data reaches the L1.
    fn below_l1(&mut self, core: usize, line: u64, non_temporal: bool, class: ReqClass, t: Tick) -> Tick {
        let Some(l2) = self.cores[core].l2.as_mut() else {
            return self.llc_access(core, line, class, t);
        };
        l2.stats.accesses += 1;
        let lat = l2.hit_ticks;
        if let Some(done) = l2.lookup(line, false, t) {
            return done;
        }
        l2.stats.misses += 1;
        if non_temporal {
            // Non-temporal: the fill skips the mid-level cache.
            return self.llc_access(core, line, class, t + lat);
        }
        let (mshr, start) = l2.mshr_acquire(t);
        let fill = self.llc_access(core, line, class, start + lat);
        let l2 = self.cores[core].l2.as_mut().expect("l2");
        l2.mshr_hold_from(mshr, start, fill);
        let (_, victim) = l2.insert(line, fill, false, class);
        if let Some((v, true)) = victim {
            self.llc_writeback(v, start);
        }
        fill
    }

    /// A request for `line` reaches its LLC slice at `t`.
    fn llc_access(&mut self, core: usize, line: u64, class: ReqClass, t: Tick) -> Tick {
        let s = self.slice_of(line);
        if !self.io_fresh.is_empty() && self.io_fresh.remove(&line) {
            if self.llc[s].find(line).is_some() {
                self.io.core_read_hits += 1;
            } else {
                self.io.core_read_misses += 1;
            }
        }
        let c = &mut self.llc[s];
        c.stats.accesses += 1;
        let lat = c.hit_ticks;
        let bit = 1u64 << (core % 64);
        if let Some(slot) = c.find(line) {
            c.touch(slot);
            c.sharers[slot] |= bit;
            let ready = c.ready(slot);
            if ready <= t {
                c.stats.hits += 1;
                return t + lat;
            }
            c.stats.mshr_merges += 1;
            return ready.max(t + lat);
        }
        c.stats.misses += 1;
        let (mshr, start) = c.mshr_acquire(t);
        let go = start + lat;
        let fill = self.mem.access(&MemReq::new(line << self.line_shift, AccessKind::Read, core as u16, go));
        let c = &mut self.llc[s];
        c.mshr_hold_from(mshr, start, fill);
        let (slot, victim) = c.insert(line, fill, false, class);
        if let Some((v, dirty)) = victim {
            self.evict_llc_line(s, v, dirty, go);
        }
        self.llc[s].sharers[slot] = bit;
        fill
    }

    /// The LLC dropped `v`: back-invalidate the private copies (if inclusive) and write back dirty data.
    fn evict_llc_line(&mut self, slice: usize, v: u64, dirty: bool, t: Tick) {
        if !self.io_fresh.is_empty() && self.io_fresh.remove(&v) {
            self.io.leaky_evictions += 1;
        }
        let mut dirty = dirty;
        if self.llc_inclusive {
            let sharers = self.llc[slice].last_victim_sharers;
            dirty |= self.back_invalidate(v, sharers);
        }
        if dirty {
            self.mem.access(&MemReq::new(v << self.line_shift, AccessKind::Write, 0, t));
        }
    }

    /// Remove `line` from the private caches of the cores in `which` (bit = core % 64); true if any was dirty.
    fn back_invalidate(&mut self, line: u64, which: u64) -> bool {
        let mut dirty = false;
        for (i, p) in self.cores.iter_mut().enumerate() {
            if which >> (i % 64) & 1 == 0 {
                continue;
            }
            for c in [&mut p.l1i, &mut p.l1d].into_iter().chain(p.l2.as_mut()) {
                if let Some(d) = c.invalidate(line) {
                    c.stats.back_invalidations += 1;
                    dirty |= d;
                }
            }
        }
        dirty
    }

    fn writeback_from_l1(&mut self, core: usize, v: u64, t: Tick) {
        if let Some(l2) = self.cores[core].l2.as_mut() {
            if let Some(slot) = l2.find(v) {
                l2.mark_dirty(slot);
                return;
            }
            let (_, victim) = l2.insert(v, t, true, ReqClass::Core);
            if let Some((v2, true)) = victim {
                self.llc_writeback(v2, t);
            }
            return;
        }
        self.llc_writeback(v, t);
    }

    fn llc_writeback(&mut self, v: u64, t: Tick) {
        let s = self.slice_of(v);
        if let Some(slot) = self.llc[s].find(v) {
            self.llc[s].mark_dirty(slot);
        } else {
            // Not inclusive (or already dropped): straight to memory.
            self.mem.access(&MemReq::new(v << self.line_shift, AccessKind::Write, 0, t));
        }
    }

    /// An I/O agent's request (class `Io`): goes to the LLC directly. A write allocates or updates the line in
    /// the LLC (DDIO write-allocate/write-update) within the class's ways and invalidates private copies; a read
    /// is served by the LLC or memory without allocating.
    fn io_access(&mut self, req: &MemReq) -> Tick {
        let line = req.addr >> self.line_shift;
        let t = req.time;
        let s = self.slice_of(line);
        let lat = self.llc[s].hit_ticks;
        self.llc[s].stats.accesses += 1;
        let found = self.llc[s].find(line);
        if req.kind == AccessKind::Write && !self.ddio {
            // Plain DMA: the line goes to memory; cached copies are invalidated.
            self.io_fresh.insert(line);
            self.io.writes_to_memory += 1;
            if let Some(slot) = found {
                let which = std::mem::replace(&mut self.llc[s].sharers[slot], 0);
                if which != 0 {
                    self.back_invalidate(line, which);
                }
                self.llc[s].invalidate(line);
            } else if !self.llc_inclusive {
                self.back_invalidate(line, u64::MAX);
            }
            self.llc[s].stats.writes += 1;
            self.llc[s].stats.misses += 1;
            return self.mem.access(&MemReq { time: t + lat, ..*req });
        }
        if req.kind == AccessKind::Write {
            self.io_fresh.insert(line);
            // Private copies go stale. With an inclusive LLC only the recorded sharers can hold the line.
            let which = match found {
                Some(slot) => std::mem::replace(&mut self.llc[s].sharers[slot], 0),
                None if self.llc_inclusive => 0,
                None => u64::MAX,
            };
            if which != 0 {
                self.back_invalidate(line, which);
            }
            let c = &mut self.llc[s];
            c.stats.writes += 1;
            match found {
                Some(slot) => {
                    c.stats.hits += 1;
                    c.touch(slot);
                    c.mark_dirty(slot);
                    self.io.write_hits += 1;
                }
                None => {
                    c.stats.misses += 1;
                    c.stats.write_misses += 1;
                    self.io.write_allocs += 1;
                    let (_, victim) = c.insert(line, t + lat, true, req.class);
                    if let Some((v, dirty)) = victim {
                        self.evict_llc_line(s, v, dirty, t);
                    }
                }
            }
            return t + lat;
        }
        match found {
            Some(slot) => {
                self.io.read_hits += 1;
                let c = &mut self.llc[s];
                c.stats.hits += 1;
                (t + lat).max(c.ready(slot))
            }
            None => {
                self.io.read_misses += 1;
                self.llc[s].stats.misses += 1;
                self.mem.access(&MemReq { time: t + lat, ..*req })
            }
        }
    }

    /// Statistics of core `core`'s private caches (`prefix` e.g. "system.core3."), with MPKI over `insts`.
    pub fn core_stats(&self, core: usize, prefix: &str, insts: Option<u64>, out: &mut StatSink) {
        self.core_stats_over(core, prefix, insts, None, out)
    }

    /// As `core_stats`, with the measured interval in ticks (for occupancies).
    pub fn core_stats_over(
        &self,
        core: usize,
        prefix: &str,
        insts: Option<u64>,
        ticks: Option<Tick>,
        out: &mut StatSink,
    ) {
        let p = &self.cores[core];
        write_stats(&p.l1i.stats, &format!("{prefix}l1i."), insts, ticks, out);
        write_stats(&p.l1d.stats, &format!("{prefix}l1d."), insts, ticks, out);
        if let Some(l2) = &p.l2 {
            write_stats(&l2.stats, &format!("{prefix}l2."), insts, ticks, out);
        }
    }

    /// Statistics of the LLC: totals under `prefix`llc. and each slice under `prefix`llc.sliceN.
    pub fn llc_stats(&self, prefix: &str, insts: Option<u64>, out: &mut StatSink) {
        self.llc_stats_over(prefix, insts, None, out)
    }

    /// As `llc_stats`, with the measured interval in ticks (for occupancies).
    pub fn llc_stats_over(&self, prefix: &str, insts: Option<u64>, ticks: Option<Tick>, out: &mut StatSink) {
        let mut total = CacheStats::default();
        for s in &self.llc {
            total.add(&s.stats);
        }
        write_stats(&total, &format!("{prefix}llc."), insts, ticks, out);
        let io = &self.io;
        let d = format!("{prefix}ddio.");
        out.add(&d, "enabled", self.ddio as u64 as f64, "DDIO on (I/O writes allocate in the LLC) or off (to memory)");
        out.add(&d, "write_hits", io.write_hits as f64, "DMA line writes that updated a line already in the LLC");
        out.add(&d, "write_allocs", io.write_allocs as f64, "DMA line writes that allocated a line in the DDIO ways");
        out.add(&d, "writes_to_memory", io.writes_to_memory as f64, "DMA line writes sent to memory (DDIO off)");
        out.add(&d, "dma_read_hits", io.read_hits as f64, "DMA line reads served by the LLC");
        out.add(&d, "dma_read_misses", io.read_misses as f64, "DMA line reads served by memory");
        out.add(&d, "core_read_hits", io.core_read_hits as f64,
            "first core accesses to a DMA-written line that found it in the LLC");
        out.add(&d, "core_read_misses", io.core_read_misses as f64,
            "first core accesses to a DMA-written line that missed the LLC (went to memory)");
        out.add(&d, "leaky_evictions", io.leaky_evictions as f64,
            "DMA-written lines the LLC evicted before any core read them (leaky DMA)");
        out.add(&d, "mmio_accesses", io.mmio_accesses as f64,
            "core loads and stores to device registers (uncached: doorbells and register reads)");
        if self.llc.len() > 1 {
            for (i, s) in self.llc.iter().enumerate() {
                write_stats(&s.stats, &format!("{prefix}llc.slice{i}."), insts, ticks, out);
            }
        }
    }

    /// Start every cache's statistics afresh (contents are kept).
    pub fn reset_stats(&mut self) {
        for p in &mut self.cores {
            p.l1i.stats = CacheStats::default();
            p.l1d.stats = CacheStats::default();
            if let Some(l2) = &mut p.l2 {
                l2.stats = CacheStats::default();
            }
        }
        for s in &mut self.llc {
            s.stats = CacheStats::default();
        }
        self.io = IoStats::default();
    }

    /// Cache warming: a core's access updates the contents and replacement state of every level it reaches, as
    /// the timed access would, but takes no time, holds no MSHR and leaves memory's timing state alone. No
    /// statistics are counted.
    pub fn warm_access(&mut self, core: usize, addr: u64, kind: AccessKind, non_temporal: bool) {
        let line = addr >> self.line_shift;
        let write = kind == AccessKind::Write;
        let p = &mut self.cores[core];
        let l1 = if kind == AccessKind::IFetch { &mut p.l1i } else { &mut p.l1d };
        let (hit, victim) = l1.warm(line, write, ReqClass::Core);
        if hit {
            return;
        }
        if let Some((v, true)) = victim {
            self.warm_writeback(core, v);
        }
        let bit = 1u64 << (core % 64);
        if let Some(l2) = self.cores[core].l2.as_mut() {
            if let Some(slot) = l2.find(line) {
                l2.touch(slot);
                // An inclusive LLC keeps it too: refresh its recency below.
            } else if !non_temporal {
                let (_, v2) = l2.warm(line, false, ReqClass::Core);
                if let Some((v, true)) = v2 {
                    self.warm_llc_writeback(v);
                }
            }
        }
        let s = self.slice_of(line);
        let c = &mut self.llc[s];
        if let Some(slot) = c.find(line) {
            c.touch(slot);
            c.sharers[slot] |= bit;
            return;
        }
        let (slot, victim) = c.insert(line, 0, false, ReqClass::Core);
        c.sharers[slot] = bit;
        if let Some((v, _dirty)) = victim {
            if self.llc_inclusive {
                let sharers = self.llc[s].last_victim_sharers;
                self.back_invalidate(v, sharers);
            }
        }
    }

    fn warm_writeback(&mut self, core: usize, v: u64) {
        if let Some(l2) = self.cores[core].l2.as_mut() {
            if let Some(slot) = l2.find(v) {
                l2.mark_dirty(slot);
                return;
            }
        }
        self.warm_llc_writeback(v);
    }

    fn warm_llc_writeback(&mut self, v: u64) {
        let s = self.slice_of(v);
        if let Some(slot) = self.llc[s].find(v) {
            self.llc[s].mark_dirty(slot);
        }
    }
}

impl<M: MemPort> MemPort for MemSystem<M> {
    #[inline]
    fn access(&mut self, req: &MemReq) -> Tick {
        match req.class {
            ReqClass::Core => self.core_access(req),
            ReqClass::Io => self.io_access(req),
        }
    }

    fn stats(&self, prefix: &str, now: Tick, out: &mut StatSink) {
        for i in 0..self.cores.len() {
            self.core_stats(i, &format!("{prefix}core{i}."), None, out);
        }
        self.llc_stats(prefix, None, out);
        self.mem.stats(&format!("{prefix}mem."), now, out);
    }
}

#[cfg(test)]
mod ddio_tests {
    use super::*;
    use crate::FixedLatency;

    fn sys(ddio: bool) -> MemSystem<FixedLatency> {
        let mut m = MemSystem::new(&crate::synth::hierarchy_params(), &[2_500_000_000], FixedLatency::new(80_000));
        m.ddio = ddio;
        m
    }

    fn io(m: &mut MemSystem<FixedLatency>, addr: u64, write: bool, time: Tick) -> Tick {
        let kind = if write { AccessKind::Write } else { AccessKind::Read };
        m.access(&MemReq { addr, kind, non_temporal: false, requester: 0, class: ReqClass::Io, time })
    }

    fn core_read(m: &mut MemSystem<FixedLatency>, addr: u64, time: Tick) -> Tick {
        m.access(&MemReq::new(addr, AccessKind::Read, 0, time)) - time
    }

    #[test]
    fn with_ddio_a_just_arrived_packet_hits_in_the_llc() {
        let mut m = sys(true);
        for line in 0..4 {
            io(&mut m, 0x10_0000 + line * 64, true, 0);
        }
        assert_eq!((m.io.write_allocs, m.mem.writes), (4, 0));
        let lat = core_read(&mut m, 0x10_0000, 1_000_000);
        assert_eq!((m.io.core_read_hits, m.io.core_read_misses, m.mem.reads), (1, 0, 0));
        assert!(lat < 80_000, "an LLC hit, not memory: {lat} ps");
        // A DMA read of a line in the LLC is served there.
        io(&mut m, 0x10_0040, false, 2_000_000);
        assert_eq!((m.io.read_hits, m.io.read_misses), (1, 0));
    }

    #[test]
    fn without_ddio_the_packet_goes_to_memory_and_the_core_misses() {
        let mut m = sys(false);
        core_read(&mut m, 0x10_0000, 0); // a stale copy in the caches
        io(&mut m, 0x10_0000, true, 500_000);
        assert_eq!((m.io.writes_to_memory, m.mem.writes), (1, 1));
        let reads = m.mem.reads;
        let lat = core_read(&mut m, 0x10_0000, 1_000_000);
        assert_eq!((m.io.core_read_hits, m.io.core_read_misses, m.mem.reads), (0, 1, reads + 1));
        assert!(lat >= 80_000, "{lat} ps");
    }

    #[test]
    fn device_registers_bypass_the_caches() {
        let mut m = sys(true);
        m.uncached = (0x30_0000_0000, 0x31_0000_0000);
        m.uncached_ticks = 100_000;
        let store = m.access(&MemReq::new(0x30_0000_0018, AccessKind::Write, 0, 5_000)) - 5_000;
        let load = core_read(&mut m, 0x30_0000_0010, 1_000_000);
        assert_eq!((store, load, m.io.mmio_accesses), (100_000, 200_000, 2));
        assert_eq!(m.cores[0].l1d.stats.accesses + m.llc[0].stats.accesses, 0, "no cache saw them");
    }

    #[test]
    fn ddio_ways_below_the_buffers_in_flight_leak() {
        // 2048 sets: 4096 lines in flight need two ways per set.
        let leaks = |mask: u64| {
            let mut m = sys(true);
            m.set_llc_way_mask(ReqClass::Io, mask);
            for line in 0..4096 {
                io(&mut m, line * 64, true, line * 1000);
            }
            for line in 0..4096 {
                core_read(&mut m, line * 64, 10_000_000 + line * 1000);
            }
            // Leaked lines come back from memory when the core reads them.
            (m.io.leaky_evictions, m.mem.reads)
        };
        assert_eq!(leaks(0b11), (0, 0));
        assert_eq!(leaks(0b1), (2048, 2048));
    }
}
