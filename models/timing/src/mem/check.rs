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
//!   core holds the latest version, and a read the copy serves gets it.
//!
//! The timing model's functional shadow so may never disagree with the execution that drives it.

use super::directory::LineMap;
use super::hierarchy::MemSystem;
use super::LineState;
use crate::MemPort;

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
}

impl<M: MemPort> MemSystem<M> {
    /// Record core `core`'s access to `line` (`fresh`: its data came from outside the core; `write`: it wrote)
    /// and check the line.
    pub(crate) fn check_access(&mut self, core: usize, line: u64, write: bool, fresh: bool) {
        let ch = self.check.as_mut().expect("check mode");
        let now = ch.current(line);
        if fresh {
            ch.copy[core].insert(line, now);
        } else {
            let have = ch.copy[core].get(&line).copied();
            assert_eq!(
                have,
                Some(now),
                "core {core} hit a stale copy of line {line:#x}: it holds version {have:?}, the line is at {now}"
            );
        }
        if write {
            ch.version.insert(line, now + 1);
            ch.copy[core].insert(line, now + 1);
        }
        self.check_line(line);
    }

    /// Check the single-writer/multiple-reader invariant and the directory's exactness for `line`.
    pub fn check_line(&mut self, line: u64) {
        let mut holders = Vec::new();
        let mut writers = Vec::new();
        let mut owners = Vec::new();
        for (i, p) in self.cores.iter().enumerate() {
            let mut s = p.l1d.state_of(line).max(p.l1i.state_of(line));
            if let Some(l2) = &p.l2 {
                s = s.max(l2.state_of(line));
            }
            if s != LineState::Invalid {
                holders.push(i as u16);
            }
            if s.writable() {
                writers.push(i as u16);
            }
            if s.owner() {
                owners.push(i as u16);
            }
            let recorded = self.check.as_ref().is_some_and(|c| c.copy[i].contains_key(&line));
            assert_eq!(s != LineState::Invalid, recorded, "core {i}: copy of line {line:#x} and its record disagree");
        }
        assert!(owners.len() <= 1, "line {line:#x} has several owners: cores {owners:?}");
        if let Some(&w) = writers.first() {
            assert_eq!(holders, vec![w], "line {line:#x}: core {w} may write it but cores {holders:?} hold it");
        }
        let mut dir: Vec<u16> = self.dir.get(line).map(|e| e.holders()).unwrap_or_default();
        dir.sort_unstable();
        assert_eq!(dir, holders, "line {line:#x}: the directory's holders differ from the caches'");
        if let Some(&w) = writers.first() {
            assert_eq!(
                self.dir.get(line).and_then(|e| e.owner),
                Some(w),
                "line {line:#x}: the writer is not the owner"
            );
        }
        self.check_remote_copies(line, &writers, &owners);
        if let Some(c) = self.check.as_mut() {
            c.checked += 1;
        }
    }

    /// Remote lines: the copies of `line` in other sockets' LLCs against the home's socket set and the writers.
    fn check_remote_copies(&self, line: u64, writers: &[u16], owners: &[u16]) {
        let Some(h) = self.homes.as_ref() else { return };
        let sockets = h.ctrl.len();
        let home = self.socket_of_slice(self.slice_of(line));
        let per = h.slices_per_socket;
        let listed = self.dir.remote_sockets(line);
        let ch = self.check.as_ref();
        for k in (0..sockets).filter(|&k| k != home) {
            let held = self.llc[(k as u64 * per + line % per) as usize].contains(line);
            let recorded = ch.is_some_and(|c| c.socket_copy[k].contains_key(&line));
            assert_eq!(
                held,
                listed >> k & 1 == 1,
                "line {line:#x}: socket {k}'s copy and the home's socket set differ"
            );
            assert_eq!(held, recorded, "line {line:#x}: socket {k}'s copy and its record disagree");
            if !held {
                continue;
            }
            if let Some(&w) = writers.iter().find(|&&w| self.socket_of_core(w as usize) != k) {
                panic!("line {line:#x}: core {w} may write it while socket {k}'s LLC holds a copy");
            }
            if !owners.iter().any(|&o| self.socket_of_core(o as usize) == k) {
                if let Some(c) = ch {
                    c.remote_serves(k, line);
                }
            }
        }
        assert_eq!(listed >> home & 1, 0, "line {line:#x}: its home socket {home} is in its remote set");
    }

    /// Check every line any private cache or the directory knows (slow: for tests).
    pub fn check_all(&mut self) {
        let mut lines: Vec<u64> = self.dir.lines().map(|(&l, _)| l).collect();
        lines.extend(self.dir.remote_lines().map(|(&l, _)| l));
        for p in &self.cores {
            lines.extend(p.l1i.lines().chain(p.l1d.lines()));
            if let Some(l2) = &p.l2 {
                lines.extend(l2.lines());
            }
        }
        lines.sort_unstable();
        lines.dedup();
        for l in lines {
            self.check_line(l);
        }
    }
}
