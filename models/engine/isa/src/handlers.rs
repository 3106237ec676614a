//! The executor's handlers: one function per operation, found through a table indexed by the operation
//! (`table`), each ending in a tail call of the next instruction's handler. So there is no shared dispatch jump:
//! every handler has its own indirect jump to the next, whose target the host's branch predictor learns per
//! handler (the sequence of operations in guest code), where one shared jump saw every transition of the program.
//!
//! A block's run is a chain of such calls from its first instruction to the instruction that leaves it (a control
//! transfer, a fault, a store into decoded code) or to its end marker (`Op::Undecoded`, the fall-through exit), at
//! most `blocks::MAX_INSTS` + 1 deep, so the chain is bounded even where the compiler does not turn the calls into
//! jumps (a debug build). The handler that leaves writes how (`Ctx::exit`) and where to (`Ctx::resume`) and returns;
//! `exec::run` then follows the exit's link or looks the next block up. Slow paths (a memory access off the fast
//! path, the timing hook, the trace) are out-of-line functions that keep nothing on a handler's stack, so a
//! handler's last call stays a jump.

use kvsim_timing::inst::{InstClass, InstInfo};

use crate::blocks::{Block, Inst};
use crate::decode::{Decoded, Op, FREG};
use crate::hart::Hart;
use crate::hook::{ExecHook, NoHook, Stop, Tracer, NO_DEADLINE};
use crate::memory::Memory;
use crate::trap::{Access, Trap};

mod rare;
use rare::{atomic_rmw, csr_fp, fp_compute, read_counter, store_conditional};

/// How a block's run ended (`Ctx::exit`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Exit {
    /// A control transfer or the end marker: go on at `resume` through the link of the exit `exit_idx`.
    Follow,
    /// The instruction changed decoded code (a store into it, fence.i): go on at `resume` through a lookup, without
    /// links.
    Changed,
    /// Leave `run` with `Ctx::stop`.
    Stop,
}

/// The executor's state shared by the handlers of a run (raw pointers: a handler reaches the hart, the memory and
/// the hook through it, and a table of functions cannot carry borrows). `repr(C)`, and `H` only behind a pointer:
/// the layout is the same for every hook type, which lets a functional run call the handlers compiled for `NoHook`
/// that the blocks hold (`dispatch`).
#[repr(C)]
pub(crate) struct Ctx<H> {
    pub h: *mut Hart,
    pub mem: *mut Memory,
    pub hook: *mut H,
    /// Hart 0's trace when it is written, else null.
    pub tracer: *mut Tracer,
    /// The running block (the one whose copy runs, when the budget ends inside it), and its PC (an instruction's
    /// PC is this plus twice its `Decoded::at`).
    pub block: *const Block,
    pub block_pc: u64,
    /// The run's budget (instructions).
    pub budget: u64,
    /// The hart's time (ps, the hook's) after which the run stops (`exec::run_until`); `NO_DEADLINE` for none.
    pub deadline: u64,
    /// The hart's time reached the deadline: `budget` was cut to end after the instruction that reached it.
    pub cut: bool,
    /// Where a chain of blocks following one another's links ends (instructions, as `n`): a block is followed
    /// only if it ends by then, else the run returns to `exec::run`. It is the budget, or `CHAIN_INSTS` after the
    /// chain began if that is sooner, which bounds the chain of calls where they are not jumps (a debug build).
    pub chain_end: u64,
    /// Instructions retired before the running block (within it an instruction's `Decoded::idx` adds to this).
    pub n: u64,
    /// `Memory::code_generation` when the running block was looked up: a store that moves it ends the block.
    pub generation: u64,
    pub exit: Exit,
    /// The `idx` of the instruction (or end marker) that left the block: its exit's link.
    pub exit_idx: u8,
    /// Where the hart goes on (the PC of the faulting instruction for a fault).
    pub resume: u64,
    pub stop: Option<Stop>,
    /// The hart's counters of the commonest operations, kept here during the run (one increment each, the hart
    /// not reached) and added to `Hart::cnt` when it returns (`exec::run_until`).
    pub cnt: HotCounts,
    /// The hook takes the records of a block's instructions together (`ExecHook::BATCHES`, and this run allows it:
    /// `exec::run_until`), and how many of the running block's it has had (`hand_over`).
    pub batch: bool,
    pub handed: u8,
}

/// Counters of `Hart::cnt` counted in the executor's context during a run (`Ctx::cnt`).
#[derive(Default)]
pub(crate) struct HotCounts {
    pub loads: u64,
    pub stores: u64,
    pub branches: u64,
    pub taken_branches: u64,
    pub jumps: u64,
}

impl HotCounts {
    /// Add them to the hart's counters.
    pub fn add_to(&self, h: &mut Hart) {
        h.cnt.loads += self.loads;
        h.cnt.stores += self.stores;
        h.cnt.branches += self.branches;
        h.cnt.taken_branches += self.taken_branches;
        h.cnt.jumps += self.jumps;
    }
}

