//! The device registers' uncached range (MMIO): the one test of whether an address is in it, which the walk,
//! warming and the core's store ordering all ask, and the access that goes to a register instead of the caches.

use super::hierarchy::MemSystem;
use crate::{AccessKind, MemPort, MemReq, Tick};

impl<M: MemPort> MemSystem<M> {
    /// Whether `addr` is a device register's.
    #[inline(always)]
    pub(super) fn in_uncached_range(&self, addr: u64) -> bool {
        addr >= self.uncached.0 && addr < self.uncached.1
    }

    /// A device register's access: uncached; a store (doorbell) is posted once it reaches the device, a load waits
    /// for the round trip.
    #[inline]
    pub(super) fn uncached_access(&mut self, req: &MemReq) -> Tick {
        self.io.mmio_accesses += 1;
        let trip = if req.kind == AccessKind::Write { self.uncached_ticks } else { 2 * self.uncached_ticks };
        req.time + trip
    }
}
