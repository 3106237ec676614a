//! The hierarchy's side of the prefetchers' port: a prefetched line is fetched as a miss of the cache it fills (an
//! L1D prefetch from below the L1, an L2 prefetch from the directory), takes an MSHR for its flight, is marked
//! prefetched so its first use (or its eviction unused) is counted, and may evict a victim like any fill.

use super::array::CacheArray;
use super::hierarchy::{Level, MemSystem, PrivateCaches};
use super::prefetch::{self, Hold};
use super::prefetch_port::{PrefetchInto, PrefetchPort};
use super::{CohType, Mode, Origin};
use crate::{AccessKind, MemPort, MemReq, ReqClass, Tick};

/// The walks that feed the prefetchers what they watch.
impl<M: MemPort> MemSystem<M> {
    /// `core_walk` for a load that the L1D's prefetchers watch.
    #[inline(never)]
    pub(super) fn core_walk_prefetching(&mut self, req: &MemReq, mode: Mode) -> Tick {
        let core = req.requester as usize;
        let misses = self.cores[core].l1d.stats.misses;
        let done = self.core_walk_demand(req, mode);
        let miss = self.cores[core].l1d.stats.misses != misses;
        self.origin = Origin::HwPrefetch;
        // A page walk's PTE read is shown to the prefetchers only if they are trained by walks (it is no load).
        let p = &self.cores[core];
        if !p.walking || p.l1d_pf.as_ref().is_some_and(|pf| pf.trained_by_page_walks()) {
            self.l1d_prefetch(core, req.addr, req.addr >> self.line_shift, miss, req.time, mode);
        }
        done
    }

    /// The L1D's prefetchers saw `core`'s load of byte `addr` (line `line`, a miss or not) at `t`: they fetch what
    /// they name into the L1D through their port (`prefetch_fill.rs`), unless an issue condition holds a timed
    /// load's candidates back (`Prefetchers::hold`: a fence in flight, a stream of stores), which are then counted.
    fn l1d_prefetch(&mut self, core: usize, addr: u64, line: u64, miss: bool, t: Tick, mode: Mode) {
        let p = &mut self.cores[core];
        let Some(pf) = p.l1d_pf.as_mut() else { return };
        let candidates = pf.observe(addr, line, p.pc, miss);
        // Every load ends the run of stores, a warming one too (sampling's warming between windows is loads between
        // the stores); only a timed load's candidates are held back.
        let hold = pf.hold();
        let hold = if mode == Mode::Timed { hold } else { None };
        let Some(why) = hold else {
            prefetch::issue(self, core, PrefetchInto::L1d, &candidates, t, mode);
            return;
        };
        let held = prefetch::hold_back(self, core, PrefetchInto::L1d, &candidates);
        let counts = &mut self.cores[core].l1d.pf;
        match why {
            Hold::Fence => counts.held_by_fence += held,
            Hold::Stores => counts.held_by_stores += held,
        }
    }

    /// A timed store of `core` reached its L1D: the L1D's prefetchers count it in the run of stores since the core's
    /// last load (their `hold_after_stores` condition). Out of line: only cores with L1D prefetchers get here.
    #[inline(never)]
    pub(super) fn l1d_saw_store(&mut self, core: usize) {
        if let Some(pf) = self.cores[core].l1d_pf.as_mut() {
            pf.saw_store();
        }
    }

    /// The L2's prefetchers saw a request for `line` from `core`'s L1s at `t` (an L2 miss or not): they fetch what
    /// they name into the L2.
    pub(super) fn l2_prefetch(&mut self, core: usize, line: u64, miss: bool, t: Tick, mode: Mode) {
        let Some(pf) = self.cores[core].l2_pf.as_mut() else { return };
        let candidates = pf.observe(line << self.line_shift, line, 0, miss);
        prefetch::issue(self, core, PrefetchInto::L2, &candidates, t, mode);
    }
}

impl<M: MemPort> PrefetchPort for MemSystem<M> {
    #[inline]
    fn holds(&self, core: usize, into: PrefetchInto, line: u64) -> bool {
        let p = &self.cores[core];
        p.l1d.find(line).is_some()
            || (into == PrefetchInto::L2 && p.l2.as_ref().is_some_and(|l2| l2.find(line).is_some()))
    }

    fn fetch(&mut self, core: usize, into: PrefetchInto, line: u64, t: Tick, mode: Mode) -> bool {
        let Some(cache) = target(&mut self.cores[core], into) else { return false };
        let Some(mshr) = cache.prefetch_mshr(t, mode == Mode::Timed) else { return false };
        let at = t + cache.hit_ticks;
        // From below the cache it fills: an L1D prefetch walks the L2 (whose prefetchers see it), an L2 prefetch
        // asks the directory; the L2's data always comes from outside the core.
        let (resp, fresh, level) = match into {
            PrefetchInto::L1d => {
                let (resp, fresh) = self.below_l1(core, line, AccessKind::Read, false, at, mode);
                (resp, fresh, Level::L1)
            }
            PrefetchInto::L2 => (self.request_ex(core, line, CohType::GetS, at, mode, true), true, Level::L2),
        };
        let Some(cache) = target(&mut self.cores[core], into) else { return false };
        if let Some(i) = mshr {
            cache.mshr_hold_from(i, t, resp.done);
        }
        let (slot, victim) = cache.insert_state(line, resp.done, resp.state, ReqClass::Core);
        cache.mark_prefetched(slot);
        cache.pf.issued += 1;
        if let Some((v, vs)) = victim {
            self.private_evict(core, v, vs, level, t, mode);
        }
        self.checked(core, line, false, fresh);
        true
    }
}

/// The cache of `caches` a prefetch into `into` fills (None: the core has no L2).
#[inline]
fn target(caches: &mut PrivateCaches, into: PrefetchInto) -> Option<&mut CacheArray> {
    match into {
        PrefetchInto::L1d => Some(&mut caches.l1d),
        PrefetchInto::L2 => caches.l2.as_mut(),
    }
}
