//! An instruction as a timing model sees it: its operation's resource class and access size, and the part of its
//! `InstInfo` its decoded form decides, built once per decoded instruction (`Block::timing`). Apart from the hook
//! (`hook.rs`) so the decoded blocks can use it without reaching the hook, which names the guest memory.

use kvsim_timing::inst::{InstClass, InstInfo, PrefetchKind};

use crate::decode::{Decoded, Op, FREG};

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
