//! The pipeline: how one executed instruction goes through fetch, dispatch, issue, completion and commit (the
//! module doc of `core` says what each stage models), and the issue calendar and scheduler it takes slots and
//! entries from. Apart from the core's state and its set-up (`core.rs`), as this is the per-instruction path.

use super::{
    Core, InstTiming, Slot, SqEntry, CALENDAR, FU_ALU, FU_BRANCH, FU_DIV, FU_FDIV, FU_FP, FU_LOAD, FU_MUL, FU_STORE,
    N_FU, PAGE_WORDS, SCHED_WINDOW,
};
use crate::inst::{InstClass, InstInfo, PrefetchKind};
use crate::tlb::Side;
use crate::tlb_guest::{PageTables, Untranslated};
use crate::{AccessKind, MemPort, MemReq};

impl Core {
    /// Take an issue slot and a unit of class `fu` at the first cycle >= `c` that has both.
    #[inline]
    fn take_slot(&mut self, mut c: u64, fu: usize) -> u64 {
        loop {
            let s = &mut self.calendar[c as usize & (CALENDAR - 1)];
            if s.cycle != c {
                *s = Slot { cycle: c, total: 0, fu: [0; N_FU] };
            }
            if s.total < self.issue_width && s.fu[fu] < self.fu_units[fu] {
                s.total += 1;
                s.fu[fu] += 1;
                return c;
            }
            c += 1;
        }
    }

    /// Take an issue slot and one unit each of classes `fu` and `also` at the first cycle >= `c` that has them all
    /// (a store's data port and address unit, a branch's ALU and branch unit).
    #[inline]
    fn take_slot2(&mut self, mut c: u64, fu: usize, also: usize) -> u64 {
        loop {
            let s = &mut self.calendar[c as usize & (CALENDAR - 1)];
            if s.cycle != c {
                *s = Slot { cycle: c, total: 0, fu: [0; N_FU] };
            }
            if s.total < self.issue_width && s.fu[fu] < self.fu_units[fu] && s.fu[also] < self.fu_units[also] {
                s.total += 1;
                s.fu[fu] += 1;
                s.fu[also] += 1;
                return c;
            }
            c += 1;
        }
    }

    /// Time one executed instruction. `mem` is the memory system this core's requests go to.
    #[inline]
    pub fn step<M: MemPort + ?Sized>(&mut self, inst: &InstInfo, mem: &mut M) -> InstTiming {
        self.step_over(inst, mem, &mut Untranslated)
    }

    /// `step` in FS mode: addresses translated over the guest's page tables (`tlb_guest`). Always inlined: in the
    /// executor's per-instruction hook this saves the call, its register saves and the writes of a timing nobody
    /// reads.
    #[inline(always)]
    pub fn step_over<M: MemPort + ?Sized, T: PageTables>(
        &mut self,
        inst: &InstInfo,
        mem: &mut M,
        tables: &mut T,
    ) -> InstTiming {
        // A copy of the pipeline for each common class (98.5% of the target's instructions), the class a
        // constant in it: the tests of the class on its way (queue entries, serialising, the issue unit and its
        // latency, prediction, the fetch group) fold away. The other classes share one copy.
        // The core's shape, which its parameters fix, is also decided once here rather than at each of its tests
        // on the way: a plain core (out of order, no scheduler or rename-register bound, no decode paths: the
        // target's) runs copies with those tests folded away; any other shares copies that make them.
        if self.plain {
            self.step_shape::<M, T, true>(inst, mem, tables)
        } else {
            self.step_shape::<M, T, false>(inst, mem, tables)
        }
    }

    /// Time a block's executed instructions in order (SE mode), as `step` does each: the core's shape (`plain`) is
    /// decided once for the block rather than once an instruction (the test and its branch were 3 of the target's
    /// host instructions a guest instruction).
    #[inline(always)]
    pub fn step_block<M: MemPort + ?Sized>(&mut self, infos: &[InstInfo], mem: &mut M) {
        if self.plain {
            for inst in infos {
                self.step_shape::<M, Untranslated, true>(inst, mem, &mut Untranslated);
            }
        } else {
            for inst in infos {
                self.step_shape::<M, Untranslated, false>(inst, mem, &mut Untranslated);
            }
        }
    }

