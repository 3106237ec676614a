//! Address translation of one core (parameters `Mmu` in `models/tlb.py`): L1 instruction and data TLBs and a
//! second-level TLB (STLB), each an LRU set-associative array per page size (4 KB and 2 MB), paging-structure
//! caches (PSCs) for the table entries above the leaf, and a page walker whose reads of page-table entries (PTEs)
//! are ordinary loads through the cache hierarchy, one after the other.
//!
//! What is translated: SE mode maps guest addresses one to one, so the addresses the core sees are virtual and
//! physical at once. The model translates them over a radix table of its own (4 levels as x86-64, or 3 as Sv39),
//! whose table pages sit at addresses fixed by the addresses they map (`pte_addr`), above every guest address
//! (`table_base`): the walk's reads hit or miss in the caches exactly as the table's lines would. Which addresses
//! are 2 MB pages is a [`PageMap`]: a parameter's area, or ranges the engine registers (`map_huge`).
//!
//! Timing: an L1 TLB hit costs nothing beyond the L1 cache's latency (the lookup is in parallel, VIPT); an L1
//! miss spends `stlb_latency` cycles in the STLB; an STLB miss then walks: one dependent read per level below the
//! deepest PSC hit (a 2 MB page ends one level early), each at the cache latency it meets. The interface a real
//! MMU needs is here too: ASIDs and flushes (all, one ASID, one page).

use crate::{AccessKind, MemPort, MemReq, StatSink, Tick};
use kvsim_params::{Mmu as MmuParams, MmuHugePages, Tlb as TlbParams};

/// Page sizes: index 0 is 4 KB, 1 is 2 MB.
pub const PAGE_SHIFTS: [u32; 2] = [12, 21];
const SIZE_NAMES: [&str; 2] = ["4k", "2m"];
pub(crate) const EMPTY: u64 = u64::MAX;
/// Each level's table pages get a region of this size below `table_base` (the leaf level's tables for a 48-bit
/// address space take 2^39 bytes).
const LEVEL_REGION: u64 = 1 << 40;
/// Virtual addresses are taken modulo 2^48 (x86-64's canonical width; Sv39 uses the low 39 bits).
const VA_MASK: u64 = (1 << 48) - 1;

/// Which side of the core asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Inst,
    Data,
}

/// Lookups and misses of one TLB array.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TlbStats {
    pub accesses: u64,
    pub misses: u64,
}

/// One LRU set-associative TLB array for one page size; a key is (page number << 16 | ASID).
#[derive(Debug, Clone)]
pub struct TlbArray {
    sets: u64,
    assoc: usize,
    keys: Vec<u64>,
    stamps: Vec<u64>,
    /// The frame (physical page number) each entry maps to: FS mode's translations (`tlb_guest`); SE mode maps
    /// one to one and does not read them.
    frames: Vec<u64>,
    clock: u64,
    pub stats: TlbStats,
}

impl TlbArray {
    pub fn new(p: &TlbParams) -> Self {
        let assoc = p.assoc.max(1) as usize;
        let sets = p.entries / assoc as u64;
        let n = (sets as usize) * assoc;
        let (keys, stamps, frames) = (vec![EMPTY; n], vec![0; n], vec![0; n]);
        TlbArray { sets, assoc, keys, stamps, frames, clock: 0, stats: TlbStats::default() }
    }

    /// Holds no entries (this TLB does not take this page size).
    pub fn is_empty(&self) -> bool {
        self.sets == 0
    }

    #[inline]
    fn set_base(&self, page: u64) -> usize {
        // A power-of-two set count (the usual one) by a mask: a 64-bit division takes tens of cycles.
        let set = if self.sets.is_power_of_two() { page & (self.sets - 1) } else { page % self.sets };
        set as usize * self.assoc
    }

    /// Look `page` of `asid` up; a hit becomes most recently used.
    #[inline]
    pub fn lookup(&mut self, page: u64, asid: u16) -> bool {
        self.find(page, asid).is_some()
    }

    /// Look `page` of `asid` up: the frame it maps to on a hit (which becomes most recently used).
    #[inline]
    pub fn lookup_frame(&mut self, page: u64, asid: u16) -> Option<u64> {
        self.find(page, asid).map(|w| self.frames[w])
    }

