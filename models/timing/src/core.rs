//! Core timing, functional-first and timing-directed (in the manner of ZSim's and Sniper's core models).
//!
//! The functional executor runs an instruction and hands its [`InstInfo`] to [`Core::step`], which gives it
//! fetch, dispatch, issue, completion and commit cycles from:
//! * fetch: `fetch_width` per cycle, a taken branch ends the fetch group, a new I-cache line is fetched from the
//!   L1I (a miss stalls fetch), a mispredicted branch redirects fetch `mispredict_penalty` cycles after it resolves;
//! * dispatch: `fetch_width` per cycle in order, once the instruction's ROB entry (and LQ/SQ entry) is free, and,
//!   where the core bounds them, a scheduler entry (held until the instruction issues) and an integer rename
//!   register (held until it commits);
//! * issue: when its sources are ready (a register scoreboard of ready cycles) and a functional unit and an issue
//!   slot are free that cycle (a calendar of per-cycle slot counts); in-order cores also never issue before an
//!   older instruction;
//! * completion: issue + the unit's latency; loads ask the memory system (their L1D misses hold MSHRs, which
//!   bound memory-level parallelism); software prefetches hold an MSHR but complete at once;
//! * commit: in order, `commit_width` per cycle, after completion. Stores then drain from the store buffer into
//!   the L1D in order (their line is fetched for ownership when they issue), holding their SQ entry until then.
//!
//! Times are in cycles of the core's clock; memory is asked in ticks (ps) through [`Clock`], so cores with different
//! clocks (DVFS) share one memory system. The hot path allocates nothing.

use crate::bpred::BranchPredictor;
use crate::inst::{InstClass, InstInfo};
use crate::tlb::{pte_read, Mmu, Side};
use crate::tlb_guest::PageTables;
use crate::{Clock, MemPort, Tick};
use kvsim_params::Core as CoreParams;

mod frontend;
mod lsq;
mod park;
mod pipeline;
mod stats;

use frontend::FrontEnd;
pub use frontend::FrontEndStats;

/// Functional-unit classes (index into the per-cycle calendar).
const FU_ALU: usize = 0;
const FU_MUL: usize = 1;
const FU_DIV: usize = 2;
const FU_LOAD: usize = 3;
const FU_STORE: usize = 4;
/// The pipelined FP units (add, multiply, FMA, convert).
const FU_FP: usize = 5;
/// The FP divider (divide and square root).
const FU_FDIV: usize = 6;
/// The branch unit(s), taken by branches and jumps besides their ALU (`Core.branch_units`).
const FU_BRANCH: usize = 7;
const N_FU: usize = 8;

/// Cycles the calendar remembers; issue slots further apart than this may alias (rare, and only ever lets an
/// instruction issue where a forgotten one did).
const CALENDAR: usize = 1 << 14;

/// Cycles ahead of dispatch the scheduler's per-cycle issue counts reach (a power of two).
const SCHED_WINDOW: usize = 1 << 14;

/// 8-byte words in a 4 KB page: what the memory-order buffer's partial compare (address bits 11:0) sees of a word.
const PAGE_WORDS: usize = 512;

/// Buckets of the store-queue filter (a power of two). A load whose word's bucket holds an undrained store searches
/// the SQ; with tens of stores in flight, 64 buckets often held one to another word, and the search found nothing.
/// The filter only decides whether to search, never the answer: its size changes no result.
const SQ_FILTER: usize = 1 << 10;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    cycle: u64,
    total: u8,
    fu: [u8; N_FU],
}

/// One store-queue entry: release cycle (left the store buffer), completion cycle, byte address and size.
#[derive(Debug, Clone, Copy)]
struct SqEntry {
    release: u64,
    done: u64,
    addr: u64,
    size: u8,
}

/// The cycles one instruction went through (returned by [`Core::step`], mainly for tests and tracing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InstTiming {
    pub fetch: u64,
    pub dispatch: u64,
    pub issue: u64,
    pub complete: u64,
    pub commit: u64,
}

