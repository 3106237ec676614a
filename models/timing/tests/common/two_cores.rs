//! What the two in-place L1 hit tests share (`l1_hit.rs`: the timed hit; `warm.rs`: warming's hit): two cores' small
//! caches over a fixed-latency memory with a device-register range, in check mode, and their whole state as text.

use kvsim_params::{Cache, CacheHierarchy, Prefetcher};
use kvsim_timing::mem::MemSystem;
use kvsim_timing::synth::{cache_params, hierarchy_params};
use kvsim_timing::{AccessKind, FixedLatency, MemPort, StatSink};

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

/// One access of the random traffic both tests replay on two systems.
pub struct Access {
    pub core: usize,
    pub kind: AccessKind,
    pub addr: u64,
    pub non_temporal: bool,
    /// The IP-stride prefetcher keys on the PC of the load (a few PCs).
    pub pc: u64,
    /// How far the core's clock moves before it (timed traffic: warming has no clock): 0-20 ns.
    #[allow(dead_code)]
    pub step: u64,
}

/// The next access of a xorshift stream `x`: reads, writes, fetches and software prefetches, half to 8 hot lines and
/// the rest to 96 (both cores share them), now and then a device register.
pub fn random_access(x: &mut u64) -> Access {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    let x = *x;
    let kind = match (x >> 8) % 10 {
        0..=4 => AccessKind::Read,
        5..=7 => AccessKind::Write,
        8 => AccessKind::IFetch,
        _ => AccessKind::Prefetch,
    };
    let lines = if (x >> 20) & 1 == 0 { 8 } else { 96 };
    let addr =
        if (x >> 16).is_multiple_of(50) { MMIO.0 + (x >> 24) % 64 * 8 } else { (x >> 24) % lines * 64 + (x >> 40) % 8 };
    Access {
        core: (x & 1) as usize,
        kind,
        addr,
        non_temporal: (x >> 48).is_multiple_of(8),
        pc: 0x1000 + (x >> 52) % 4 * 4,
        step: (x >> 56) % 21 * 1_000,
    }
}