/// A handler: the context, its instruction (in a block, followed by the rest of the block and its end marker),
/// and the register file (passed along so that it stays in a host register).
pub(crate) type Handler<H> = unsafe fn(*mut Ctx<H>, *const Decoded, *mut u64);

/// The most instructions run in blocks followed from one another's links before returning to `exec::run`: enough
/// that the return is rare, few enough that a chain of calls (where they are not jumps) stays far inside a
/// thread's stack. One bound for budget and chain, so following a link costs one comparison.
pub(crate) const CHAIN_INSTS: u64 = if cfg!(debug_assertions) { 3 } else { 1024 };

/// Number of operations (the table's length).
pub(crate) const OPS: usize = Op::FcvtDS as usize + 1;

/// The handler table of a hook type and trace setting.
pub(crate) struct Table<H, const TRACE: bool>(std::marker::PhantomData<H>);

impl<H: ExecHook, const TRACE: bool> Table<H, TRACE> {
    pub(crate) const HANDLERS: [Handler<H>; OPS] = build::<H, TRACE>();
}

/// The handler of `op` in a functional run (no hook, no trace): the one each instruction of a block holds, as an
/// untyped pointer (`blocks::Inst::run`).
pub(crate) fn functional_handler(op: Op) -> *const () {
    Table::<NoHook, false>::HANDLERS[op as usize] as *const ()
}

/// Give each instruction of `block`, and its end marker, its functional-run handler, unless done: the executor
/// calls it on every block it looks up, so every block a run reaches (by a lookup, or by a link filled after one)
/// holds them.
pub(crate) fn thread(block: &Block) {
    if !block.threaded.get() {
        for i in &block.insts {
            i.run.set(functional_handler(i.op));
        }
        block.threaded.set(true);
    }
}

/// Run the handler of `d`, an instruction of a block (`blocks::Inst`) or of a copy of its first instructions. A
/// functional run (no hook, no trace) jumps to the handler the instruction holds (one load, no table); a run with a
/// hook or a trace finds its own through its table.
#[inline(always)]
pub(crate) unsafe fn dispatch<H: ExecHook, const T: bool>(c: *mut Ctx<H>, d: *const Decoded, x: *mut u64) {
    if !H::ACTIVE && !T {
        // SAFETY: `d` is the `Decoded` at the start of an `Inst` (repr(C), its first field). An inactive hook is
        // never called, so `NoHook`'s handlers do what this hook's would; they never reach the hook, and `Ctx` has
        // one layout for every hook type (repr(C), the hook behind a thin pointer).
        // The block was looked up, so its handlers are set (`thread`).
        let run = std::mem::transmute::<*const (), Handler<NoHook>>((*(d as *const Inst)).run.get());
        return run(c as *mut Ctx<NoHook>, d, x);
    }
    let table = &Table::<H, T>::HANDLERS;
    // SAFETY: every Op's discriminant is below OPS.
    (table.get_unchecked((*d).op as usize))(c, d, x)
}

// ---- Helpers (inlined into each handler) ----

#[inline(always)]
unsafe fn pc<H>(c: *mut Ctx<H>, d: *const Decoded) -> u64 {
    (*c).block_pc.wrapping_add(2 * (*d).at as u64)
}

/// The address of the instruction after `d`.
#[inline(always)]
unsafe fn after<H>(c: *mut Ctx<H>, d: *const Decoded) -> u64 {
    pc(c, d).wrapping_add((*d).len as u64)
}

// SAFETY (the register accessors): the decoder only produces register numbers below 64 (5-bit fields, plus 32 for
// FP registers) and `wd` is rd or DISCARD (64), all inside the register file; blocks hold nothing but decoder
// output.
#[inline(always)]
unsafe fn a(x: *mut u64, d: *const Decoded) -> u64 {
    *x.add((*d).rs1 as usize)
}

#[inline(always)]
unsafe fn b(x: *mut u64, d: *const Decoded) -> u64 {
    *x.add((*d).rs2 as usize)
}

#[inline(always)]
unsafe fn imm(d: *const Decoded) -> u64 {
    (*d).imm as i64 as u64
}

#[inline(always)]
unsafe fn wr(x: *mut u64, d: *const Decoded, v: u64) {
    *x.add((*d).wd as usize) = v;
}

#[inline(always)]
unsafe fn hart<'a, H>(c: *mut Ctx<H>) -> &'a mut Hart {
    &mut *(*c).h
}

#[inline(always)]
unsafe fn mem<'a, H>(c: *mut Ctx<H>) -> &'a mut Memory {
    &mut *(*c).mem
}

#[inline(always)]
fn sext32(v: u64) -> u64 {
    v as u32 as i32 as i64 as u64
}

