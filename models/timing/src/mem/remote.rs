//! Remote lines: on several sockets, a socket's LLC also caches lines homed on other sockets, as Intel's LLCs do,
//! so a line read by several cores of one socket crosses the inter-socket link once. Part of [`MemSystem`]'s one
//! walk, in its own file.
//!
//! * A core's request for a line homed on another socket first reaches its own socket's slice for that line (the
//!   slice the line interleaves to among its socket's slices; a tag lookup of the directory's latency). A read
//!   that finds a copy there is answered on the socket: by the copy, or, when a core of the socket owns the line,
//!   by that core (a local forward). Anything else (a read that finds no copy, a write, an upgrade) goes on to the
//!   home, whose answer is what it was without remote lines; a read's line, on its way back, is installed in the
//!   requesting socket's slice (it crosses the link once, to the core; assumed: the slice takes its copy as the
//!   line passes, with no message of its own).
//! * Copies are clean. The home directory keeps, per line, the sockets whose LLCs hold a copy (exact: a slice that
//!   drops a copy tells the home). Before any core may write a line (a write, an upgrade, an exclusive grant) the
//!   home invalidates the copies of every socket but the writer's; the writer's socket keeps its copy, which goes
//!   stale, but while a core of that socket owns the line, reads there are forwarded to the owner, and the owner's
//!   write-back refreshes the copy on its way home. A DMA write invalidates every copy; with an inclusive LLC, the
//!   home LLC's eviction of a line invalidates its copies too (as it back-invalidates the private copies).
//!
//! Invariant (checked by [`super::check`]): a copy in socket k's LLC whose socket has no owning core holds the
//! line's latest data, and no core outside socket k holds the line writable.

use super::hierarchy::MemSystem;
use super::socket_messages::MsgKind;
use super::{CohType, LineState, MemResp, Mode};
use crate::network::{Endpoint, CONTROL_BYTES, DATA_BYTES};
use crate::{MemPort, ReqClass, Tick};

impl<M: MemPort> MemSystem<M> {
    /// The socket of core `core` (0 on one socket).
    #[inline]
    pub fn socket_of_core(&self, core: usize) -> usize {
        self.homes.as_ref().map_or(0, |h| h.core_socket[core] as usize)
    }

    /// The slice of `core`'s socket that caches `line` when the line is homed on another socket and remote lines
    /// are on (None: the request goes straight home).
    #[inline]
    pub(super) fn remote_slice(&self, core: usize, line: u64) -> Option<usize> {
        if !self.remote_lines {
            return None;
        }
        let h = self.homes.as_ref()?;
        let socket = h.core_socket[core] as u64;
        let home = self.mem.home_socket(line << self.line_shift) as u64;
        (socket != home).then(|| (socket * h.slices_per_socket + line % h.slices_per_socket) as usize)
    }

    /// Do LLCs of sockets other than `core`'s hold copies of `line`? (Then the home must invalidate them before the
    /// core may write: no exclusive grant, no write resolved inside the cluster.)
    #[inline]
    pub(super) fn remote_copies_elsewhere(&self, line: u64, core: usize) -> bool {
        self.remote_lines && self.dir.remote_sockets(line) & !(1u64 << self.socket_of_core(core)) != 0
    }

