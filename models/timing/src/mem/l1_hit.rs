//! A core's L1 hit without the walk (issue 24: the hit is most of a core's accesses and the walk's bookkeeping
//! for the rest was on its path). `MemPort::access` tries it first, inline in the caller; anything it does not
//! take goes to the walk untouched.

use super::hierarchy::MemSystem;
use super::{LineState, Origin};
use crate::{AccessKind, MemPort, MemReq, ReqClass, Tick};

impl<M: MemPort> MemSystem<M> {
    /// A core's timed read, write or instruction fetch that finds its line in its L1, its data there by `req.time`
    /// (a write: a copy it may write), with nothing else to do: no prefetcher watching the L1D (a read trains it,
    /// a store counts toward its store streams), not a device register. Counted, touched and marked as the
    /// walk's hit path does (`core_walk_demand`: an access and a hit by a demand, a write, the line most recently
    /// used, a write's copy modified, the check mode's record), and done after the L1's hit latency. None, having
    /// changed nothing, for any other access; the walk then takes it as before.
    #[inline(always)]
    pub(super) fn l1_hit(&mut self, req: &MemReq) -> Option<Tick> {
        let (ifetch, write) = (req.kind == AccessKind::IFetch, req.kind == AccessKind::Write);
        if !(ifetch || write || req.kind == AccessKind::Read)
            || req.class != ReqClass::Core
            || self.in_uncached_range(req.addr)
        {
            return None;
        }
        let (line, core) = (req.addr >> self.line_shift, req.requester as usize);
        let p = self.cores.get_mut(core)?;
        let l1 = if ifetch {
            &mut p.l1i
        } else if p.l1d_pf.is_none() {
            &mut p.l1d
        } else {
            return None;
        };
        let slot = l1.find_hinted(line)?;
        if l1.ready(slot) > req.time || (write && !l1.state(slot).writable()) {
            return None;
        }
        l1.touch(slot);
        // A line a hardware prefetch brought is now used, in time (the L1I has no prefetchers: nothing there).
        l1.demand_use(slot, false);
        l1.stats.count_access(Origin::Demand);
        l1.stats.writes += write as u64;
        l1.stats.hits += 1;
        if write {
            l1.set_state(slot, LineState::Modified);
        }
        let done = req.time + l1.hit_ticks;
        // As the walk leaves it (`core_walk`): what started the latest walk.
        self.origin = Origin::Demand;
        self.checked(core, line, write, false);
        Some(done)
    }
}
