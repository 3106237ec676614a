//! Cache warming's entry to the memory system: the walk in [`Mode::Warm`], and in front of it the same walk's
//! L1 hit done in place. Most warming accesses hit the L1, and the walk's set-up (the request, the checks for
//! I/O, device registers and prefetchers, the call and its frame, the timed branches) was most of their host
//! instructions; the hit's own work is a few counters and the replacement touch.

use super::{LineState, MemSystem, Mode, Origin};
use crate::{AccessKind, MemPort, MemReq};

impl<M: MemPort> MemSystem<M> {
    /// Sampling's functional warming: a read or write-back of `line` the warm walk caused reaches its memory at the
    /// warming hart's time (`warm_clock`), so the memory controllers' queues, banks and bus carry the load they
    /// would in a timed run; its completion time is not used (warming takes no time). Other warming: nothing.
    #[inline]
    pub(super) fn warm_memory(&mut self, line: u64, owner: u16, kind: AccessKind) {
        if let Some(t) = self.warm_clock {
            self.mem.access(&MemReq::new(line << self.line_shift, kind, owner, t));
        }
    }

    /// Cache warming: a core's access updates the contents, coherence and replacement state of every level it
    /// reaches exactly as the timed access would (the same walk), but takes no time, holds no MSHR, books no
    /// network link and leaves memory's timing state alone (sampling's warming sends memory its reads and
    /// write-backs: `warm_memory`). (Statistics are reset when timing starts.)
    /// Inlined into its caller (an L1 hit then costs no call and no frame); everything else goes out of line.
    #[inline(always)]
    pub fn warm_access(&mut self, core: usize, addr: u64, kind: AccessKind, non_temporal: bool) {
        if !self.warm_l1_hit(core, addr, kind) {
            self.warm_walk(core, addr, kind, non_temporal);
        }
    }

    /// `warm_access` for a load, whose PC goes with it: as the timed core's `MemPort::set_pc` before its load, it
    /// becomes the core's latest load PC, which the L1D's IP-stride prefetcher trains on. Only the walk stores
    /// it (a load the L1D's prefetchers watch never hits in place, and without them nothing reads the PC), so the
    /// in-place hit costs what any other access's does.
    #[inline(always)]
    pub fn warm_load(&mut self, core: usize, addr: u64, pc: u64, non_temporal: bool) {
        if !self.warm_l1_hit(core, addr, AccessKind::Read) {
            self.warm_load_walk(core, addr, pc, non_temporal);
        }
    }

    /// A warming load the L1 alone does not answer: its PC set, the walk.
    #[inline(never)]
    fn warm_load_walk(&mut self, core: usize, addr: u64, pc: u64, non_temporal: bool) {
        self.cores[core].pc = pc;
        self.warm_walk(core, addr, AccessKind::Read, non_temporal);
    }

    /// A warming access the L1 alone does not answer: the walk.
    #[inline(never)]
    fn warm_walk(&mut self, core: usize, addr: u64, kind: AccessKind, non_temporal: bool) {
        let req = MemReq { non_temporal, ..MemReq::new(addr, kind, core as u16, 0) };
        self.access_mode(&req, Mode::Warm);
    }

    /// A warming access that hits `core`'s L1 with the permission it needs: what the walk does for it
    /// (`core_walk_demand` in `Mode::Warm`, where a hit is never late and holds no MSHR), done here: the access
    /// and its kind counted, the replacement touch, a prefetched line's first use, the hit, a store's Modified
    /// state, the origin the walk leaves set. False, with nothing changed, for every access that needs more than
    /// that (the walk then does all of it): a device register, a load the L1D's prefetchers watch, a miss, a store
    /// to a line without write permission. `warm_hit_equals_the_walk` (tests) holds the two to the same state.
    #[inline(always)]
    fn warm_l1_hit(&mut self, core: usize, addr: u64, kind: AccessKind) -> bool {
        if self.in_uncached_range(addr) {
            return false;
        }
        let line = addr >> self.line_shift;
        let p = &mut self.cores[core];
        let (l1, write) = match kind {
            AccessKind::IFetch => (&mut p.l1i, false),
            AccessKind::Read if p.l1d_pf.is_none() => (&mut p.l1d, false),
            AccessKind::Read => return false,
            AccessKind::Prefetch => (&mut p.l1d, false),
            AccessKind::Write => (&mut p.l1d, true),
        };
        let Some(slot) = l1.find_hinted(line) else { return false };
        if write && !l1.state(slot).writable() {
            return false;
        }
        let origin = if kind == AccessKind::Prefetch { Origin::SwPrefetch } else { Origin::Demand };
        l1.stats.count_access(origin);
        match kind {
            AccessKind::Prefetch => l1.stats.prefetches += 1,
            AccessKind::Write => l1.stats.writes += 1,
            _ => {}
        }
        l1.touch(slot);
        l1.demand_use(slot, false);
        l1.stats.hits += 1;
        if write {
            l1.set_state(slot, LineState::Modified);
        }
        self.origin = origin;
        self.checked(core, line, write, false);
        true
    }
}