/// Go on with the next instruction of the block (its end marker at the latest).
#[inline(always)]
unsafe fn next<H: ExecHook, const T: bool>(c: *mut Ctx<H>, d: *const Decoded, x: *mut u64) {
    if H::ACTIVE && (*c).cut {
        // The deadline passed at `d`: leave the block after it (the run stops at the budget, cut to here).
        hand_over(c, (*d).idx + 1);
        (*c).n += (*d).idx as u64 + 1;
        (*c).resume = after(c, d);
        (*c).exit = Exit::Changed;
        return;
    }
    // SAFETY: `d` did not leave the block, so it was not the end marker and the next record is in the block.
    dispatch::<H, T>(c, (d as *const Inst).add(1) as *const Decoded, x)
}

/// After an instruction: tell the hook (a timing model).
#[inline(always)]
unsafe fn retire<H: ExecHook>(c: *mut Ctx<H>, d: *const Decoded, next: u64, ea: u64, taken: bool) {
    // A warming hook does nothing for most instructions (`Block::warm_quiet`): they skip the call and the record.
    if H::ACTIVE && !(H::SKIPS_WARM_QUIET && (*(*c).block).warm_quiet >> (*d).idx & 1 != 0) {
        if H::BATCHES && (*c).batch {
            // The record waits in the block for the hook (`hand_over`): no call per instruction.
            record(c, d, next, ea, taken);
        } else {
            retire_hook(c, d, next, ea, taken);
        }
    }
}

/// Write the dynamic part of `d`'s record for the hook (its static part was computed once, when its block was
/// built: `Block::timing`), in place, and return it.
#[inline(always)]
unsafe fn record<'a, H>(c: *mut Ctx<H>, d: *const Decoded, next: u64, ea: u64, taken: bool) -> &'a mut InstInfo {
    let d = &*d;
    let h = hart(c);
    // SAFETY: `c.block` is the block `d` belongs to (a budget's copy of its first instructions keeps their `idx`),
    // and every instruction's idx is below `timing.len()` (Block::new). The record is written only here and read
    // only by the hook (`retire_hook`, `hand_over`), on this thread, while no handler writes; no reference to the
    // memory that holds the block is made while it is borrowed.
    let block: &Block = &*(*c).block;
    let info = &mut *block.timing.get_unchecked(d.idx as usize).get();
    if info.mem_size != 0 || info.class == InstClass::Prefetch {
        // A data access takes its address and the pending non-temporal hint. Any other record keeps the address 0
        // and no hint it was built with (`Block::new`): nothing to write.
        info.non_temporal = h.ntl_pending;
        h.ntl_pending = false;
        info.mem_addr = ea;
    } else if d.op == Op::Ntl {
        h.ntl_pending = true;
    }
    info.taken = taken; // (true for a jump: jal and jalr say so)
    info.next_pc = next;
    info
}

/// In a batching run (`Ctx::batch`), give the hook the records of the running block's instructions it has not had,
/// up to the first `count`: at the block's exit (`count` the instructions that retired in it), and before a call
/// in the block that reads the hook's state (`count` those before the caller).
#[inline(always)]
unsafe fn hand_over<H: ExecHook>(c: *mut Ctx<H>, count: u8) {
    if H::ACTIVE && H::BATCHES && (*c).batch && count > (*c).handed {
        hand_over_records(c, count);
    }
}

/// `hand_over`'s call of the hook, out of line.
#[inline(never)]
unsafe fn hand_over_records<H: ExecHook>(c: *mut Ctx<H>, count: u8) {
    let block: &Block = &*(*c).block;
    let from = (*c).handed as usize;
    // SAFETY: records `from..count` are of instructions of the running block that retired since the last handover
    // (each wrote its own, `record`); `count` is at most the block's instruction count, the records' length. An
    // `UnsafeCell<InstInfo>` has the layout of an `InstInfo`, and no handler writes a record during the call.
    let infos = std::slice::from_raw_parts(block.timing.as_ptr().add(from) as *const InstInfo, count as usize - from);
    (*c).handed = count;
    (*(*c).hook).on_insts(hart(c).id, infos);
}

/// The hook's record of an executed instruction, out of line so that a handler keeps no InstInfo on its stack. The
/// record's static part (everything the decoded instruction decides) was computed once, when its block was built
/// (`Block::timing`); only the dynamic part is written here, in place.
#[inline(never)]
unsafe fn retire_hook<H: ExecHook>(c: *mut Ctx<H>, d: *const Decoded, next: u64, ea: u64, taken: bool) {
    let full_system = mem(c).full_system();
    let info = record(c, d, next, ea, taken);
    let (d, h) = (&*d, hart(c));
    if full_system {
        // The hook reads the guest's page tables through the memory, which holds the block: it gets a copy.
        let info = *info;
        (*(*c).hook).on_inst_fs(h.id, &info, mem(c));
    } else {
        (*(*c).hook).on_inst(h.id, info);
    }
    if (*c).deadline != NO_DEADLINE && !(*c).cut {
        if let Some(t) = (*(*c).hook).time_ps(h.id) {
            if t >= (*c).deadline {
                // Stop after this instruction: the budget ends here (its exits see it), and `next` leaves the block.
                (*c).budget = (*c).n + d.idx as u64 + 1;
                (*c).chain_end = (*c).budget;
                (*c).cut = true;
            }
        }
    }
}

