//! The hierarchy's side of the prefetchers' port: a prefetched line is fetched as a miss of the cache it fills (an
//! L1D prefetch from below the L1, an L2 prefetch from the directory), takes an MSHR for its flight, is marked
//! prefetched so its first use (or its eviction unused) is counted, and may evict a victim like any fill.

use super::hierarchy::{Level, MemSystem};
use super::prefetch_port::{PrefetchInto, PrefetchPort};
use super::{CohType, Mode};
use crate::{AccessKind, MemPort, ReqClass, Tick};

impl<M: MemPort> PrefetchPort for MemSystem<M> {
    #[inline]
    fn holds(&self, core: usize, into: PrefetchInto, line: u64) -> bool {
        let p = &self.cores[core];
        p.l1d.find(line).is_some()
            || (into == PrefetchInto::L2 && p.l2.as_ref().is_some_and(|l2| l2.find(line).is_some()))
    }

    fn fetch(&mut self, core: usize, into: PrefetchInto, line: u64, t: Tick, mode: Mode) -> bool {
        match into {
            PrefetchInto::L1d => {
                let l1d = &mut self.cores[core].l1d;
                let Some(start) = l1d.prefetch_mshr(t, mode == Mode::Timed) else { return false };
                let lat = l1d.hit_ticks;
                let (resp, fresh) = self.below_l1(core, line, AccessKind::Read, false, t + lat, mode);
                let l1d = &mut self.cores[core].l1d;
                if let Some(i) = start {
                    l1d.mshr_hold_from(i, t, resp.done);
                }
                let (slot, victim) = l1d.insert_state(line, resp.done, resp.state, ReqClass::Core);
                l1d.mark_prefetched(slot);
                l1d.pf.issued += 1;
                if let Some((v, vs)) = victim {
                    self.private_evict(core, v, vs, Level::L1, t, mode);
                }
                self.checked(core, line, false, fresh);
            }
            PrefetchInto::L2 => {
                let Some(l2) = self.cores[core].l2.as_mut() else { return false };
                let Some(mshr) = l2.prefetch_mshr(t, mode == Mode::Timed) else { return false };
                let lat = l2.hit_ticks;
                let resp = self.request_ex(core, line, CohType::GetS, t + lat, mode, true);
                let Some(l2) = self.cores[core].l2.as_mut() else { return false };
                if let Some(i) = mshr {
                    l2.mshr_hold_from(i, t, resp.done);
                }
                let (slot, victim) = l2.insert_state(line, resp.done, resp.state, ReqClass::Core);
                l2.mark_prefetched(slot);
                l2.pf.issued += 1;
                if let Some((v, vs)) = victim {
                    self.private_evict(core, v, vs, Level::L2, t, mode);
                }
                self.checked(core, line, false, true);
            }
        }
        true
    }
}
