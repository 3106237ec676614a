//! The executor: runs one hart for up to a budget of instructions out of the decoded-instruction cache.
//!
//! It is generic over an `ExecHook` (the timing model's tap) and over whether hart 0's trace is being written,
//! so functional mode compiles to a loop with neither: `NoHook::ACTIVE` is false and the InstInfo is never built.

use std::io::Write;

use kvsim_timing::inst::{InstClass, InstInfo, PrefetchKind};

use super::decode::{Decoded, Op};
use crate::blocks::{Block, Link, MAX_INSTS};
use crate::hart::{Hart, REGISTERS};
use crate::memory::Memory;
use crate::trap::{Access, Trap};

/// What a timing model sees: called after every executed instruction when `ACTIVE`.
/// The other methods have do-nothing defaults; a timing model overrides them (see the engine's driver).
pub trait ExecHook {
    const ACTIVE: bool;
    fn on_inst(&mut self, hart: usize, info: &InstInfo);
    /// The simulated time `hart` has reached (ps), when this hook keeps time; the scheduler then runs the hart
    /// furthest behind, and clock_gettime/rdtime read it.
    #[inline(always)]
    fn time_ps(&self, _hart: usize) -> Option<u64> {
        None
    }
    /// FS mode: `hart` sleeps in wfi until `t` (ps, the hook's time scale); a timing model moves its core's clock
    /// there (the sleep is time, not work).
    fn sleep_until(&mut self, _hart: usize, _t: u64) {}
    /// The guest reset the statistics (ROI_BEGIN, STATS_RESET).
    fn reset_stats(&mut self) {}
    /// Append this hook's statistics (a STATS_DUMP snapshot, the end of the run).
    fn append_stats(&self, _out: &mut Vec<kvsim_base::output::Stat>) {}
    /// A DMA access by I/O agent `agent` (a NIC: harts + its index) to the line at `addr` at time `t` (ps, the
    /// hook's time scale), for hart `owner` when one owns it (the hart of the NIC queue it serves): returns when
    /// it completes. Without a memory-system model, at once.
    fn io_access(&mut self, _agent: usize, _owner: Option<usize>, _addr: u64, _write: bool, t: u64) -> u64 {
        t
    }
    /// The engine placed guest addresses [start, start + len) on `socket`'s memory (`Machine::place_numa`): a
    /// timing model moves those lines' home there. The socket exists (the engine's map checked it).
    fn numa_placed(&mut self, _start: u64, _len: u64, _socket: u16) {}
    /// The engine mapped guest addresses [start, start + len) with 2 MB pages (a hugepage allocation): a timing
    /// model's MMU translates them with 2 MB pages.
    fn huge_mapped(&mut self, _start: u64, _len: u64) {}
}

/// Functional mode: no timing model.
pub struct NoHook;
impl ExecHook for NoHook {
    const ACTIVE: bool = false;
    #[inline(always)]
    fn on_inst(&mut self, _hart: usize, _info: &InstInfo) {}
}

/// Why `run` returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The budget is used up.
    Budget,
    /// An `ecall` was executed (and counted; the PC is past it): the caller performs the call.
    Ecall,
    /// The instruction at the hart's PC faulted (it was not executed). `Memory::insn_word` recovers its word.
    Fault(Trap),
}

/// The lockstep trace of hart 0. Format (one line per instruction, written before it executes):
/// the PC, then x1..x31, each as 16 lowercase hex digits without prefix, separated by single spaces, ending in
/// "\n": `0000000000010078 0000000000000000 0000003ffffeff40 0000000000000000 ...` (32 fields: pc, ra, sp, gp,
/// ...). The lockstep comparison with `qemu-riscv64 -singlestep -d cpu,nochain` (tests/) parses exactly this.
pub struct Tracer {
    pub out: Box<dyn Write + Send>,
    pub error: Option<std::io::Error>,
    line: Vec<u8>,
}

impl Tracer {
    pub fn new(out: Box<dyn Write + Send>) -> Tracer {
        Tracer { out, error: None, line: Vec::with_capacity(64 * 17) }
    }