    /// Does it hold `page` of `asid`? (No replacement state changes: a probe.)
    pub fn holds(&self, page: u64, asid: u16) -> bool {
        if self.sets == 0 {
            return false;
        }
        let (key, base) = (page << 16 | asid as u64, self.set_base(page));
        self.keys[base..base + self.assoc].contains(&key)
    }

    #[inline]
    fn find(&mut self, page: u64, asid: u16) -> Option<usize> {
        if self.sets == 0 {
            return None;
        }
        let key = page << 16 | asid as u64;
        let base = self.set_base(page);
        // The set's keys as one slice: one bounds check for the set, none a way.
        let w = base + self.keys[base..base + self.assoc].iter().position(|&k| k == key)?;
        self.clock += 1;
        self.stamps[w] = self.clock;
        Some(w)
    }

    /// Install `page` of `asid`, mapping `frame`, in its set's least recently used (or empty) way.
    pub fn insert_frame(&mut self, page: u64, asid: u16, frame: u64) {
        if let Some(w) = self.insert_way(page, asid) {
            self.frames[w] = frame;
        }
    }

    /// Install `page` of `asid` in its set's least recently used (or empty) way.
    pub fn insert(&mut self, page: u64, asid: u16) {
        self.insert_way(page, asid);
    }

    fn insert_way(&mut self, page: u64, asid: u16) -> Option<usize> {
        if self.sets == 0 {
            return None;
        }
        let key = page << 16 | asid as u64;
        let base = self.set_base(page);
        let way = (base..base + self.assoc).find(|&w| self.keys[w] == key).unwrap_or_else(|| {
            (base..base + self.assoc).min_by_key(|&w| (self.keys[w] != EMPTY, self.stamps[w])).unwrap_or(base)
        });
        self.clock += 1;
        self.keys[way] = key;
        self.stamps[way] = self.clock;
        Some(way)
    }

    /// Drop every entry for which `drop(page, asid)` holds.
    pub fn flush_where(&mut self, drop: impl Fn(u64, u16) -> bool) {
        for k in &mut self.keys {
            if *k != EMPTY && drop(*k >> 16, *k as u16) {
                *k = EMPTY;
            }
        }
    }
}

/// Which addresses are 2 MB pages: every address, or a sorted list of disjoint 2 MB-aligned ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageMap {
    all: bool,
    /// Whether the engine's hugepage allocations (`Mmu::map_huge`) are 2 MB pages (not with huge_pages = 'none').
    engine_ranges: bool,
    ranges: Vec<(u64, u64)>,
}

impl PageMap {
    /// The map a core's parameters describe.
    pub fn from_params(p: &MmuParams) -> Self {
        let engine_ranges = p.huge_pages != MmuHugePages::None;
        let mut m = PageMap { all: p.huge_pages == MmuHugePages::All, engine_ranges, ranges: Vec::new() };
        if p.huge_pages == MmuHugePages::Area {
            m.map_huge(p.huge_start, p.huge_end.saturating_sub(p.huge_start));
        }
        m
    }

    /// Map every 2 MB page that overlaps [start, start + len) with 2 MB pages (as a hugepage allocator would).
    pub fn map_huge(&mut self, start: u64, len: u64) {
        if len == 0 {
            return;
        }
        let mask = (1u64 << PAGE_SHIFTS[1]) - 1;
        let (mut s, mut e) = (start & !mask, start.saturating_add(len).saturating_add(mask) & !mask);
        // Merge with every range it touches; the list stays sorted and disjoint.
        let mut kept = Vec::with_capacity(self.ranges.len() + 1);
        for &(a, b) in &self.ranges {
            if b < s || a > e {
                kept.push((a, b));
            } else {
                s = s.min(a);
                e = e.max(b);
            }
        }
        let at = kept.partition_point(|&(a, _)| a < s);
        kept.insert(at, (s, e));
        self.ranges = kept;
    }

