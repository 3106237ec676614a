//! What the two in-place L1 hit tests share (`l1_hit.rs`: the timed hit; `warm.rs`: warming's hit): two cores' small
//! caches over a fixed-latency memory with a device-register range, in check mode, and their whole state as text.

use kvsim_params::{Cache, CacheHierarchy, Prefetcher};
use kvsim_timing::mem::MemSystem;
use kvsim_timing::synth::{cache_params, hierarchy_params};
use kvsim_timing::{FixedLatency, MemPort, StatSink};

/// Device registers (uncached) of both systems.
pub const MMIO: (u64, u64) = (0x10_0000, 0x10_1000);

pub fn system(h: &CacheHierarchy) -> MemSystem<FixedLatency> {
    let mut m = MemSystem::new(h, &[2_500_000_000; 2], FixedLatency::new(100_000));
    m.uncached = MMIO;
    m.uncached_ticks = 1_000;
    m.enable_check();
    m
}

/// Everything an access (timed or warming) can change, as text: every private cache (tags, states, fill ticks,
/// MSHRs, replacement, prefetchers and their counters), the LLC, the directory, the check mode's records (each
/// line's version and the version each copy received) and every statistic.
pub fn state(m: &MemSystem<FixedLatency>) -> String {
    let mut out = StatSink::new();
    m.stats("", 0, &mut out);
    format!("{:?}\n{:?}\n{:?}\n{:?}\n{:?}", m.cores, m.llc, m.dir, m.check, out.entries)
}

/// Small caches (hits, misses, evictions and upgrades all common), the L1D's and L2's prefetchers on or off.
pub fn hierarchy(prefetch: bool) -> CacheHierarchy {
    let mut h = hierarchy_params();
    h.l1d = cache_params(64 * 16, 4, 4, 4);
    h.l1i = cache_params(64 * 8, 2, 4, 4);
    h.l2_enabled = true;
    h.l2 = cache_params(64 * 32, 4, 8, 8);
    h.llc = Cache { inclusive: true, ..cache_params(64 * 64, 8, 20, 8) };
    if prefetch {
        h.l1d.prefetch = Prefetcher { next_line: true, ip_stride: true, ..Prefetcher::default() };
        h.l2.prefetch = Prefetcher { streamer: true, adjacent_line: true, ..Prefetcher::default() };
    }
    h
}
