//! Synthetic instruction streams and small fixed configurations, for the crate's tests, microbenchmarks and
//! speed measurement (no guest binary needed). The configurations here are test fixtures, not defaults: the
//! defaults of every parameter are declared once, in the Python parameter classes.

use crate::cache::MemSystem;
use crate::core::{Core, L1Latencies};
use crate::dram::Dram;
use crate::inst::{InstClass, InstInfo, PrefetchKind};
use crate::{MemPort, StatSink};
use kvsim_params::{Cache, CacheHierarchy, Core as CoreParams, MemoryController};

/// splitmix64: a small deterministic generator.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// A random cyclic permutation (Sattolo): following `next[i]` visits every element once.
    pub fn cycle(&mut self, n: usize) -> Vec<u32> {
        let mut p: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            let j = self.below(i as u64) as usize;
            p.swap(i, j);
        }
        let mut next = vec![0u32; n];
        for i in 0..n {
            next[p[i] as usize] = p[(i + 1) % n];
        }
        next
    }
}

// ---- instruction builders -----------------------------------------------------------------------------------

pub fn alu(pc: u64, dst: u8, src1: u8, src2: u8) -> InstInfo {
    InstInfo { pc, len: 4, class: InstClass::IntAlu, dst, src1, src2, next_pc: pc + 4, ..Default::default() }
}

pub fn op(pc: u64, class: InstClass, dst: u8, src1: u8, src2: u8) -> InstInfo {
    InstInfo { class, ..alu(pc, dst, src1, src2) }
}

pub fn load(pc: u64, dst: u8, base: u8, addr: u64) -> InstInfo {
    InstInfo { class: InstClass::Load, mem_addr: addr, mem_size: 8, ..alu(pc, dst, base, 0) }
}

pub fn store(pc: u64, data: u8, base: u8, addr: u64) -> InstInfo {
    InstInfo { class: InstClass::Store, mem_addr: addr, mem_size: 8, ..alu(pc, 0, base, data) }
}

pub fn prefetch(pc: u64, addr: u64, non_temporal: bool) -> InstInfo {
    InstInfo {
        class: InstClass::Prefetch,
        mem_addr: addr,
        non_temporal,
        prefetch_kind: PrefetchKind::Read,
        ..alu(pc, 0, 0, 0)
    }
}

pub fn branch(pc: u64, src1: u8, taken: bool, target: u64) -> InstInfo {
    InstInfo { class: InstClass::Branch, taken, next_pc: if taken { target } else { pc + 4 }, ..alu(pc, 0, src1, 0) }
}

// ---- fixture configurations ---------------------------------------------------------------------------------

/// A 4-wide out-of-order core at 2.5 GHz (Ivy Bridge-like widths and queues); the rest are the declared defaults.
pub fn core_params() -> CoreParams {
    CoreParams {
        fetch_width: 4,
        issue_width: 4,
        commit_width: 4,
        rob_entries: 168,
        lq_entries: 64,
        sq_entries: 36,
        int_alus: 4,
        btb_entries: 1024,
        ..CoreParams::default()
    }
}

/// A cache of the declared defaults (64-byte lines, LRU, not inclusive) with this size, ways, latency and MSHRs.
pub fn cache_params(size: u64, assoc: u64, hit_latency: u64, mshrs: u64) -> Cache {
    Cache { size, assoc, hit_latency, mshrs, ..Cache::default() }
}

/// The declared L1s (32 KiB 8-way, 4 cycles), no L2, and a small LLC: 2 MiB 16-way inclusive, 20 cycles at
/// 2.5 GHz, one slice (small enough for tests to fill).
pub fn hierarchy_params() -> CacheHierarchy {
    CacheHierarchy {
        l1i: cache_params(32 << 10, 8, 4, 4),
        l1d: cache_params(32 << 10, 8, 4, 10),
        l2_enabled: false,
        l2: cache_params(256 << 10, 8, 8, 16),
        llc: Cache { inclusive: true, ..cache_params(2 << 20, 16, 20, 64) },
        llc_slices: 1,
        directory: kvsim_params::Directory::default(),
        uncore_clock: 2_500_000_000,
    }
}

/// One DDR4-2400 channel with the preset's timings and 15 ns of controller latency (the declared defaults).
pub fn dram_params() -> MemoryController {
    dram_params_with(&kvsim_params::DRAM_PRESET_DDR4_2400)
}

