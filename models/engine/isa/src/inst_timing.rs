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
        tso_implied: d.op == Op::Fence && tso_implied(d.raw),
        ..InstInfo::default()
    }
}

/// Does a TSO core keep the orderings of the FENCE `raw` by itself? Its predecessor set is bits 27:24 and its
/// successor set bits 23:20, each I, O, R, W from the top (the RISC-V unprivileged ISA, "Memory Ordering
/// Instructions"). TSO keeps reads before later reads and writes and writes before later writes (Intel's SDM,
/// vol. 3A 8.2.2: reads are not reordered with other reads, writes are not reordered with other writes or with
/// older reads, writes to uncached memory included), so the one ordering it lacks is a write (W, or O: a device
/// write) before a later read (R, or I: a device read). FENCE.TSO (fm 1000, rw,rw) is TSO by definition; fm 1000
/// with any other sets is reserved, and the ISA has a base implementation treat a reserved fence as a normal one
/// (fm 0000) of its sets, as here.
///
/// PAUSE (Zihintpause: `fence w,0`, fm 0, rs1 = rd = 0) orders nothing, so by the rule above TSO would make it a
/// free ALU operation; but it is a spin-wait hint meant to take time (x86's PAUSE waits tens of cycles or more), so
/// it stays what it is without `tso_fences`: a fence that waits for older commits and the store buffer.
pub const fn tso_implied(raw: u32) -> bool {
    const I: u32 = 8;
    const O: u32 = 4;
    const R: u32 = 2;
    const W: u32 = 1;
    const PAUSE: u32 = (W << 24) | 0x0f;
    let (fm, pred, succ) = (raw >> 28, (raw >> 24) & 0xf, (raw >> 20) & 0xf);
    if raw == PAUSE {
        return false;
    }
    (fm == 0b1000 && pred == R | W && succ == R | W) || pred & (W | O) == 0 || succ & (R | I) == 0
}

#[cfg(test)]
mod tests {
    use super::tso_implied;

    /// `fence pred, succ` (fm 0, rs1 = rd = 0).
    const fn fence(pred: u32, succ: u32) -> u32 {
        (pred << 24) | (succ << 20) | 0x0f
    }

    #[test]
    fn a_tso_core_keeps_every_fence_ordering_but_writes_before_reads() {
        let (i, o, r, w) = (8, 4, 2, 1);
        // Implied by TSO: r,r (a descriptor's status before its fields); w,o (stores before a doorbell); r,rw
        // (acquire); rw,w (release); w,w.
        for (pred, succ) in [(r, r), (w, o), (r, r | w), (r | w, w), (w, w), (i | r, o | w)] {
            assert!(tso_implied(fence(pred, succ)), "fence {pred:#x},{succ:#x}");
        }
        // Not implied: a write (or device write) before a read (or device read).
        for (pred, succ) in [(r | w, r | w), (w, r), (o, i), (i | o | r | w, i | o | r | w), (w | o, r)] {
            assert!(!tso_implied(fence(pred, succ)), "fence {pred:#x},{succ:#x}");
        }
        // FENCE.TSO: fm 1000 with rw,rw. Fm 1000 with other sets is reserved and counts as the normal fence of its
        // sets: rw,r and w,rw order a write before a read, so TSO does not imply them; r,rw it does.
        assert!(tso_implied((0b1000 << 28) | fence(r | w, r | w)));
        for (pred, succ) in [(r | w, r), (w, r | w), (i | o | r | w, i | o | r | w)] {
            assert!(!tso_implied((0b1000 << 28) | fence(pred, succ)), "fm 1000 {pred:#x},{succ:#x}");
        }
        assert!(tso_implied((0b1000 << 28) | fence(r, r | w)));
        // PAUSE (`fence w,0`, 0x0100000f) keeps its wait; another fence with an empty successor set orders nothing.
        assert!(!tso_implied(0x0100_000f) && tso_implied(fence(w | r, 0)));
        // The word gcc gives `fence r,r` and `fence w,o` (0x0220000f, 0x0140000f) and `fence rw,rw` (0x0330000f).
        assert!(tso_implied(0x0220_000f) && tso_implied(0x0140_000f) && !tso_implied(0x0330_000f));
    }
}
