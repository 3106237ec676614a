//! The front end's two decode paths of Sandy Bridge and Ivy Bridge: the decoded-uop cache and the legacy decode
//! pipeline. Which one delivers an instruction decides how many of its neighbours can share its fetch group.
//!
//! Published figures (Intel's 64 and IA-32 Architectures Optimization Reference Manual, Sandy Bridge
//! microarchitecture, which Ivy Bridge keeps):
//! * legacy decode: the instruction fetch unit reads one aligned 16-byte block a cycle and the predecoder marks the
//!   instructions in it (up to 6 a cycle); four decoders (one complex, three simple) take up to 4 instructions a
//!   cycle from the instruction queue;
//! * the decoded ICache: 32 sets x 8 ways, up to 6 uops a way, all uops of a way from one aligned 32-byte window
//!   of code, up to 3 ways for one window (18 uops; a window needing more is never cached), a non-conditional branch
//!   the last uop of its way; it delivers up to 4 uops a cycle (the rename width); the manual's typical hit rate is
//!   80%;
//! * the loop stream detector (28 uops) replays loops whose uops are all in the decoded ICache, at most 4 a cycle
//!   and ending a cycle at the loop's taken branch: for timing that is what a decoded-ICache hit already gives
//!   here, so it is not modelled apart (it saves power, not cycles).
//!
//! How an RV64 stream maps onto them (the guest is RV64 with 4-byte and 2-byte instructions, not x86):
//! * one RV64 instruction is one uop: RV64's instructions are load/store or register-register operations, each
//!   of which x86 decodes into one fused-domain uop (a store's address and data uops are micro-fused into one slot;
//!   the simple decoders take them all, so the complex decoder's 4-1-1-1 pattern never binds);
//! * windows and blocks are the guest's own instruction addresses and bytes: the structures are indexed by code
//!   address, and the guest's code is what runs. x86-64 code for the same C is of similar density (RV64 with
//!   compressed instructions, 2-4 bytes; x86-64, 1-15, about 4 on average) but not the same bytes, so which
//!   instructions share a block or a window is the guest's, not the measured machine's (assumed comparable);
//! * an instruction belongs to the block in which it ends (the predecoder needs all its bytes to find its length),
//!   and to the window in which it starts (a uop-cache way is found by the instruction's start address).
//!
//! The rules the timing takes from this: a fetch group holds instructions of one source (the instruction decode
//! queue is written by the uop cache or by the legacy decoders in a cycle, not by both); a uop-cache hit delivers
//! `fetch_width` a cycle as before. On the legacy path the predecoder marks one aligned `fetch_block_bytes` block a
//! cycle (at most 6 instructions of it a cycle), and the decoders take up to `fetch_width` a cycle from the
//! instruction queue between them: an instruction is decoded no earlier than the cycle its block was predecoded, so
//! consecutive blocks reach the decoders a cycle apart, and a block entered at a branch target in its middle brings
//! only its remaining bytes. The predecoder starts at a branch target (or a switch from the uop cache) in the cycle
//! fetch gets there (its line in hand). Ahead of the decoders it binds nothing, so the queue's size does not enter.
//! A window that misses is decoded by the legacy path and installed when fetch leaves it, taking as many
//! ways as the instructions seen in it need (LRU replacement within its set).
//! Not modelled (no published cycle figure found): a switch penalty between the two paths beyond the group it ends,
//! a longer misprediction penalty for targets outside the uop cache (Agner Fog measures Sandy Bridge's at "15 clock
//! cycles or more for branches inside the µop cache and slightly more" outside), the uop cache's inclusion in the
//! L1I and its flush on ITLB evictions.

use crate::inst::{InstClass, InstInfo};

/// Instructions the predecoder marks in a cycle (Intel: up to six).
const PREDECODE_WIDTH: u32 = 6;
use crate::StatSink;
use kvsim_params::Core as CoreParams;

/// Which path delivered the last instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    None,
    UopCache,
    Legacy,
}

