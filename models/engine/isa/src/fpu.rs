//! The F and D extensions' arithmetic, with RISC-V's rules on top of IEEE 754 (RISC-V unprivileged ISA,
//! chapters "F" and "D"):
//! - every NaN an operation produces is the canonical NaN (0x7fc00000, 0x7ff8000000000000); payloads never
//!   propagate;
//! - singles live NaN-boxed in the 64-bit registers (upper 32 bits all ones); a single operand that is not
//!   properly boxed reads as the canonical NaN;
//! - fmin/fmax return the other operand when one is NaN, order -0 below +0, and flag NV only for signalling NaNs;
//! - conversions to integers saturate (NaN gives the largest value) and flag NV instead of NX when out of range;
//! - FMA flags NV for inf * 0 even when the addend is a quiet NaN;
//! - underflow is detected after rounding and raised only together with inexact.
//!
//! Rounding and the flags of add, sub, mul, div, FMA and the conversions come from `rustc_apfloat`; square roots are
//! computed exactly here with an integer square root. `fpu_host` takes the common case (round to nearest, finite
//! normal results, inexact already raised) to the host's own arithmetic, which gives the same bits and flags.

use rustc_apfloat::ieee::{Double, Single};
use rustc_apfloat::{Float, FloatConvert, Round, Status, StatusAnd};
use std::cmp::Ordering;

use super::decode::Op;

pub use crate::fflags::{DZ, NV, NX, OF, UF};

const BOX: u64 = 0xffff_ffff_0000_0000;

/// Why a floating-point instruction could not execute (an illegal-instruction fault).
pub const BAD_DYNAMIC_RM: &str = "dynamic rounding mode while frm holds a reserved value (5, 6 or 7)";

/// One of the two formats, seen through the 64-bit register that holds it.
trait Format: Float + FloatConvert<Single> + FloatConvert<Double> {
    const CANONICAL_NAN: u64;
    const EXP_BITS: u32;
    const FRAC_BITS: u32;
    /// The operand's bits (a single is unboxed: improperly boxed reads as the canonical NaN).
    fn bits_of(reg: u64) -> u64;
    /// The register value holding these bits (a single is boxed).
    fn to_reg(bits: u64) -> u64;
    fn get(reg: u64) -> Self {
        Self::from_bits(Self::bits_of(reg) as u128)
    }
    /// An arithmetic result: NaNs become the canonical NaN.
    fn put(self) -> u64 {
        if self.is_nan() {
            Self::to_reg(Self::CANONICAL_NAN)
        } else {
            Self::to_reg(self.to_bits() as u64)
        }
    }
}

impl Format for Single {
    const CANONICAL_NAN: u64 = 0x7fc0_0000;
    const EXP_BITS: u32 = 8;
    const FRAC_BITS: u32 = 23;
    #[inline]
    fn bits_of(reg: u64) -> u64 {
        if reg & BOX == BOX {
            reg & 0xffff_ffff
        } else {
            Self::CANONICAL_NAN
        }
    }
    #[inline]
    fn to_reg(bits: u64) -> u64 {
        BOX | bits
    }
}

impl Format for Double {
    const CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;
    const EXP_BITS: u32 = 11;
    const FRAC_BITS: u32 = 52;
    #[inline]
    fn bits_of(reg: u64) -> u64 {
        reg
    }
    #[inline]
    fn to_reg(bits: u64) -> u64 {
        bits
    }
}

/// IEEE status to fflags. Underflow counts only when the result is also inexact (IEEE 754 default handling).
fn flags(s: Status) -> u32 {
    let mut f = 0;
    if s.contains(Status::INVALID_OP) {
        f |= NV;
    }
    if s.contains(Status::DIV_BY_ZERO) {
        f |= DZ;
    }
    if s.contains(Status::OVERFLOW) {
        f |= OF;
    }
    if s.contains(Status::INEXACT) {
        f |= NX;
        if s.contains(Status::UNDERFLOW) {
            f |= UF;
        }
    }
    f
}

/// How far `redo` scales a result up to see it rounded as if the exponent range were unbounded below.
const TINY_SCALE: i32 = 128;

