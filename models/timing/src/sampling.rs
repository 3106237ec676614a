//! Statistics kept across sampling's functional warming (the engine's sampled detailed phase): warming updates the
//! caches', directory's and TLBs' contents exactly as timed accesses would, and with them their counters; a
//! snapshot taken when warming starts and put back when it ends leaves the counters of the detailed windows alone.

use crate::mem::prefetch::PrefetchStats;
use crate::mem::{CacheStats, DirectoryStats, IoStats};
use crate::system::TimingSystem;
use crate::tlb::MmuStats;

/// One core's private caches' counters.
#[derive(Debug, Clone)]
struct PrivateStats {
    l1i: CacheStats,
    l1d: (CacheStats, PrefetchStats),
    l2: Option<(CacheStats, PrefetchStats)>,
    mmu: Option<MmuStats>,
}

/// The counters functional warming touches: every core's private caches and MMU, the LLC slices, the directory
/// and the I/O counters of the LLC.
#[derive(Debug, Clone)]
pub struct WarmedStats {
    cores: Vec<PrivateStats>,
    llc: Vec<CacheStats>,
    dir: DirectoryStats,
    io: IoStats,
}

impl WarmedStats {
    pub fn take(sys: &mut TimingSystem) -> Self {
        let mem = &sys.mem;
        let cores = mem
            .cores
            .iter()
            .zip(sys.cores.iter_mut())
            .map(|(p, core)| PrivateStats {
                l1i: p.l1i.stats.clone(),
                l1d: (p.l1d.stats.clone(), p.l1d.pf),
                l2: p.l2.as_ref().map(|l2| (l2.stats.clone(), l2.pf)),
                mmu: core.mmu_mut().map(|m| m.stats_snapshot()),
            })
            .collect();
        WarmedStats { cores, llc: mem.llc.iter().map(|s| s.stats.clone()).collect(), dir: mem.dir.stats, io: mem.io }
    }

    /// Put the counters back as they were when taken (contents and replacement state keep what warming did).
    pub fn restore(&self, sys: &mut TimingSystem) {
        for ((p, core), saved) in sys.mem.cores.iter_mut().zip(sys.cores.iter_mut()).zip(&self.cores) {
            p.l1i.stats = saved.l1i.clone();
            (p.l1d.stats, p.l1d.pf) = saved.l1d.clone();
            if let (Some(l2), Some((stats, pf))) = (p.l2.as_mut(), &saved.l2) {
                (l2.stats, l2.pf) = (stats.clone(), *pf);
            }
            if let (Some(m), Some(s)) = (core.mmu_mut(), &saved.mmu) {
                m.restore_stats(s);
            }
        }
        for (s, saved) in sys.mem.llc.iter_mut().zip(&self.llc) {
            s.stats = saved.clone();
        }
        sys.mem.dir.stats = self.dir;
        sys.mem.io = self.io;
    }
}
