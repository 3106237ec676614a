//! The memory system as the port the cores and the engine see (`MemPort`): a timed access, the uncached-range
//! question the core's store ordering asks, the requester's PC and fences in flight for the prefetchers, the page walker's reads marked, and the statistics.

use super::hierarchy::MemSystem;
use super::{Mode, Origin};
use crate::{AccessKind, MemPort, MemReq, ReqClass, StatSink, Tick};

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

    /// The prefetch's miss is sent when its L1 grants it an MSHR: at once on a hit (or a merge with a miss in
    /// flight), else the grant's tick. A core's data prefetch (the pipeline's only call) asks its walk for both
    /// (`sw_prefetch`: one L1 lookup). Anything else (an uncached address: no L1, no MSHR) is sent at once. The
    /// two-lookup form this replaced (review s27 #9) is kept as the reference in tests/sw_prefetch.rs.
    #[inline]
    fn prefetch(&mut self, req: &MemReq) -> Tick {
        if req.class == ReqClass::Core && req.kind == AccessKind::Prefetch && !self.in_uncached_range(req.addr) {
            return self.sw_prefetch(req);
        }
        self.access_mode(req, Mode::Timed);
        req.time
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

    /// A core's software prefetch (`AccessKind::Prefetch`, cached): its walk, as `core_walk` sends it
    /// (`core_walk_demand`), and the tick its miss is sent, when its L1 grants it an MSHR (`req.time` on a hit).
    /// The walk's one lookup answers both (the grant had a lookup of its own before the walk).
    #[inline(never)]
    fn sw_prefetch(&mut self, req: &MemReq) -> Tick {
        self.origin = Origin::SwPrefetch;
        let mut sent = req.time;
        self.core_walk_l1(req, Mode::Timed, Some(&mut sent));
        sent
    }
}