/// The flags of a rounded result, with two corrections to apfloat. `redo(rm, k)` recomputes the operation with its
/// exact result scaled by 2^k.
/// - Overflow: apfloat leaves out OF when a mode that rounds toward zero turns an overflow into the largest finite
///   number; IEEE 754 (and RISC-V) raise it when the result rounded with an unbounded exponent exceeds that number.
///   The operation rounded to nearest decides it (exact except for results in [MAX + ulp/2, 2^(emax+1)), a sliver
///   half an ulp wide that we accept).
/// - Underflow: RISC-V detects tininess after rounding to the format's precision with an unbounded exponent;
///   apfloat rounds at the subnormal precision, so a result that becomes the smallest normal number is never tiny
///   there. For such results the operation is redone scaled into the normal range, where the unbounded rounding
///   shows whether it stayed below 2^emin.
fn rounded<F: Format>(r: StatusAnd<F>, rm: Round, redo: impl Fn(Round, i32) -> StatusAnd<F>) -> (u64, u32) {
    let mut f = flags(r.status);
    if f & (NX | OF) == NX
        && r.value.is_largest()
        && !matches!(rm, Round::NearestTiesToEven | Round::NearestTiesToAway)
        && redo(Round::NearestTiesToEven, 0).value.is_infinite()
    {
        f |= OF;
    }
    if f & (NX | UF) == NX && r.value.is_smallest_normalized() {
        let scaled = redo(rm, TINY_SCALE).value;
        if scaled.abs() < F::smallest_normalized().scalbn(TINY_SCALE) {
            f |= UF;
        }
    }
    (r.value.put(), f)
}

/// `x` and `y` with the smaller in magnitude scaled by 2^k: their product is scaled by 2^k, exactly, and (for
/// products near the bottom of the range, the only ones redone) without overflow.
fn scale_smaller<F: Format>(x: F, y: F, k: i32) -> (F, F) {
    if x.abs() < y.abs() {
        (x.scalbn(k), y)
    } else {
        (x, y.scalbn(k))
    }
}

/// The rounding mode of an instruction: its rm field, or frm when rm is 7 (dynamic).
fn rounding(raw: u32, frm: u32) -> Result<Round, &'static str> {
    let rm = (raw >> 12) & 7;
    match if rm == 7 { frm } else { rm } {
        0 => Ok(Round::NearestTiesToEven),
        1 => Ok(Round::TowardZero),
        2 => Ok(Round::TowardNegative),
        3 => Ok(Round::TowardPositive),
        4 => Ok(Round::NearestTiesToAway),
        _ => Err(BAD_DYNAMIC_RM),
    }
}

/// If any operand is NaN: the canonical NaN and NV when one of them signals.
fn nan_operands<F: Format>(ops: &[F]) -> Option<(u64, u32)> {
    if ops.iter().any(|x| x.is_nan()) {
        let nv = if ops.iter().any(|x| x.is_signaling()) { NV } else { 0 };
        Some((F::to_reg(F::CANONICAL_NAN), nv))
    } else {
        None
    }
}

#[derive(Clone, Copy)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

fn arith<F: Format>(kind: Arith, a: u64, b: u64, rm: Round) -> (u64, u32) {
    let (x, y) = (F::get(a), F::get(b));
    if let Some(r) = nan_operands(&[x, y]) {
        return r;
    }
    let op = |rm, k| match kind {
        Arith::Add => x.scalbn(k).add_r(y.scalbn(k), rm),
        Arith::Sub => x.scalbn(k).sub_r(y.scalbn(k), rm),
        Arith::Mul => {
            let (x, y) = scale_smaller(x, y, k);
            x.mul_r(y, rm)
        }
        Arith::Div => x.scalbn(k).div_r(y, rm),
    };
    rounded(op(rm, 0), rm, op)
}

/// rs1 * rs2 + rs3 with the signs the four FMA opcodes ask for, rounded once.
fn fma<F: Format>(negate_product: bool, negate_addend: bool, a: u64, b: u64, c: u64, rm: Round) -> (u64, u32) {
    let (x, y, z) = (F::get(a), F::get(b), F::get(c));
    let inf_times_zero = (x.is_infinite() && y.is_zero()) || (x.is_zero() && y.is_infinite());
    if let Some((v, nv)) = nan_operands(&[x, y, z]) {
        return (v, nv | if inf_times_zero { NV } else { 0 });
    }
    let x = if negate_product { -x } else { x };
    let z = if negate_addend { -z } else { z };
    let op = |rm, k| {
        let (x, y) = scale_smaller(x, y, k);
        x.mul_add_r(y, z.scalbn(k), rm)
    };
    rounded(op(rm, 0), rm, op)
}