/// One cached window: its number (address / window bytes), the ways it takes (0: an empty slot), its last use.
#[derive(Debug, Clone, Copy)]
struct Entry {
    window: u64,
    ways: u8,
    used: u64,
}

const EMPTY: Entry = Entry { window: u64::MAX, ways: 0, used: 0 };

/// The front end's counters (written only where the core models the decode paths).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrontEndStats {
    /// Windows looked up in the uop cache (one per entry of fetch into a window) and those it missed.
    pub lookups: u64,
    pub misses: u64,
    /// Instructions delivered by the legacy decode pipeline.
    pub legacy_insts: u64,
    /// Fetch groups ended early by the decode paths: a change of source, or the predecoder not yet at the
    /// instruction's block.
    pub breaks: u64,
}

#[derive(Debug, Clone)]
pub struct FrontEnd {
    block_shift: u32,
    /// The uop cache (empty: none): `ways` slots a set, each a window.
    slots: Vec<Entry>,
    ways: usize,
    set_mask: u64,
    window_shift: u32,
    way_uops: u32,
    window_ways: u32,
    uses: u64,
    /// The window fetch is in, whether the uop cache holds it, and (a miss) the instructions seen in it so far:
    /// a bit per 2-byte offset at which one starts, and which of them are jumps (a jump ends a way).
    window: u64,
    hit: bool,
    starts: u128,
    jumps: u128,
    source: Source,
    /// The legacy path: the block the predecoder is in, the cycle it marked it (the last of its instructions), how
    /// many it marked in that cycle, and where the instruction after the last one starts (a jump elsewhere restarts
    /// the predecoder there).
    block: u64,
    predecoded: u64,
    marked: u32,
    next_pc: u64,
    pub stats: FrontEndStats,
}

impl FrontEnd {
    /// The decode paths of `p`, or None where the core models neither (`fetch_block_bytes` 0).
    pub fn new(p: &CoreParams) -> Option<Box<FrontEnd>> {
        if p.fetch_block_bytes == 0 {
            return None;
        }
        let sets = p.uop_cache_sets as usize;
        Some(Box::new(FrontEnd {
            block_shift: p.fetch_block_bytes.trailing_zeros(),
            slots: vec![EMPTY; sets * p.uop_cache_ways as usize],
            ways: p.uop_cache_ways as usize,
            set_mask: (sets as u64).saturating_sub(1),
            window_shift: p.uop_cache_window_bytes.trailing_zeros(),
            way_uops: p.uop_cache_way_uops as u32,
            window_ways: p.uop_cache_window_ways as u32,
            uses: 0,
            window: u64::MAX,
            hit: false,
            starts: 0,
            jumps: 0,
            source: Source::None,
            block: u64::MAX,
            predecoded: 0,
            marked: 0,
            next_pc: u64::MAX,
            stats: FrontEndStats::default(),
        }))
    }

    /// The counters under `prefix` (e.g. "system.core0.").
    pub fn write_stats(&self, prefix: &str, out: &mut StatSink) {
        let f = &self.stats;
        out.add(prefix, "uop_cache_lookups", f.lookups as f64, "code windows looked up in the decoded-uop cache");
        out.add(prefix, "uop_cache_misses", f.misses as f64, "windows the uop cache missed (legacy decode)");
        out.add(prefix, "legacy_decode_insts", f.legacy_insts as f64, "instructions the legacy decoders delivered");
        out.add(
            prefix,
            "fetch_group_breaks",
            f.breaks as f64,
            "fetch groups ended by a decode-path change or the predecoder",
        );
    }

    /// Fetch restarts (a skip or a sleep): the next instruction starts a group from either path.
    pub fn restart(&mut self) {
        self.source = Source::None;
        self.block = u64::MAX;
        self.next_pc = u64::MAX;
    }