    /// `step_over` on a core that is plain (`PLAIN`, `Core::plain`) or not.
    #[inline(always)]
    fn step_shape<M: MemPort + ?Sized, T: PageTables, const PLAIN: bool>(
        &mut self,
        inst: &InstInfo,
        mem: &mut M,
        tables: &mut T,
    ) -> InstTiming {
        match inst.class {
            InstClass::IntAlu => self.step_class::<M, T, PLAIN>(inst, InstClass::IntAlu, mem, tables),
            InstClass::Load => self.step_class::<M, T, PLAIN>(inst, InstClass::Load, mem, tables),
            InstClass::Store => self.step_class::<M, T, PLAIN>(inst, InstClass::Store, mem, tables),
            InstClass::Branch => self.step_class::<M, T, PLAIN>(inst, InstClass::Branch, mem, tables),
            InstClass::Jump => self.step_class::<M, T, PLAIN>(inst, InstClass::Jump, mem, tables),
            class => self.step_class::<M, T, PLAIN>(inst, class, mem, tables),
        }
    }

    /// `step_over` of an instruction of class `class` (`inst.class`) on a core that is plain (`PLAIN`) or not.
    #[inline(always)]
    fn step_class<M: MemPort + ?Sized, T: PageTables, const PLAIN: bool>(
        &mut self,
        inst: &InstInfo,
        class: InstClass,
        mem: &mut M,
        tables: &mut T,
    ) -> InstTiming {
        self.stats.insts += 1;
        self.stats.by_class[class as usize] += 1;

        // ---- fetch
        if self.fetch_slots >= self.fetch_width {
            self.fetch_cycle += 1;
            self.fetch_slots = 0;
        }
        let line = inst.pc >> self.line_shift;
        if line != self.last_fetch_line {
            self.last_fetch_line = line;
            // An ITLB miss holds fetch until the translation is ready.
            let (translated, pc) = self.translate(Side::Inst, inst.pc, self.fetch_cycle, mem, tables);
            if translated > self.fetch_cycle {
                self.fetch_cycle = translated;
                self.fetch_slots = 0;
            }
            let t = self.clock.tick(self.fetch_cycle);
            let done = mem.access(&MemReq::new(pc, AccessKind::IFetch, self.id, t));
            // A hit is pipelined; only the cycles beyond it stall fetch.
            let avail = self.mem_cycles(done).saturating_sub(self.l1.l1i);
            if avail > self.fetch_cycle {
                self.stats.icache_stall_cycles += avail - self.fetch_cycle;
                self.fetch_cycle = avail;
                self.fetch_slots = 0;
            }
        }
        // Its decode path may deliver it later, in a new group (one path a cycle; legacy: a predecoded block a cycle).
        if let Some(fe) = self.fe.as_deref_mut().filter(|_| !PLAIN) {
            let at = fe.deliver(inst, self.fetch_cycle, self.fetch_slots == 0);
            if at > self.fetch_cycle {
                (self.fetch_cycle, self.fetch_slots) = (at, 0);
            }
        }
        let fetch = self.fetch_cycle;
        self.fetch_slots += 1;

        // ---- dispatch (rename): in order, once its ROB / LQ / SQ entry is free
        let is_load = matches!(class, InstClass::Load | InstClass::Atomic);
        let is_store = class == InstClass::Store;
        let mut d = fetch.max(self.rob[self.rob_pos]).max(self.serialize_until);
        if is_load {
            d = d.max(self.lq[self.lq_pos]);
        }
        if is_store {
            let free = self.sq[self.sq_pos].release;
            if free > d {
                self.stats.store_queue_stall_cycles += free.saturating_sub(d.max(self.disp_cycle));
                d = free;
            }
        }
        if d < self.disp_cycle {
            d = self.disp_cycle;
        }
        // The scheduler and rename-register bounds, where the core has them (one test on cores without: the
        // target's hot path).
        let bounded = !PLAIN && self.bounded;
        if bounded {
            d = self.bounds_at_dispatch(inst, d);
        }
        if d == self.disp_cycle {
            if self.disp_slots >= self.fetch_width {
                d += 1;
                self.disp_slots = 0;
            }
        } else {
            self.disp_slots = 0;
        }
        self.disp_cycle = d;
        self.disp_slots += 1;

        // ---- issue: sources ready, unit and slot free
        // Every source is read, with no test for an absent one: that is register 0, x0, whose ready cycle is never
        // written (a write to x0 is none) and stays 0, below `ready`. Only a fused multiply-add has a third source
        // (`InstInfo::src3`, 0 for any other): the common classes' copies leave it out.
        let src3 = if matches!(
            class,
            InstClass::IntAlu | InstClass::Load | InstClass::Store | InstClass::Branch | InstClass::Jump
        ) {
            0
        } else {
            inst.src3
        };
        let mut ready =
            (d + 1).max(self.reg_ready[(inst.src1 & 63) as usize]).max(self.reg_ready[(inst.src2 & 63) as usize]);
        if src3 != 0 {
            ready = ready.max(self.reg_ready[(src3 & 63) as usize]);
        }
        if !PLAIN && self.in_order {
            ready = ready.max(self.last_issue);
        }
        // A fence serialises unless the core is TSO and TSO keeps its orderings anyway (`tso_fences`).
        let serializing = match class {
            InstClass::Fence => !(self.tso_fences && inst.tso_implied),
            InstClass::System => true,
            _ => false,
        };
        if serializing {
            // Waits for every older instruction to commit and (fence) every older store to drain.
            let committed = ready.max(self.commit_cycle);
            self.stats.serialize_commit_wait_cycles += committed - ready;
            self.stats.serialize_drain_wait_cycles += self.last_store_release.saturating_sub(committed);
            ready = committed.max(self.last_store_release);
        }
        self.stats.src_operands += (inst.src1 != 0) as u64 + (inst.src2 != 0) as u64 + (src3 != 0) as u64;
        self.stats.dst_operands += (inst.dst != 0) as u64;
        // The cycle a store's translation is ready: its line is fetched for ownership from then.
        let (mut store_at, mut store_pa) = (0, 0);
        let (issue, complete) = match class {
            InstClass::IntAlu | InstClass::Fence | InstClass::System => {
                let i = self.take_slot(ready, FU_ALU);
                (i, i + self.alu_lat)
            }
            InstClass::Branch | InstClass::Jump => {
                let i = if self.fu_units[FU_BRANCH] == u8::MAX {
                    self.take_slot(ready, FU_ALU)
                } else {
                    self.take_slot2(ready, FU_ALU, FU_BRANCH)
                };
                (i, i + self.alu_lat)
            }
            InstClass::Nop => (d, d),
            InstClass::IntMul => {
                let i = self.take_slot(ready, FU_MUL);
                (i, i + self.mul_lat)
            }
            InstClass::IntDiv => {
                // Not pipelined: the earliest-free divider, busy for the whole latency.
                let (k, free) = self.div_free.iter().copied().enumerate().min_by_key(|&(_, f)| f).unwrap_or((0, 0));
                let i = self.take_slot(ready.max(free), FU_DIV);
                if let Some(f) = self.div_free.get_mut(k) {
                    *f = i + self.div_lat;
                }
                (i, i + self.div_lat)
            }
            InstClass::FpAdd | InstClass::FpMul | InstClass::FpFma | InstClass::FpCvt => {
                let lat = match class {
                    InstClass::FpAdd => self.fp_add_lat,
                    InstClass::FpMul => self.fp_mul_lat,
                    InstClass::FpFma => self.fp_fma_lat,
                    _ => self.fp_cvt_lat,
                };
                let i = self.take_slot(ready, FU_FP);
                (i, i + lat)
            }
            InstClass::FpDiv | InstClass::FpSqrt => {
                // Not pipelined, like the integer divider.
                let lat = if class == InstClass::FpDiv { self.fp_div_lat } else { self.fp_sqrt_lat };
                let (k, free) = self.fdiv_free.iter().copied().enumerate().min_by_key(|&(_, f)| f).unwrap_or((0, 0));
                let i = self.take_slot(ready.max(free), FU_FDIV);
                if let Some(f) = self.fdiv_free.get_mut(k) {
                    *f = i + lat;
                }
                (i, i + lat)
            }
            InstClass::Load => {
                let i = self.take_slot(ready, FU_LOAD);
                let c = self.load(inst, i, mem, tables);
                self.stats.load_latency_sum += c - i;
                (i, c)
            }
            InstClass::Atomic => {
                // A read-modify-write at L1D, after older stores have drained (ordered like a locked op).
                let i = self.take_slot(ready.max(self.last_store_release), FU_LOAD);
                let (at, pa) = self.translate(Side::Data, inst.mem_addr, i, mem, tables);
                let mut req = MemReq::new(pa, AccessKind::Write, self.id, self.clock.tick(at));
                req.non_temporal = inst.non_temporal;
                let c = self.mem_cycles(mem.access(&req)).max(at + 1);
                (i, c)
            }
            InstClass::Store => {
                let i = if self.store_agu_on_load_port {
                    self.take_slot2(ready, FU_STORE, FU_LOAD)
                } else {
                    self.take_slot(ready, FU_STORE)
                };
                (store_at, store_pa) = self.translate(Side::Data, inst.mem_addr, i, mem, tables);
                (i, store_at + 1)
            }
            InstClass::Prefetch => {
                let i = self.take_slot(ready, FU_LOAD);
                let kind = match inst.prefetch_kind {
                    PrefetchKind::Instruction => AccessKind::IFetch,
                    _ => AccessKind::Prefetch,
                };
                let side = if kind == AccessKind::IFetch { Side::Inst } else { Side::Data };
                let (at, pa) = self.translate(side, inst.mem_addr, i, mem, tables);
                let mut req = MemReq::new(pa, kind, self.id, self.clock.tick(at));
                req.non_temporal = inst.non_temporal;
                if kind == AccessKind::IFetch {
                    mem.access(&req); // holds an MSHR until its fill; nobody waits for it
                    (i, i + 1)
                } else {
                    // It holds an MSHR until its fill and nobody waits for its data, but with every L1D MSHR (fill
                    // buffer) busy it waits in the load buffer until one is granted, as on a real core: a burst of
                    // prefetches backs up the core instead of being sent dated ahead. (A free MSHR: done at issue + 1
                    // as before, whatever its translation takes: that is not modelled.)
                    let sent = mem.prefetch(&req);
                    (i, if sent > req.time { self.mem_cycles(sent).max(i + 1) } else { i + 1 })
                }
            }
        };
        if issue > self.last_issue {
            self.last_issue = issue;
        }
        if bounded && self.sched_cap != 0 && class != InstClass::Nop {
            self.sched_hold(d, issue);
        }
        if inst.dst != 0 {
            self.reg_ready[(inst.dst & 63) as usize] = complete; // (register numbers are below 64: no bounds check)
        }

        // ---- branch prediction: a wrong guess redirects fetch after resolution
        let correct = match class {
            InstClass::Branch => self.bp.conditional(inst.pc, inst.taken),
            InstClass::Jump => self.predict_jump(inst),
            _ => true,
        };
        if !correct {
            self.stats.mispredicts += 1;
            let redirect = complete + self.penalty;
            if redirect > self.fetch_cycle {
                self.fetch_cycle = redirect;
                self.fetch_slots = 0;
            }
        } else if inst.taken && matches!(class, InstClass::Branch | InstClass::Jump) {
            self.fetch_slots = self.fetch_width; // a taken branch ends the fetch group
        }
        if inst.next_pc != inst.pc + inst.len as u64 && inst.next_pc != 0 {
            self.last_fetch_line = u64::MAX; // fetch restarts at the target
        }

        // ---- commit: in order, after completion
        let mut c = complete.max(self.commit_cycle);
        if c == self.commit_cycle {
            if self.commit_slots >= self.commit_width {
                c += 1;
                self.commit_slots = 0;
            }
        } else {
            self.commit_slots = 0;
        }
        self.commit_cycle = c;
        self.commit_slots += 1;
        if serializing {
            self.serialize_until = c;
        }
        if class == InstClass::Fence {
            self.fence_until = c;
        }
        self.rob_pos = Self::ring_put(&mut self.rob, self.rob_pos, c);
        if bounded && self.writes_int(inst) {
            self.rename[self.rename_pos] = c;
            self.rename_pos = if self.rename_pos + 1 == self.rename.len() { 0 } else { self.rename_pos + 1 };
        }
        self.stats.rob_occupancy_sum += c - d;
        if is_load {
            self.lq_pos = Self::ring_put(&mut self.lq, self.lq_pos, c);
            self.stats.lq_occupancy_sum += c - d;
        }
        if is_store {
            // Fetch the line for ownership at issue; the store leaves the store buffer, in order, after commit. An
            // ordered uncached store (a doorbell) is not sent ahead: it goes out once committed and the oldest in
            // the store buffer, and its register trip holds the buffer from then.
            let send =
                if self.ordered_uncached && mem.uncached(store_pa) { c.max(self.last_store_release) } else { store_at };
            let mut req = MemReq::new(store_pa, AccessKind::Write, self.id, self.clock.tick(send));
            req.non_temporal = inst.non_temporal;
            let owned = self.mem_cycles(mem.access(&req));
            let release = c.max(owned).max(self.last_store_release);
            self.last_store_release = release;
            self.sq[self.sq_pos] = SqEntry { release, done: complete, addr: inst.mem_addr, size: inst.mem_size.max(1) };
            // Both 8-byte words the store may touch (an unaligned store spans two; most touch one, noted once).
            let (first, last) = (inst.mem_addr >> 3, (inst.mem_addr + inst.mem_size.max(1) as u64 - 1) >> 3);
            self.note_store_word(first, release);
            if last != first {
                self.note_store_word(last, release);
            }
            self.sq_pos = if self.sq_pos + 1 == self.sq.len() { 0 } else { self.sq_pos + 1 };
            self.stats.sq_occupancy_sum += release - d;
        }
        InstTiming { fetch, dispatch: d, issue, complete, commit: c }
    }