/// Square root, exact: sqrt(m * 2^e) from an integer square root of m shifted to keep two guard bits and a sticky
/// bit, then one rounding (apfloat's integer conversion) in the instruction's mode.
fn sqrt<F: Format>(a: u64, rm: Round) -> (u64, u32) {
    let x = F::get(a);
    if let Some(r) = nan_operands(&[x]) {
        return r;
    }
    if x.is_zero() || x.is_pos_infinity() {
        return (x.put(), 0);
    }
    if x.is_negative() {
        return (F::to_reg(F::CANONICAL_NAN), NV);
    }
    let bits = F::bits_of(a);
    let frac_mask = (1u64 << F::FRAC_BITS) - 1;
    let biased = (bits >> F::FRAC_BITS) & ((1 << F::EXP_BITS) - 1);
    let bias = (1i32 << (F::EXP_BITS - 1)) - 1;
    // x = m * 2^e with integer m.
    let (mut m, mut e) = if biased == 0 {
        ((bits & frac_mask) as u128, 1 - bias - F::FRAC_BITS as i32)
    } else {
        (((bits & frac_mask) | (1 << F::FRAC_BITS)) as u128, biased as i32 - bias - F::FRAC_BITS as i32)
    };
    if e & 1 != 0 {
        m <<= 1;
        e -= 1;
    }
    // Shift m left by an even amount so that it has 120 or 121 significant bits: its root then has about 60, far
    // more than the 24 or 53 kept, so one sticky bit below them decides every rounding mode correctly.
    let shift = (120 - (128 - m.leading_zeros() as i32)) & !1;
    let wide = m << shift;
    let root = wide.isqrt();
    let sticky = (root * root != wide) as u128;
    let jammed = (root << 1) | sticky;
    let r = F::from_u128_r(jammed, rm);
    // Exact scaling: the result is a normal number of either format.
    let scaled = r.value.scalbn((e - shift) / 2 - 1);
    (scaled.put(), flags(r.status))
}

fn compare<F: Format>(a: u64, b: u64, signalling: bool, want: fn(Ordering) -> bool) -> (u64, u32) {
    let (x, y) = (F::get(a), F::get(b));
    if x.is_nan() || y.is_nan() {
        let nv = signalling || x.is_signaling() || y.is_signaling();
        return (0, if nv { NV } else { 0 });
    }
    (want(x.partial_cmp(&y).unwrap_or(Ordering::Equal)) as u64, 0)
}

fn min_max<F: Format>(a: u64, b: u64, max: bool) -> (u64, u32) {
    let (x, y) = (F::get(a), F::get(b));
    let nv = if x.is_signaling() || y.is_signaling() { NV } else { 0 };
    let pick_x = match (x.is_nan(), y.is_nan()) {
        (true, true) => return (F::to_reg(F::CANONICAL_NAN), nv),
        (true, false) => false,
        (false, true) => true,
        (false, false) => {
            if x.is_zero() && y.is_zero() {
                // -0 < +0: min takes the negative one, max the positive one.
                x.is_negative() != max
            } else {
                let less = x < y;
                less != max
            }
        }
    };
    (F::to_reg(F::bits_of(if pick_x { a } else { b })), nv)
}

/// fcvt to a 32- or 64-bit integer: NaN and +inf saturate high, -inf low, out-of-range values saturate with NV.
/// 32-bit results are sign-extended into the register (also the unsigned ones).
fn to_int<F: Format>(a: u64, rm: Round, signed: bool, width: u32) -> (u64, u32) {
    let x = F::get(a);
    let (min, max): (i128, i128) =
        if signed { (-(1i128 << (width - 1)), (1i128 << (width - 1)) - 1) } else { (0, (1i128 << width) - 1) };
    let wrap = |v: i128| -> u64 {
        if width == 32 {
            v as u32 as i32 as i64 as u64
        } else {
            v as u64
        }
    };
    if x.is_nan() {
        return (wrap(max), NV);
    }
    if x.is_infinite() {
        return (wrap(if x.is_negative() { min } else { max }), NV);
    }
    let r = x.round_to_integral(rm).value;
    let inexact = !r.bitwise_eq(x);
    // |r| < 2^100 fits an i128 exactly; anything larger is out of range of every target.
    if !r.is_zero() && r.ilogb() >= 100 {
        return (wrap(if r.is_negative() { min } else { max }), NV);
    }
    let v = r.to_i128_r(128, Round::TowardZero, &mut true).value;
    if v < min {
        (wrap(min), NV)
    } else if v > max {
        (wrap(max), NV)
    } else {
        (wrap(v), if inexact { NX } else { 0 })
    }
}