/// The trace line written before an instruction executes (hart 0, lockstep).
#[inline(never)]
unsafe fn trace<H>(c: *mut Ctx<H>, d: *const Decoded) {
    if !(*c).tracer.is_null() {
        (*(*c).tracer).record(pc(c, d), &hart(c).x);
    }
}

/// After the instruction that ends the block (a control transfer): retire it and go on at `next`. `DIRECT`: a
/// transfer whose target is in the instruction (see `follow`).
#[inline(always)]
unsafe fn leave<H: ExecHook, const T: bool, const DIRECT: bool>(
    c: *mut Ctx<H>,
    d: *const Decoded,
    x: *mut u64,
    next: u64,
    taken: bool,
) {
    retire(c, d, next, 0, taken);
    hand_over(c, (*d).idx + 1);
    (*c).n += (*d).idx as u64 + 1;
    follow::<H, T, DIRECT>(c, d, x, next)
}

/// Go on at `next` through the link of the exit at `d` (a control transfer or the end marker): straight into the
/// block it gives when that block is for `next` and ends by `Ctx::chain_end` (within the budget, and the chain not
/// longer than `CHAIN_INSTS`); else back to `exec::run`, which follows or fills the link. A link is
/// followed only while decoded code is unchanged since the block holding it was looked up: an exit through here
/// is not one after a change (those leave through `leave_changed`), and neither was any before it in the chain.
///
/// `DIRECT`: the exit of a branch or jal, whose target is in the instruction, so its link, once filled, is for
/// that target and needs no check of its PC (nor is `next` needed unless the run returns). A link is filled only
/// by `exec::run`, after the exit at its index left for `resume` and before the next block runs. The end of a
/// budget's copy of a block shares its index with an instruction of the block, but it is reached only when the
/// budget is spent, and the run then returns before any lookup, so it fills no link.
#[inline(always)]
unsafe fn follow<H: ExecHook, const T: bool, const DIRECT: bool>(
    c: *mut Ctx<H>,
    d: *const Decoded,
    x: *mut u64,
    next: u64,
) {
    // SAFETY: every instruction's idx, and the end marker's, is below links.len() (Block::new); the running block
    // is in the cache (decoded code is unchanged since it was looked up).
    let links = &(*(*c).block).links;
    let (linked_pc, linked) = links.get_unchecked((*d).idx as usize).get();
    let for_next = if DIRECT { !linked.is_null() } else { linked_pc == next };
    if for_next && (*c).n + (*linked).count <= (*c).chain_end {
        (*c).block = linked;
        (*c).block_pc = (*linked).pc;
        (*c).handed = 0;
        dispatch::<H, T>(c, (*linked).insts.as_ptr() as *const Decoded, x)
    } else {
        // Written only when the chain returns (every exit that returns writes how, so a block followed here
        // leaves these to its own exit).
        (*c).resume = next;
        (*c).exit = Exit::Follow;
        (*c).exit_idx = (*d).idx;
    }
}

/// After an instruction that changed decoded code: retire it and go on after it through a lookup.
#[inline(always)]
unsafe fn leave_changed<H: ExecHook>(c: *mut Ctx<H>, d: *const Decoded, ea: u64) {
    let next = after(c, d);
    retire(c, d, next, ea, false);
    hand_over(c, (*d).idx + 1);
    (*c).n += (*d).idx as u64 + 1;
    (*c).resume = next;
    (*c).exit = Exit::Changed;
}

/// The instruction faulted (not executed: the PC stays on it). Out of line: the Trap stays off the handler's
/// stack.
#[inline(never)]
unsafe fn fault<H: ExecHook>(c: *mut Ctx<H>, d: *const Decoded, t: Trap) {
    hand_over(c, (*d).idx);
    (*c).resume = pc(c, d);
    (*c).n += (*d).idx as u64;
    (*c).exit = Exit::Stop;
    (*c).stop = Some(Stop::Fault(t));
}

/// Did the instruction (a store off the fast path, an atomic) change decoded code?
#[inline(always)]
unsafe fn code_changed<H>(c: *mut Ctx<H>) -> bool {
    mem(c).code_generation() != (*c).generation
}

/// The rest of a load off the fast path (the slow path; a fault is recorded and ends the run), then on with the
/// next instruction. Reached by a tail call, so the fast path makes no call and saves no registers (in a load
/// handler, saving and restoring them was 6 of its 15 host instructions).
#[inline(never)]
unsafe fn load_miss<H: ExecHook, const T: bool, const N: usize>(
    c: *mut Ctx<H>,
    d: *const Decoded,
    x: *mut u64,
    ea: u64,
    conv: fn(u64) -> u64,
) {
    match mem(c).load_other::<N>(ea) {
        Ok(v) => wr(x, d, conv(v)),
        Err(t) => return fault(c, d, t),
    }
    (*c).cnt.loads += 1;
    retire(c, d, after(c, d), ea, false);
    next::<H, T>(c, d, x)
}

