//! The partitioned schedule's probe of one access before its core is timed (issue 24 item 5, HOST_THREADS.md):
//! may the access's walk step outside its core's socket (another socket's directory entries, LLC slices, NoC,
//! DRAM or private caches, or a link)? Then the core's instruction is parked until the window's end
//! (`TimingSystem::on_inst_or_park`), where it is timed in a fixed order, so what it reads and books of another
//! socket never depends on which partition ran first. Changes nothing; reads only the core's private caches, its
//! socket's LLC slices and the directory entries of lines homed on its socket (its own partition's state).
//!
//! A superset of the walks that leave: a remote miss (the first read of a line homed elsewhere, which its socket's
//! LLC holds no copy of), any write of a line homed elsewhere that the core may not write, a local line another
//! socket holds (owner or copies) or a victim of the core's private caches or of its socket's LLC slice that is
//! another socket's business (a line homed elsewhere the core owns or dirtied, a remote copy, a local line other
//! sockets hold). With hardware prefetchers, whose targets the probe does not predict, every data access and every
//! instruction fetch that misses the L1 counts as leaving.

use super::hierarchy::MemSystem;
use super::{CacheArray, LineState};
use crate::{AccessKind, MemPort};

impl<M: MemPort> MemSystem<M> {
    /// May core `core`'s timed access of `kind` to `addr`, issued now, step outside its socket? (False on one
    /// socket.)
    pub fn may_leave_socket(&self, core: usize, addr: u64, kind: AccessKind) -> bool {
        let Some(h) = self.homes.as_deref() else { return false };
        if self.in_uncached_range(addr) {
            return false;
        }
        let line = addr >> self.line_shift;
        let (ifetch, write) = (kind == AccessKind::IFetch, kind == AccessKind::Write);
        let mine = h.core_socket[core] as usize;
        let p = &self.cores[core];
        let prefetching = p.l1d_pf.is_some() || p.l2_pf.is_some();
        if prefetching && !ifetch {
            return true;
        }
        let l1 = if ifetch { &p.l1i } else { &p.l1d };
        let held = |a: &CacheArray| {
            let s = a.state_of(line);
            s != LineState::Invalid && (!write || s.writable())
        };
        if held(l1) {
            return false;
        }
        if prefetching || self.victims_leave(core, l1, line) {
            return true;
        }
        if let Some(l2) = &p.l2 {
            if held(l2) {
                return false;
            }
            if self.victims_leave(core, l2, line) {
                return true;
            }
        }
        let slice = self.slice_of(line);
        if self.socket_of_slice(slice) != mine {
            // Homed elsewhere: only a read its socket's LLC copy serves stays on the socket.
            let copy = self.remote_slice(core, line).is_some_and(|p| self.llc[p].contains(line));
            return write || !copy;
        }
        // Homed here: the home reaches other sockets for a read only to forward it to an owner there; for a write, to
        // invalidate every holder and copy there. A miss in the home slice may evict another socket's business.
        if let Some(e) = self.dir.get(line) {
            let foreign = |c: u16| self.socket_of_core(c as usize) != mine;
            if e.owner.is_some_and(foreign) || (write && e.holders().into_iter().any(foreign)) {
                return true;
            }
        }
        if write && self.remote_lines && self.dir.remote_sockets(line) != 0 {
            return true;
        }
        !self.llc[slice].contains(line) && self.llc_victims_leave(slice, line, mine)
    }

    /// May inserting `line` into `array` (core `core`'s private level) evict a line whose eviction reaches another
    /// socket's home (a line homed elsewhere, dirty or owned by the core: its `Put` or write-back is not posted)?
    fn victims_leave(&self, core: usize, array: &CacheArray, line: u64) -> bool {
        let mine = self.socket_of_core(core);
        array.set_lines(line).any(|(v, s)| s.owner() && self.socket_of_slice(self.slice_of(v)) != mine)
    }

    /// May inserting `line` into LLC slice `slice` (of socket `mine`) evict a line whose eviction reaches another
    /// socket (a remote copy, whose drop the home hears of; a line of this socket other sockets hold or copy,
    /// which the inclusive LLC invalidates there)?
    fn llc_victims_leave(&self, slice: usize, line: u64, mine: usize) -> bool {
        self.llc[slice].set_lines(line).any(|(v, _)| {
            if self.is_remote_copy(slice, v) {
                return true;
            }
            if self.remote_lines && self.dir.remote_sockets(v) != 0 {
                return true;
            }
            let foreign = |c: u16| self.socket_of_core(c as usize) != mine;
            self.llc_inclusive && self.dir.get(v).is_some_and(|e| e.holders().into_iter().any(foreign))
        })
    }
}
