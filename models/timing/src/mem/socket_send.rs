//! The memory system's side of the messages between sockets ([`super::socket_messages`]): a message of the walk
//! sent on the network and, when it crosses sockets, posted to its sending socket's outbox; the outboxes' accessors.
//! Apart from the message types so that the walk (`hierarchy.rs`) and this `impl` use them without using each other.

use super::hierarchy::MemSystem;
use super::socket_messages::{MsgKind, PostedPut, SocketOutboxes};
use super::{LineState, Mode};
use crate::network::{Endpoint, CONTROL_BYTES};
use crate::{MemPort, Tick};

impl<M: MemPort> MemSystem<M> {
    /// A message of `kind` over the network (posted to its socket's outbox when it crosses sockets); warming
    /// books nothing and keeps no time.
    #[inline]
    pub(super) fn msg(&mut self, mode: Mode, kind: MsgKind, src: Endpoint, dst: Endpoint, bytes: u32, t: Tick) -> Tick {
        match mode {
            Mode::Timed => {
                let arrives = self.net.send(src, dst, bytes, t);
                if let Some(o) = self.outboxes.as_deref_mut() {
                    o.post(kind, src, dst, bytes, t, arrives);
                }
                arrives
            }
            Mode::Warm => t,
        }
    }

    /// The partitioned schedule (several sockets): from now on a core's clean `Put` of a line homed on another
    /// socket, which the core does not wait for, takes effect at the window's end (`deliver_posted`) instead of
    /// during the walk that sent it, so the home's directory and network never see it in the middle of the home's
    /// own window, whichever partition ran first. Nothing on one socket.
    pub fn post_puts_at_window_ends(&mut self) {
        if let Some(o) = self.outboxes.as_deref_mut() {
            o.posted.get_or_insert_with(Vec::new);
        }
    }

    /// `core`'s clean copy of `v` left its private caches at `t`: when the line is homed on another socket, the
    /// home's `Put` is held for the window's end (true; the caller sends nothing). Not a copy the directory lists
    /// as the line's owner: a late owner's `Put` would leave the home forwarding requests to a core without it.
    pub(super) fn post_put(&mut self, core: usize, v: u64, t: Tick, mode: Mode) -> bool {
        if mode != Mode::Timed || self.outboxes.as_deref().is_none_or(|o| o.posted.is_none()) {
            return false;
        }
        let (slice, from) = (self.slice_of(v), self.socket_of_core(core));
        if self.socket_of_slice(slice) == from || self.dir.get(v).is_some_and(|e| e.owner == Some(core as u16)) {
            return false;
        }
        let (src, home) = (self.placement.core[core], self.placement.llc_slice[slice]);
        self.dir.stats.puts += 1;
        if let Some(ch) = &mut self.check {
            ch.dropped(core, v);
        }
        let put = PostedPut { share: false, from: from as u16, core: core as u16, line: v, src, home, sent: t };
        if let Some(posted) = self.outboxes.as_deref_mut().and_then(|o| o.posted.as_mut()) {
            posted.push(put);
        }
        true
    }

    /// The window's end: every `Put` held in it reaches its home, in a fixed order (sending socket, then send time,
    /// then the sending socket's own order), so the result does not depend on which partition ran first. Each books
    /// the network as it would have when sent; the home forgets the core unless the core has taken the line again
    /// since (its later request found itself still listed, and keeps its copy).
    pub fn deliver_posted(&mut self) {
        let Some(mut posted) = self.outboxes.as_deref_mut().and_then(|o| o.posted.take()) else { return };
        // A stable sort: each socket's own puts stay in the order its partition sent them.
        posted.sort_by_key(|p| (p.from, p.sent));
        for p in posted.drain(..) {
            if p.share {
                self.share_listed(p);
                continue;
            }
            self.msg(Mode::Timed, MsgKind::Put, p.src, p.home, CONTROL_BYTES, p.sent);
            if self.cores[p.core as usize].state_of(p.line) == LineState::Invalid {
                self.dir.remove_holder(p.line, p.core);
            }
        }
        if let Some(o) = self.outboxes.as_deref_mut() {
            o.posted = Some(posted);
        }
    }

