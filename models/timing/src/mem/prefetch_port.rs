//! What a cache's hardware prefetchers need of the memory system they sit in, and nothing else (as ZSim's and
//! Ramulator's prefetchers see their cache through a narrow interface): whether a candidate line is already held,
//! and a fetch of it. The prefetchers (`prefetch.rs`) name lines through this port; the hierarchy implements it
//! (`prefetch_fill.rs`), so the prefetchers never reach into `MemSystem` and imports point one way.

use super::Mode;
use crate::Tick;

/// The private cache a prefetch fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefetchInto {
    L1d,
    L2,
}

/// A memory system seen from one core's prefetchers.
pub trait PrefetchPort {
    /// Whether `core` already holds `line` where a prefetch into `into` would put it (for the L2: in the L2 or in
    /// the L1D above it), so there is nothing to fetch.
    fn holds(&self, core: usize, into: PrefetchInto, line: u64) -> bool;
    /// Fetch `line` into `core`'s cache `into` as a hardware prefetch named at `t`, as a miss of that cache is
    /// fetched. False when it was not sent (every MSHR busy: the cache counts it dropped).
    fn fetch(&mut self, core: usize, into: PrefetchInto, line: u64, t: Tick, mode: Mode) -> bool;
}