    /// `inst` is fetched in cycle `fetch` (`group_start`: it starts a fetch group there): the cycle its decode
    /// path delivers it, `fetch` or later (later starts a new group).
    #[inline]
    pub fn deliver(&mut self, inst: &InstInfo, fetch: u64, group_start: bool) -> u64 {
        let source = if self.slots.is_empty() || !self.cached(inst) { Source::Legacy } else { Source::UopCache };
        let sequential = inst.pc == self.next_pc;
        self.next_pc = inst.pc + inst.len.max(1) as u64;
        let mut at = fetch;
        if !group_start && source != self.source {
            at += 1; // the other path's group is done: this one starts the next cycle
        }
        self.source = source;
        if source == Source::UopCache {
            self.block = u64::MAX; // the predecoder idles; it restarts wherever the legacy path resumes
        } else {
            self.stats.legacy_insts += 1;
            let block = (self.next_pc - 1) >> self.block_shift;
            if !sequential || block != self.block {
                self.predecoded =
                    if sequential && block == self.block.wrapping_add(1) { (self.predecoded + 1).max(at) } else { at };
                (self.block, self.marked) = (block, 0);
            }
            if self.marked == PREDECODE_WIDTH {
                (self.predecoded, self.marked) = (self.predecoded + 1, 0);
            }
            self.marked += 1;
            at = at.max(self.predecoded);
        }
        self.stats.breaks += (at > fetch) as u64;
        at
    }

    /// Whether the uop cache holds `inst`'s window: looked up once as fetch enters the window (installing the one
    /// it leaves if that missed); a miss records the instruction for the window's install.
    #[inline]
    fn cached(&mut self, inst: &InstInfo) -> bool {
        let w = inst.pc >> self.window_shift;
        if w != self.window {
            self.leave_window();
            self.window = w;
            self.hit = self.lookup(w);
            self.stats.lookups += 1;
            self.stats.misses += !self.hit as u64;
        }
        if !self.hit {
            // Offsets in 2-byte units (RV64's instruction alignment); windows of up to 256 bytes fit the masks.
            let at = ((inst.pc & ((1u64 << self.window_shift) - 1)) >> 1).min(127);
            self.starts |= 1 << at;
            if inst.class == InstClass::Jump {
                self.jumps |= 1 << at;
            }
        }
        self.hit
    }

    /// Find window `w` in its set (a hit makes it the most recently used).
    fn lookup(&mut self, w: u64) -> bool {
        self.uses += 1;
        let set = (w & self.set_mask) as usize * self.ways;
        for e in &mut self.slots[set..set + self.ways] {
            if e.ways != 0 && e.window == w {
                e.used = self.uses;
                return true;
            }
        }
        false
    }

    /// Fetch leaves the current window: if it missed, install it with the ways its instructions need (one per
    /// `way_uops` uops, a jump ending a way), unless that is more than a window may take.
    fn leave_window(&mut self) {
        if self.hit || self.window == u64::MAX || self.starts == 0 {
            (self.starts, self.jumps) = (0, 0);
            return;
        }
        let need = self.ways_needed();
        (self.starts, self.jumps) = (0, 0);
        if need > self.window_ways {
            return; // never cached: always decoded
        }
        let set = (self.window & self.set_mask) as usize * self.ways;
        let slots = &mut self.slots[set..set + self.ways];
        let mut free = self.ways as u32 - slots.iter().map(|e| e.ways as u32).sum::<u32>();
        while free < need {
            // Evict the least recently used window of the set.
            let lru = slots.iter_mut().filter(|e| e.ways != 0).min_by_key(|e| e.used).expect("a window to evict");
            free += lru.ways as u32;
            *lru = EMPTY;
        }
        self.uses += 1;
        let slot = slots.iter_mut().find(|e| e.ways == 0).expect("a free slot");
        *slot = Entry { window: self.window, ways: need as u8, used: self.uses };
    }

    /// The ways the window's recorded instructions take: in address order, a way holds `way_uops` of them and ends
    /// after a jump.
    fn ways_needed(&self) -> u32 {
        let (mut ways, mut in_way) = (0, 0);
        let mut starts = self.starts;
        while starts != 0 {
            let at = starts.trailing_zeros();
            starts &= starts - 1;
            if in_way == 0 {
                ways += 1;
            }
            in_way += 1;
            if in_way == self.way_uops || self.jumps & (1 << at) != 0 {
                in_way = 0;
            }
        }
        ways
    }
}