    /// One line: the PC, x1..x31, then f0..f31 as raw 64-bit patterns (singles NaN-boxed), 16 hex digits each.
    #[cold]
    pub fn record(&mut self, pc: u64, x: &[u64; REGISTERS]) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.line.clear();
        for (i, v) in std::iter::once(pc).chain(x[1..64].iter().copied()).enumerate() {
            if i > 0 {
                self.line.push(b' ');
            }
            for k in (0..16).rev() {
                self.line.push(HEX[((v >> (4 * k)) & 0xf) as usize]);
            }
        }
        self.line.push(b'\n');
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(&self.line) {
                self.error = Some(e);
            }
        }
    }
}

/// Resource class of an operation (for the timing hook). Inlined: a call per timed instruction was 1.2% of a
/// detailed run.
#[inline(always)]
pub fn op_class(op: Op) -> InstClass {
    use Op::*;
    match op {
        Mul | Mulh | Mulhsu | Mulhu | Mulw => InstClass::IntMul,
        Div | Divu | Rem | Remu | Divw | Divuw | Remw | Remuw => InstClass::IntDiv,
        Lb | Lh | Lw | Ld | Lbu | Lhu | Lwu => InstClass::Load,
        Sb | Sh | Sw | Sd => InstClass::Store,
        LrW | ScW | AmoSwapW | AmoAddW | AmoXorW | AmoAndW | AmoOrW | AmoMinW | AmoMaxW | AmoMinuW | AmoMaxuW | LrD
        | ScD | AmoSwapD | AmoAddD | AmoXorD | AmoAndD | AmoOrD | AmoMinD | AmoMaxD | AmoMinuD | AmoMaxuD => {
            InstClass::Atomic
        }
        Beq | Bne | Blt | Bge | Bltu | Bgeu => InstClass::Branch,
        Jal | Jalr => InstClass::Jump,
        Fence | FenceI => InstClass::Fence,
        Ecall | Ebreak | CsrRead | CsrFp | BadCsr | Illegal | Undecoded => InstClass::System,
        Flw | Fld => InstClass::Load,
        Fsw | Fsd => InstClass::Store,
        FmulS | FmulD => InstClass::FpMul,
        FmaddS | FmsubS | FnmsubS | FnmaddS | FmaddD | FmsubD | FnmsubD | FnmaddD => InstClass::FpFma,
        FdivS | FdivD => InstClass::FpDiv,
        FsqrtS | FsqrtD => InstClass::FpSqrt,
        FcvtWS | FcvtWuS | FcvtLS | FcvtLuS | FcvtSW | FcvtSWu | FcvtSL | FcvtSLu | FcvtSD | FcvtWD | FcvtWuD
        | FcvtLD | FcvtLuD | FcvtDW | FcvtDWu | FcvtDL | FcvtDLu | FcvtDS => InstClass::FpCvt,
        op if op.is_fp_compute() => InstClass::FpAdd,
        PrefetchR | PrefetchW | PrefetchI => InstClass::Prefetch,
        Ntl | Nop => InstClass::Nop,
        _ => InstClass::IntAlu,
    }
}

/// Bytes accessed by a memory operation (0 for others; prefetches report one cache line's worth as 0).
#[inline(always)]
pub fn mem_size(op: Op) -> u8 {
    use Op::*;
    match op {
        Lb | Lbu | Sb => 1,
        Lh | Lhu | Sh => 2,
        Lw | Lwu | Sw | Flw | Fsw | LrW | ScW | AmoSwapW | AmoAddW | AmoXorW | AmoAndW | AmoOrW | AmoMinW | AmoMaxW
        | AmoMinuW | AmoMaxuW => 4,
        Ld | Sd | Fld | Fsd | LrD | ScD | AmoSwapD | AmoAddD | AmoXorD | AmoAndD | AmoOrD | AmoMinD | AmoMaxD
        | AmoMinuD | AmoMaxuD => 8,
        _ => 0,
    }
}

#[inline(always)]
fn sext32(v: u64) -> u64 {
    v as u32 as i32 as i64 as u64
}

/// A computational F/D instruction, out of line so the integer loop's code stays small.
#[inline(never)]
fn fp_compute(op: Op, d: &Decoded, x: &[u64; REGISTERS], fcsr: &mut u32, a: u64, b: u64) -> Result<u64, &'static str> {
    // rs3 (FMAs only) is not in the decoded record: read it from the word.
    let c = x[(super::decode::FREG + (d.raw >> 27)) as usize];
    super::fpu::execute(op, d.raw, a, b, c, fcsr)
}