/// The core's counters. Per-class instruction counts are one array indexed by [`InstClass`] (one increment per
/// instruction, not a branch on its class); the named counts below derive from it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CoreStats {
    pub insts: u64,
    /// Instructions committed, per class (`InstClass as usize`).
    pub by_class: [u64; InstClass::COUNT],
    pub mispredicts: u64,
    pub forwarded_loads: u64,
    /// Loads that overlap an undrained older store without being contained in it: they wait for it to drain.
    pub forward_blocked_loads: u64,
    /// Loads delayed by 4K aliasing (counted only where the core models it).
    pub aliased_loads: u64,
    pub icache_stall_cycles: u64,
    /// Dispatch cycles lost waiting for a scheduler entry, and for an integer rename register (counted only where
    /// the core bounds them).
    pub scheduler_stall_cycles: u64,
    pub rename_stall_cycles: u64,
    /// Measured cycles of the polls that found no frame (the server's poll-end hints, `Core::poll_end`).
    pub idle_poll_cycles: u64,
    /// Cycles fences and system instructions waited, past their operands, for every older instruction to commit,
    /// and then for every older store to leave the store buffer (an MMIO store holds it for the device's time).
    pub serialize_commit_wait_cycles: u64,
    pub serialize_drain_wait_cycles: u64,
    /// Dispatch cycles stores lost waiting for a store-queue entry (summed over stores). Counted before the later
    /// dispatch limits (the scheduler and rename bounds, the dispatch width) apply, so a cycle in which one of them
    /// would also have held the store counts here, and that limit's own stall only past the entry's release: the
    /// dispatch stalls can overlap and do not sum to the cycles dispatch lost.
    pub store_queue_stall_cycles: u64,
    pub rob_occupancy_sum: u64,
    pub lq_occupancy_sum: u64,
    pub sq_occupancy_sum: u64,
    pub load_latency_sum: u64,
    /// Register operands read (sources other than x0) and written (destinations other than x0).
    pub src_operands: u64,
    pub dst_operands: u64,
}

impl CoreStats {
    #[inline]
    fn of(&self, class: InstClass) -> u64 {
        self.by_class[class as usize]
    }
    pub fn loads(&self) -> u64 {
        self.of(InstClass::Load)
    }
    pub fn stores(&self) -> u64 {
        self.of(InstClass::Store)
    }
    pub fn atomics(&self) -> u64 {
        self.of(InstClass::Atomic)
    }
    pub fn prefetches(&self) -> u64 {
        self.of(InstClass::Prefetch)
    }
    /// Conditional branches.
    pub fn branches(&self) -> u64 {
        self.of(InstClass::Branch)
    }
    /// Jumps, calls and returns.
    pub fn jumps(&self) -> u64 {
        self.of(InstClass::Jump)
    }
    /// Integer ALU ops (not branches or jumps).
    pub fn alu_ops(&self) -> u64 {
        self.of(InstClass::IntAlu)
    }
    pub fn mul_ops(&self) -> u64 {
        self.of(InstClass::IntMul)
    }
    pub fn div_ops(&self) -> u64 {
        self.of(InstClass::IntDiv)
    }
    pub fn fences(&self) -> u64 {
        self.of(InstClass::Fence)
    }
    pub fn system_ops(&self) -> u64 {
        self.of(InstClass::System)
    }
    /// No-ops and hints.
    pub fn nops(&self) -> u64 {
        self.of(InstClass::Nop)
    }
    /// FP add-class (add/sub/compare/min/max/sign/move).
    pub fn fp_add_ops(&self) -> u64 {
        self.of(InstClass::FpAdd)
    }
    pub fn fp_mul_ops(&self) -> u64 {
        self.of(InstClass::FpMul)
    }
    pub fn fp_fma_ops(&self) -> u64 {
        self.of(InstClass::FpFma)
    }
    pub fn fp_cvt_ops(&self) -> u64 {
        self.of(InstClass::FpCvt)
    }
    /// FP divides and square roots.
    pub fn fp_div_ops(&self) -> u64 {
        self.of(InstClass::FpDiv) + self.of(InstClass::FpSqrt)
    }
}

/// Latencies the core needs to know of its L1s (cycles), for pipelined hits and store-to-load forwarding.
#[derive(Debug, Clone, Copy)]
pub struct L1Latencies {
    pub l1i: u64,
    pub l1d: u64,
}

#[derive(Debug, Clone)]
pub struct Core {
    id: u16,
    clock: Clock,
    in_order: bool,
    fetch_width: u32,
    issue_width: u8,
    commit_width: u32,
    fu_units: [u8; N_FU],
    /// Whether a store also takes a load port (its address generation) when it issues.
    store_agu_on_load_port: bool,
    /// TSO: fences whose orderings TSO keeps (`InstInfo::tso_implied`) do not serialise.
    tso_fences: bool,
    /// x86 UC: a store to an uncached device register is sent when it is the oldest undrained store, after its
    /// commit (`Core.ordered_uncached_stores`).
    ordered_uncached: bool,
    alu_lat: u64,
    mul_lat: u64,
    div_lat: u64,
    fp_add_lat: u64,
    fp_mul_lat: u64,
    fp_fma_lat: u64,
    fp_cvt_lat: u64,
    fp_div_lat: u64,
    fp_sqrt_lat: u64,
    penalty: u64,
    l1: L1Latencies,
    line_shift: u32,