    /// The page size index (0: 4 KB, 1: 2 MB) of `addr`.
    #[inline]
    pub fn size_of(&self, addr: u64) -> usize {
        if self.all {
            return 1;
        }
        let i = self.ranges.partition_point(|&(a, _)| a <= addr);
        (i > 0 && addr < self.ranges[i - 1].1) as usize
    }

    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }
}

/// A small fully associative LRU cache of upper-level table entries (one per level above the leaf).
#[derive(Debug, Clone, Default)]
struct Psc {
    keys: Vec<u64>,
    stamps: Vec<u64>,
    clock: u64,
}

impl Psc {
    fn new(entries: usize) -> Self {
        Psc { keys: vec![EMPTY; entries], stamps: vec![0; entries], clock: 0 }
    }
    fn lookup(&mut self, key: u64) -> bool {
        if let Some(w) = self.keys.iter().position(|&k| k == key) {
            self.clock += 1;
            self.stamps[w] = self.clock;
            return true;
        }
        false
    }
    fn holds(&self, key: u64) -> bool {
        self.keys.contains(&key)
    }
    fn insert(&mut self, key: u64) {
        if self.keys.is_empty() || self.lookup(key) {
            return;
        }
        let w = (0..self.keys.len()).min_by_key(|&w| (self.keys[w] != EMPTY, self.stamps[w])).unwrap_or(0);
        self.clock += 1;
        self.keys[w] = key;
        self.stamps[w] = self.clock;
    }
    fn flush(&mut self) {
        self.keys.iter_mut().for_each(|k| *k = EMPTY);
    }
}

/// An MMU's statistics alone: its TLB arrays' (ITLB, DTLB, STLB; 4 KB and 2 MB), its walks and PSC hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MmuStats {
    arrays: [[TlbStats; 2]; 3],
    walks: [[WalkStats; 2]; 2],
    psc_hits: u64,
}

/// Page walks, per side and page size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalkStats {
    pub walks: u64,
    /// Cycles from the STLB miss to the translation (the walk's reads, one after another).
    pub cycles: u64,
    pub pte_reads: u64,
}

/// One core's TLBs, PSCs and page walker.
#[derive(Debug, Clone)]
pub struct Mmu {
    pub(crate) levels: u32,
    /// [4 KB, 2 MB] arrays of each TLB.
    itlb: [TlbArray; 2],
    dtlb: [TlbArray; 2],
    pub(crate) stlb: [TlbArray; 2],
    /// psc[k] caches entries of level k + 2 (the levels above the leaf).
    psc: Vec<Psc>,
    pub(crate) stlb_cycles: u64,
    table_base: u64,
    pub pages: PageMap,
    pub(crate) asid: u16,
    /// The 4 KB page (with the ASID) and the size index of the last L1 hit per side: a repeat costs no lookup.
    pub(crate) last: [(u64, usize); 2],
    /// Per side, the L1 hit before `last`, kept when it is in the other array (the stack's 4 KB pages and the heap's
    /// 2 MB ones taken in turn): a repeat of it costs no lookup either. Its entry is still the most recently used
    /// of its set, as `last`'s is: only `last`'s page, in the other array, was looked up since, and no miss has
    /// filled an array since (a miss, a flush or a new ASID forgets it).
    pub(crate) prev: [(u64, usize); 2],
    /// FS mode: the physical 4 KB page of `last` per side (`tlb_guest`).
    pub(crate) last_frame: [u64; 2],
    /// [side][size]
    pub walks: [[WalkStats; 2]; 2],
    pub psc_hits: u64,
}

impl Mmu {
    pub fn new(p: &MmuParams) -> Self {
        let pair = |a: &TlbParams, b: &TlbParams| [TlbArray::new(a), TlbArray::new(b)];
        let levels = p.levels.clamp(3, 4) as u32;
        Mmu {
            levels,
            itlb: pair(&p.itlb_4k, &p.itlb_2m),
            dtlb: pair(&p.dtlb_4k, &p.dtlb_2m),
            stlb: pair(&p.stlb_4k, &p.stlb_2m),
            psc: (2..=levels).map(|_| Psc::new(p.pwc_entries as usize)).collect(),
            stlb_cycles: p.stlb_latency,
            table_base: p.table_base,
            pages: PageMap::from_params(p),
            asid: 0,
            last: [(EMPTY, 0); 2],
            prev: [(EMPTY, 0); 2],
            last_frame: [0; 2],
            walks: Default::default(),
            psc_hits: 0,
        }
    }