    /// Write `value` at `pos` of the ring `ring` and return the next position: the ring's length read before the
    /// write, and its position checked once.
    #[inline(always)]
    fn ring_put<V>(ring: &mut [V], pos: usize, value: V) -> usize {
        let next = if pos + 1 == ring.len() { 0 } else { pos + 1 };
        ring[pos] = value;
        next
    }

    /// A store to 8-byte word `word` leaves the store buffer at `release`: the filters loads ask first.
    #[inline(always)]
    fn note_store_word(&mut self, word: u64, release: u64) {
        let h = Self::word_hash(word);
        self.sq_filter[h] = self.sq_filter[h].max(release);
        if self.alias_pen != 0 {
            let a = &mut self.alias_filter[word as usize % PAGE_WORDS];
            *a = (*a).max(release);
        }
    }

    /// Whether `inst` takes an integer rename register (where the core bounds them).
    #[inline]
    fn writes_int(&self, inst: &InstInfo) -> bool {
        inst.dst != 0 && inst.dst < 32 && !self.rename.is_empty()
    }

    /// The dispatch cycle (>= `d`) once `inst` has an integer rename register (the one the writer
    /// `int_rename_registers` writers back frees at its commit) and a scheduler entry (those whose instructions
    /// issued by then are free; if none is, the earliest to issue).
    #[inline(never)]
    fn bounds_at_dispatch(&mut self, inst: &InstInfo, mut d: u64) -> u64 {
        if self.writes_int(inst) && self.rename[self.rename_pos] > d {
            self.stats.rename_stall_cycles += self.rename[self.rename_pos] - d;
            d = self.rename[self.rename_pos];
        }
        if self.sched_cap != 0 && inst.class != InstClass::Nop {
            d = self.sched_entry(d);
        }
        d
    }

