//! The hierarchy's side of the debug check mode (`check.rs` keeps the records and the invariants): what the walk
//! calls after an access, and the whole-system sweep the tests call. Apart from the walk so that hierarchy.rs stays
//! about the walk itself.

use super::hierarchy::MemSystem;
use super::LineState;
use crate::MemPort;

impl<M: MemPort> MemSystem<M> {
    /// Debug check mode: record what this access did to `core`'s copy of `line` and check the invariants.
    #[inline]
    pub(super) fn checked(&mut self, core: usize, line: u64, write: bool, fresh: bool) {
        if let Some(ch) = self.check.as_mut() {
            ch.record(core, line, write, fresh);
            self.check_line(line);
        }
    }

    /// Check mode: check the single-writer/multiple-reader invariant and the directory's exactness for `line`.
    pub fn check_line(&mut self, line: u64) {
        // A core whose `Put` is held for the window's end has left, though its home still lists it.
        // A core that took the line from its socket's copy in this window holds it, though the home lists it only at
        // the window's end.
        let mut entry = self.dir.get(line).cloned();
        let posted: Vec<u16> = self.posted_puts_of(line).collect();
        if let Some(e) = entry.as_mut() {
            for c in posted.into_iter().filter(|&c| self.cores[c as usize].state_of(line) == LineState::Invalid) {
                e.sharers.remove(c);
            }
        }
        let shares: Vec<u16> = self.posted_shares_of(line).collect();
        for c in shares.into_iter().filter(|&c| self.cores[c as usize].state_of(line) != LineState::Invalid) {
            let e = entry.get_or_insert_with(Default::default);
            if e.owner != Some(c) {
                e.sharers.insert(c);
            }
        }
        let ch = self.check.as_mut().expect("check mode (MemSystem::enable_check)");
        let (writers, owners) = ch.check_line(line, self.cores.iter().map(|p| p.state_of(line)), entry.as_ref());
        self.check_remote_copies(line, &writers, &owners);
    }

    /// Check mode: check every line any private cache or the directory knows (slow: for tests).
    pub fn check_all(&mut self) {
        let mut lines: Vec<u64> = self.dir.lines().map(|(&l, _)| l).collect();
        lines.extend(self.dir.remote_lines().map(|(&l, _)| l));
        for p in &self.cores {
            lines.extend(p.l1i.lines().chain(p.l1d.lines()).chain(p.l2.iter().flat_map(|l2| l2.lines())));
        }
        lines.sort_unstable();
        lines.dedup();
        for l in lines {
            self.check_line(l);
        }
    }
}