    /// The address space (ASID) translations are looked up in from now on.
    pub fn set_asid(&mut self, asid: u16) {
        self.asid = asid;
        self.last = [(EMPTY, 0); 2];
        self.prev = [(EMPTY, 0); 2];
    }

    /// The address of the level-`level` entry (1 = leaf of a 4 KB page) that maps `va`.
    pub fn pte_addr(&self, level: u32, va: u64) -> u64 {
        table_entry(self.table_base, level, va)
    }

    /// The table pages of `level` that map [start, start + len): the range to place on the socket that holds the
    /// data (page tables are allocated where the data's first touch is, as Linux does).
    pub fn table_span(&self, level: u32, start: u64, len: u64) -> (u64, u64) {
        let first = self.pte_addr(level, start) & !4095;
        let last = self.pte_addr(level, start + len.max(1) - 1) & !4095;
        (first, last + 4096)
    }

    /// Register [start, start + len) as 2 MB pages (the engine's hugepage allocations), unless every page is 4 KB
    /// (huge_pages = 'none').
    pub fn map_huge(&mut self, start: u64, len: u64) {
        if !self.pages.engine_ranges {
            return;
        }
        self.pages.map_huge(start, len);
        self.flush_all(); // a mapping changed size: the hardware would be told by a flush
    }

    /// Drop every translation and cached table entry.
    pub fn flush_all(&mut self) {
        self.flush_where(|_, _, _| true);
        self.psc.iter_mut().for_each(Psc::flush);
    }

    /// Drop the translations of address space `asid` (the PSCs, untagged here, are flushed whole).
    pub fn flush_asid(&mut self, asid: u16) {
        self.flush_where(|_, _, a| a == asid);
        self.psc.iter_mut().for_each(Psc::flush);
    }

    /// Drop the translation of `va` in address space `asid` (an `invlpg` or `sfence.vma va, asid`), in every TLB.
    pub fn flush_page(&mut self, va: u64, asid: u16) {
        let va = va & VA_MASK;
        self.flush_where(|size, page, a| a == asid && page == va >> PAGE_SHIFTS[size]);
        self.psc.iter_mut().for_each(Psc::flush);
    }

    fn flush_where(&mut self, drop: impl Fn(usize, u64, u16) -> bool) {
        for arrays in [&mut self.itlb, &mut self.dtlb, &mut self.stlb] {
            for (size, a) in arrays.iter_mut().enumerate() {
                a.flush_where(|page, asid| drop(size, page, asid));
            }
        }
        self.last = [(EMPTY, 0); 2];
        self.prev = [(EMPTY, 0); 2];
    }

    /// Translate `va` for `side`, looked up at cycle `cycle`: the cycle the translation is ready (`cycle` on an L1
    /// hit). `read(addr, cycle)` performs one page-table read at `cycle` and returns the cycle its data arrives.
    #[inline]
    pub fn translate(&mut self, side: Side, va: u64, cycle: u64, read: impl FnMut(u64, u64) -> u64) -> u64 {
        if self.repeat_hit(side, va) {
            return cycle;
        }
        let va = va & VA_MASK;
        let memo = (va >> 12) << 16 | self.asid as u64;
        self.translate_slow(side, va, memo, cycle, read)
    }

    /// An L1 TLB hit on the page `side` translated last (most lookups), or on the one before it in the other
    /// array (`prev`): counts the access, as `translate` does, and returns true; false if `va` needs `translate`.
    /// A caller checks it before setting up a walk's reads. The lookup it stands for would only make the entry
    /// the most recently used of its set, which it is.
    #[inline]
    pub fn repeat_hit(&mut self, side: Side, va: u64) -> bool {
        let memo = ((va & VA_MASK) >> 12) << 16 | self.asid as u64;
        let s = side as usize;
        let (last, mut size) = self.last[s];
        if last != memo {
            let prev = self.prev[s];
            if prev.0 != memo {
                return false;
            }
            // The two swap: `last`'s entry, in the other array, stays its set's most recently used.
            (self.prev[s], self.last[s], size) = (self.last[s], prev, prev.1);
        }
        self.l1(side)[size].stats.accesses += 1;
        true
    }

