//! The I/O agents' side of the walk: a NIC's DMA is a coherent agent that enters at the line's home directory
//! (it has no private caches). Part of [`MemSystem`]'s one walk, in its own file.

use super::hierarchy::MemSystem;
use super::socket_messages::MsgKind;
use super::{LineState, Mode, Origin};
use crate::network::{CONTROL_BYTES, DATA_BYTES};
use crate::{AccessKind, MemPort, MemReq, Tick};

impl<M: MemPort> MemSystem<M> {
    /// An I/O agent's access (`MemSystem::access_mode`), out of line: a core's access needs none of its frame.
    #[inline(never)]
    pub(super) fn io_access(&mut self, req: &MemReq, mode: Mode) -> Tick {
        let done = self.io_walk(req, mode);
        if self.check.is_some() {
            self.check_line(req.addr >> self.line_shift);
        }
        done
    }

    /// An I/O agent's request (class `Io`) enters at the line's home. A write invalidates every private copy
    /// (the whole line is overwritten) and allocates or updates the line in the LLC (DDIO, within the class's
    /// ways) or goes to memory; a read gets the owner's dirty data by a forward, else the LLC's or memory's,
    /// without allocating.
    pub(super) fn io_walk(&mut self, req: &MemReq, mode: Mode) -> Tick {
        self.origin = Origin::Dma;
        let line = req.addr >> self.line_shift;
        let write = req.kind == AccessKind::Write;
        let s = self.slice_of(line);
        let home = self.placement.llc_slice[s];
        let ep = self.placement.io.get(req.requester as usize).copied().unwrap_or(home);
        let t = self.msg(mode, MsgKind::Dma, ep, home, if write { DATA_BYTES } else { CONTROL_BYTES }, req.time);
        let lat = self.llc[s].hit_ticks;
        let decide = t + self.dir.home_ticks;
        if write {
            self.dma.io_wrote(line);
            if let Some(ch) = &mut self.check {
                ch.io_write(line);
            }
            let mut acks = t;
            self.settle_shares(line);
            if let Some(entry) = self.dir.take(line) {
                self.dir.stats.io_snoops += 1;
                for x in entry.holders() {
                    let xe = self.placement.core[x as usize];
                    let inv = self.msg(mode, MsgKind::Invalidate, home, xe, CONTROL_BYTES, decide);
                    acks = acks.max(self.msg(mode, MsgKind::Ack, xe, home, CONTROL_BYTES, inv));
                    self.dir.stats.invalidations += 1;
                    self.drop_core_copies(x as usize, line, false);
                }
            }
            if self.remote_lines {
                // The whole line is overwritten: every other socket's LLC copy goes.
                acks = acks.max(self.invalidate_remote(line, None, home, home, decide, mode));
            }
            let c = &mut self.llc[s];
            c.stats.accesses += 1;
            c.stats.writes += 1;
            let found = c.find(line);
            if !self.ddio {
                // Plain DMA: the line goes to memory; the LLC's copy is dropped.
                self.io.writes_to_memory += 1;
                c.stats.misses += 1;
                c.stats.dma_misses += 1;
                c.invalidate(line);
                if mode == Mode::Warm {
                    return t;
                }
                let mc = self.mem_ctrl_of(line, s);
                let at_mc = self.net.send(home, mc, DATA_BYTES, t + lat);
                return self.mem.access(&MemReq { time: at_mc, ..*req }).max(acks);
            }
            match found {
                Some(slot) => {
                    c.stats.hits += 1;
                    c.touch(slot);
                    c.mark_dirty(slot);
                    c.set_owner(slot, req.owner);
                    self.io.write_hits += 1;
                    self.dma.in_llc(line);
                }
                None => {
                    c.stats.misses += 1;
                    c.stats.dma_misses += 1;
                    c.stats.write_misses += 1;
                    self.io.write_allocs += 1;
                    let (slot, victim) = c.insert_state(line, t + lat, LineState::Modified, req.class);
                    let victim_owner = c.owner(slot);
                    // The written data is the queue's core's: its eviction goes to that core's port.
                    c.set_owner(slot, req.owner);
                    self.dma.in_llc(line);
                    if let Some((v, vs)) = victim {
                        self.evict_llc_line(s, v, vs.dirty(), victim_owner, t, mode);
                    }
                }
            }
            return (t + lat).max(acks);
        }
        if let Some(o) = self.dir.get(line).and_then(|e| e.owner) {
            if self.cores[o as usize].state_of(line).dirty() {
                // The owner's data is newer than the LLC's: it answers (3-hop); it keeps its copy.
                self.dir.stats.io_snoops += 1;
                self.io.read_forwards += 1;
                self.llc_tag_lookup(line);
                return self.forward_read(o, ep, home, decide, mode);
            }
        }
        let c = &mut self.llc[s];
        c.stats.accesses += 1;
        let ready = match c.find(line) {
            Some(slot) => {
                self.io.read_hits += 1;
                c.stats.hits += 1;
                (t + lat).max(if mode == Mode::Timed { c.ready(slot) } else { 0 })
            }
            None => {
                self.io.read_misses += 1;
                c.stats.misses += 1;
                c.stats.dma_misses += 1;
                if mode == Mode::Warm {
                    return t;
                }
                self.memory_read(s, line, req.owner, t + lat)
            }
        };
        self.msg(mode, MsgKind::Data, home, ep, DATA_BYTES, ready)
    }

    /// A core reads `line` from LLC slice `s`: if an I/O agent wrote it and no core has read it since, count
    /// whether the LLC still held it (DDIO's hit) or not.
    #[inline]
    pub(super) fn count_core_read_of_io_line(&mut self, s: usize, line: u64) {
        if self.dma.take_fresh(line) {
            if self.llc[s].find(line).is_some() {
                self.io.core_read_hits += 1;
            } else {
                self.io.core_read_misses += 1;
            }
        }
    }

    /// Count the LLC's eviction of `v` (its final dirtiness; `core_dirty`: a core's copy, back-invalidated,
    /// held newer data): what the DMA-written lines lose to whom, and whose data each write-back to memory
    /// carries (a DMA write's, a core's in a DMA-written line such as a response built in a packet buffer, or a
    /// core's in a line no I/O agent wrote). Kept out of line, so a profile shows what its lookup costs.
    #[inline(never)]
    pub(super) fn count_llc_eviction(&mut self, v: u64, dirty: bool, core_dirty: bool) {
        let by_dma = self.origin == Origin::Dma;
        let dma_line = self.dma.written(v);
        if dma_line.is_some() {
            if by_dma {
                self.io.dma_lines_displaced_by_dma += 1;
            } else {
                self.io.dma_lines_displaced_by_cores += 1;
            }
        }
        if !dirty {
            return;
        }
        match dma_line {
            Some(true) if !core_dirty => self.io.writebacks_dma_data += 1,
            Some(_) => self.io.writebacks_core_data_in_dma_lines += 1,
            None => self.io.writebacks_core_lines += 1,
        }
        if by_dma {
            self.io.writebacks_displaced_by_dma += 1;
        }
    }
}