    /// The dispatch cycle (>= `d`) at which a scheduler entry is free: entries whose instruction issued by then are
    /// free (an instruction may dispatch into an entry in the cycle its holder issues); while all are held, dispatch
    /// waits a cycle at a time, as their instructions issue. The issues are taken off only when the count (which
    /// may still include issued ones) reaches the bound: amortised over the cycles simulated, the cursor only moves
    /// forward, and jumps ahead when nothing is held.
    #[inline]
    fn sched_entry(&mut self, d: u64) -> u64 {
        if self.sched_busy < self.sched_cap {
            return d;
        }
        self.sched_wait(d)
    }

    /// `sched_entry` when every entry is held (out of line: the common case is a free entry).
    #[inline(never)]
    fn sched_wait(&mut self, d: u64) -> u64 {
        self.sched_release(d);
        let mut at = d;
        while self.sched_busy >= self.sched_cap {
            at += 1;
            self.sched_release(at);
        }
        self.stats.scheduler_stall_cycles += at - d;
        at
    }

    /// Free the entries of instructions that issue in cycles up to `to`.
    #[inline]
    fn sched_release(&mut self, to: u64) {
        while self.sched_cursor < to {
            if self.sched_busy == 0 {
                self.sched_cursor = to; // every count is 0: nothing to take off on the way
                return;
            }
            self.sched_cursor += 1;
            let k = self.sched_cursor as usize & (SCHED_WINDOW - 1);
            self.sched_busy -= self.sched_count[k] as usize;
            self.sched_count[k] = 0;
        }
    }

    /// Hold a scheduler entry, dispatched at `d`, until cycle `issue` (after `d`, so after the cursor). An issue
    /// beyond the counts' window of the cursor first brings the cursor to `d`; one `SCHED_WINDOW` cycles or more
    /// after `d` frees its entry at the window's last cycle (rare: a load waiting that long), so no count is ever
    /// left behind the cursor.
    #[inline]
    fn sched_hold(&mut self, d: u64, issue: u64) {
        if issue >= self.sched_cursor + SCHED_WINDOW as u64 {
            self.sched_release(d);
        }
        let at = issue.min(self.sched_cursor + SCHED_WINDOW as u64 - 1);
        self.sched_count[at as usize & (SCHED_WINDOW - 1)] += 1;
        self.sched_busy += 1;
    }
}