/// The rest of a store off the fast path (as `load_miss`): it may change decoded code, which ends the block.
#[inline(never)]
unsafe fn store_miss<H: ExecHook, const T: bool, const N: usize>(
    c: *mut Ctx<H>,
    d: *const Decoded,
    x: *mut u64,
    ea: u64,
    v: u64,
) {
    let hid = hart(c).id;
    if let Err(t) = mem(c).store_other::<N>(hid, ea, v) {
        return fault(c, d, t);
    }
    (*c).cnt.stores += 1;
    if code_changed(c) {
        return leave_changed(c, d, ea);
    }
    retire(c, d, after(c, d), ea, false);
    next::<H, T>(c, d, x)
}

// ---- Handlers ----

/// Handlers of instructions that go on in the block: `name(c, d, x) { body }`, the body evaluating to the
/// instruction's effective address (0 when it has none) or returning after recording an exit. Each writes the trace
/// line first when tracing, then runs the body, retires the instruction and goes on with the next.
macro_rules! straight {
    ($($name:ident($c:ident, $d:ident, $x:ident) $body:block)*) => {$(
        #[allow(unused_variables)]
        unsafe fn $name<H: ExecHook, const T: bool>($c: *mut Ctx<H>, $d: *const Decoded, $x: *mut u64) {
            if T {
                trace($c, $d);
            }
            let ea: u64 = $body;
            retire($c, $d, after($c, $d), ea, false);
            next::<H, T>($c, $d, $x)
        }
    )*};
}

/// Register-to-register operations: `name => |a, b, imm| value`, reading only the operands the expression names.
macro_rules! alu {
    ($($name:ident => |$a:ident, $b:ident, $imm:ident| $e:expr;)*) => {
        straight! {$(
            $name(c, d, x) {
                #[allow(unused_variables)]
                let $imm = imm(d);
                #[allow(unused_macros)]
                macro_rules! $a { () => { a(x, d) } }
                #[allow(unused_macros)]
                macro_rules! $b { () => { b(x, d) } }
                wr(x, d, $e);
                0
            }
        )*}
    };
}

alu! {
    addi => |ra, rb, i| ra!().wrapping_add(i);
    add => |ra, rb, i| ra!().wrapping_add(rb!());
    lui => |ra, rb, i| i;
    slti => |ra, rb, i| ((ra!() as i64) < (i as i64)) as u64;
    sltiu => |ra, rb, i| (ra!() < i) as u64;
    xori => |ra, rb, i| ra!() ^ i;
    ori => |ra, rb, i| ra!() | i;
    andi => |ra, rb, i| ra!() & i;
    slli => |ra, rb, i| ra!() << (i & 63);
    srli => |ra, rb, i| ra!() >> (i & 63);
    srai => |ra, rb, i| ((ra!() as i64) >> (i & 63)) as u64;
    sub => |ra, rb, i| ra!().wrapping_sub(rb!());
    sll => |ra, rb, i| ra!() << (rb!() & 63);
    slt => |ra, rb, i| ((ra!() as i64) < (rb!() as i64)) as u64;
    sltu => |ra, rb, i| (ra!() < rb!()) as u64;
    xor => |ra, rb, i| ra!() ^ rb!();
    srl => |ra, rb, i| ra!() >> (rb!() & 63);
    sra => |ra, rb, i| ((ra!() as i64) >> (rb!() & 63)) as u64;
    or => |ra, rb, i| ra!() | rb!();
    and => |ra, rb, i| ra!() & rb!();
    addiw => |ra, rb, i| sext32(ra!().wrapping_add(i));
    slliw => |ra, rb, i| sext32(((ra!() as u32) << (i & 31)) as u64);
    srliw => |ra, rb, i| sext32(((ra!() as u32) >> (i & 31)) as u64);
    sraiw => |ra, rb, i| ((ra!() as i32) >> (i & 31)) as i64 as u64;
    addw => |ra, rb, i| sext32(ra!().wrapping_add(rb!()));
    subw => |ra, rb, i| sext32(ra!().wrapping_sub(rb!()));
    sllw => |ra, rb, i| sext32(((ra!() as u32) << (rb!() & 31)) as u64);
    srlw => |ra, rb, i| sext32(((ra!() as u32) >> (rb!() & 31)) as u64);
    sraw => |ra, rb, i| ((ra!() as i32) >> (rb!() & 31)) as i64 as u64;
    mul => |ra, rb, i| ra!().wrapping_mul(rb!());
    mulh => |ra, rb, i| ((ra!() as i64 as i128 * rb!() as i64 as i128) >> 64) as u64;
    mulhsu => |ra, rb, i| ((ra!() as i64 as i128).wrapping_mul(rb!() as i128) >> 64) as u64;
    mulhu => |ra, rb, i| ((ra!() as u128 * rb!() as u128) >> 64) as u64;
    div => |ra, rb, i| {
        let (p, q) = (ra!() as i64, rb!() as i64);
        if q == 0 { u64::MAX } else { p.wrapping_div(q) as u64 }
    };
    divu => |ra, rb, i| ra!().checked_div(rb!()).unwrap_or(u64::MAX);
    rem => |ra, rb, i| {
        let (p, q) = (ra!() as i64, rb!() as i64);
        if q == 0 { p as u64 } else { p.wrapping_rem(q) as u64 }
    };
    remu => |ra, rb, i| {
        let (p, q) = (ra!(), rb!());
        if q == 0 { p } else { p % q }
    };
    mulw => |ra, rb, i| sext32((ra!() as u32).wrapping_mul(rb!() as u32) as u64);
    divw => |ra, rb, i| {
        let (p, q) = (ra!() as i32, rb!() as i32);
        if q == 0 { u64::MAX } else { p.wrapping_div(q) as i64 as u64 }
    };
    divuw => |ra, rb, i| {
        let (p, q) = (ra!() as u32, rb!() as u32);
        p.checked_div(q).map_or(u64::MAX, |v| sext32(v as u64))
    };
    remw => |ra, rb, i| {
        let (p, q) = (ra!() as i32, rb!() as i32);
        if q == 0 { p as i64 as u64 } else { p.wrapping_rem(q) as i64 as u64 }
    };
    remuw => |ra, rb, i| {
        let (p, q) = (ra!() as u32, rb!() as u32);
        if q == 0 { sext32(p as u64) } else { sext32((p % q) as u64) }
    };
}