    /// Core `core`'s request for `line`, homed on another socket, leaves `from` (the core, or its cluster's
    /// directory) at `t` for its socket's slice `p`. Returns the response and the state granted.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn remote_request(
        &mut self,
        core: usize,
        line: u64,
        typ: CohType,
        p: usize,
        from: Endpoint,
        t: Tick,
        mode: Mode,
        exclusive_ok: bool,
    ) -> MemResp {
        let c = core as u16;
        let (ep, pe) = (self.placement.core[core], self.placement.llc_slice[p]);
        let arrive = self.msg(mode, MsgKind::Request, from, pe, CONTROL_BYTES, t);
        let decide = arrive + self.dir.home_ticks;
        if typ == CohType::GetS {
            if let Some(slot) = self.llc[p].find(line) {
                let socket = self.socket_of_core(core);
                let s = &mut self.llc[p];
                s.touch(slot);
                s.stats.remote_hits += 1;
                let (lat, ready) = (s.hit_ticks, s.ready(slot));
                // The partitioned schedule asks the socket's own cores, not the home, whether one owns the line.
                let owner = match self.posting() {
                    true => self.socket_owner(socket, line),
                    false => self.dir.get(line).and_then(|e| e.owner),
                };
                if let Some(o) = owner.filter(|&o| o != c && self.socket_of_core(o as usize) == socket) {
                    // A core of this socket owns the line (its data may be newer than the copy): it answers.
                    let done = self.forward_read(o, ep, pe, decide, mode);
                    self.downgrade_owner(o, line);
                    self.dir.entry(line).sharers.insert(c);
                    return MemResp { done, state: LineState::Shared };
                }
                if let (Some(ch), false) = (&self.check, owner == Some(c)) {
                    // (A core fetching a line it owns already holds the latest data itself.)
                    ch.remote_serves(socket, line);
                }
                let ready = if mode == Mode::Timed { ready.max(arrive + lat).max(decide) } else { arrive };
                let done = self.msg(mode, MsgKind::Data, pe, ep, DATA_BYTES, ready);
                if owner != Some(c) && !self.post_share(core, line, t, mode) {
                    let e = self.dir.entry(line);
                    if e.owner != Some(c) {
                        e.sharers.insert(c);
                    }
                }
                return MemResp { done, state: LineState::Shared };
            }
            self.llc[p].stats.remote_misses += 1;
        }
        let home = self.placement.llc_slice[self.slice_of(line)];
        let at_home = self.msg(mode, MsgKind::Request, pe, home, CONTROL_BYTES, decide);
        let resp = self.home_core(core, line, typ, at_home, mode, exclusive_ok);
        if typ == CohType::GetS {
            self.remote_fill(core, p, line, resp.done, mode);
        }
        resp
    }

    /// A read's line passes slice `p` of `core`'s socket on its way from the home at `done`: the slice keeps a copy.
    fn remote_fill(&mut self, core: usize, p: usize, line: u64, done: Tick, mode: Mode) {
        let socket = self.socket_of_core(core);
        self.dir.add_remote(line, socket);
        if let Some(ch) = &mut self.check {
            ch.remote_filled(socket, line);
        }
        let s = &mut self.llc[p];
        if s.find(line).is_some() {
            return;
        }
        s.stats.remote_fills += 1;
        let fill = if mode == Mode::Timed { done } else { 0 };
        let (slot, victim) = s.insert_state(line, fill, LineState::Shared, ReqClass::Core);
        let victim_owner = s.owner(slot);
        s.set_owner(slot, core as u16);
        if let Some((v, vs)) = victim {
            self.evict_llc_line(p, v, vs.dirty(), victim_owner, done, mode);
        }
    }

    /// Slice `slice` dropped its copy of `v`, a line homed on another socket, to make room at `t`: the copy is
    /// clean, so only the home hears of it (a posted message keeps its socket set exact).
    pub(super) fn remote_evicted(&mut self, slice: usize, v: u64, t: Tick, mode: Mode) {
        let socket = self.socket_of_slice(slice);
        self.llc[slice].stats.remote_evictions += 1;
        let home = self.placement.llc_slice[self.slice_of(v)];
        self.msg(mode, MsgKind::CopyDropped, self.placement.llc_slice[slice], home, CONTROL_BYTES, t);
        self.dir.remove_remote(v, socket);
        if let Some(ch) = &mut self.check {
            ch.remote_dropped(socket, v);
        }
    }

    /// The home (`from`, deciding at `decide`) invalidates the copies of `line` in every socket's LLC but
    /// `keep`'s (None: every copy); each slice acknowledges to `ack_to`. Returns when the last acknowledgement
    /// arrives (`decide` when there is none).
    pub(super) fn invalidate_remote(
        &mut self,
        line: u64,
        keep: Option<usize>,
        from: Endpoint,
        ack_to: Endpoint,
        decide: Tick,
        mode: Mode,
    ) -> Tick {
        let mut sockets = self.dir.remote_sockets(line);
        if let Some(k) = keep {
            sockets &= !(1u64 << k);
        }
        let mut done = decide;
        let per = self.homes.as_ref().map_or(1, |h| h.slices_per_socket);
        while sockets != 0 {
            let socket = sockets.trailing_zeros() as usize;
            sockets &= sockets - 1;
            let p = (socket as u64 * per + line % per) as usize;
            let pe = self.placement.llc_slice[p];
            let inv = self.msg(mode, MsgKind::Invalidate, from, pe, CONTROL_BYTES, decide);
            done = done.max(self.msg(mode, MsgKind::Ack, pe, ack_to, CONTROL_BYTES, inv));
            self.dir.stats.socket_invalidations += 1;
            self.dir.remove_remote(line, socket);
            if self.llc[p].invalidate(line).is_some() {
                self.llc[p].stats.remote_invalidations += 1;
            }
            if let Some(ch) = &mut self.check {
                ch.remote_dropped(socket, line);
            }
        }
        done
    }

    /// `core`'s dirty data for `v` passed its socket's slice on the way home: that slice's copy (if any) now holds
    /// the latest data again.
    pub(super) fn remote_refresh(&mut self, core: usize, v: u64) {
        if let Some(p) = self.remote_slice(core, v) {
            if self.llc[p].find(v).is_some() {
                let socket = self.socket_of_core(core);
                if let Some(ch) = &mut self.check {
                    ch.remote_filled(socket, v);
                }
            }
        }
    }

    /// The core of `socket` that owns `line` (its private copy is the line's owner), if one does.
    fn socket_owner(&self, socket: usize, line: u64) -> Option<u16> {
        let h = self.homes.as_ref()?;
        let cores = h.core_socket.iter().enumerate().filter(|&(_, &s)| s as usize == socket);
        cores.map(|(i, _)| i).find(|&i| self.cores[i].state_of(line).owner()).map(|i| i as u16)
    }

    /// Is `slice`'s copy of `line` a remote line (homed on another socket)?
    #[inline]
    pub(super) fn is_remote_copy(&self, slice: usize, line: u64) -> bool {
        self.remote_lines && self.slice_of(line) != slice
    }

    /// Check mode, remote lines: the copies of `line` in other sockets' LLCs against the home's socket set, the
    /// check's records and the cores that may write it (`writers`) or own it (`owners`).
    pub(super) fn check_remote_copies(&self, line: u64, writers: &[u16], owners: &[u16]) {
        let Some(h) = self.homes.as_ref() else { return };
        let sockets = h.ctrl.len();
        let home = self.socket_of_slice(self.slice_of(line));
        let per = h.slices_per_socket;
        let listed = self.dir.remote_sockets(line);
        let ch = self.check.as_ref();
        for k in (0..sockets).filter(|&k| k != home) {
            let held = self.llc[(k as u64 * per + line % per) as usize].contains(line);
            let recorded = ch.is_some_and(|c| c.has_remote_copy(k, line));
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
}