    /// Ready cycle of x0..x31 and f0..f31 (32..63).
    reg_ready: [u64; 64],
    fetch_cycle: u64,
    fetch_slots: u32,
    last_fetch_line: u64,
    disp_cycle: u64,
    disp_slots: u32,
    commit_cycle: u64,
    commit_slots: u32,
    last_issue: u64,
    serialize_until: u64,
    /// The commit cycle of the youngest fence so far: a younger load issuing before it issues under the fence (the
    /// L1D prefetchers' "no fence in progress" condition; an older load is timed before the fence is seen).
    fence_until: u64,
    /// What the memory system was last told of that (`MemPort::fence_in_flight`, said only on a change).
    fence_told: bool,
    last_store_release: u64,

    rob: Vec<u64>,
    rob_pos: usize,
    lq: Vec<u64>,
    lq_pos: usize,
    /// The scheduler (`Core.scheduler_entries`, 0: unbounded and these unused): per cycle (mod `SCHED_WINDOW`) the
    /// dispatched instructions that issue in it, the entries in use (those issuing after `sched_cursor`), and the
    /// cycle up to which issues have been taken off.
    sched_count: Vec<u16>,
    sched_busy: usize,
    sched_cursor: u64,
    sched_cap: usize,
    /// Whether the core has either bound (scheduler entries, integer rename registers).
    bounded: bool,
    /// Out of order, neither bound, no decode paths: the pipeline's copies for such a core leave out the tests of
    /// those (`Core::step_over`).
    plain: bool,
    /// Commit cycles of the last `Core.int_rename_registers` instructions that wrote an integer register, oldest at
    /// `rename_pos` (empty when that is 0): a writer takes the register the oldest one frees at its commit.
    rename: Vec<u64>,
    rename_pos: usize,
    /// The store queue, oldest at `sq_pos` (each entry's fields together: one bounds check per entry read).
    sq: Vec<SqEntry>,
    sq_pos: usize,
    /// Per hash of a word: the latest release of a store to it, so most loads skip the SQ search.
    sq_filter: Box<[u64; SQ_FILTER]>,
    /// Per word of a 4 KB page (address bits 11:3): the latest release of a store to it, so most loads skip the
    /// 4K-aliasing search. Unused when `alias_pen` is 0.
    alias_filter: Vec<u64>,
    alias_pen: u64,
    /// Fixed in size, so that a slot's index (the cycle masked to the size) needs no bounds check.
    calendar: Box<[Slot; CALENDAR]>,
    div_free: Vec<u64>,
    fdiv_free: Vec<u64>,
    bp: BranchPredictor,
    /// Address translation (TLBs, page walks), when the core's `mmu` is enabled.
    mmu: Option<Box<Mmu>>,
    /// The decode paths (uop cache, legacy decoders), where the core models them (`fetch_block_bytes` != 0).
    fe: Option<Box<FrontEnd>>,
    /// Commit cycle at the last stats reset (the `cycles` statistic counts from it).
    base_cycle: u64,
    /// Cycles skipped since the last stats reset (sampling's functional warming): not measured.
    skipped_cycles: u64,
    /// Measured cycles at the last poll end (or the stats reset): where the poll in progress started.
    poll_mark: u64,
    pub stats: CoreStats,
}