    /// The cores whose `Put` of `line` is held for the window's end (check mode: the home still lists them).
    pub(super) fn posted_puts_of(&self, line: u64) -> impl Iterator<Item = u16> + '_ {
        let posted = self.outboxes.as_deref().and_then(|o| o.posted.as_deref()).unwrap_or(&[]);
        posted.iter().filter(move |p| p.line == line && !p.share).map(|p| p.core)
    }

    /// The cores that took `line` from their socket's copy in this window, not yet listed at the home (check mode).
    pub(super) fn posted_shares_of(&self, line: u64) -> impl Iterator<Item = u16> + '_ {
        let posted = self.outboxes.as_deref().and_then(|o| o.posted.as_deref()).unwrap_or(&[]);
        posted.iter().filter(move |p| p.line == line && p.share).map(|p| p.core)
    }

    /// Whether a remote-copy hit's new sharer is told to the home at the window's end (the partitioned schedule).
    #[inline]
    pub(super) fn posting(&self) -> bool {
        self.outboxes.as_deref().is_some_and(|o| o.posted.is_some())
    }

    /// `core` took `line` at `t` from its own socket's LLC copy: the home lists it at the window's end (true), so
    /// the hit reads and writes nothing of the home's in the window.
    pub(super) fn post_share(&mut self, core: usize, line: u64, t: Tick, mode: Mode) -> bool {
        if mode != Mode::Timed || !self.posting() {
            return false;
        }
        let (slice, from) = (self.slice_of(line), self.socket_of_core(core));
        let (src, home) = (self.placement.core[core], self.placement.llc_slice[slice]);
        let share = PostedPut { share: true, from: from as u16, core: core as u16, line, src, home, sent: t };
        if let Some(posted) = self.outboxes.as_deref_mut().and_then(|o| o.posted.as_mut()) {
            posted.push(share);
        }
        true
    }

    /// The home lists a core that took a copy from its socket's LLC copy, if the core still holds it.
    fn share_listed(&mut self, p: PostedPut) {
        if self.cores[p.core as usize].state_of(p.line) != LineState::Invalid {
            let e = self.dir.entry(p.line);
            if e.owner != Some(p.core) {
                e.sharers.insert(p.core);
            }
        }
    }

    /// The home is about to act on every holder of `line` (a write's invalidations, its LLC's eviction, a DMA
    /// write, a change of home): the cores that took it from their socket's copy in this window are listed first,
    /// so none keeps a copy the home does not know of. (A cross-partition step, rare: the runs' shared lines are
    /// code and page tables, which no core writes.)
    pub(super) fn settle_shares(&mut self, line: u64) {
        let Some(posted) = self.outboxes.as_deref_mut().and_then(|o| o.posted.as_mut()) else { return };
        if !posted.iter().any(|p| p.share && p.line == line) {
            return;
        }
        let mine: Vec<PostedPut> = posted.iter().filter(|p| p.share && p.line == line).copied().collect();
        posted.retain(|p| !(p.share && p.line == line));
        for p in mine {
            self.share_listed(p);
        }
    }

    /// The sockets' outboxes (None on one socket).
    pub fn socket_messages(&self) -> Option<&SocketOutboxes> {
        self.outboxes.as_deref()
    }

    /// List the counts per kind in the statistics (`SocketOutboxes::stats`); nothing on one socket.
    pub fn report_socket_messages(&mut self) {
        if let Some(o) = self.outboxes.as_deref_mut() {
            o.report = true;
        }
    }

    /// Keep every message between sockets from now on (`SocketOutboxes::log`); nothing on one socket.
    pub fn keep_socket_message_log(&mut self) {
        if let Some(o) = self.outboxes.as_deref_mut() {
            o.keep_log();
        }
    }
}