    /// The page-table entries translating `va` for `side` now may read (none on a TLB hit; the levels below the
    /// deepest one a PSC holds otherwise), each given to `entry`. Changes nothing (the partitioned schedule's probe
    /// of an instruction before it is timed, `Core::may_leave_socket`).
    pub fn walk_reads(&self, side: Side, va: u64, mut entry: impl FnMut(u64)) {
        let va = va & VA_MASK;
        let l1 = match side {
            Side::Inst => &self.itlb,
            Side::Data => &self.dtlb,
        };
        let asid = self.asid;
        if (0..2).any(|k| l1[k].holds(va >> PAGE_SHIFTS[k], asid)) {
            return;
        }
        let size = self.pages.size_of(va);
        if self.stlb[size].holds(va >> PAGE_SHIFTS[size], asid) {
            return;
        }
        let (leaf, top) = (1 + size as u32, self.levels);
        let key = |level: u32| (va >> (12 + 9 * (level - 1))) << 16 | asid as u64;
        let start = (leaf + 1..=top).find(|&l| self.psc[l as usize - 2].holds(key(l))).map_or(top, |l| l - 1);
        for level in (leaf..=start).rev() {
            entry(table_entry(self.table_base, level, va));
        }
    }

    pub(crate) fn l1(&mut self, side: Side) -> &mut [TlbArray; 2] {
        match side {
            Side::Inst => &mut self.itlb,
            Side::Data => &mut self.dtlb,
        }
    }

    /// `translate` past the repeat: an L1 TLB hit here (a third of the target's data lookups), a miss in
    /// `translate_miss`. Apart so that this path, with the closure `read` only passed on, saves and restores few
    /// registers (the walk's code in the same function made every lookup pay for its frame).
    #[inline(never)]
    fn translate_slow(&mut self, side: Side, va: u64, memo: u64, cycle: u64, read: impl FnMut(u64, u64) -> u64) -> u64 {
        let asid = self.asid;
        // Both L1 arrays are probed at once; the one holding the page answers.
        let l1 = self.l1(side);
        let Some(k) = (0..2).find(|&k| l1[k].lookup(va >> PAGE_SHIFTS[k], asid)) else {
            return self.translate_miss(side, va, memo, cycle, read);
        };
        l1[k].stats.accesses += 1;
        // This lookup touched array k alone (a miss in array 0 changes nothing): the page before stays a repeat if
        // it is in the other one.
        let s = side as usize;
        let before = self.last[s];
        self.prev[s] = if before.0 != EMPTY && before.1 != k { before } else { (EMPTY, 0) };
        self.last[s] = (memo, k);
        cycle
    }

    /// An L1 TLB miss: the STLB, else a walk; the arrays filled.
    #[cold]
    #[inline(never)]
    fn translate_miss(&mut self, side: Side, va: u64, memo: u64, cycle: u64, read: impl FnMut(u64, u64) -> u64) -> u64 {
        let asid = self.asid;
        let size = self.pages.size_of(va);
        let page = va >> PAGE_SHIFTS[size];
        // A miss fills arrays (and may evict the page before `last`).
        self.prev[side as usize] = (EMPTY, 0);
        let l1 = self.l1(side);
        l1[size].stats.accesses += 1;
        l1[size].stats.misses += 1;
        let mut ready = cycle + self.stlb_cycles;
        let stlb = &mut self.stlb[size];
        let stlb_hit = if stlb.is_empty() {
            false
        } else {
            stlb.stats.accesses += 1;
            let h = stlb.lookup(page, asid);
            stlb.stats.misses += !h as u64;
            h
        };
        if !stlb_hit {
            let leaf = 1 + size as u32;
            let base = self.table_base;
            let (done, reads) = self.walk(va, leaf, self.levels, ready, |level| table_entry(base, level, va), read);
            let w = &mut self.walks[side as usize][size];
            w.walks += 1;
            w.cycles += done - ready;
            w.pte_reads += reads;
            ready = done;
            self.stlb[size].insert(page, asid);
        }
        let l1 = self.l1(side);
        if !l1[size].is_empty() {
            l1[size].insert(page, asid);
            self.last[side as usize] = (memo, size);
        }
        ready
    }