impl Core {
    /// Core number `id` (its requester id in the memory system), with the latencies of its L1s (cycles) and the
    /// cache line size.
    pub fn new(id: u16, p: &CoreParams, l1: L1Latencies, line_size: u64) -> Self {
        let in_order = p.model == kvsim_params::CoreModel::Inorder;
        let w = |n: u64| n.clamp(1, 255) as u8;
        let fe = FrontEnd::new(p);
        Core {
            id,
            clock: Clock::new(p.clock),
            in_order,
            fetch_width: p.fetch_width as u32,
            issue_width: w(p.issue_width),
            commit_width: p.commit_width as u32,
            fu_units: [
                w(p.int_alus),
                w(p.mul_units),
                w(p.div_units),
                w(p.load_ports),
                w(p.store_ports),
                w(p.fp_units),
                w(p.fp_div_units),
                if p.branch_units == 0 { u8::MAX } else { w(p.branch_units) },
            ],
            store_agu_on_load_port: p.store_address_on_load_ports,
            tso_fences: p.tso_fences,
            ordered_uncached: p.ordered_uncached_stores,
            alu_lat: p.int_alu_latency,
            mul_lat: p.mul_latency,
            div_lat: p.div_latency,
            fp_add_lat: p.fp_add_latency,
            fp_mul_lat: p.fp_mul_latency,
            fp_fma_lat: p.fp_fma_latency,
            fp_cvt_lat: p.fp_cvt_latency,
            fp_div_lat: p.fp_div_latency,
            fp_sqrt_lat: p.fp_sqrt_latency,
            penalty: p.mispredict_penalty,
            l1,
            line_shift: line_size.trailing_zeros(),
            reg_ready: [0; 64],
            fetch_cycle: 0,
            fetch_slots: 0,
            last_fetch_line: u64::MAX,
            disp_cycle: 0,
            disp_slots: 0,
            commit_cycle: 0,
            commit_slots: 0,
            last_issue: 0,
            serialize_until: 0,
            fence_until: 0,
            fence_told: false,
            last_store_release: 0,
            rob: vec![0; p.rob_entries as usize],
            rob_pos: 0,
            lq: vec![0; p.lq_entries as usize],
            lq_pos: 0,
            sched_count: if p.scheduler_entries == 0 { Vec::new() } else { vec![0; SCHED_WINDOW] },
            sched_busy: 0,
            sched_cursor: 0,
            sched_cap: p.scheduler_entries as usize,
            bounded: p.scheduler_entries != 0 || p.int_rename_registers != 0,
            plain: !in_order && p.scheduler_entries == 0 && p.int_rename_registers == 0 && fe.is_none(),
            rename: vec![0; p.int_rename_registers as usize],
            rename_pos: 0,
            sq: vec![SqEntry { release: 0, done: 0, addr: u64::MAX, size: 0 }; p.sq_entries as usize],
            sq_pos: 0,
            sq_filter: Box::new([0; SQ_FILTER]),
            alias_filter: if p.alias_4k_penalty == 0 { Vec::new() } else { vec![0; PAGE_WORDS] },
            alias_pen: p.alias_4k_penalty,
            calendar: vec![Slot::default(); CALENDAR].into_boxed_slice().try_into().expect("CALENDAR slots"),
            div_free: vec![0; p.div_units as usize],
            fdiv_free: vec![0; p.fp_div_units as usize],
            bp: BranchPredictor::new(p),
            mmu: p.mmu.enabled.then(|| Box::new(Mmu::new(&p.mmu))),
            fe,
            base_cycle: 0,
            skipped_cycles: 0,
            poll_mark: 0,
            stats: CoreStats::default(),
        }
    }

