//! The memory system as the port the cores and the engine see (`MemPort`): a timed access, the uncached-range
//! question the core's store ordering asks, the requester's PC and fences in flight for the prefetchers, the page walker's reads marked, and the statistics.

use super::hierarchy::MemSystem;
use super::Mode;
use crate::{MemPort, MemReq, StatSink, Tick};

impl<M: MemPort> MemPort for MemSystem<M> {
    /// An L1 hit is taken here, inline in the caller (`l1_hit`: the load, the store, the fetch, the page walker's
    /// read), with no call; anything else walks, out of line.
    #[inline(always)]
    fn access(&mut self, req: &MemReq) -> Tick {
        if let Some(done) = self.l1_hit(req) {
            return done;
        }
        self.timed_walk(req)
    }

    #[inline]
    fn uncached(&self, addr: u64) -> bool {
        self.in_uncached_range(addr)
    }

    #[inline]
    fn set_pc(&mut self, requester: u16, pc: u64) {
        if let Some(p) = self.cores.get_mut(requester as usize) {
            p.pc = pc;
        }
    }

    #[inline]
    fn fence_in_flight(&mut self, requester: u16, on: bool) {
        if let Some(pf) = self.cores.get_mut(requester as usize).and_then(|p| p.l1d_pf.as_mut()) {
            pf.set_fence_in_flight(on);
        }
    }

    #[inline]
    fn page_walk(&mut self, requester: u16, on: bool) {
        if let Some(p) = self.cores.get_mut(requester as usize) {
            p.walking = on;
        }
    }

    fn stats(&self, prefix: &str, now: Tick, out: &mut StatSink) {
        for i in 0..self.cores.len() {
            self.core_stats(i, &(prefix.to_owned() + &kvsim_params::paths::core(i)), None, out);
        }
        self.llc_stats(prefix, None, out);
        self.net.stats(&(prefix.to_owned() + &kvsim_params::paths::noc()), now, out);
        self.mem.stats(&(prefix.to_owned() + &kvsim_params::paths::memory()), now, out);
    }
}

impl<M: MemPort> MemSystem<M> {
    /// A timed access the L1 alone does not answer: the walk, out of line (the callers that inline `access` keep
    /// only the hit's code).
    #[inline(never)]
    fn timed_walk(&mut self, req: &MemReq) -> Tick {
        self.access_mode(req, Mode::Timed)
    }
}