    /// Walk the table for `va` from level `top` (the root) down to level `leaf` (1: a 4 KB page's entry) from
    /// cycle `cycle`, reading the level-`l` entry at `addr_of(l)`: the cycle the leaf entry arrives and the entries
    /// read. A PSC entry is tagged with the ASID (FS mode's address spaces share the PSCs).
    pub(crate) fn walk(
        &mut self,
        va: u64,
        leaf: u32,
        top: u32,
        cycle: u64,
        addr_of: impl Fn(u32) -> u64,
        mut read: impl FnMut(u64, u64) -> u64,
    ) -> (u64, u64) {
        let asid = self.asid as u64;
        let key = move |level: u32| (va >> (12 + 9 * (level - 1))) << 16 | asid;
        // The deepest level whose entry (pointing to a table) a PSC holds: the walk reads only below it.
        let mut start = top;
        for level in leaf + 1..=top {
            if self.psc[level as usize - 2].lookup(key(level)) {
                self.psc_hits += 1;
                start = level - 1;
                break;
            }
        }
        let mut t = cycle;
        for level in (leaf..=start).rev() {
            t = read(addr_of(level), t);
            if level > leaf {
                let k = key(level);
                self.psc[level as usize - 2].insert(k);
            }
        }
        (t, (start + 1 - leaf) as u64)
    }

    /// The statistics alone (sampling keeps them across functional warming, whose lookups are not measured).
    pub fn stats_snapshot(&self) -> MmuStats {
        let arrays = [&self.itlb, &self.dtlb, &self.stlb].map(|a| [a[0].stats, a[1].stats]);
        MmuStats { arrays, walks: self.walks, psc_hits: self.psc_hits }
    }

    /// Put back statistics taken by `stats_snapshot` (the TLBs' contents stay as they are).
    pub fn restore_stats(&mut self, s: &MmuStats) {
        for (arrays, saved) in [&mut self.itlb, &mut self.dtlb, &mut self.stlb].into_iter().zip(s.arrays) {
            arrays[0].stats = saved[0];
            arrays[1].stats = saved[1];
        }
        self.walks = s.walks;
        self.psc_hits = s.psc_hits;
    }

    /// Start the statistics afresh.
    pub fn reset_stats(&mut self) {
        for arrays in [&mut self.itlb, &mut self.dtlb, &mut self.stlb] {
            arrays.iter_mut().for_each(|a| a.stats = TlbStats::default());
        }
        self.walks = Default::default();
        self.psc_hits = 0;
    }

    /// `itlb.4k.accesses`, `dtlb.2m.misses`, `dtlb.4k.walk_cycles`, `stlb.4k.misses`, `mmu.psc_hits` ... under
    /// `prefix` (a core's). Arrays with no entries report nothing.
    pub fn stats(&self, prefix: &str, out: &mut StatSink) {
        for (name, arrays, side) in
            [("itlb", &self.itlb, Some(Side::Inst)), ("dtlb", &self.dtlb, Some(Side::Data)), ("stlb", &self.stlb, None)]
        {
            for (k, a) in arrays.iter().enumerate() {
                if a.is_empty() && side.is_none() {
                    continue;
                }
                let p = prefix.to_owned() + &kvsim_params::paths::tlb(name, SIZE_NAMES[k]);
                out.add(&p, "accesses", a.stats.accesses as f64, "lookups of translations of this page size");
                out.add(&p, "misses", a.stats.misses as f64, "lookups that missed");
                if let Some(side) = side {
                    let w = &self.walks[side as usize][k];
                    out.add(&p, "walks", w.walks as f64, "page walks (misses of this TLB and the STLB)");
                    out.add(&p, "walk_cycles", w.cycles as f64, "cycles from the STLB miss to the translation");
                    out.add(&p, "pte_reads", w.pte_reads as f64, "page-table entries read by the walks");
                }
            }
        }
        let mmu = prefix.to_owned() + &kvsim_params::paths::mmu();
        out.add(&mmu, "psc_hits", self.psc_hits as f64, "walks shortened by a paging-structure cache hit");
    }
}