/// Loads: `name => (bytes, |raw| value)`. The fast path's value goes straight to the register.
macro_rules! loads {
    ($($name:ident => ($n:literal, $conv:expr);)*) => {
        straight! {$(
            $name(c, d, x) {
                let ea = a(x, d).wrapping_add(imm(d));
                let v = match mem(c).load_fast::<$n>(ea) {
                    Some(v) => v,
                    None => return load_miss::<H, T, $n>(c, d, x, ea, $conv),
                };
                wr(x, d, $conv(v));
                (*c).cnt.loads += 1;
                ea
            }
        )*}
    };
}

loads! {
    ld => (8, |v: u64| v);
    lw => (4, sext32);
    lb => (1, |v: u64| v as i8 as i64 as u64);
    lh => (2, |v: u64| v as i16 as i64 as u64);
    lbu => (1, |v: u64| v);
    lhu => (2, |v: u64| v);
    lwu => (4, |v: u64| v);
    // Singles are NaN-boxed when loaded; a store writes the register's low bits as they are.
    flw => (4, |v: u64| v | 0xffff_ffff_0000_0000);
    fld => (8, |v: u64| v);
}

/// Stores: `name => bytes`. Only a store off the fast path can change decoded code (Memory::store_fast); one that
/// did ends the block after it.
macro_rules! stores {
    ($($name:ident => $n:literal;)*) => {
        straight! {$(
            $name(c, d, x) {
                let ea = a(x, d).wrapping_add(imm(d));
                if !mem(c).store_fast::<$n>(ea, b(x, d)) {
                    return store_miss::<H, T, $n>(c, d, x, ea, b(x, d));
                }
                (*c).cnt.stores += 1;
                ea
            }
        )*}
    };
}

stores! {
    sd => 8;
    sw => 4;
    sb => 1;
    sh => 2;
    fsw => 4;
    fsd => 8;
}

/// Conditional branches: `name => |a, b| taken`. Taken, a side exit from the block; not taken, the block goes on
/// (blocks.rs).
macro_rules! branches {
    ($($name:ident => $cond:expr;)*) => {
        straight! {$(
            $name(c, d, x) {
                (*c).cnt.branches += 1;
                if $cond(a(x, d), b(x, d)) {
                    (*c).cnt.taken_branches += 1;
                    return leave::<H, T, true>(c, d, x, pc(c, d).wrapping_add(imm(d)), true);
                }
                0
            }
        )*}
    };
}

branches! {
    beq => |p: u64, q: u64| p == q;
    bne => |p: u64, q: u64| p != q;
    blt => |p: u64, q: u64| (p as i64) < (q as i64);
    bge => |p: u64, q: u64| (p as i64) >= (q as i64);
    bltu => |p: u64, q: u64| p < q;
    bgeu => |p: u64, q: u64| p >= q;
}

