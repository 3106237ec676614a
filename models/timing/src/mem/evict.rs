//! Evictions and write-backs of a socket's memory system (moved out of `hierarchy.rs` to keep it under ~1,000
//! lines, review s27 #10): the LLC dropping a line (back-invalidation of private copies when inclusive, write-back
//! of dirty data), a private level dropping a copy, and the PUT and write-back messages they send.

use super::hierarchy::{Level, MemSystem};
use super::socket_messages::MsgKind;
use super::{LineState, Mode};
use crate::network::{CONTROL_BYTES, DATA_BYTES};
use crate::{MemPort, ReqClass, Tick};

impl<M: MemPort> MemSystem<M> {
    /// The LLC dropped `v`, whose data is `owner`'s (`CacheArray::owner`): back-invalidate the private copies (if
    /// inclusive) and write back dirty data, as the core whose dirty copy it was if one was.
    pub(super) fn evict_llc_line(&mut self, slice: usize, v: u64, dirty: bool, owner: u16, t: Tick, mode: Mode) {
        if self.is_remote_copy(slice, v) {
            return self.remote_evicted(slice, v, t, mode);
        }
        if self.dma.take_fresh(v) {
            self.io.leaky_evictions += 1;
        }
        let (mut dirty, mut owner, mut core_dirty) = (dirty, owner, false);
        if self.llc_inclusive {
            self.settle_shares(v);
            if let Some(entry) = self.dir.take(v) {
                let home = self.placement.llc_slice[slice];
                for x in entry.holders() {
                    let xe = self.placement.core[x as usize];
                    let inv = self.msg(mode, MsgKind::Invalidate, home, xe, CONTROL_BYTES, t);
                    self.msg(mode, MsgKind::Ack, xe, home, CONTROL_BYTES, inv);
                    self.dir.stats.back_invalidations += 1;
                    if self.drop_core_copies(x as usize, v, true).dirty() {
                        (dirty, owner, core_dirty) = (true, x, true);
                    }
                }
            }
            if self.remote_lines {
                // Inclusive of the other sockets' copies too (a copy's owner may have written back past it).
                let home = self.placement.llc_slice[slice];
                self.invalidate_remote(v, None, home, home, t, mode);
            }
        }
        self.count_llc_eviction(v, dirty, core_dirty);
        if dirty {
            self.memory_write(slice, v, owner, t, mode);
        }
    }

    /// Remove `line` from every private cache of `core`; returns the strongest state removed. `back`: the LLC's
    /// eviction caused it (else another agent's write).
    pub(super) fn drop_core_copies(&mut self, core: usize, line: u64, back: bool) -> LineState {
        let p = &mut self.cores[core];
        let mut had = LineState::Invalid;
        for a in [&mut p.l1i, &mut p.l1d].into_iter().chain(p.l2.as_mut()) {
            if let Some(s) = a.invalidate(line) {
                if back {
                    a.stats.back_invalidations += 1;
                } else {
                    a.stats.coherence_invalidations += 1;
                }
                had = had.max(s);
            }
        }
        if let Some(ch) = &mut self.check {
            ch.dropped(core, line);
        }
        had
    }

    /// A copy of `v` in state `vs` left `level` of `core`'s private caches at `t`.
    pub(super) fn private_evict(&mut self, core: usize, v: u64, vs: LineState, level: Level, t: Tick, mode: Mode) {
        if level == Level::L1 && vs.dirty() {
            if let Some(l2) = self.cores[core].l2.as_mut() {
                // The dirty L1 copy goes into the core's L2 (it stays in the core: no directory message).
                if let Some(slot) = l2.find(v) {
                    // M stays M; an O copy's data is dirty but shared: O.
                    l2.set_state(slot, vs);
                    return;
                }
                let (_, victim) = l2.insert_state(v, t, vs, ReqClass::Core);
                if let Some((v2, vs2)) = victim {
                    self.private_evict(core, v2, vs2, Level::L2, t, mode);
                }
                return;
            }
        }
        let remaining = self.cores[core].state_of(v);
        if remaining == LineState::Invalid {
            self.put(core, v, vs.dirty(), t, mode);
        } else if vs.dirty() && !remaining.dirty() {
            // The dirty data goes home but the core keeps a clean copy: it stops being the owner.
            let (home, ep) = (self.placement.llc_slice[self.slice_of(v)], self.placement.core[core]);
            self.msg(mode, MsgKind::WriteBack, ep, home, DATA_BYTES, t);
            self.llc_writeback(v, core, t, mode);
            let p = &mut self.cores[core];
            for a in [&mut p.l1i, &mut p.l1d].into_iter().chain(p.l2.as_mut()) {
                if let Some(s) = a.find(v) {
                    a.set_state(s, LineState::Shared);
                }
            }
            let e = self.dir.entry(v);
            if e.owner == Some(core as u16) {
                e.owner = None;
            }
            e.sharers.insert(core as u16);
        }
    }

    /// `v` left `core`'s private caches: PUTX (dirty: data home) or PUTS (clean: keeps the sharers exact).
    pub(super) fn put(&mut self, core: usize, v: u64, dirty: bool, t: Tick, mode: Mode) {
        if !dirty && self.post_put(core, v, t, mode) {
            return;
        }
        let (home, ep) = (self.placement.llc_slice[self.slice_of(v)], self.placement.core[core]);
        self.msg(
            mode,
            if dirty { MsgKind::WriteBack } else { MsgKind::Put },
            ep,
            home,
            if dirty { DATA_BYTES } else { CONTROL_BYTES },
            t,
        );
        if dirty {
            self.dir.stats.putx += 1;
            self.llc_writeback(v, core, t, mode);
        } else {
            self.dir.stats.puts += 1;
        }
        self.dir.remove_holder(v, core as u16);
        if let Some(ch) = &mut self.check {
            ch.dropped(core, v);
        }
    }

    /// `core`'s dirty copy of `v` reaches the LLC at `t`: the LLC's line (now `core`'s data) turns dirty, or
    /// without one the data goes on to memory as `core`'s.
    pub(super) fn llc_writeback(&mut self, v: u64, core: usize, t: Tick, mode: Mode) {
        let s = self.slice_of(v);
        if self.remote_lines {
            self.remote_refresh(core, v);
        }
        self.dma.core_wrote(v);
        if let Some(slot) = self.llc[s].find(v) {
            self.llc[s].mark_dirty(slot);
            self.llc[s].set_owner(slot, core as u16);
        } else {
            // Not inclusive (or already dropped): straight to memory.
            self.memory_write(s, v, core as u16, t, mode);
        }
    }
}