/// SE mode's table: the address of the level-`level` entry that maps `va`, below `table_base`.
fn table_entry(table_base: u64, level: u32, va: u64) -> u64 {
    let va = va & VA_MASK;
    let table = va >> (12 + 9 * level);
    let index = (va >> (12 + 9 * (level - 1))) & 511;
    table_base - level as u64 * LEVEL_REGION + table * 4096 + index * 8
}

/// A page-table read as a core's load through `mem` (the walk's reads go through the L1D, as Intel's page walker
/// does); returns when its data arrives. Marked as the walker's (`MemPort::page_walk`): a PTE read is no retired
/// load, so the caches count its misses apart (Ivy Bridge's MEM_LOAD_UOPS_RETIRED.L1_MISS leaves them out).
pub fn pte_read<M: MemPort + ?Sized>(mem: &mut M, core: u16, addr: u64, t: Tick) -> Tick {
    mem.page_walk(core, true);
    let done = mem.access(&MemReq::new(addr, AccessKind::Read, core, t));
    mem.page_walk(core, false);
    done
}

#[cfg(test)]
mod repeat_memo_tests {
    use super::*;
    use kvsim_params::MmuHugePages;

    /// Small L1 TLBs (evictions and set conflicts common), [1 GiB, 2 GiB) in 2 MB pages.
    fn mmu() -> Mmu {
        Mmu::new(&MmuParams {
            enabled: true,
            huge_pages: MmuHugePages::Area,
            huge_start: 1 << 30,
            huge_end: 2 << 30,
            dtlb_4k: TlbParams { entries: 8, assoc: 2 },
            dtlb_2m: TlbParams { entries: 4, assoc: 2 },
            itlb_4k: TlbParams { entries: 4, assoc: 2 },
            ..MmuParams::default()
        })
    }

    fn counters(m: &Mmu) -> Vec<(String, f64, String)> {
        let mut out = StatSink::new();
        m.stats("", &mut out);
        out.entries
    }

    /// `translate` with its repeat memos (`last`, `prev`) against the same MMU made to search every time (both
    /// memos forgotten before each translation): after random translations of 4 KB and 2 MB pages on both sides,
    /// taken in turn and at random, the same ready cycles, counters and contents.
    #[test]
    fn the_repeat_memos_answer_as_the_search_does() {
        let (mut fast, mut slow) = (mmu(), mmu());
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let read = |_addr: u64, c: u64| c + 30;
        for i in 0..50_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // 12 4 KB pages (sets conflict) and 6 2 MB pages; a run of alternation between one of each now and then.
            let small = (x >> 8) % 12 * 4096 + (x >> 20) % 4096;
            let huge = (1 << 30) + (x >> 32) % 6 * (2 << 20) + (x >> 40) % 4096;
            let va = match (x >> 4) % 4 {
                0 => small,
                1 => huge,
                _ if i % 2 == 0 => 5 * 4096 + (x >> 50) % 64,
                _ => (1 << 30) + 3 * (2 << 20) + (x >> 50) % 64,
            };
            let side = if (x >> 60).is_multiple_of(4) { Side::Inst } else { Side::Data };
            slow.last = [(EMPTY, 0); 2];
            slow.prev = [(EMPTY, 0); 2];
            let (a, b) = (fast.translate(side, va, i, read), slow.translate(side, va, i, read));
            assert_eq!(a, b, "translation {i}: {va:#x}");
            if i % 500 == 499 {
                assert_eq!(counters(&fast), counters(&slow), "after translation {i}");
            }
        }
        let hits: f64 = counters(&fast).iter().filter(|(k, _, _)| k.ends_with("accesses")).map(|(_, v, _)| v).sum();
        let misses: f64 = counters(&fast).iter().filter(|(k, _, _)| k.ends_with("misses")).map(|(_, v, _)| v).sum();
        assert!(misses > 5_000.0 && hits > 50_000.0, "lookups {hits}, misses {misses}");
    }
}