    pub fn id(&self) -> u16 {
        self.id
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Cycle at which the last instruction committed: the core's progress.
    pub fn cycles(&self) -> u64 {
        self.commit_cycle
    }

    /// The core's simulated time (tick of its last commit); the engine interleaves cores by it.
    pub fn now(&self) -> Tick {
        self.clock.tick(self.commit_cycle)
    }

    /// Start the statistics afresh (a stats reset: ROI_BEGIN, STATS_RESET); the timing state is kept.
    pub fn reset_stats(&mut self) {
        self.stats = CoreStats::default();
        if let Some(m) = &mut self.mmu {
            m.reset_stats();
        }
        if let Some(fe) = &mut self.fe {
            fe.stats = FrontEndStats::default();
        }
        self.base_cycle = self.commit_cycle;
        self.skipped_cycles = 0;
        self.poll_mark = 0;
    }

    /// The server's poll-end hint: the poll since the last one (or the stats reset) ended, `idle` when it found
    /// no frame. An idle poll's cycles are time the core had nothing to serve, so 1 - idle_poll_cycles / cycles
    /// is how busy it was in time (its poll instructions alone weigh idle polls by count, not by time).
    pub fn poll_end(&mut self, idle: bool) {
        let now = self.measured_cycles();
        if idle {
            self.stats.idle_poll_cycles += now - self.poll_mark;
        }
        self.poll_mark = now;
    }

    /// Cycles since the last stats reset, less those skipped (`skip`).
    pub fn measured_cycles(&self) -> u64 {
        self.commit_cycle - self.base_cycle - self.skipped_cycles
    }

    /// Sampling's functional warming: `cycles` pass while instructions run untimed. Every stage of the pipeline
    /// moves to the new commit cycle (nothing older is still in flight there: the ROB, queues, registers and units
    /// all free before it), fetch restarts its line, and the skipped cycles are not measured.
    pub fn skip(&mut self, cycles: u64) {
        self.move_to(self.commit_cycle + cycles);
        self.skipped_cycles += cycles;
    }

    /// FS mode's wfi: the core sleeps, nothing in flight, until `tick` (ps); the time asleep is measured time
    /// (unlike `skip`). A tick already reached changes nothing.
    pub fn sleep_until(&mut self, tick: Tick) {
        let cycle = self.clock.cycle_at_or_after(tick);
        if cycle > self.commit_cycle {
            self.move_to(cycle);
        }
    }

    /// Every stage of the pipeline moves to commit cycle `now` (see `skip`).
    fn move_to(&mut self, now: u64) {
        self.commit_cycle = now;
        self.fetch_cycle = self.fetch_cycle.max(now);
        self.disp_cycle = self.disp_cycle.max(now);
        self.last_issue = self.last_issue.max(now);
        self.serialize_until = self.serialize_until.max(now);
        (self.fetch_slots, self.disp_slots, self.commit_slots) = (0, 0, 0);
        self.last_fetch_line = u64::MAX;
        if let Some(fe) = &mut self.fe {
            fe.restart();
        }
    }

    /// Sampling's functional warming: the branch predictor learns from `inst` as it would when timed (direction
    /// counters and history, BTB, return-address stack), with no time and no statistics.
    pub fn warm_branch(&mut self, inst: &InstInfo) {
        match inst.class {
            InstClass::Branch => {
                self.bp.conditional(inst.pc, inst.taken);
            }
            InstClass::Jump => {
                self.predict_jump(inst);
            }
            _ => {}
        }
    }

    /// A jump's prediction (JAL always right; a return by the return-address stack; else the BTB), training them.
    #[inline]
    fn predict_jump(&mut self, inst: &InstInfo) -> bool {
        let link = inst.dst == 1 || inst.dst == 5;
        let via_link = inst.src1 == 1 || inst.src1 == 5;
        let ok = if inst.src1 == 0 {
            true // JAL: the target is in the instruction
        } else if via_link && !link {
            self.bp.pop_return(inst.next_pc)
        } else {
            self.bp.indirect(inst.pc, inst.next_pc)
        };
        if link {
            self.bp.push_return(inst.pc + inst.len as u64);
        }
        ok
    }

    /// Change the clock (DVFS) from the last commit on (instructions in flight beyond it run at the new clock).
    /// Call the memory system's `set_core_clock` too.
    pub fn set_clock(&mut self, hz: u64) {
        self.clock.set_freq(self.commit_cycle, hz);
    }

    /// The decode paths' counters, where the core models them (`fetch_block_bytes` != 0).
    pub fn front_end_stats(&self) -> Option<FrontEndStats> {
        self.fe.as_ref().map(|fe| fe.stats)
    }

    /// The core's MMU, if it models translation (for flushes, ASIDs and huge-page ranges).
    pub fn mmu_mut(&mut self) -> Option<&mut Mmu> {
        self.mmu.as_deref_mut()
    }

    /// The core's MMU, if it models translation (where its page tables are).
    pub fn mmu(&self) -> Option<&Mmu> {
        self.mmu.as_deref()
    }

    /// The cycle at which `va`'s translation for `side`, looked up at `cycle`, is ready, and the address the
    /// caches see: `cycle` without an MMU or on an L1 TLB hit; a walk's page-table reads go through `mem` as this
    /// core's loads. Over SE mode's own table (`T` = `Untranslated`) the address is `va`; over an FS guest's
    /// (`tlb_guest`), the physical address.
    #[inline]
    fn translate<M: MemPort + ?Sized, T: PageTables>(
        &mut self,
        side: Side,
        va: u64,
        cycle: u64,
        mem: &mut M,
        tables: &mut T,
    ) -> (u64, u64) {
        let Some(m) = self.mmu.as_deref_mut() else { return (cycle, va) };
        // Checked before the walk's read closure is set up.
        if !T::GUEST && m.repeat_hit(side, va) {
            return (cycle, va);
        }
        // The closure borrows the clock (a field apart from the MMU's) rather than copying its 64 bytes.
        let (clock, id) = (&self.clock, self.id);
        let read = |addr, c| clock.cycle_at_or_after(pte_read(mem, id, addr, clock.tick(c)));
        if T::GUEST {
            m.translate_guest(side, va, cycle, tables, read)
        } else {
            (m.translate(side, va, cycle, read), va)
        }
    }

    #[inline]
    fn mem_cycles(&self, done: Tick) -> u64 {
        self.clock.cycle_at_or_after(done)
    }
}
