//! What the executor tells others: the timing model's tap (`ExecHook`), why a run stopped (`Stop`), hart 0's
//! lockstep trace (`Tracer`), and an operation's class and access size as a timing model sees them. `exec`
//! re-exports them.

use std::io::Write;

use kvsim_timing::inst::{InstClass, InstInfo, PrefetchKind};

use crate::decode::{Decoded, Op, FREG};
use crate::hart::REGISTERS;
use crate::trap::Trap;

/// What a timing model sees: called after every executed instruction when `ACTIVE`.
/// The other methods have do-nothing defaults; a timing model overrides them (see the engine's driver).
pub trait ExecHook {
    const ACTIVE: bool;
    fn on_inst(&mut self, hart: usize, info: &InstInfo);
    /// FS mode: `on_inst` with the guest's memory, whose page tables a timing model translates over (its TLBs
    /// and walks, `kvsim_timing::tlb_guest`); without one, `on_inst`.
    #[inline(always)]
    fn on_inst_fs(&mut self, hart: usize, info: &InstInfo, _tables: &mut crate::memory::Memory) {
        self.on_inst(hart, info);
    }
    /// FS mode: the guest flushed `hart`'s translations (sfence.vma, a remote fence).
    fn flush_translations(&mut self, _hart: usize) {}
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

/// No deadline (`exec::run_until`).
pub const NO_DEADLINE: u64 = u64::MAX;

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
pub const fn op_class(op: Op) -> InstClass {
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
pub const fn mem_size(op: Op) -> u8 {
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

/// The part of an instruction's `InstInfo` that its decoded form at `pc` decides: its PC, length, class, registers
/// and access size. Computed once per decoded instruction (`Block::timing`); the executor writes the rest (the
/// address, the outcome, the next PC, the non-temporal hint) as each instance retires.
pub(crate) fn static_info(d: &Decoded, pc: u64) -> InstInfo {
    let (class, mem_size) = (op_class(d.op), mem_size(d.op));
    InstInfo {
        pc,
        len: d.len,
        class,
        dst: d.rd,
        src1: d.rs1,
        src2: d.rs2,
        src3: if class == InstClass::FpFma { (FREG + (d.raw >> 27)) as u8 } else { 0 },
        mem_size,
        prefetch_kind: match d.op {
            Op::PrefetchW => PrefetchKind::Write,
            Op::PrefetchI => PrefetchKind::Instruction,
            _ => PrefetchKind::Read,
        },
        ..InstInfo::default()
    }
}