fn from_int<F: Format>(v: i128, rm: Round) -> (u64, u32) {
    let r = F::from_i128_r(v, rm);
    (r.value.put(), flags(r.status))
}

fn convert<F, T>(a: u64, rm: Round) -> (u64, u32)
where
    F: Format + FloatConvert<T>,
    T: Format,
{
    let x = F::get(a);
    if x.is_nan() {
        return (T::to_reg(T::CANONICAL_NAN), if x.is_signaling() { NV } else { 0 });
    }
    let op = |rm, k| -> StatusAnd<T> { FloatConvert::<T>::convert_r(x.scalbn(k), rm, &mut false) };
    rounded(op(rm, 0), rm, op)
}

/// fclass: one bit of ten (-inf, -normal, -subnormal, -0, +0, +subnormal, +normal, +inf, sNaN, qNaN).
fn classify<F: Format>(a: u64) -> u64 {
    let bits = F::bits_of(a);
    let negative = bits >> (F::EXP_BITS + F::FRAC_BITS) & 1 == 1;
    let exp = (bits >> F::FRAC_BITS) & ((1 << F::EXP_BITS) - 1);
    let frac = bits & ((1 << F::FRAC_BITS) - 1);
    let exp_max = (1 << F::EXP_BITS) - 1;
    let bit = if exp == exp_max {
        if frac == 0 {
            if negative {
                0
            } else {
                7
            }
        } else if frac >> (F::FRAC_BITS - 1) == 1 {
            9
        } else {
            8
        }
    } else {
        let (neg, pos) = if exp == 0 && frac == 0 {
            (3, 4)
        } else if exp == 0 {
            (2, 5)
        } else {
            (1, 6)
        };
        if negative {
            neg
        } else {
            pos
        }
    };
    1 << bit
}

/// Sign injection on the bits (no NaN handling, no flags; singles are unboxed first).
fn sign_inject<F: Format>(a: u64, b: u64, how: u8) -> u64 {
    let sign = 1u64 << (F::EXP_BITS + F::FRAC_BITS);
    let (x, y) = (F::bits_of(a), F::bits_of(b));
    let s = match how {
        0 => y & sign,
        1 => !y & sign,
        _ => (x ^ y) & sign,
    };
    F::to_reg((x & !sign) | s)
}

#[inline]
fn sext32(v: u64) -> u64 {
    v as u32 as i32 as i64 as u64
}

/// Execute the computational F/D instruction `op` (its word `raw`) on operand values `a`, `b`, `c` (rs1, rs2,
/// rs3 registers: integer or FP as the instruction says). Returns the value for rd and accrues the exception flags
/// into `fcsr`. Errors: a dynamic rounding mode while frm is reserved (an illegal instruction, as on hardware).
#[inline]
pub fn execute(op: Op, raw: u32, a: u64, b: u64, c: u64, fcsr: &mut u32) -> Result<u64, &'static str> {
    match super::fpu_host::execute(op, raw, a, b, c, *fcsr) {
        Some(v) => Ok(v),
        None => execute_soft(op, raw, a, b, c, fcsr),
    }
}

