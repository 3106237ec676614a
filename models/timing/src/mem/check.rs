//! The debug check mode (tests; off by default): after every access it checks, for the line touched, that
//!
//! * one core may write it (E or M) and then no other core holds it, or any number hold it readable;
//! * the directory's holders are exactly the cores holding a copy, and a core with write permission is the
//!   directory's owner;
//! * every read returns the latest write: each line carries a version, bumped by every write (a core's store or
//!   an I/O agent's DMA); a core's copy records the version it received, and a hit on a copy whose version is
//!   not the line's current one (a stale copy that should have been invalidated) is a breach;
//! * on several sockets with remote lines ([`super::remote`]): the home's socket set is exactly the sockets whose
//!   LLC holds a copy; no core outside a copy's socket holds the line writable; a copy whose socket has no owning
//!   core holds the latest version, and a read the copy serves gets it (`MemSystem::check_remote_copies`).
//!
//! The timing model's functional shadow so may never disagree with the execution that drives it. The check keeps
//! its own records and is handed the caches' states; the hierarchy calls it (`MemSystem::check_line`).

use super::directory::{DirEntry, LineMap};
use super::LineState;

#[derive(Debug, Clone, Default)]
pub struct CoherenceCheck {
    version: LineMap<u64>,
    copy: Vec<LineMap<u64>>,
    /// Per socket: the version its LLC's copy of another socket's line holds (remote lines).
    socket_copy: Vec<LineMap<u64>>,
    /// Accesses checked (a test can assert the check ran).
    pub checked: u64,
}

impl CoherenceCheck {
    pub fn new(cores: usize) -> Self {
        CoherenceCheck {
            version: LineMap::default(),
            copy: vec![LineMap::default(); cores],
            socket_copy: vec![LineMap::default(); 64],
            checked: 0,
        }
    }

    /// Socket `socket`'s LLC took (or refreshed) a copy of `line` with its latest data.
    pub fn remote_filled(&mut self, socket: usize, line: u64) {
        let now = self.current(line);
        self.socket_copy[socket].insert(line, now);
    }

    /// Socket `socket`'s LLC dropped its copy of `line`.
    pub fn remote_dropped(&mut self, socket: usize, line: u64) {
        self.socket_copy[socket].remove(&line);
    }

    /// Whether the check's records say socket `socket`'s LLC holds a copy of `line`.
    pub fn has_remote_copy(&self, socket: usize, line: u64) -> bool {
        self.socket_copy[socket].contains_key(&line)
    }

    /// Socket `socket`'s copy of `line` answers a read: it must hold the latest version.
    pub fn remote_serves(&self, socket: usize, line: u64) {
        let (have, now) = (self.socket_copy[socket].get(&line).copied(), self.current(line));
        assert_eq!(have, Some(now), "socket {socket}'s LLC served a stale copy of line {line:#x}: {have:?}, not {now}");
    }

    /// `core` no longer holds `line`.
    pub fn dropped(&mut self, core: usize, line: u64) {
        self.copy[core].remove(&line);
    }

    /// An I/O agent wrote `line`.
    pub fn io_write(&mut self, line: u64) {
        *self.version.entry(line).or_insert(0) += 1;
    }

    fn current(&self, line: u64) -> u64 {
        self.version.get(&line).copied().unwrap_or(0)
    }

    /// Record core `core`'s access to `line` (`fresh`: its data came from outside the core; `write`: it wrote):
    /// a hit must be on a copy of the line's current version.
    pub fn record(&mut self, core: usize, line: u64, write: bool, fresh: bool) {
        let now = self.current(line);
        if fresh {
            self.copy[core].insert(line, now);
        } else {
            let have = self.copy[core].get(&line).copied();
            assert_eq!(
                have,
                Some(now),
                "core {core} hit a stale copy of line {line:#x}: it holds version {have:?}, the line is at {now}"
            );
        }
        if write {
            self.version.insert(line, now + 1);
            self.copy[core].insert(line, now + 1);
        }
    }

    /// Check the single-writer/multiple-reader invariant and the directory's exactness for `line`, given each
    /// core's permission for it (`states`, in core order: the strongest state among the core's copies) and the
    /// directory's entry. Returns the cores that may write the line and its owner, for the remote-copy check.
    pub fn check_line(
        &mut self,
        line: u64,
        states: impl Iterator<Item = LineState>,
        dir: Option<&DirEntry>,
    ) -> (Vec<u16>, Vec<u16>) {
        let mut holders = Vec::new();
        let mut writers = Vec::new();
        let mut owners = Vec::new();
        for (i, s) in states.enumerate() {
            if s != LineState::Invalid {
                holders.push(i as u16);
            }
            if s.writable() {
                writers.push(i as u16);
            }
            if s.owner() {
                owners.push(i as u16);
            }
            let recorded = self.copy[i].contains_key(&line);
            assert_eq!(s != LineState::Invalid, recorded, "core {i}: copy of line {line:#x} and its record disagree");
        }
        assert!(owners.len() <= 1, "line {line:#x} has several owners: cores {owners:?}");
        if let Some(&w) = writers.first() {
            assert_eq!(holders, vec![w], "line {line:#x}: core {w} may write it but cores {holders:?} hold it");
        }
        let mut dir_holders: Vec<u16> = dir.map(|e| e.holders()).unwrap_or_default();
        dir_holders.sort_unstable();
        assert_eq!(dir_holders, holders, "line {line:#x}: the directory's holders differ from the caches'");
        if let Some(&w) = writers.first() {
            assert_eq!(dir.and_then(|e| e.owner), Some(w), "line {line:#x}: the writer is not the owner");
        }
        self.checked += 1;
        (writers, owners)
    }
}
