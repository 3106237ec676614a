//! The timing side of one socket, ready to sit behind the engine's per-instruction hook: one [`Core`] per hart
//! over a shared [`MemSystem`] (private L1I/L1D/L2, sliced LLC) and a [`Dram`] controller.
//!
//! ```ignore
//! impl ExecHook for TimingHook {              // in the engine
//!     const ACTIVE: bool = true;
//!     fn on_inst(&mut self, hart: usize, info: &InstInfo) { self.0.on_inst(hart, info) }
//! }
//! ```

use crate::cache::MemSystem;
use crate::core::{Core, InstTiming, L1Latencies};
use crate::dram::Dram;
use crate::inst::InstInfo;
use crate::{MemPort, StatSink, Tick};
use kvsim_params::{CacheHierarchy, Core as CoreParams, MemoryController};

pub struct TimingSystem {
    pub cores: Vec<Core>,
    pub mem: MemSystem<Dram>,
}

impl TimingSystem {
    /// One core per entry of `cores` (hart i runs on core i), sharing `caches` and `dram`.
    pub fn new(cores: &[CoreParams], caches: &CacheHierarchy, dram: &MemoryController) -> Self {
        let l1 = L1Latencies { l1i: caches.l1i.hit_latency, l1d: caches.l1d.hit_latency };
        let clocks: Vec<u64> = cores.iter().map(|c| c.clock).collect();
        TimingSystem {
            cores: cores.iter().enumerate().map(|(i, p)| Core::new(i as u16, p, l1, caches.l1d.line_size)).collect(),
            mem: MemSystem::new(caches, &clocks, Dram::new(dram)),
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

    /// Every statistic under `prefix` (e.g. "system."): `core{i}.ipc`, `core{i}.l1d.mpki`, `llc.misses`,
    /// `dram.channel0.read_bw`, ...
    pub fn stats(&self, prefix: &str, out: &mut StatSink) {
        let now = self.now();
        let mut insts = 0;
        for (i, c) in self.cores.iter().enumerate() {
            let p = format!("{prefix}core{i}.");
            c.stats(&p, out);
            self.mem.core_stats(i, &p, Some(c.stats.insts), out);
            insts += c.stats.insts;
        }
        self.mem.llc_stats(prefix, Some(insts), out);
        self.mem.mem.stats(&format!("{prefix}dram."), now, out);
    }
}