/// csrrw/csrrs/csrrc[i] on fflags (1), frm (2) or fcsr (3): returns the old value (for rd).
#[inline(never)]
fn csr_fp(fcsr: &mut u32, raw: u32, csr: i32, a: u64) -> u64 {
    let f3 = (raw >> 12) & 7;
    // Register forms read rs1; immediate forms use the 5-bit rs1 field as the value.
    let src = if f3 & 4 == 0 { a } else { ((raw >> 15) & 0x1f) as u64 };
    let writes = f3 & 3 == 1 || (raw >> 15) & 0x1f != 0;
    let (shift, mask) = match csr {
        1 => (0, 0x1f),
        2 => (5, 0x7),
        _ => (0, 0xff),
    };
    let old = ((*fcsr >> shift) & mask) as u64;
    if writes {
        let new = match f3 & 3 {
            1 => src,
            2 => old | src,
            _ => old & !src,
        } as u32
            & mask;
        *fcsr = (*fcsr & !(mask << shift)) | (new << shift);
    }
    old
}

/// Run `h` for at most `budget` instructions. `TRACE` writes a trace line before each instruction.
#[inline(never)]
pub fn run<H: ExecHook, const TRACE: bool>(
    h: &mut Hart,
    mem: &mut Memory,
    budget: u64,
    hook: &mut H,
    tracer: Option<&mut Tracer>,
) -> Stop {
    let hid = h.id;
    let mut tracer = tracer;
    // Instructions retired before the current block; within a block an instruction's index (`Decoded::idx`) adds
    // to it, so nothing is counted per instruction.
    let mut n = 0u64;
    // Where the next block starts (the hart's PC between blocks).
    let mut resume = h.pc;
    // The block at `resume` when an exit's link gave it (no lookup needed), else null.
    let mut chained: *const Block = std::ptr::null();
    // The link to point at the block at `resume` after its lookup; null when there is none to fill, or when decoded
    // code changed (the lookup then empties the cache, the block holding the link with it).
    let mut link_from: *const Link = std::ptr::null();
    let mut generation = mem.code_generation();
    // The first instructions of a block that the budget ends inside, and an end marker after them.
    let mut partial = [const { std::mem::MaybeUninit::<Decoded>::uninit() }; MAX_INSTS + 1];
    // A block at a time: its instructions run without a lookup each, the budget checked once per block. A store
    // that changes decoded code (the generation moves) ends the block after it. Within a block the PC is not
    // carried from instruction to instruction: an instruction that needs its own (auipc, jumps, branches, traps,
    // the hook) derives it from the block's PC and its offset (`Decoded::at`).
    let stop = 'run: loop {
        if n >= budget {
            break Stop::Budget;
        }
        let block: &Block = if !chained.is_null() {
            // SAFETY: a link is followed only while decoded code is unchanged since the block holding it was looked
            // up, so the block it points at (looked up under the same generation) is still in the cache.
            unsafe { &*chained }
        } else {
            match mem.block(resume) {
                Ok(b) => {
                    if !link_from.is_null() && mem.code_generation() == generation {
                        // SAFETY: decoded code is unchanged, so the block holding the link is still cached.
                        unsafe { (*link_from).set((resume, b)) };
                    }
                    generation = mem.code_generation();
                    // SAFETY: the block stays in the cache until a lookup after decoded code changed.
                    unsafe { &*b }
                }
                Err(t) => break Stop::Fault(t),
            }
        };
        let first: *const Decoded = if block.count <= budget - n {
            block.insts.as_ptr()
        } else {
            // The budget ends inside the block: run a copy of its first instructions, ended by a marker whose offset
            // is that of the first one left out.
            let k = (budget - n) as usize;
            let buf = partial.as_mut_ptr() as *mut Decoded;
            // SAFETY: k < count <= MAX_INSTS, so the copy and the marker fit in `partial`. The copies keep their
            // `idx`, which the marker continues.
            unsafe {
                std::ptr::copy_nonoverlapping(block.insts.as_ptr(), buf, k);
                buf.add(k).write(Decoded { at: block.insts[k].at, idx: k as u8, ..Decoded::UNDECODED });
            }
            buf
        };
        let mut inst = first;
        loop {
            // SAFETY: the loop leaves the block at its end marker at the latest, which `inst` never passes.
            let d: &Decoded = unsafe { &*inst };
            // This instruction's PC, and its index in the block (instructions retired before it are n + idx):
            // macros, so that only the operations that need them compute them.
            macro_rules! pc {
                () => {
                    block.pc.wrapping_add(2 * d.at as u64)
                };
            }
            macro_rules! idx {
                () => {
                    d.idx as u64
                };
            }
            if TRACE && d.op != Op::Undecoded {
                if let Some(t) = tracer.as_deref_mut() {
                    t.record(pc!(), &h.x);
                }
            }
            // The operands, read by the operations that use them only.
            // SAFETY: the decoder only produces register numbers below 64 (5-bit fields, plus 32 for FP registers),
            // and the decoded-instruction cache holds nothing but decoder output.
            debug_assert!(d.rd < 64 && d.rs1 < 64 && d.rs2 < 64 && (d.wd as usize) < REGISTERS);
            macro_rules! a {
                () => {
                    unsafe { *h.x.get_unchecked(d.rs1 as usize) }
                };
            }
            macro_rules! b {
                () => {
                    unsafe { *h.x.get_unchecked(d.rs2 as usize) }
                };
            }
            macro_rules! imm {
                () => {
                    d.imm as i64 as u64
                };
            }
            macro_rules! wr {
                ($v:expr) => {{
                    let v: u64 = $v;
                    // SAFETY: wd is rd (< 64, as above) or DISCARD (64), both inside the register file.
                    unsafe { *h.x.get_unchecked_mut(d.wd as usize) = v };
                }};
            }
            let mut ea = 0u64;
            let mut taken = false;
            // Leave the run at a fault of this instruction (not executed: the PC stays on it).
            macro_rules! fault {
                ($t:expr) => {{
                    let t = $t;
                    resume = pc!();
                    n += idx!();
                    break 'run Stop::Fault(t);
                }};
            }
            macro_rules! tri {
                ($e:expr) => {
                    match $e {
                        Ok(v) => v,
                        Err(t) => fault!(t),
                    }
                };
            }
            macro_rules! branch {
                ($cond:expr) => {{
                    h.cnt.branches += 1;
                    let (a, b) = (a!(), b!());
                    // Taken, a side exit from the block; not taken, the block goes on (blocks.rs).
                    if $cond(a, b) {
                        taken = true;
                        h.cnt.taken_branches += 1;
                        leave!(pc!().wrapping_add(imm!()));
                    }
                }};
            }
            macro_rules! load {
                ($n:literal, $conv:expr) => {{
                    ea = a!().wrapping_add(imm!());
                    // The fast path's value goes straight to the register, not through the slow path's Result.
                    match mem.load_fast::<$n>(ea) {
                        Some(v) => wr!($conv(v)),
                        None => {
                            let v = tri!(mem.load_other::<$n>(ea));
                            wr!($conv(v));
                        }
                    }
                    h.cnt.loads += 1;
                }};
            }
            macro_rules! store {
                ($n:literal) => {{
                    ea = a!().wrapping_add(imm!());
                    // Only a store off the fast path can change decoded code (Memory::store_fast).
                    if !mem.store_fast::<$n>(ea, b!()) {
                        tri!(mem.store_other::<$n>(hid, ea, b!()));
                        h.cnt.stores += 1;
                        check_code!();
                    } else {
                        h.cnt.stores += 1;
                    }
                }};
            }
            macro_rules! amo_w {
                ($f:expr) => {{
                    ea = a!();
                    let old = tri!(mem.load_atomic::<4>(ea)) as u32;
                    let new: u32 = $f(old, b!() as u32);
                    tri!(mem.store_atomic::<4>(hid, ea, new as u64));
                    wr!(sext32(old as u64));
                    h.cnt.atomics += 1;
                    check_code!();
                }};
            }
            macro_rules! amo_d {
                ($f:expr) => {{
                    ea = a!();
                    let old = tri!(mem.load_atomic::<8>(ea));
                    let new: u64 = $f(old, b!());
                    tri!(mem.store_atomic::<8>(hid, ea, new));
                    wr!(old);
                    h.cnt.atomics += 1;
                    check_code!();
                }};
            }
            // After an instruction: tell the hook.
            macro_rules! retire {
                ($next:expr) => {{
                    if H::ACTIVE {
                        let next: u64 = $next;
                        let pc = pc!();
                        let class = op_class(d.op);
                        let size = mem_size(d.op);
                        let is_mem = size != 0 || class == InstClass::Prefetch;
                        let non_temporal = is_mem && h.ntl_pending;
                        if is_mem {
                            h.ntl_pending = false;
                        }
                        if d.op == Op::Ntl {
                            h.ntl_pending = true;
                        }
                        let info = InstInfo {
                            pc,
                            len: d.len,
                            class,
                            dst: d.rd,
                            src1: d.rs1,
                            src2: d.rs2,
                            src3: if class == InstClass::FpFma {
                                (super::decode::FREG + (d.raw >> 27)) as u8
                            } else {
                                0
                            },
                            mem_addr: if is_mem { ea } else { 0 },
                            mem_size: size,
                            taken: taken || class == InstClass::Jump,
                            next_pc: next,
                            non_temporal,
                            prefetch_kind: match d.op {
                                Op::PrefetchW => PrefetchKind::Write,
                                Op::PrefetchI => PrefetchKind::Instruction,
                                _ => PrefetchKind::Read,
                            },
                        };
                        hook.on_inst(hid, &info);
                    }
                    let _ = (ea, taken);
                }};
            }
            // After the instruction that ends the block (a control transfer): retire it and go on at `next`, in the
            // block that this exit's link gives if it is for `next`.
            macro_rules! leave {
                ($next:expr) => {{
                    let next: u64 = $next;
                    retire!(next);
                    n += idx!() + 1;
                    follow!(next);
                }};
            }
            // Go on at `next` through this exit's link if it is for `next`, else through a lookup that fills it.
            macro_rules! follow {
                ($next:expr) => {{
                    resume = $next;
                    // SAFETY: every instruction's idx, and the end marker's, is below links.len() (Block::new).
                    let link: &Link = unsafe { block.links.get_unchecked(d.idx as usize) };
                    let (linked_pc, linked) = link.get();
                    chained = if linked_pc == resume { linked } else { std::ptr::null() };
                    link_from = link;
                    continue 'run;
                }};
            }
            // After an instruction that changed decoded code (a store into it, fence.i): retire it and go on at
            // `next` through a lookup, without links (the lookup empties the cache, this block with it).
            macro_rules! leave_changed {
                ($next:expr) => {{
                    let next: u64 = $next;
                    retire!(next);
                    resume = next;
                    n += idx!() + 1;
                    chained = std::ptr::null();
                    link_from = std::ptr::null();
                    continue 'run;
                }};
            }
            // After a store: leave the block if it changed decoded code (the block itself, perhaps).
            macro_rules! check_code {
                () => {
                    if mem.code_generation() != generation {
                        leave_changed!(pc!().wrapping_add(d.len as u64));
                    }
                };
            }
            match d.op {
                Op::Addi => wr!(a!().wrapping_add(imm!())),
                Op::Add => wr!(a!().wrapping_add(b!())),
                Op::Ld => load!(8, |v| v),
                Op::Sd => store!(8),
                Op::Lw => load!(4, sext32),
                Op::Sw => store!(4),
                Op::Beq => branch!(|a: u64, b: u64| a == b),
                Op::Bne => branch!(|a: u64, b: u64| a != b),
                Op::Blt => branch!(|a: u64, b: u64| (a as i64) < (b as i64)),
                Op::Bge => branch!(|a: u64, b: u64| (a as i64) >= (b as i64)),
                Op::Bltu => branch!(|a: u64, b: u64| a < b),
                Op::Bgeu => branch!(|a: u64, b: u64| a >= b),
                Op::Jal => {
                    wr!(pc!().wrapping_add(d.len as u64));
                    h.cnt.jumps += 1;
                    leave!(pc!().wrapping_add(imm!()));
                }
                Op::Jalr => {
                    let target = a!().wrapping_add(imm!()) & !1;
                    wr!(pc!().wrapping_add(d.len as u64));
                    h.cnt.jumps += 1;
                    leave!(target);
                }
                Op::Lui => wr!(imm!()),
                Op::Auipc => wr!(pc!().wrapping_add(imm!())),
                Op::Lb => load!(1, |v: u64| v as i8 as i64 as u64),
                Op::Lh => load!(2, |v: u64| v as i16 as i64 as u64),
                Op::Lbu => load!(1, |v| v),
                Op::Lhu => load!(2, |v| v),
                Op::Lwu => load!(4, |v| v),
                Op::Sb => store!(1),
                Op::Sh => store!(2),
                Op::Slti => wr!(((a!() as i64) < (imm!() as i64)) as u64),
                Op::Sltiu => wr!((a!() < imm!()) as u64),
                Op::Xori => wr!(a!() ^ imm!()),
                Op::Ori => wr!(a!() | imm!()),
                Op::Andi => wr!(a!() & imm!()),
                Op::Slli => wr!(a!() << (imm!() & 63)),
                Op::Srli => wr!(a!() >> (imm!() & 63)),
                Op::Srai => wr!(((a!() as i64) >> (imm!() & 63)) as u64),
                Op::Sub => wr!(a!().wrapping_sub(b!())),
                Op::Sll => wr!(a!() << (b!() & 63)),
                Op::Slt => wr!(((a!() as i64) < (b!() as i64)) as u64),
                Op::Sltu => wr!((a!() < b!()) as u64),
                Op::Xor => wr!(a!() ^ b!()),
                Op::Srl => wr!(a!() >> (b!() & 63)),
                Op::Sra => wr!(((a!() as i64) >> (b!() & 63)) as u64),
                Op::Or => wr!(a!() | b!()),
                Op::And => wr!(a!() & b!()),
                Op::Addiw => wr!(sext32(a!().wrapping_add(imm!()))),
                Op::Slliw => wr!(sext32(((a!() as u32) << (imm!() & 31)) as u64)),
                Op::Srliw => wr!(sext32(((a!() as u32) >> (imm!() & 31)) as u64)),
                Op::Sraiw => wr!(((a!() as i32) >> (imm!() & 31)) as i64 as u64),
                Op::Addw => wr!(sext32(a!().wrapping_add(b!()))),
                Op::Subw => wr!(sext32(a!().wrapping_sub(b!()))),
                Op::Sllw => wr!(sext32(((a!() as u32) << (b!() & 31)) as u64)),
                Op::Srlw => wr!(sext32(((a!() as u32) >> (b!() & 31)) as u64)),
                Op::Sraw => wr!(((a!() as i32) >> (b!() & 31)) as i64 as u64),
                Op::Mul => wr!(a!().wrapping_mul(b!())),
                Op::Mulh => wr!(((a!() as i64 as i128 * b!() as i64 as i128) >> 64) as u64),
                Op::Mulhsu => wr!(((a!() as i64 as i128).wrapping_mul(b!() as i128) >> 64) as u64),
                Op::Mulhu => wr!(((a!() as u128 * b!() as u128) >> 64) as u64),
                Op::Div => wr!(if b!() == 0 { u64::MAX } else { (a!() as i64).wrapping_div(b!() as i64) as u64 }),
                Op::Divu => wr!(a!().checked_div(b!()).unwrap_or(u64::MAX)),
                Op::Rem => wr!(if b!() == 0 { a!() } else { (a!() as i64).wrapping_rem(b!() as i64) as u64 }),
                Op::Remu => wr!(if b!() == 0 { a!() } else { a!() % b!() }),
                Op::Mulw => wr!(sext32((a!() as u32).wrapping_mul(b!() as u32) as u64)),
                Op::Divw => {
                    let (p, q) = (a!() as i32, b!() as i32);
                    wr!(if q == 0 { u64::MAX } else { p.wrapping_div(q) as i64 as u64 })
                }
                Op::Divuw => {
                    let (p, q) = (a!() as u32, b!() as u32);
                    wr!(p.checked_div(q).map_or(u64::MAX, |v| sext32(v as u64)))
                }
                Op::Remw => {
                    let (p, q) = (a!() as i32, b!() as i32);
                    wr!(if q == 0 { p as i64 as u64 } else { p.wrapping_rem(q) as i64 as u64 })
                }
                Op::Remuw => {
                    let (p, q) = (a!() as u32, b!() as u32);
                    wr!(if q == 0 { sext32(p as u64) } else { sext32((p % q) as u64) })
                }
                Op::LrW => {
                    ea = a!();
                    let v = tri!(mem.load_atomic::<4>(ea));
                    mem.reserve(hid, ea);
                    wr!(sext32(v));
                    h.cnt.atomics += 1;
                }
                Op::LrD => {
                    ea = a!();
                    let v = tri!(mem.load_atomic::<8>(ea));
                    mem.reserve(hid, ea);
                    wr!(v);
                    h.cnt.atomics += 1;
                }
                Op::ScW | Op::ScD => {
                    ea = a!();
                    let size = if d.op == Op::ScW { 4u8 } else { 8 };
                    if ea & (size as u64 - 1) != 0 {
                        fault!(Trap::Misaligned { addr: ea, size, access: Access::Atomic });
                    }
                    if mem.take_reservation(hid, ea) {
                        if size == 4 {
                            tri!(mem.store_atomic::<4>(hid, ea, b!()));
                        } else {
                            tri!(mem.store_atomic::<8>(hid, ea, b!()));
                        }
                        wr!(0);
                    } else {
                        wr!(1);
                    }
                    h.cnt.atomics += 1;
                    check_code!();
                }
                Op::AmoSwapW => amo_w!(|_o: u32, s: u32| s),
                Op::AmoAddW => amo_w!(|o: u32, s: u32| o.wrapping_add(s)),
                Op::AmoXorW => amo_w!(|o: u32, s: u32| o ^ s),
                Op::AmoAndW => amo_w!(|o: u32, s: u32| o & s),
                Op::AmoOrW => amo_w!(|o: u32, s: u32| o | s),
                Op::AmoMinW => amo_w!(|o: u32, s: u32| (o as i32).min(s as i32) as u32),
                Op::AmoMaxW => amo_w!(|o: u32, s: u32| (o as i32).max(s as i32) as u32),
                Op::AmoMinuW => amo_w!(|o: u32, s: u32| o.min(s)),
                Op::AmoMaxuW => amo_w!(|o: u32, s: u32| o.max(s)),
                Op::AmoSwapD => amo_d!(|_o: u64, s: u64| s),
                Op::AmoAddD => amo_d!(|o: u64, s: u64| o.wrapping_add(s)),
                Op::AmoXorD => amo_d!(|o: u64, s: u64| o ^ s),
                Op::AmoAndD => amo_d!(|o: u64, s: u64| o & s),
                Op::AmoOrD => amo_d!(|o: u64, s: u64| o | s),
                Op::AmoMinD => amo_d!(|o: u64, s: u64| (o as i64).min(s as i64) as u64),
                Op::AmoMaxD => amo_d!(|o: u64, s: u64| (o as i64).max(s as i64) as u64),
                Op::AmoMinuD => amo_d!(|o: u64, s: u64| o.min(s)),
                Op::AmoMaxuD => amo_d!(|o: u64, s: u64| o.max(s)),
                Op::Fence => h.cnt.fences += 1,
                Op::FenceI => {
                    mem.flush_code();
                    h.cnt.fences += 1;
                    leave_changed!(pc!().wrapping_add(d.len as u64));
                }
                Op::PrefetchR | Op::PrefetchW | Op::PrefetchI => {
                    ea = a!().wrapping_add(imm!());
                    h.cnt.prefetches += 1;
                }
                Op::Ntl => h.cnt.ntl_hints += 1,
                Op::PollEnd => {
                    // This poll's instructions: since the previous poll ended (or the stats were reset), this one
                    // included.
                    let retired = h.cnt.insts + n + idx!() + 1;
                    let insts = retired - h.poll_mark.max(h.base.insts);
                    h.poll_mark = retired;
                    if a!() == 0 {
                        h.cnt.polls_idle += 1;
                        h.cnt.idle_poll_insts += insts;
                    } else {
                        h.cnt.polls_busy += 1;
                        h.cnt.busy_poll_insts += insts;
                    }
                }
                Op::Nop => {}
                // Singles are NaN-boxed when loaded; a store writes the register's low bits as they are.
                Op::Flw => load!(4, |v: u64| v | 0xffff_ffff_0000_0000),
                Op::Fld => load!(8, |v| v),
                Op::Fsw => store!(4),
                Op::Fsd => store!(8),
                Op::CsrFp => wr!(csr_fp(&mut h.fcsr, d.raw, d.imm, a!())),
                Op::CsrRead => {
                    let retired = h.cnt.insts + n + idx!();
                    wr!(match d.imm {
                        0xc01 => match if H::ACTIVE { hook.time_ps(hid) } else { None } {
                            Some(ps) =>
                                ((ps as u128 * kvsim_base::abi::TIMEBASE_HZ as u128) / 1_000_000_000_000u128) as u64,
                            None => crate::hart::time_ticks(retired, h.clock, h.idle_ps),
                        },
                        _ => retired,
                    });
                }
                Op::Ecall => {
                    let next = pc!().wrapping_add(d.len as u64);
                    retire!(next);
                    resume = next;
                    n += idx!() + 1;
                    break 'run Stop::Ecall;
                }
                Op::Ebreak => fault!(Trap::Ebreak),
                Op::BadCsr => fault!(Trap::Csr(d.imm as u16)),
                Op::Illegal => fault!(Trap::Illegal(d.illegal_reason())),
                // The block's end marker (no instruction): it ran to its end (or to the budget) without a control
                // transfer; go on after its last instruction.
                Op::Undecoded => {
                    n += idx!();
                    follow!(pc!());
                }
                // The computational F/D operations (`Op::is_fp_compute`), every one named so that the match is
                // exhaustive and its jump table needs no range check.
                op @ (Op::FmaddS
                | Op::FmsubS
                | Op::FnmsubS
                | Op::FnmaddS
                | Op::FaddS
                | Op::FsubS
                | Op::FmulS
                | Op::FdivS
                | Op::FsqrtS
                | Op::FsgnjS
                | Op::FsgnjnS
                | Op::FsgnjxS
                | Op::FminS
                | Op::FmaxS
                | Op::FcvtWS
                | Op::FcvtWuS
                | Op::FcvtLS
                | Op::FcvtLuS
                | Op::FmvXW
                | Op::FclassS
                | Op::FeqS
                | Op::FltS
                | Op::FleS
                | Op::FcvtSW
                | Op::FcvtSWu
                | Op::FcvtSL
                | Op::FcvtSLu
                | Op::FmvWX
                | Op::FcvtSD
                | Op::FmaddD
                | Op::FmsubD
                | Op::FnmsubD
                | Op::FnmaddD
                | Op::FaddD
                | Op::FsubD
                | Op::FmulD
                | Op::FdivD
                | Op::FsqrtD
                | Op::FsgnjD
                | Op::FsgnjnD
                | Op::FsgnjxD
                | Op::FminD
                | Op::FmaxD
                | Op::FcvtWD
                | Op::FcvtWuD
                | Op::FcvtLD
                | Op::FcvtLuD
                | Op::FmvXD
                | Op::FclassD
                | Op::FeqD
                | Op::FltD
                | Op::FleD
                | Op::FcvtDW
                | Op::FcvtDWu
                | Op::FcvtDL
                | Op::FcvtDLu
                | Op::FmvDX
                | Op::FcvtDS) => {
                    debug_assert!(op.is_fp_compute());
                    match fp_compute(op, d, &h.x, &mut h.fcsr, a!(), b!()) {
                        Ok(v) => wr!(v),
                        Err(why) => fault!(Trap::Illegal(why)),
                    }
                    h.cnt.fp_ops += 1;
                }
            }
            retire!(pc!().wrapping_add(d.len as u64));
            // Moved on here, after the instruction, so that the exits do not carry the next one's address.
            // SAFETY: this instruction was not the end marker (it leaves the loop), so the next one is in the block.
            inst = unsafe { inst.add(1) };
        }
    };
    h.pc = resume;
    h.cnt.insts += n;
    stop
}