/// The declared controller defaults (one channel, 15 ns of controller latency) with preset `t`'s timings
/// resolved, as the Python side resolves them.
pub fn dram_params_with(t: &kvsim_params::DramPreset) -> MemoryController {
    MemoryController {
        preset: kvsim_params::MemoryControllerPreset::from_name(t.name).expect("a preset of models/dram.py"),
        bank_groups: t.bank_groups,
        banks_per_group: t.banks_per_group,
        t_ck: t.t_ck,
        t_cl: t.t_cl,
        t_cwl: t.t_cwl,
        t_rcd: t.t_rcd,
        t_rp: t.t_rp,
        t_ras: t.t_ras,
        t_rrd_s: t.t_rrd_s,
        t_rrd_l: t.t_rrd_l,
        t_faw: t.t_faw,
        t_ccd_s: t.t_ccd_s,
        t_ccd_l: t.t_ccd_l,
        t_wr: t.t_wr,
        t_wtr_s: t.t_wtr_s,
        t_wtr_l: t.t_wtr_l,
        t_rtp: t.t_rtp,
        burst_length: t.burst_length,
        t_rfc: t.t_rfc,
        t_refi: t.t_refi,
        ..MemoryController::default()
    }
}

/// One core over its cache hierarchy and DRAM.
pub struct CoreRig {
    pub core: Core,
    pub mem: MemSystem<Dram>,
}

impl CoreRig {
    pub fn new(core: &CoreParams, caches: &CacheHierarchy, dram: &MemoryController) -> Self {
        let l1 = L1Latencies { l1i: caches.l1i.hit_latency, l1d: caches.l1d.hit_latency };
        CoreRig {
            core: Core::new(0, core, l1, caches.l1d.line_size),
            mem: MemSystem::new(caches, &[core.clock], Dram::new(dram)),
        }
    }

    pub fn default_fixture() -> Self {
        Self::new(&core_params(), &hierarchy_params(), &dram_params())
    }

    #[inline]
    pub fn step(&mut self, inst: &InstInfo) {
        self.core.step(inst, &mut self.mem);
    }

    /// The core's, its caches' and memory's statistics with the socket's parts directly under `system.`
    /// (`system.core0.ipc`, `system.llc.misses`): this stand-alone harness has no socket level.
    pub fn stats(&self) -> StatSink {
        use kvsim_params::paths;
        let mut out = StatSink::new();
        let insts = Some(self.core.stats.insts);
        let core = paths::system() + &paths::core(0);
        self.core.stats(&core, &mut out);
        self.mem.core_stats(0, &core, insts, &mut out);
        self.mem.llc_stats(&paths::system(), insts, &mut out);
        self.mem.mem.stats(&(paths::system() + &paths::memory()), self.core.now(), &mut out);
        out
    }
}

/// A mixed synthetic workload for speed measurement: a loop of 32 instructions with ~25% loads (mostly L1 hits,
/// one in 64 to a random line of a 256 MiB region), ~9% stores, a taken loop branch and a data-dependent
/// branch, the rest ALU ops with short dependence chains. Yields `n` instructions without allocating.
pub struct MixedStream {
    rng: Rng,
    i: u64,
    n: u64,
}

impl MixedStream {
    pub fn new(n: u64, seed: u64) -> Self {
        MixedStream { rng: Rng(seed), i: 0, n }
    }
}

impl Iterator for MixedStream {
    type Item = InstInfo;
    #[inline]
    fn next(&mut self) -> Option<InstInfo> {
        if self.i >= self.n {
            return None;
        }
        let k = self.i % 32;
        let iter = self.i / 32;
        self.i += 1;
        let pc = 0x10000 + k * 4;
        let r = (5 + (k % 8)) as u8;
        let inst = match k {
            0 | 4 | 8 | 12 | 16 | 20 | 24 => {
                let addr = if self.rng.below(64) == 0 {
                    0x1000_0000 + (self.rng.below(1 << 22) << 6)
                } else {
                    0x8000 + ((iter * 8 + k) % 2048) * 8
                };
                load(pc, r, 2, addr)
            }
            6 | 18 | 28 => store(pc, r, 2, 0x20000 + ((iter * 24 + k) % 4096) * 8),
            14 => {
                let taken = self.rng.below(8) == 0;
                branch(pc, r, taken, pc + 8)
            }
            31 => branch(pc, 9, true, 0x10000),
            10 => op(pc, InstClass::IntMul, r, r, 3),
            _ => alu(pc, r, (5 + ((k + 7) % 8)) as u8, 0),
        };
        Some(inst)
    }
}

/// Run `stream` through `machine`'s core; returns instructions run.
pub fn run<I: Iterator<Item = InstInfo>>(machine: &mut CoreRig, stream: I) -> u64 {
    let mut n = 0;
    for inst in stream {
        machine.step(&inst);
        n += 1;
    }
    n
}
