//! A change of home: on several sockets, a NUMA placement can move an address range that is already cached to
//! another socket (a range the guest placed again, or a page-table page `TimingSystem::place_tables` places
//! again). Every cached line of such a range leaves every cache first, through its old home, and only then does
//! the range take its new home.
//!
//! The case runs actually hit is the model's own: `place_tables` puts the table pages of each placement on the
//! placement's socket, so a level-2 table page shared by ranges of two sockets takes the home of whichever
//! placement came last. A kernel never moves such a page; last-placement-wins is the model's choice (assumed).
//! Placing table pages on the socket of their first touch, as a kernel does, is left: it would move the
//! multi-socket runs' statistics.
//!
//! Why a flush rather than moving the lines' state to the new home: the directory's books for a line are spread
//! over its home slice (the LLC's copy, dirty or not), the entry (the private holders) and the home's socket set
//! (the other sockets' LLC copies), and a copy in the new home's socket is a remote copy before the move but the
//! home's own line after it; moving all of that intact means translating each kind of copy into another. A flush
//! leaves nothing to translate and keeps the caches coherent whenever the model re-homes a range, as a page
//! migration would (the old frame's lines leave the caches, dirty ones written back, as the old frame is freed).
//!
//! Assumed: the flush takes no simulated time and books no network or memory timing (as cache warming: it stands
//! for the kernel's copy, not timed here); what it costs a run is the misses that follow, which are timed. Its
//! invalidations count as coherence invalidations of the private caches and as socket invalidations of the
//! remote copies, as another agent's write would.

use super::hierarchy::MemSystem;
use super::{LineState, Mode};
use crate::{MemPort, NO_OWNER};

impl<M: MemPort> MemSystem<M> {
    /// The homes are about to change to `new_home` (the socket of each address): every cached line whose home
    /// socket changes leaves every cache, through its present home (dirty data written back). `changed`: the
    /// address ranges whose home may change (None: any address may); only their lines are looked at, unless
    /// looking each up costs more than going through every cached line. Either way the same lines leave, in the
    /// same order. Returns how many lines left. One socket: nothing can change home, nothing is looked at.
    pub fn rehome(&mut self, changed: Option<&[(u64, u64)]>, new_home: impl Fn(u64) -> u16) -> usize {
        if self.homes.as_ref().is_none_or(|h| h.ctrl.len() <= 1) {
            return 0;
        }
        let shift = self.line_shift;
        let moves = |m: &Self, line: u64| m.mem.home_socket(line << shift) != new_home(line << shift);
        // Every cached line is in some LLC slice or some private cache (the directory lists the private ones;
        // with a non-inclusive LLC a private line may be in no slice).
        let cached = |m: &Self, line: u64| m.dir.get(line).is_some() || m.llc.iter().any(|s| s.contains(line));
        // The lines of each range; the first may begin before it (a line changes home with its first byte, which
        // `moves` checks).
        let span = |&(start, end): &(u64, u64)| (start >> shift)..=((end - 1) >> shift);
        let looked_up =
            changed.map_or(u64::MAX, |r| r.iter().map(|&(s, e)| ((e - 1) >> shift) - (s >> shift) + 1).sum());
        let every_cached = self.dir.len() as u64 + self.llc.iter().map(|s| s.sets() * s.assoc() as u64).sum::<u64>();
        let mut lines: Vec<u64> = match changed {
            Some(ranges) if looked_up.saturating_mul(1 + self.llc.len() as u64) <= every_cached => {
                ranges.iter().flat_map(span).filter(|&l| cached(self, l) && moves(self, l)).collect()
            }
            _ => {
                let mut all: Vec<u64> = self.dir.lines().map(|(&l, _)| l).filter(|&l| moves(self, l)).collect();
                for slice in &self.llc {
                    all.extend(slice.lines().filter(|&l| moves(self, l)));
                }
                all
            }
        };
        lines.sort_unstable();
        lines.dedup();
        for &line in &lines {
            self.flush_line(line);
        }
        lines.len()
    }

    /// `line` leaves every cache through its home (as the home's directory would invalidate it for a writer):
    /// the private copies, the other sockets' copies, then the home slice's own; dirty data goes to memory.
    fn flush_line(&mut self, line: u64) {
        let slice = self.slice_of(line);
        let (mut dirty, mut owner) = (false, NO_OWNER);
        self.dir.take(line);
        for core in 0..self.cores.len() {
            if self.cores[core].state_of(line) != LineState::Invalid && self.drop_core_copies(core, line, false).dirty()
            {
                (dirty, owner) = (true, core as u16);
            }
        }
        let home = self.placement.llc_slice[slice];
        self.invalidate_remote(line, None, home, home, 0, Mode::Warm);
        if let Some(slot) = self.llc[slice].find(line) {
            let llc_owner = self.llc[slice].owner(slot);
            if self.llc[slice].invalidate(line).is_some_and(LineState::dirty) && !dirty {
                (dirty, owner) = (true, llc_owner);
            }
            self.dma.take_fresh(line);
        }
        if dirty {
            self.memory_write(slice, line, owner, 0, Mode::Warm);
        }
    }
}