/// `execute` in software (rustc_apfloat and the rules above) for every case: what the host path must agree with.
pub fn execute_soft(op: Op, raw: u32, a: u64, b: u64, c: u64, fcsr: &mut u32) -> Result<u64, &'static str> {
    use Op::*;
    type S = Single;
    type D = Double;
    let frm = (*fcsr >> 5) & 7;
    let rm = || rounding(raw, frm);
    let (value, fl) = match op {
        FaddS => arith::<S>(Arith::Add, a, b, rm()?),
        FsubS => arith::<S>(Arith::Sub, a, b, rm()?),
        FmulS => arith::<S>(Arith::Mul, a, b, rm()?),
        FdivS => arith::<S>(Arith::Div, a, b, rm()?),
        FaddD => arith::<D>(Arith::Add, a, b, rm()?),
        FsubD => arith::<D>(Arith::Sub, a, b, rm()?),
        FmulD => arith::<D>(Arith::Mul, a, b, rm()?),
        FdivD => arith::<D>(Arith::Div, a, b, rm()?),
        FmaddS => fma::<S>(false, false, a, b, c, rm()?),
        FmsubS => fma::<S>(false, true, a, b, c, rm()?),
        FnmsubS => fma::<S>(true, false, a, b, c, rm()?),
        FnmaddS => fma::<S>(true, true, a, b, c, rm()?),
        FmaddD => fma::<D>(false, false, a, b, c, rm()?),
        FmsubD => fma::<D>(false, true, a, b, c, rm()?),
        FnmsubD => fma::<D>(true, false, a, b, c, rm()?),
        FnmaddD => fma::<D>(true, true, a, b, c, rm()?),
        FsqrtS => sqrt::<S>(a, rm()?),
        FsqrtD => sqrt::<D>(a, rm()?),
        FsgnjS => (sign_inject::<S>(a, b, 0), 0),
        FsgnjnS => (sign_inject::<S>(a, b, 1), 0),
        FsgnjxS => (sign_inject::<S>(a, b, 2), 0),
        FsgnjD => (sign_inject::<D>(a, b, 0), 0),
        FsgnjnD => (sign_inject::<D>(a, b, 1), 0),
        FsgnjxD => (sign_inject::<D>(a, b, 2), 0),
        FminS => min_max::<S>(a, b, false),
        FmaxS => min_max::<S>(a, b, true),
        FminD => min_max::<D>(a, b, false),
        FmaxD => min_max::<D>(a, b, true),
        FeqS => compare::<S>(a, b, false, |o| o == Ordering::Equal),
        FltS => compare::<S>(a, b, true, |o| o == Ordering::Less),
        FleS => compare::<S>(a, b, true, |o| o != Ordering::Greater),
        FeqD => compare::<D>(a, b, false, |o| o == Ordering::Equal),
        FltD => compare::<D>(a, b, true, |o| o == Ordering::Less),
        FleD => compare::<D>(a, b, true, |o| o != Ordering::Greater),
        FcvtWS => to_int::<S>(a, rm()?, true, 32),
        FcvtWuS => to_int::<S>(a, rm()?, false, 32),
        FcvtLS => to_int::<S>(a, rm()?, true, 64),
        FcvtLuS => to_int::<S>(a, rm()?, false, 64),
        FcvtWD => to_int::<D>(a, rm()?, true, 32),
        FcvtWuD => to_int::<D>(a, rm()?, false, 32),
        FcvtLD => to_int::<D>(a, rm()?, true, 64),
        FcvtLuD => to_int::<D>(a, rm()?, false, 64),
        FcvtSW => from_int::<S>(a as i32 as i128, rm()?),
        FcvtSWu => from_int::<S>(a as u32 as i128, rm()?),
        FcvtSL => from_int::<S>(a as i64 as i128, rm()?),
        FcvtSLu => from_int::<S>(a as i128, rm()?),
        FcvtDW => from_int::<D>(a as i32 as i128, rm()?),
        FcvtDWu => from_int::<D>(a as u32 as i128, rm()?),
        FcvtDL => from_int::<D>(a as i64 as i128, rm()?),
        FcvtDLu => from_int::<D>(a as i128, rm()?),
        FcvtSD => convert::<D, S>(a, rm()?),
        FcvtDS => convert::<S, D>(a, rm()?),
        FmvXW => (sext32(a), 0),
        FmvWX => (BOX | (a & 0xffff_ffff), 0),
        FmvXD | FmvDX => (a, 0),
        FclassS => (classify::<S>(a), 0),
        FclassD => (classify::<D>(a), 0),
        _ => unreachable!("fpu::execute called with a non-FP operation {op:?}"),
    };
    *fcsr |= fl;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RNE: u32 = 0 << 12;
    const RTZ: u32 = 1 << 12;
    const RDN: u32 = 2 << 12;
    const RUP: u32 = 3 << 12;
    const RMM: u32 = 4 << 12;
    const DYN: u32 = 7 << 12;

    fn s(v: f32) -> u64 {
        BOX | v.to_bits() as u64
    }
    fn d(v: f64) -> u64 {
        v.to_bits()
    }
    fn run(op: Op, raw: u32, a: u64, b: u64, c: u64) -> (u64, u32) {
        let mut fcsr = 0;
        let v = execute(op, raw, a, b, c, &mut fcsr).unwrap();
        (v, fcsr)
    }

    #[test]
    fn rounding_modes_of_an_inexact_sum() {
        // 1 + 2^-24 in single lies exactly halfway between 1 and 1 + 2^-23.
        let (one, half_ulp) = (s(1.0), s(f32::EPSILON / 2.0));
        assert_eq!(run(Op::FaddS, RNE, one, half_ulp, 0), (s(1.0), NX));
        assert_eq!(run(Op::FaddS, RMM, one, half_ulp, 0), (s(1.0 + f32::EPSILON), NX));
        assert_eq!(run(Op::FaddS, RUP, one, half_ulp, 0), (s(1.0 + f32::EPSILON), NX));
        assert_eq!(run(Op::FaddS, RDN, one, half_ulp, 0), (s(1.0), NX));
        assert_eq!(run(Op::FaddS, RTZ, s(-1.0), s(-f32::EPSILON / 2.0), 0), (s(-1.0), NX));
        assert_eq!(run(Op::FaddS, RDN, s(-1.0), s(-f32::EPSILON / 2.0), 0), (s(-1.0 - f32::EPSILON), NX));
        // Exact: no flags.
        assert_eq!(run(Op::FaddD, RNE, d(1.5), d(2.25), 0), (d(3.75), 0));
        // x - x is +0, except -0 when rounding down.
        assert_eq!(run(Op::FsubD, RNE, d(3.0), d(3.0), 0), (d(0.0), 0));
        assert_eq!(run(Op::FsubD, RDN, d(3.0), d(3.0), 0), (d(-0.0), 0));
    }

    #[test]
    fn dynamic_rounding_reads_frm_and_rejects_reserved_values() {
        let mut fcsr = 3 << 5; // frm = RUP
        let v = execute(Op::FdivD, DYN, d(1.0), d(3.0), 0, &mut fcsr).unwrap();
        assert_eq!(v, d(1.0 / 3.0) + 1, "rounded up: one ulp above the nearest");
        assert_eq!(fcsr, (3 << 5) | NX);
        let mut fcsr = 5 << 5;
        assert_eq!(execute(Op::FaddD, DYN, d(1.0), d(1.0), 0, &mut fcsr), Err(BAD_DYNAMIC_RM));
        // Instructions that do not round ignore frm.
        assert_eq!(execute(Op::FsgnjD, 0, d(1.0), d(-2.0), 0, &mut fcsr), Ok(d(-1.0)));
    }

    #[test]
    fn nan_boxing_and_canonical_nans() {
        // An improperly boxed single reads as the canonical NaN.
        assert_eq!(run(Op::FaddS, RNE, 1.0f32.to_bits() as u64, s(1.0), 0), (s(f32::from_bits(0x7fc0_0000)), 0));
        // NaN payloads do not propagate; a signalling NaN flags NV.
        let snan = BOX | 0x7f80_0001;
        assert_eq!(run(Op::FmulS, RNE, snan, s(2.0), 0), (BOX | 0x7fc0_0000, NV));
        assert_eq!(run(Op::FaddD, RNE, 0x7ff8_dead_0000_0000, d(1.0), 0), (0x7ff8_0000_0000_0000, 0));
        // inf - inf and 0/0 are invalid; x/0 divides by zero.
        assert_eq!(run(Op::FsubD, RNE, d(f64::INFINITY), d(f64::INFINITY), 0), (0x7ff8_0000_0000_0000, NV));
        assert_eq!(run(Op::FdivD, RNE, d(0.0), d(0.0), 0), (0x7ff8_0000_0000_0000, NV));
        assert_eq!(run(Op::FdivD, RNE, d(-1.0), d(0.0), 0), (d(f64::NEG_INFINITY), DZ));
        // fmv.x.w does not unbox; fsgnj does.
        assert_eq!(run(Op::FmvXW, 0, 0x1234_5678_8000_0000, 0, 0), (0xffff_ffff_8000_0000, 0));
        assert_eq!(run(Op::FsgnjS, 0, 0x0000_0000_3f80_0000, s(1.0), 0), (BOX | 0x7fc0_0000, 0));
        assert_eq!(run(Op::FmvWX, 0, 0x1234_5678_3f80_0000, 0, 0), (s(1.0), 0));
    }

    #[test]
    fn overflow_underflow_and_subnormals() {
        assert_eq!(run(Op::FmulD, RNE, d(f64::MAX), d(2.0), 0), (d(f64::INFINITY), OF | NX));
        assert_eq!(run(Op::FmulD, RTZ, d(f64::MAX), d(2.0), 0), (d(f64::MAX), OF | NX));
        assert_eq!(run(Op::FmulD, RUP, d(-f64::MAX), d(2.0), 0), (d(-f64::MAX), OF | NX));
        assert_eq!(run(Op::FmulD, RDN, d(-f64::MAX), d(2.0), 0), (d(f64::NEG_INFINITY), OF | NX));
        // Just below the largest number: inexact, no overflow.
        assert_eq!(run(Op::FaddD, RTZ, d(f64::MAX), d(1.0), 0), (d(f64::MAX), NX));
        let tiny = f64::from_bits(1); // smallest subnormal
        assert_eq!(run(Op::FmulD, RNE, d(tiny), d(0.5), 0), (d(0.0), UF | NX));
        assert_eq!(run(Op::FmulD, RUP, d(tiny), d(0.5), 0), (d(tiny), UF | NX));
        // Tininess after rounding with an unbounded exponent: (1 - 2^-53) * 2^-1022 is exact in 53 bits, below
        // 2^-1022, so tiny, though rounding it to the subnormal grid gives 2^-1022 (as qemu does: UF | NX).
        let just_below = d(1.0 - f64::EPSILON / 2.0);
        let min_normal = d(f64::MIN_POSITIVE);
        assert_eq!(run(Op::FmulD, RNE, just_below, min_normal, 0), (min_normal, UF | NX));
        // (1 - 2^-52)(1 + 2^-52) * 2^-1022 rounds to 2^-1022 in 53 bits: not tiny, only inexact.
        let above = d(f64::MIN_POSITIVE * (1.0 + f64::EPSILON));
        assert_eq!(run(Op::FmulD, RNE, d(1.0 - f64::EPSILON), above, 0), (min_normal, NX));
        // An exact subnormal result raises nothing.
        assert_eq!(run(Op::FmulD, RNE, d(tiny * 4.0), d(0.5), 0), (d(tiny * 2.0), 0));
        assert_eq!(run(Op::FcvtSD, RNE, d(1e300), 0, 0), (s(f32::INFINITY), OF | NX));
        assert_eq!(run(Op::FcvtSD, RNE, d(0.1), 0, 0), (s(0.1f32), NX));
    }

    #[test]
    fn fused_multiply_add_rounds_once_and_flags_inf_times_zero() {
        // (1 + 2^-52)(1 - 2^-52) - 1 = -2^-104 exactly, which a separate multiply would lose.
        let (x, y) = (d(1.0 + f64::EPSILON), d(1.0 - f64::EPSILON));
        assert_eq!(run(Op::FmsubD, RNE, x, y, d(1.0)), (d(-(2f64.powi(-104))), 0));
        assert_eq!(run(Op::FnmaddD, RNE, d(2.0), d(3.0), d(1.0)), (d(-7.0), 0));
        assert_eq!(run(Op::FnmsubD, RNE, d(2.0), d(3.0), d(1.0)), (d(-5.0), 0));
        let qnan = 0x7ff8_0000_0000_0000;
        assert_eq!(run(Op::FmaddD, RNE, d(f64::INFINITY), d(0.0), qnan), (qnan, NV));
        assert_eq!(run(Op::FmaddD, RNE, d(1.0), d(0.0), qnan), (qnan, 0));
    }

    #[test]
    fn square_roots_are_exact_in_every_mode() {
        assert_eq!(run(Op::FsqrtD, RNE, d(4.0), 0, 0), (d(2.0), 0));
        assert_eq!(run(Op::FsqrtD, RNE, d(2.0), 0, 0), (d(2f64.sqrt()), NX));
        let up = run(Op::FsqrtD, RUP, d(2.0), 0, 0).0;
        let down = run(Op::FsqrtD, RDN, d(2.0), 0, 0).0;
        assert_eq!(up - down, 1, "directed roundings bracket the root");
        assert_eq!(run(Op::FsqrtS, RNE, s(2.0), 0, 0), (s(2f32.sqrt()), NX));
        assert_eq!(run(Op::FsqrtD, RNE, d(f64::from_bits(1)), 0, 0), (d(2f64.powi(-537)), 0), "exact");
        let tiny = f64::from_bits(2);
        assert_eq!(run(Op::FsqrtD, RNE, d(tiny), 0, 0), (d(tiny.sqrt()), NX));
        assert_eq!(run(Op::FsqrtD, RNE, d(-0.0), 0, 0), (d(-0.0), 0));
        assert_eq!(run(Op::FsqrtD, RNE, d(-1.0), 0, 0), (0x7ff8_0000_0000_0000, NV));
        for v in [0.5f64, 3.0, 1e-310, 7.0e200, 123456.789] {
            assert_eq!(run(Op::FsqrtD, RNE, d(v), 0, 0).0, d(v.sqrt()), "sqrt({v})");
        }
    }

    #[test]
    fn conversions_saturate_and_flag() {
        assert_eq!(run(Op::FcvtWD, RTZ, d(-2.7), 0, 0), ((-2i64) as u64, NX));
        assert_eq!(run(Op::FcvtWD, RNE, d(2.5), 0, 0), (2, NX));
        assert_eq!(run(Op::FcvtWD, RMM, d(2.5), 0, 0), (3, NX));
        assert_eq!(run(Op::FcvtWD, RNE, d(3e9), 0, 0), (0x7fff_ffff, NV));
        assert_eq!(run(Op::FcvtWuD, RNE, d(3e9), 0, 0), (3_000_000_000u32 as i32 as i64 as u64, 0));
        assert_eq!(run(Op::FcvtWuD, RNE, d(-1.0), 0, 0), (0, NV));
        assert_eq!(run(Op::FcvtWuD, RNE, d(-0.3), 0, 0), (0, NX));
        assert_eq!(run(Op::FcvtLD, RNE, d(f64::NAN), 0, 0), (i64::MAX as u64, NV));
        assert_eq!(run(Op::FcvtLD, RNE, d(f64::NEG_INFINITY), 0, 0), (i64::MIN as u64, NV));
        assert_eq!(run(Op::FcvtLuD, RNE, d(1e30), 0, 0), (u64::MAX, NV));
        assert_eq!(run(Op::FcvtWS, RNE, s(f32::NAN), 0, 0), (0x7fff_ffff, NV));
        assert_eq!(run(Op::FcvtSL, RNE, (1u64 << 24) + 1, 0, 0), (s(16777216.0), NX));
        assert_eq!(run(Op::FcvtSL, RUP, (1u64 << 24) + 1, 0, 0), (s(16777218.0), NX));
        assert_eq!(run(Op::FcvtDLu, RNE, u64::MAX, 0, 0), (d(18446744073709551616.0), NX));
        assert_eq!(run(Op::FcvtDW, RNE, 0xffff_ffff_ffff_fffe, 0, 0), (d(-2.0), 0));
        assert_eq!(run(Op::FcvtDWu, RNE, 0xffff_ffff_ffff_fffe, 0, 0), (d(4294967294.0), 0));
        assert_eq!(run(Op::FcvtDS, RNE, BOX | 0x7f80_0001, 0, 0), (0x7ff8_0000_0000_0000, NV));
    }

    #[test]
    fn compares_min_max_and_classify() {
        let qnan = 0x7ff8_0000_0000_0000;
        let snan = 0x7ff0_0000_0000_0001;
        assert_eq!(run(Op::FeqD, 0, qnan, d(1.0), 0), (0, 0));
        assert_eq!(run(Op::FeqD, 0, snan, d(1.0), 0), (0, NV));
        assert_eq!(run(Op::FltD, 0, qnan, d(1.0), 0), (0, NV));
        assert_eq!(run(Op::FleD, 0, d(-0.0), d(0.0), 0), (1, 0));
        assert_eq!(run(Op::FltD, 0, d(-0.0), d(0.0), 0), (0, 0));
        assert_eq!(run(Op::FminD, 0, d(0.0), d(-0.0), 0), (d(-0.0), 0));
        assert_eq!(run(Op::FmaxD, 0, d(-0.0), d(0.0), 0), (d(0.0), 0));
        assert_eq!(run(Op::FminD, 0, qnan, d(5.0), 0), (d(5.0), 0));
        assert_eq!(run(Op::FmaxD, 0, snan, d(5.0), 0), (d(5.0), NV));
        assert_eq!(run(Op::FminD, 0, snan, qnan, 0), (qnan, NV));
        let class = |v: u64| run(Op::FclassD, 0, v, 0, 0).0;
        assert_eq!(class(d(f64::NEG_INFINITY)), 1 << 0);
        assert_eq!(class(d(-1.0)), 1 << 1);
        assert_eq!(class(d(-f64::from_bits(1))), 1 << 2);
        assert_eq!(class(d(-0.0)), 1 << 3);
        assert_eq!(class(d(0.0)), 1 << 4);
        assert_eq!(class(d(f64::from_bits(1))), 1 << 5);
        assert_eq!(class(d(1.0)), 1 << 6);
        assert_eq!(class(d(f64::INFINITY)), 1 << 7);
        assert_eq!(class(snan), 1 << 8);
        assert_eq!(class(qnan), 1 << 9);
        assert_eq!(run(Op::FclassS, 0, 0x3f80_0000, 0, 0).0, 1 << 9, "unboxed single is the canonical NaN");
    }
}
