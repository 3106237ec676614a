//! The host's own IEEE 754 arithmetic for the common case of F/D computation, where it gives exactly the result
//! and the flags `fpu`'s software arithmetic would (checked against it in the tests below and by the qemu
//! comparisons).
//!
//! The case: round to nearest, ties to even (the host's mode), every operand finite (singles properly NaN-boxed),
//! the result finite and larger in magnitude than the smallest normal number, and fflags' inexact bit already set.
//! Then no flag can change: NV needs a NaN, an infinity or a negative square root among the operands or a NaN
//! result; DZ and OF give infinities; UF needs a result that is tiny after rounding with an unbounded exponent,
//! which a rounded result above 2^emin is not (rounding to the subnormal grid never lands above 2^emin); and NX is
//! set already, as it stays once any inexact result has raised it (fflags accrue). Everything else (another
//! rounding mode, zeros, subnormal or non-finite results, a program that cleared fflags) takes the software path.

use super::decode::Op;
use crate::fflags::NX;

const BOX: u64 = 0xffff_ffff_0000_0000;

/// The value for rd, or None when the case above does not hold.
#[inline]
pub fn execute(op: Op, raw: u32, a: u64, b: u64, c: u64, fcsr: u32) -> Option<u64> {
    use Op::*;
    let rm = (raw >> 12) & 7;
    if fcsr & NX == 0 || (rm != 0 && !(rm == 7 && (fcsr >> 5) & 7 == 0)) {
        return None;
    }
    match op {
        FaddD => double(a, b, 0, |x, y, _| x + y),
        FsubD => double(a, b, 0, |x, y, _| x - y),
        FmulD => double(a, b, 0, |x, y, _| x * y),
        FdivD => double(a, b, 0, |x, y, _| x / y),
        FsqrtD => double(a, 0, 0, |x, _, _| x.sqrt()),
        FmaddD => double(a, b, c, |x, y, z| x.mul_add(y, z)),
        FmsubD => double(a, b, c, |x, y, z| x.mul_add(y, -z)),
        FnmsubD => double(a, b, c, |x, y, z| (-x).mul_add(y, z)),
        FnmaddD => double(a, b, c, |x, y, z| (-x).mul_add(y, -z)),
        FaddS => single(a, b, BOX, |x, y, _| x + y),
        FsubS => single(a, b, BOX, |x, y, _| x - y),
        FmulS => single(a, b, BOX, |x, y, _| x * y),
        FdivS => single(a, b, BOX, |x, y, _| x / y),
        FsqrtS => single(a, BOX, BOX, |x, _, _| x.sqrt()),
        FmaddS => single(a, b, c, |x, y, z| x.mul_add(y, z)),
        FmsubS => single(a, b, c, |x, y, z| x.mul_add(y, -z)),
        FnmsubS => single(a, b, c, |x, y, z| (-x).mul_add(y, z)),
        FnmaddS => single(a, b, c, |x, y, z| (-x).mul_add(y, -z)),
        _ => None,
    }
}

/// Operands not used by the operation are passed as 0 (finite).
#[inline(always)]
fn double(a: u64, b: u64, c: u64, f: impl Fn(f64, f64, f64) -> f64) -> Option<u64> {
    let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
    if !(x.is_finite() && y.is_finite() && z.is_finite()) {
        return None;
    }
    let r = f(x, y, z);
    (r.is_finite() && r.abs() > f64::MIN_POSITIVE).then(|| r.to_bits())
}

