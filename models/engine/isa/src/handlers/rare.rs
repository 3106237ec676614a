//! Out-of-line bodies of the executor's rarer operations (LR/SC, AMOs, counters, the FP computations and FP CSRs):
//! kept apart from the handlers so that those stay short; each returns to its handler, which goes on or leaves.

use super::*;

/// sc.w/sc.d: false after recording a fault.
#[inline(never)]
pub(super) unsafe fn store_conditional<H: ExecHook>(c: *mut Ctx<H>, d: *const Decoded, x: *mut u64) -> bool {
    let hid = hart(c).id;
    let ea = a(x, d);
    let size = if (*d).op == Op::ScW { 4u8 } else { 8 };
    if ea & (size as u64 - 1) != 0 {
        fault(c, d, Trap::Misaligned { addr: ea, size, access: Access::Atomic });
        return false;
    }
    if mem(c).take_reservation(hid, ea) {
        let stored = if size == 4 {
            mem(c).store_atomic::<4>(hid, ea, b(x, d))
        } else {
            mem(c).store_atomic::<8>(hid, ea, b(x, d))
        };
        if let Err(t) = stored {
            fault(c, d, t);
            return false;
        }
        wr(x, d, 0);
    } else {
        wr(x, d, 1);
    }
    hart(c).cnt.atomics += 1;
    true
}

/// The AMOs: false after recording a fault.
#[inline(never)]
pub(super) unsafe fn atomic_rmw<H: ExecHook>(c: *mut Ctx<H>, d: *const Decoded, x: *mut u64) -> bool {
    use Op::*;
    let hid = hart(c).id;
    let ea = a(x, d);
    let src = b(x, d);
    let op = (*d).op;
    let word = matches!(op, AmoSwapW | AmoAddW | AmoXorW | AmoAndW | AmoOrW | AmoMinW | AmoMaxW | AmoMinuW | AmoMaxuW);
    let loaded = if word { mem(c).load_atomic::<4>(ea) } else { mem(c).load_atomic::<8>(ea) };
    let old = match loaded {
        Ok(v) => v,
        Err(t) => {
            fault(c, d, t);
            return false;
        }
    };
    let stored = if word {
        let (o, s) = (old as u32, src as u32);
        let new = match op {
            AmoSwapW => s,
            AmoAddW => o.wrapping_add(s),
            AmoXorW => o ^ s,
            AmoAndW => o & s,
            AmoOrW => o | s,
            AmoMinW => (o as i32).min(s as i32) as u32,
            AmoMaxW => (o as i32).max(s as i32) as u32,
            AmoMinuW => o.min(s),
            _ => o.max(s),
        };
        mem(c).store_atomic::<4>(hid, ea, new as u64)
    } else {
        let new = match op {
            AmoSwapD => src,
            AmoAddD => old.wrapping_add(src),
            AmoXorD => old ^ src,
            AmoAndD => old & src,
            AmoOrD => old | src,
            AmoMinD => (old as i64).min(src as i64) as u64,
            AmoMaxD => (old as i64).max(src as i64) as u64,
            AmoMinuD => old.min(src),
            _ => old.max(src),
        };
        mem(c).store_atomic::<8>(hid, ea, new)
    };
    if let Err(t) = stored {
        fault(c, d, t);
        return false;
    }
    wr(x, d, if word { sext32(old & 0xffff_ffff) } else { old });
    hart(c).cnt.atomics += 1;
    true
}

/// rdcycle/rdinstret (the retired count) or rdtime.
#[inline(never)]
pub(super) unsafe fn read_counter<H: ExecHook>(c: *mut Ctx<H>, d: *const Decoded) -> u64 {
    if (*d).imm == 0xc01 {
        // rdtime reads the hook's time: it has the instructions before this one first.
        super::hand_over(c, (*d).idx);
    }
    let h = hart(c);
    let retired = h.cnt.insts + (*c).n + (*d).idx as u64;
    match (*d).imm {
        0xc01 => match if H::ACTIVE { (*(*c).hook).time_ps(h.id) } else { None } {
            Some(ps) => ((ps as u128 * kvsim_base::abi::TIMEBASE_HZ as u128) / 1_000_000_000_000u128) as u64,
            None => crate::hart::time_ticks(retired, h.clock, h.idle_ps),
        },
        _ => retired,
    }
}

/// A computational F/D instruction (`Op::is_fp_compute`): false after recording its fault.
#[inline(never)]
pub(super) unsafe fn fp_compute<H: ExecHook>(c: *mut Ctx<H>, d: *const Decoded, x: *mut u64) -> bool {
    let dd = &*d;
    debug_assert!(dd.op.is_fp_compute());
    // rs3 (FMAs only) is not in the decoded record: read it from the word.
    let rs3 = *x.add((FREG + (dd.raw >> 27)) as usize);
    match crate::fpu::execute(dd.op, dd.raw, a(x, d), b(x, d), rs3, &mut hart(c).fcsr) {
        Ok(v) => {
            wr(x, d, v);
            true
        }
        Err(why) => {
            fault(c, d, Trap::Illegal(why));
            false
        }
    }
}

/// csrrw/csrrs/csrrc[i] on fflags (1), frm (2) or fcsr (3): returns the old value (for rd).
#[inline(never)]
pub(super) fn csr_fp(fcsr: &mut u32, raw: u32, csr: i32, a: u64) -> u64 {
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
