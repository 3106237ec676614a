//! The timing side of one socket, ready to sit behind the engine's per-instruction hook: one [`Core`] per hart
//! over a shared [`MemSystem`] (private L1I/L1D/L2, sliced LLC, MOESI directory, on-chip network) and a [`Dram`]
//! controller.
//!
//! ```ignore
//! impl ExecHook for TimingHook {              // in the engine
//!     const ACTIVE: bool = true;
//!     fn on_inst(&mut self, hart: usize, info: &InstInfo) { self.0.on_inst(hart, info) }
//! }
//! ```

use crate::core::{Core, InstTiming, L1Latencies};
use crate::dram::Dram;
use crate::inst::InstInfo;
use crate::mem::MemSystem;
use crate::network::{Network, Placement};
use crate::{AccessKind, MemPort, StatSink, Tick};
use kvsim_params::{CacheHierarchy, Core as CoreParams, MemoryController};

pub struct TimingSystem {
    pub cores: Vec<Core>,
    pub mem: MemSystem<Dram>,
    /// Time of the last stats reset.
    stats_base: Tick,
    /// Per hart: the instruction line warming last fetched (so warming touches the L1I once per line).
    warm_fetch_line: Vec<u64>,
}

impl TimingSystem {
    /// One core per entry of `cores` (hart i runs on core i), sharing `caches` and `dram`, on an ideal network
    /// with every agent on its own endpoint (the LLC's hit latency includes the trip to it).
    pub fn new(cores: &[CoreParams], caches: &CacheHierarchy, dram: &MemoryController) -> Self {
        let clocks: Vec<u64> = cores.iter().map(|c| c.clock).collect();
        Self::from_mem(cores, caches, MemSystem::new(caches, &clocks, Dram::new(dram)))
    }

    /// As `new`, the memory system's messages carried by `net` between the agents at `placement`.
    pub fn with_network(
        cores: &[CoreParams],
        caches: &CacheHierarchy,
        dram: &MemoryController,
        net: Box<dyn Network>,
        placement: Placement,
    ) -> Self {
        let clocks: Vec<u64> = cores.iter().map(|c| c.clock).collect();
        Self::from_mem(cores, caches, MemSystem::with_network(caches, &clocks, Dram::new(dram), net, placement))
    }

    fn from_mem(cores: &[CoreParams], caches: &CacheHierarchy, mem: MemSystem<Dram>) -> Self {
        let l1 = L1Latencies { l1i: caches.l1i.hit_latency, l1d: caches.l1d.hit_latency };
        TimingSystem {
            cores: cores.iter().enumerate().map(|(i, p)| Core::new(i as u16, p, l1, caches.l1d.line_size)).collect(),
            mem,
            stats_base: 0,
            warm_fetch_line: vec![u64::MAX; cores.len()],
        }
    }

    /// The per-instruction hook: time `info`, just executed by `hart`.
    #[inline]
    pub fn on_inst(&mut self, hart: usize, info: &InstInfo) -> InstTiming {
        self.cores[hart].step(info, &mut self.mem)
    }

    /// Simulated time `hart` has reached (ps): the engine can advance the hart that is furthest behind.
    pub fn hart_time(&self, hart: usize) -> Tick {
        self.cores[hart].now()
    }

    /// The latest time any hart reached.
    pub fn now(&self) -> Tick {
        self.cores.iter().map(|c| c.now()).max().unwrap_or(0)
    }

    /// DVFS: change `hart`'s clock (its core and private caches) from now on.
    pub fn set_clock(&mut self, hart: usize, hz: u64) {
        self.cores[hart].set_clock(hz);
        self.mem.set_core_clock(hart, hz);
    }

    /// End of the run: write out posted DRAM writes so the statistics count them.
    pub fn finish(&mut self) {
        let now = self.now();
        self.mem.mem.flush(now);
    }

    /// Start every statistic afresh (ROI_BEGIN, STATS_RESET, the start of detailed timing); state is kept.
    pub fn reset_stats(&mut self) {
        for c in &mut self.cores {
            c.reset_stats();
        }
        self.mem.reset_stats();
        let now = self.now();
        self.mem.mem.reset_stats(now);
        self.stats_base = now;
    }

    /// Cache warming: `hart`'s executed instruction updates the caches it would touch, taking no time.
    #[inline]
    pub fn warm(&mut self, hart: usize, info: &InstInfo) {
        use crate::inst::{InstClass, PrefetchKind};
        let line = info.pc >> 6;
        if self.warm_fetch_line[hart] != line {
            self.warm_fetch_line[hart] = line;
            self.mem.warm_access(hart, info.pc, AccessKind::IFetch, false);
        }
        let kind = match info.class {
            InstClass::Load => AccessKind::Read,
            InstClass::Store | InstClass::Atomic => AccessKind::Write,
            InstClass::Prefetch => match info.prefetch_kind {
                PrefetchKind::Instruction => AccessKind::IFetch,
                _ => AccessKind::Prefetch,
            },
            _ => return,
        };
        self.mem.warm_access(hart, info.mem_addr, kind, info.non_temporal);
    }

    /// Simulated ticks since the last stats reset (the measured interval).
    pub fn measured_ticks(&self) -> Tick {
        self.now().saturating_sub(self.stats_base)
    }

    /// Every statistic under `prefix` (e.g. "system."): `core{i}.ipc`, `core{i}.l1d.mpki`, `llc.misses`,
    /// `dram.channel0.read_bw`, ...
    pub fn stats(&self, prefix: &str, out: &mut StatSink) {
        let now = self.now();
        let ticks = Some(self.measured_ticks());
        let mut insts = 0;
        for (i, c) in self.cores.iter().enumerate() {
            let p = format!("{prefix}core{i}.");
            c.stats(&p, out);
            self.mem.core_stats_over(i, &p, Some(c.stats.insts), ticks, out);
            insts += c.stats.insts;
        }
        self.mem.llc_stats_over(prefix, Some(insts), ticks, out);
        self.mem.net.stats(&format!("{prefix}noc."), now, out);
        self.mem.mem.stats(&format!("{prefix}mem."), now, out);
    }
}