/// Operands not used by the operation are passed as BOX (a boxed +0).
#[inline(always)]
fn single(a: u64, b: u64, c: u64, f: impl Fn(f32, f32, f32) -> f32) -> Option<u64> {
    if a & b & c & BOX != BOX {
        return None;
    }
    let (x, y, z) = (f32::from_bits(a as u32), f32::from_bits(b as u32), f32::from_bits(c as u32));
    if !(x.is_finite() && y.is_finite() && z.is_finite()) {
        return None;
    }
    let r = f(x, y, z);
    (r.is_finite() && r.abs() > f32::MIN_POSITIVE).then(|| BOX | r.to_bits() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fpu;

    const OPS: [Op; 18] = [
        Op::FaddD,
        Op::FsubD,
        Op::FmulD,
        Op::FdivD,
        Op::FsqrtD,
        Op::FmaddD,
        Op::FmsubD,
        Op::FnmsubD,
        Op::FnmaddD,
        Op::FaddS,
        Op::FsubS,
        Op::FmulS,
        Op::FdivS,
        Op::FsqrtS,
        Op::FmaddS,
        Op::FmsubS,
        Op::FnmsubS,
        Op::FnmaddS,
    ];

    /// Operands that reach the edges: exponents near the bottom, the top and each other, few-bit significands
    /// (exact results), ones, zeros, subnormals, infinities and NaNs, either sign; singles boxed (mostly).
    fn operand(rng: &mut u64, single: bool) -> u64 {
        let mut next = || {
            *rng ^= *rng << 13;
            *rng ^= *rng >> 7;
            *rng ^= *rng << 17;
            *rng
        };
        let r = next();
        let sign = r >> 63;
        let (frac_bits, exp_max) = if single { (23, 255u64) } else { (52, 2047u64) };
        let bias = exp_max / 2;
        let exp = match r % 8 {
            0 => r >> 8 & 3,                        // subnormal or tiny
            1 => exp_max - (r >> 8 & 3),            // huge, infinite or NaN
            2 => bias + (r >> 8 & 7) - 3,           // near one
            3 => (bias >> 1) + (r >> 8 & 3),        // small enough for products to approach the bottom
            4 => bias + (bias >> 1) + (r >> 8 & 3), // large enough for products to overflow
            _ => r >> 16 & exp_max,
        };
        let frac = match next() % 4 {
            0 => 0,
            1 => next() & ((1 << frac_bits) - 1) & !((1 << (frac_bits - 3)) - 1),
            _ => next() & ((1 << frac_bits) - 1),
        };
        let bits = sign << (frac_bits + if single { 8 } else { 11 }) | exp << frac_bits | frac;
        if single {
            if next() % 64 == 0 {
                bits // not boxed: reads as the canonical NaN
            } else {
                BOX | bits
            }
        } else {
            bits
        }
    }

    #[test]
    fn agrees_with_the_software_arithmetic() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut fast = 0;
        for i in 0..400_000 {
            let op = OPS[i % OPS.len()];
            let single = matches!(op, Op::FaddS | Op::FsubS | Op::FmulS | Op::FdivS | Op::FsqrtS) || i % OPS.len() > 13;
            let (a, b, c) = (operand(&mut rng, single), operand(&mut rng, single), operand(&mut rng, single));
            for (rm, frm) in [(0, 0), (7 << 12, 0), (7 << 12, 1), (1 << 12, 0)] {
                for flags in [NX, 0, NX | crate::fflags::OF] {
                    let fcsr = frm << 5 | flags;
                    let mut soft_fcsr = fcsr;
                    let soft = fpu::execute_soft(op, rm, a, b, c, &mut soft_fcsr).unwrap();
                    let mut host_fcsr = fcsr;
                    let host = fpu::execute(op, rm, a, b, c, &mut host_fcsr).unwrap();
                    assert_eq!(
                        (host, host_fcsr),
                        (soft, soft_fcsr),
                        "{op:?} rm {rm:#x} fcsr {fcsr:#x} {a:#x} {b:#x} {c:#x}"
                    );
                    fast += execute(op, rm, a, b, c, fcsr).is_some() as u32;
                }
            }
        }
        assert!(fast > 500_000, "the host path took only {fast} of the cases");
    }

    #[test]
    fn only_round_to_nearest_with_inexact_already_raised() {
        let (one, three) = (1f64.to_bits(), 3f64.to_bits());
        assert_eq!(execute(Op::FdivD, 0, one, three, 0, NX), Some((1.0f64 / 3.0).to_bits()));
        assert_eq!(execute(Op::FdivD, 0, one, three, 0, 0), None, "the inexact flag is to be raised");
        assert_eq!(execute(Op::FdivD, 1 << 12, one, three, 0, NX), None, "round toward zero");
        assert_eq!(execute(Op::FdivD, 7 << 12, one, three, 0, 2 << 5 | NX), None, "dynamic: frm rounds down");
        assert_eq!(execute(Op::FsubD, 0, one, one, 0, NX), None, "a zero result");
        assert_eq!(execute(Op::FdivD, 0, one, 0, 0, NX), None, "division by zero");
    }
}