straight! {
    auipc(c, d, x) {
        wr(x, d, pc(c, d).wrapping_add(imm(d)));
        0
    }
    lr_w(c, d, x) {
        let ea = a(x, d);
        let v = match mem(c).load_atomic::<4>(ea) {
            Ok(v) => v,
            Err(t) => return fault(c, d, t),
        };
        mem(c).reserve(hart(c).id, ea);
        wr(x, d, sext32(v));
        hart(c).cnt.atomics += 1;
        ea
    }
    lr_d(c, d, x) {
        let ea = a(x, d);
        let v = match mem(c).load_atomic::<8>(ea) {
            Ok(v) => v,
            Err(t) => return fault(c, d, t),
        };
        mem(c).reserve(hart(c).id, ea);
        wr(x, d, v);
        hart(c).cnt.atomics += 1;
        ea
    }
    sc(c, d, x) {
        // The address before rd is written (rd may be rs1).
        let ea = a(x, d);
        if !store_conditional(c, d, x) {
            return;
        }
        if code_changed(c) {
            return leave_changed(c, d, ea);
        }
        ea
    }
    amo(c, d, x) {
        let ea = a(x, d);
        if !atomic_rmw(c, d, x) {
            return;
        }
        if code_changed(c) {
            return leave_changed(c, d, ea);
        }
        ea
    }
    fence(c, d, x) {
        hart(c).cnt.fences += 1;
        0
    }
    prefetch(c, d, x) {
        hart(c).cnt.prefetches += 1;
        a(x, d).wrapping_add(imm(d))
    }
    ntl(c, d, x) {
        hart(c).cnt.ntl_hints += 1;
        0
    }
    nop(c, d, x) {
        0
    }
    poll_end(c, d, x) {
        // This poll's instructions: since the previous poll ended (or the stats were reset), this one included.
        let idle = a(x, d) == 0;
        let h = hart(c);
        let retired = h.cnt.insts + (*c).n + (*d).idx as u64 + 1;
        let insts = retired - h.poll_mark.max(h.base.insts);
        h.poll_mark = retired;
        if idle {
            h.cnt.polls_idle += 1;
            h.cnt.idle_poll_insts += insts;
        } else {
            h.cnt.polls_busy += 1;
            h.cnt.busy_poll_insts += insts;
        }
        if H::ACTIVE {
            // The hook times this poll's instructions before it hears the poll ended (the hint's own come after).
            hand_over(c, (*d).idx);
            let id = hart(c).id;
            (*(*c).hook).poll_end(id, idle);
        }
        0
    }
    csr_fp_op(c, d, x) {
        let v = csr_fp(&mut hart(c).fcsr, (*d).raw, (*d).imm, a(x, d));
        wr(x, d, v);
        0
    }
    csr_read(c, d, x) {
        let v = read_counter(c, d);
        wr(x, d, v);
        0
    }
    fp_op(c, d, x) {
        if !fp_compute(c, d, x) {
            return;
        }
        hart(c).cnt.fp_ops += 1;
        0
    }
}

unsafe fn jal<H: ExecHook, const T: bool>(c: *mut Ctx<H>, d: *const Decoded, x: *mut u64) {
    if T {
        trace(c, d);
    }
    wr(x, d, after(c, d));
    (*c).cnt.jumps += 1;
    leave::<H, T, true>(c, d, x, pc(c, d).wrapping_add(imm(d)), true) // (a jump is taken)
}

unsafe fn jalr<H: ExecHook, const T: bool>(c: *mut Ctx<H>, d: *const Decoded, x: *mut u64) {
    if T {
        trace(c, d);
    }
    let target = a(x, d).wrapping_add(imm(d)) & !1;
    wr(x, d, after(c, d));
    (*c).cnt.jumps += 1;
    leave::<H, T, false>(c, d, x, target, true)
}

unsafe fn fence_i<H: ExecHook, const T: bool>(c: *mut Ctx<H>, d: *const Decoded, _x: *mut u64) {
    if T {
        trace(c, d);
    }
    mem(c).flush_code();
    hart(c).cnt.fences += 1;
    leave_changed(c, d, 0)
}

unsafe fn ecall<H: ExecHook, const T: bool>(c: *mut Ctx<H>, d: *const Decoded, _x: *mut u64) {
    if T {
        trace(c, d);
    }
    let next = after(c, d);
    retire(c, d, next, 0, false);
    hand_over(c, (*d).idx + 1);
    (*c).resume = next;
    (*c).n += (*d).idx as u64 + 1;
    (*c).exit = Exit::Stop;
    (*c).stop = Some(Stop::Ecall);
}

/// ebreak, a CSR the core does not have, an illegal instruction: a fault.
unsafe fn trap<H: ExecHook, const T: bool>(c: *mut Ctx<H>, d: *const Decoded, _x: *mut u64) {
    if T {
        trace(c, d);
    }
    let t = match (*d).op {
        Op::Ebreak => Trap::Ebreak,
        Op::BadCsr => Trap::Csr((*d).imm as u16),
        _ => Trap::Illegal((*d).illegal_reason()),
    };
    fault(c, d, t)
}

/// The block's end marker (no instruction): it ran to its end (or to the budget) without a control transfer; go on
/// after its last instruction.
unsafe fn end_marker<H: ExecHook, const T: bool>(c: *mut Ctx<H>, d: *const Decoded, x: *mut u64) {
    hand_over(c, (*d).idx);
    (*c).n += (*d).idx as u64;
    follow::<H, T, false>(c, d, x, pc(c, d))
}

/// The table: every operation's handler.
const fn build<H: ExecHook, const T: bool>() -> [Handler<H>; OPS] {
    use Op::*;
    // The computational F/D operations (a contiguous range, `Op::is_fp_compute`) share one handler; every other
    // operation is set below.
    let mut t: [Handler<H>; OPS] = [fp_op::<H, T>; OPS];
    t[Undecoded as usize] = end_marker::<H, T>;
    t[Illegal as usize] = trap::<H, T>;
    t[BadCsr as usize] = trap::<H, T>;
    t[Ebreak as usize] = trap::<H, T>;
    t[Lui as usize] = lui::<H, T>;
    t[Auipc as usize] = auipc::<H, T>;
    t[Jal as usize] = jal::<H, T>;
    t[Jalr as usize] = jalr::<H, T>;
    t[Beq as usize] = beq::<H, T>;
    t[Bne as usize] = bne::<H, T>;
    t[Blt as usize] = blt::<H, T>;
    t[Bge as usize] = bge::<H, T>;
    t[Bltu as usize] = bltu::<H, T>;
    t[Bgeu as usize] = bgeu::<H, T>;
    t[Lb as usize] = lb::<H, T>;
    t[Lh as usize] = lh::<H, T>;
    t[Lw as usize] = lw::<H, T>;
    t[Ld as usize] = ld::<H, T>;
    t[Lbu as usize] = lbu::<H, T>;
    t[Lhu as usize] = lhu::<H, T>;
    t[Lwu as usize] = lwu::<H, T>;
    t[Sb as usize] = sb::<H, T>;
    t[Sh as usize] = sh::<H, T>;
    t[Sw as usize] = sw::<H, T>;
    t[Sd as usize] = sd::<H, T>;
    t[Addi as usize] = addi::<H, T>;
    t[Slti as usize] = slti::<H, T>;
    t[Sltiu as usize] = sltiu::<H, T>;
    t[Xori as usize] = xori::<H, T>;
    t[Ori as usize] = ori::<H, T>;
    t[Andi as usize] = andi::<H, T>;
    t[Slli as usize] = slli::<H, T>;
    t[Srli as usize] = srli::<H, T>;
    t[Srai as usize] = srai::<H, T>;
    t[Add as usize] = add::<H, T>;
    t[Sub as usize] = sub::<H, T>;
    t[Sll as usize] = sll::<H, T>;
    t[Slt as usize] = slt::<H, T>;
    t[Sltu as usize] = sltu::<H, T>;
    t[Xor as usize] = xor::<H, T>;
    t[Srl as usize] = srl::<H, T>;
    t[Sra as usize] = sra::<H, T>;
    t[Or as usize] = or::<H, T>;
    t[And as usize] = and::<H, T>;
    t[Addiw as usize] = addiw::<H, T>;
    t[Slliw as usize] = slliw::<H, T>;
    t[Srliw as usize] = srliw::<H, T>;
    t[Sraiw as usize] = sraiw::<H, T>;
    t[Addw as usize] = addw::<H, T>;
    t[Subw as usize] = subw::<H, T>;
    t[Sllw as usize] = sllw::<H, T>;
    t[Srlw as usize] = srlw::<H, T>;
    t[Sraw as usize] = sraw::<H, T>;
    t[Mul as usize] = mul::<H, T>;
    t[Mulh as usize] = mulh::<H, T>;
    t[Mulhsu as usize] = mulhsu::<H, T>;
    t[Mulhu as usize] = mulhu::<H, T>;
    t[Div as usize] = div::<H, T>;
    t[Divu as usize] = divu::<H, T>;
    t[Rem as usize] = rem::<H, T>;
    t[Remu as usize] = remu::<H, T>;
    t[Mulw as usize] = mulw::<H, T>;
    t[Divw as usize] = divw::<H, T>;
    t[Divuw as usize] = divuw::<H, T>;
    t[Remw as usize] = remw::<H, T>;
    t[Remuw as usize] = remuw::<H, T>;
    t[LrW as usize] = lr_w::<H, T>;
    t[LrD as usize] = lr_d::<H, T>;
    t[ScW as usize] = sc::<H, T>;
    t[ScD as usize] = sc::<H, T>;
    let mut i = AmoSwapW as usize;
    while i <= AmoMaxuW as usize {
        t[i] = amo::<H, T>;
        i += 1;
    }
    i = AmoSwapD as usize;
    while i <= AmoMaxuD as usize {
        t[i] = amo::<H, T>;
        i += 1;
    }
    t[Fence as usize] = fence::<H, T>;
    t[FenceI as usize] = fence_i::<H, T>;
    t[Ecall as usize] = ecall::<H, T>;
    t[CsrRead as usize] = csr_read::<H, T>;
    t[PrefetchR as usize] = prefetch::<H, T>;
    t[PrefetchW as usize] = prefetch::<H, T>;
    t[PrefetchI as usize] = prefetch::<H, T>;
    t[Ntl as usize] = ntl::<H, T>;
    t[PollEnd as usize] = poll_end::<H, T>;
    t[Nop as usize] = nop::<H, T>;
    t[CsrFp as usize] = csr_fp_op::<H, T>;
    t[Flw as usize] = flw::<H, T>;
    t[Fld as usize] = fld::<H, T>;
    t[Fsw as usize] = fsw::<H, T>;
    t[Fsd as usize] = fsd::<H, T>;
    t
}
