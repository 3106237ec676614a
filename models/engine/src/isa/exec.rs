//! The executor: runs one hart for up to a budget of instructions out of the decoded-instruction cache.
//!
//! It is generic over an `ExecHook` (the timing model's tap) and over whether hart 0's trace is being written,
//! so functional mode compiles to a loop with neither: `NoHook::ACTIVE` is false and the InstInfo is never built.

use std::io::Write;

use kvsim_timing::inst::{InstClass, InstInfo, PrefetchKind};

use super::decode::{Decoded, Op};
use crate::hart::Hart;
use crate::mem::Memory;
use crate::trap::{Access, Trap};

/// What a timing model sees: called after every executed instruction when `ACTIVE`.
/// The other methods have do-nothing defaults; a timing model overrides them (see `crate::driver`).
pub trait ExecHook {
    const ACTIVE: bool;
    fn on_inst(&mut self, hart: usize, info: &InstInfo);
    /// The simulated time `hart` has reached (ps), when this hook keeps time; the scheduler then runs the hart
    /// furthest behind, and clock_gettime/rdtime read it.
    #[inline(always)]
    fn time_ps(&self, _hart: usize) -> Option<u64> {
        None
    }
    /// The guest reset the statistics (ROI_BEGIN, STATS_RESET).
    fn reset_stats(&mut self) {}
    /// Append this hook's statistics (a STATS_DUMP snapshot, the end of the run).
    fn append_stats(&self, _out: &mut Vec<crate::output::Stat>) {}
    /// A DMA access by I/O agent `agent` (a NIC: harts + its index) to the line at `addr` at time `t` (ps, the
    /// hook's time scale), for hart `owner` when one owns it (the hart of the NIC queue it serves): returns when
    /// it completes. Without a memory-system model, at once.
    fn io_access(&mut self, _agent: usize, _owner: Option<usize>, _addr: u64, _write: bool, t: u64) -> u64 {
        t
    }
    /// The engine placed guest addresses [start, start + len) on `socket`'s memory (`Machine::place_numa`): a
    /// timing model moves those lines' home there. The socket exists (the engine's map checked it).
    fn numa_placed(&mut self, _start: u64, _len: u64, _socket: u16) {}
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
    pub fn record(&mut self, pc: u64, x: &[u64; 64]) {
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

/// Resource class of an operation (for the timing hook).
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
fn fp_compute(op: Op, d: &Decoded, x: &[u64; 64], fcsr: &mut u32, a: u64, b: u64) -> Result<u64, &'static str> {
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
    let mut n = 0u64;
    let mut pc = h.pc;
    let mut code_vpn = u64::MAX;
    let mut code: *mut Decoded = std::ptr::null_mut();
    let stop = loop {
        if n >= budget {
            break Stop::Budget;
        }
        let vpn = pc >> 12;
        if vpn != code_vpn {
            code = mem.code_page(vpn);
            code_vpn = vpn;
        }
        // SAFETY: code points at a live code page of CODE_SLOTS entries; the index is < 2048.
        let d = unsafe { *code.add(((pc & 0xfff) >> 1) as usize) };
        if TRACE && d.op != Op::Undecoded {
            if let Some(t) = tracer.as_deref_mut() {
                t.record(pc, &h.x);
            }
        }
        let x = &mut h.x;
        // SAFETY: the decoder only produces register numbers below 64 (5-bit fields, plus 32 for FP registers), and
        // the decoded-instruction cache holds nothing but decoder output.
        let rd = d.rd as usize;
        let (a, b) = unsafe { (*x.get_unchecked(d.rs1 as usize), *x.get_unchecked(d.rs2 as usize)) };
        debug_assert!(rd < 64 && d.rs1 < 64 && d.rs2 < 64);
        macro_rules! wr {
            ($v:expr) => {{
                let v: u64 = $v;
                // SAFETY: rd < 64, as above.
                unsafe { *x.get_unchecked_mut(rd) = v };
            }};
        }
        let imm = d.imm as i64 as u64;
        let mut next = pc.wrapping_add(d.len as u64);
        let mut ea = 0u64;
        let mut taken = false;
        macro_rules! tri {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(t) => break Stop::Fault(t),
                }
            };
        }
        macro_rules! branch {
            ($cond:expr) => {{
                h.cnt.branches += 1;
                if $cond {
                    next = pc.wrapping_add(imm);
                    taken = true;
                    h.cnt.taken_branches += 1;
                }
            }};
        }
        macro_rules! load {
            ($n:literal, $conv:expr) => {{
                ea = a.wrapping_add(imm);
                let v = tri!(mem.load::<$n>(ea));
                wr!($conv(v));
                h.cnt.loads += 1;
            }};
        }
        macro_rules! store {
            ($n:literal) => {{
                ea = a.wrapping_add(imm);
                tri!(mem.store::<$n>(hid, ea, b));
                h.cnt.stores += 1;
            }};
        }
        macro_rules! amo_w {
            ($f:expr) => {{
                ea = a;
                let old = tri!(mem.load_atomic::<4>(ea)) as u32;
                let new: u32 = $f(old, b as u32);
                tri!(mem.store_atomic::<4>(hid, ea, new as u64));
                wr!(sext32(old as u64));
                h.cnt.atomics += 1;
            }};
        }
        macro_rules! amo_d {
            ($f:expr) => {{
                ea = a;
                let old = tri!(mem.load_atomic::<8>(ea));
                let new: u64 = $f(old, b);
                tri!(mem.store_atomic::<8>(hid, ea, new));
                wr!(old);
                h.cnt.atomics += 1;
            }};
        }
        // After an instruction: keep x0 zero, tell the hook, advance.
        macro_rules! retire {
            () => {{
                x[0] = 0;
                if H::ACTIVE {
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
                        src3: if class == InstClass::FpFma { (super::decode::FREG + (d.raw >> 27)) as u8 } else { 0 },
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
                pc = next;
                n += 1;
            }};
        }
        match d.op {
            Op::Addi => wr!(a.wrapping_add(imm)),
            Op::Add => wr!(a.wrapping_add(b)),
            Op::Ld => load!(8, |v| v),
            Op::Sd => store!(8),
            Op::Lw => load!(4, sext32),
            Op::Sw => store!(4),
            Op::Beq => branch!(a == b),
            Op::Bne => branch!(a != b),
            Op::Blt => branch!((a as i64) < (b as i64)),
            Op::Bge => branch!((a as i64) >= (b as i64)),
            Op::Bltu => branch!(a < b),
            Op::Bgeu => branch!(a >= b),
            Op::Jal => {
                wr!(next);
                next = pc.wrapping_add(imm);
                h.cnt.jumps += 1;
            }
            Op::Jalr => {
                let target = a.wrapping_add(imm) & !1;
                wr!(next);
                next = target;
                h.cnt.jumps += 1;
            }
            Op::Lui => wr!(imm),
            Op::Auipc => wr!(pc.wrapping_add(imm)),
            Op::Lb => load!(1, |v: u64| v as i8 as i64 as u64),
            Op::Lh => load!(2, |v: u64| v as i16 as i64 as u64),
            Op::Lbu => load!(1, |v| v),
            Op::Lhu => load!(2, |v| v),
            Op::Lwu => load!(4, |v| v),
            Op::Sb => store!(1),
            Op::Sh => store!(2),
            Op::Slti => wr!(((a as i64) < (imm as i64)) as u64),
            Op::Sltiu => wr!((a < imm) as u64),
            Op::Xori => wr!(a ^ imm),
            Op::Ori => wr!(a | imm),
            Op::Andi => wr!(a & imm),
            Op::Slli => wr!(a << (imm & 63)),
            Op::Srli => wr!(a >> (imm & 63)),
            Op::Srai => wr!(((a as i64) >> (imm & 63)) as u64),
            Op::Sub => wr!(a.wrapping_sub(b)),
            Op::Sll => wr!(a << (b & 63)),
            Op::Slt => wr!(((a as i64) < (b as i64)) as u64),
            Op::Sltu => wr!((a < b) as u64),
            Op::Xor => wr!(a ^ b),
            Op::Srl => wr!(a >> (b & 63)),
            Op::Sra => wr!(((a as i64) >> (b & 63)) as u64),
            Op::Or => wr!(a | b),
            Op::And => wr!(a & b),
            Op::Addiw => wr!(sext32(a.wrapping_add(imm))),
            Op::Slliw => wr!(sext32(((a as u32) << (imm & 31)) as u64)),
            Op::Srliw => wr!(sext32(((a as u32) >> (imm & 31)) as u64)),
            Op::Sraiw => wr!(((a as i32) >> (imm & 31)) as i64 as u64),
            Op::Addw => wr!(sext32(a.wrapping_add(b))),
            Op::Subw => wr!(sext32(a.wrapping_sub(b))),
            Op::Sllw => wr!(sext32(((a as u32) << (b & 31)) as u64)),
            Op::Srlw => wr!(sext32(((a as u32) >> (b & 31)) as u64)),
            Op::Sraw => wr!(((a as i32) >> (b & 31)) as i64 as u64),
            Op::Mul => wr!(a.wrapping_mul(b)),
            Op::Mulh => wr!(((a as i64 as i128 * b as i64 as i128) >> 64) as u64),
            Op::Mulhsu => wr!(((a as i64 as i128).wrapping_mul(b as i128) >> 64) as u64),
            Op::Mulhu => wr!(((a as u128 * b as u128) >> 64) as u64),
            Op::Div => wr!(if b == 0 { u64::MAX } else { (a as i64).wrapping_div(b as i64) as u64 }),
            Op::Divu => wr!(a.checked_div(b).unwrap_or(u64::MAX)),
            Op::Rem => wr!(if b == 0 { a } else { (a as i64).wrapping_rem(b as i64) as u64 }),
            Op::Remu => wr!(if b == 0 { a } else { a % b }),
            Op::Mulw => wr!(sext32((a as u32).wrapping_mul(b as u32) as u64)),
            Op::Divw => {
                let (p, q) = (a as i32, b as i32);
                wr!(if q == 0 { u64::MAX } else { p.wrapping_div(q) as i64 as u64 })
            }
            Op::Divuw => {
                let (p, q) = (a as u32, b as u32);
                wr!(p.checked_div(q).map_or(u64::MAX, |v| sext32(v as u64)))
            }
            Op::Remw => {
                let (p, q) = (a as i32, b as i32);
                wr!(if q == 0 { p as i64 as u64 } else { p.wrapping_rem(q) as i64 as u64 })
            }
            Op::Remuw => {
                let (p, q) = (a as u32, b as u32);
                wr!(if q == 0 { sext32(p as u64) } else { sext32((p % q) as u64) })
            }
            Op::LrW => {
                ea = a;
                let v = tri!(mem.load_atomic::<4>(ea));
                mem.reserve(hid, ea);
                wr!(sext32(v));
                h.cnt.atomics += 1;
            }
            Op::LrD => {
                ea = a;
                let v = tri!(mem.load_atomic::<8>(ea));
                mem.reserve(hid, ea);
                wr!(v);
                h.cnt.atomics += 1;
            }
            Op::ScW | Op::ScD => {
                ea = a;
                let size = if d.op == Op::ScW { 4u8 } else { 8 };
                if ea & (size as u64 - 1) != 0 {
                    break Stop::Fault(Trap::Misaligned { addr: ea, size, access: Access::Atomic });
                }
                if mem.take_reservation(hid, ea) {
                    if size == 4 {
                        tri!(mem.store_atomic::<4>(hid, ea, b));
                    } else {
                        tri!(mem.store_atomic::<8>(hid, ea, b));
                    }
                    wr!(0);
                } else {
                    wr!(1);
                }
                h.cnt.atomics += 1;
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
            }
            Op::PrefetchR | Op::PrefetchW | Op::PrefetchI => {
                ea = a.wrapping_add(imm);
                h.cnt.prefetches += 1;
            }
            Op::Ntl => h.cnt.ntl_hints += 1,
            Op::Nop => {}
            // Singles are NaN-boxed when loaded; a store writes the register's low bits as they are.
            Op::Flw => load!(4, |v: u64| v | 0xffff_ffff_0000_0000),
            Op::Fld => load!(8, |v| v),
            Op::Fsw => store!(4),
            Op::Fsd => store!(8),
            Op::CsrFp => wr!(csr_fp(&mut h.fcsr, d.raw, d.imm, a)),
            Op::CsrRead => {
                let retired = h.cnt.insts + n;
                wr!(match d.imm {
                    0xc01 => match if H::ACTIVE { hook.time_ps(hid) } else { None } {
                        Some(ps) => ((ps as u128 * crate::abi::TIMEBASE_HZ as u128) / 1_000_000_000_000u128) as u64,
                        None => ((retired as u128 * crate::abi::TIMEBASE_HZ as u128) / h.clock.max(1) as u128) as u64,
                    },
                    _ => retired,
                });
            }
            Op::Ecall => {
                retire!();
                break Stop::Ecall;
            }
            Op::Ebreak => break Stop::Fault(Trap::Ebreak),
            Op::BadCsr => break Stop::Fault(Trap::Csr(d.imm as u16)),
            Op::Illegal => break Stop::Fault(Trap::Illegal(d.illegal_reason())),
            // Not in the cache yet: decode it into its slot, then dispatch again.
            Op::Undecoded => match mem.fetch_decode(pc) {
                Ok(_) => continue,
                Err(t) => break Stop::Fault(t),
            },
            // Every other operation is a computational F/D one.
            op => {
                debug_assert!(op.is_fp_compute());
                match fp_compute(op, &d, x, &mut h.fcsr, a, b) {
                    Ok(v) => wr!(v),
                    Err(why) => break Stop::Fault(Trap::Illegal(why)),
                }
                h.cnt.fp_ops += 1;
            }
        }
        retire!();
    };
    h.pc = pc;
    h.cnt.insts += n;
    stop
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::asm::*;
    use crate::sim::tests::run_words;

    const OP: u32 = 0x33;
    const OP32: u32 = 0x3b;
    const A0: u32 = 10;
    const A1: u32 = 11;
    const A2: u32 = 12;

    /// rd = a0, rs1 = a1, rs2 = a2 with the given values; returns a0.
    fn rr(f7: u32, f3: u32, opcode: u32, a: u64, b: u64) -> u64 {
        let m = run_words(&[r(f7, A2, A1, f3, A0, opcode)], &[(11, a), (12, b)]);
        m.harts[0].x[10]
    }

    const MIN: u64 = i64::MIN as u64;
    const NEG1: u64 = u64::MAX;

    #[test]
    fn division_by_zero_and_overflow() {
        // div, divu, rem, remu
        assert_eq!(rr(1, 4, OP, 42, 0), NEG1);
        assert_eq!(rr(1, 5, OP, 42, 0), u64::MAX);
        assert_eq!(rr(1, 6, OP, 42, 0), 42);
        assert_eq!(rr(1, 7, OP, 42, 0), 42);
        assert_eq!(rr(1, 4, OP, MIN, NEG1), MIN);
        assert_eq!(rr(1, 6, OP, MIN, NEG1), 0);
        assert_eq!(rr(1, 4, OP, (-7i64) as u64, 2), (-3i64) as u64);
        assert_eq!(rr(1, 6, OP, (-7i64) as u64, 2), (-1i64) as u64);
        // divw, divuw, remw, remuw
        assert_eq!(rr(1, 4, OP32, 5, 0x1_0000_0000), NEG1); // divisor's low word is 0
        assert_eq!(rr(1, 5, OP32, 5, 0), NEG1);
        assert_eq!(rr(1, 6, OP32, 0xffff_ffff_8000_0001, 0), 0xffff_ffff_8000_0001);
        assert_eq!(rr(1, 7, OP32, 0x0000_0000_8000_0001, 0), 0xffff_ffff_8000_0001);
        assert_eq!(rr(1, 4, OP32, 0x8000_0000, NEG1), 0xffff_ffff_8000_0000);
        assert_eq!(rr(1, 6, OP32, 0x8000_0000, NEG1), 0);
        assert_eq!(rr(1, 5, OP32, 0xffff_fffe, 1), 0xffff_ffff_ffff_fffe);
    }

    #[test]
    fn multiplication_high_parts() {
        assert_eq!(rr(1, 1, OP, NEG1, NEG1), 0); // mulh(-1, -1) = high(1)
        assert_eq!(rr(1, 3, OP, NEG1, NEG1), 0xffff_ffff_ffff_fffe); // mulhu
        assert_eq!(rr(1, 2, OP, NEG1, NEG1), NEG1); // mulhsu(-1, 2^64-1) = -(2^64-1)
        assert_eq!(rr(1, 2, OP, 2, NEG1), 1); // mulhsu(2, 2^64-1) = 2^65-2
        assert_eq!(rr(1, 1, OP, MIN, MIN), 0x4000_0000_0000_0000);
        assert_eq!(rr(1, 0, OP, 0x1_0000_0001, 0x1_0000_0001), 0x2_0000_0001);
        assert_eq!(rr(1, 0, OP32, 0x7fff_ffff, 2), 0xffff_ffff_ffff_fffe); // mulw sign-extends
    }

    #[test]
    fn shifts_and_word_results() {
        assert_eq!(rr(0, 1, OP, 1, 65), 2); // sll uses rs2[5:0]
        assert_eq!(rr(0, 1, OP32, 1, 33), 2); // sllw uses rs2[4:0]
        assert_eq!(rr(0, 1, OP32, 1, 31), 0xffff_ffff_8000_0000);
        assert_eq!(rr(0, 5, OP32, 0x8000_0000, 63), 1); // srlw by 31
        assert_eq!(rr(0x20, 5, OP32, 0x8000_0000, 31), NEG1); // sraw
        assert_eq!(rr(0, 5, OP32, 0xffff_ffff_0000_0010, 4), 1); // srlw ignores the high word
        assert_eq!(rr(0x20, 5, OP, MIN, 63), NEG1); // sra
        assert_eq!(rr(0, 0, OP32, 0x7fff_ffff, 1), 0xffff_ffff_8000_0000); // addw overflows into the sign
        assert_eq!(rr(0x20, 0, OP32, 0, 1), NEG1); // subw
        assert_eq!(rr(0, 2, OP, NEG1, 0), 1); // slt
        assert_eq!(rr(0, 3, OP, NEG1, 0), 0); // sltu
        let m = run_words(&[i(-1, A1, 0, A0, 0x1b)], &[(11, 0x8000_0000)]); // addiw
        assert_eq!(m.harts[0].x[10], 0x7fff_ffff);
        let m = run_words(&[i(31, A1, 1, A0, 0x1b)], &[(11, 3)]); // slliw 31
        assert_eq!(m.harts[0].x[10], 0xffff_ffff_8000_0000);
        let m = run_words(&[i(0x400 | 4, A1, 5, A0, 0x13)], &[(11, MIN)]); // srai 4
        assert_eq!(m.harts[0].x[10], 0xf800_0000_0000_0000);
    }

    #[test]
    fn x0_stays_zero_and_loads_sign_extend() {
        let m = run_words(&[li(0, 5), addi(10, 0, 1)], &[]);
        assert_eq!(m.harts[0].x[0], 0);
        assert_eq!(m.harts[0].x[10], 1);
        // sd a1, -16(sp); lb a0, -16(sp); lbu a2, -16(sp); lw a3, -16(sp); lwu a4, -16(sp); lh a5, -16(sp)
        let v = 0x1234_5678_8765_4380u64;
        let m = run_words(
            &[
                s(-16, A1, 2, 3),
                i(-16, 2, 0, 10, 3),
                i(-16, 2, 4, 12, 3),
                i(-16, 2, 2, 13, 3),
                i(-16, 2, 6, 14, 3),
                i(-16, 2, 1, 15, 3),
            ],
            &[(11, v)],
        );
        let x = &m.harts[0].x;
        assert_eq!(x[10], 0xffff_ffff_ffff_ff80);
        assert_eq!(x[12], 0x80);
        assert_eq!(x[13], 0xffff_ffff_8765_4380);
        assert_eq!(x[14], 0x8765_4380);
        assert_eq!(x[15], 0x4380);
        assert_eq!(m.harts[0].cnt.loads, 5);
        assert_eq!(m.harts[0].cnt.stores, 1);
    }

    #[test]
    fn amos_return_the_old_value() {
        // a1 = sp - 64 holds 0xffff_fff0 (as a word) / the dword; amoadd.w, amomin.w, amomaxu.d, amoswap.d
        let amo = |f5: u32, w: bool, rd: u32| r(f5 << 2, A2, A1, if w { 2 } else { 3 }, rd, 0x2f);
        let words = [
            addi(11, 2, -64),
            s(0, 13, 11, 3),      // sd a3, 0(a1)
            amo(0x00, true, 10),  // amoadd.w a0, a2, (a1)
            i(0, 11, 3, 14, 3),   // ld a4, 0(a1)
            amo(0x10, true, 15),  // amomin.w a5, a2, (a1)
            i(0, 11, 3, 16, 3),   // ld a6, 0(a1)
            amo(0x1c, false, 17), // amomaxu.d a7, a2, (a1)
            i(0, 11, 3, 5, 3),    // ld t0, 0(a1)
        ];
        let m = run_words(&words, &[(12, 0x20), (13, 0x1_ffff_fff0)]);
        let x = &m.harts[0].x;
        assert_eq!(x[10], 0xffff_ffff_ffff_fff0); // old low word, sign-extended
        assert_eq!(x[14], 0x1_0000_0010); // low word wrapped, high word untouched
        assert_eq!(x[15], 0x10);
        assert_eq!(x[16], 0x1_0000_0010); // min(0x10, 0x20) = 0x10: unchanged
        assert_eq!(x[17], 0x1_0000_0010);
        assert_eq!(x[5], 0x1_0000_0010); // maxu(0x1_0000_0010, 0x20)
        assert_eq!(m.harts[0].cnt.atomics, 3);
    }

    #[test]
    fn branches_jumps_and_counters() {
        // beq taken over one nop; bne not taken; jal ra to the end
        let words = [b(8, 0, 0, 0), nop(), b(8, 0, 0, 1), 0x0080_00ef, nop(), li(10, 9), nop(), nop()];
        let m = crate::sim::tests::run_words_n(&words, &[], 6);
        let h = &m.harts[0];
        assert_eq!(h.pc, crate::sim::tests::ENTRY + 32);
        assert_eq!(h.x[1], crate::sim::tests::ENTRY + 16);
        assert_eq!(h.x[10], 9);
        assert_eq!((h.cnt.branches, h.cnt.taken_branches, h.cnt.jumps), (2, 1, 1));
    }

    #[test]
    fn hints_are_no_ops_but_counted() {
        let words = [0x0015_6013, 0x0435_e013, 0x0050_0033, nop()];
        let m = run_words(&words, &[(10, 0x12345), (11, 0x999)]);
        let h = &m.harts[0];
        assert_eq!((h.x[10], h.x[11], h.x[0]), (0x12345, 0x999, 0));
        assert_eq!((h.cnt.prefetches, h.cnt.ntl_hints), (2, 1));
    }

    struct Recorder(Vec<InstInfo>);
    impl ExecHook for Recorder {
        const ACTIVE: bool = true;
        fn on_inst(&mut self, _hart: usize, info: &InstInfo) {
            self.0.push(*info);
        }
    }

    #[test]
    fn hook_sees_classes_addresses_and_non_temporal_flag() {
        use crate::sim::tests::{machine_with, ENTRY};
        use crate::sim::EngineConfig;
        // prefetch.w 64(a1); ntl.all; sd a0, 8(sp); ld a0, 8(sp); beq x0, x0, +4; csrr a0, instret
        let words = [0x0435_e013, 0x0050_0033, s(8, 10, 2, 3), i(8, 2, 3, 10, 3), b(4, 0, 0, 0), 0xc020_2573];
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.max_insts = words.len() as u64;
        let mut m = machine_with(&bytes(&words), &cfg);
        m.harts[0].x[11] = 0x1000;
        let sp = m.harts[0].x[2];
        let mut rec = Recorder(vec![]);
        m.run(&mut rec, None).unwrap();
        let v = &rec.0;
        assert_eq!(v.len(), 6);
        assert_eq!((v[0].class, v[0].mem_addr, v[0].prefetch_kind), (InstClass::Prefetch, 0x1040, PrefetchKind::Write));
        assert_eq!(v[1].class, InstClass::Nop);
        assert_eq!((v[2].class, v[2].mem_addr, v[2].mem_size, v[2].non_temporal), (InstClass::Store, sp + 8, 8, true));
        assert_eq!((v[2].src1, v[2].src2, v[2].dst), (2, 10, 0));
        assert_eq!((v[3].class, v[3].non_temporal, v[3].dst), (InstClass::Load, false, 10));
        assert_eq!((v[4].class, v[4].taken, v[4].next_pc), (InstClass::Branch, true, ENTRY + 20));
        assert_eq!((v[5].class, v[5].pc, v[5].len), (InstClass::System, ENTRY + 20, 4));
        assert_eq!(m.harts[0].x[10], 5); // instret before the csrr
    }

    #[test]
    fn self_modifying_code_after_store() {
        // Overwrite the instruction at +12 (li a0, 1) with li a0, 2 after it has been decoded once? It runs
        // only once, so: first run it decodes; here we store over the *next* instruction before reaching it.
        use crate::sim::tests::ENTRY;
        let target = ENTRY + 16;
        let words = [
            lui(5, (target >> 12) as u32),
            addi(5, 5, (target & 0xfff) as i32),
            s(0, 6, 5, 2), // sw t1, 0(t0)
            nop(),
            li(10, 1), // replaced by t1 = li a0, 2
        ];
        let m = run_words(&words, &[(6, li(10, 2) as u64)]);
        assert_eq!(m.harts[0].x[10], 2);
    }

    #[test]
    fn decoded_instructions_are_invalidated_by_stores() {
        // The loop body's first instruction (addi a0, a0, 1) is decoded and run, then overwritten with
        // addi a0, a0, 100 (with and without fence.i): the second iteration must run the new instruction.
        use crate::sim::tests::{run_words_n, ENTRY};
        for fence in [true, false] {
            let target = ENTRY + 12;
            let mut words = vec![
                lui(5, (target >> 12) as u32),
                addi(5, 5, (target & 0xfff) as i32),
                li(10, 0),
                addi(10, 10, 1), // target
                sw(6, 5, 0),
                if fence { 0x0000_100f } else { nop() },
                addi(7, 7, 1),
                bne(7, 28, -16),
            ];
            words.push(nop());
            let m = run_words_n(&words, &[(6, addi(10, 10, 100) as u64), (28, 2)], 3 + 5 * 2);
            assert_eq!(m.harts[0].x[10], 101, "fence.i: {fence}");
            assert_eq!(m.harts[0].pc, ENTRY + 32);
        }
    }

    #[test]
    fn instruction_straddling_a_page_is_invalidated_by_a_store_to_the_next_page() {
        use crate::output::StopReason;
        use crate::sim::tests::{machine_with, ENTRY};
        use crate::sim::EngineConfig;
        let mut code = 0x0001u16.to_le_bytes().to_vec(); // c.nop: the following words are 2 mod 4
        code.extend(bytes(&[lui(5, 0x11), li(7, 0)]));
        while ENTRY + code.len() as u64 != 0x10ffe {
            code.extend(bytes(&[nop()]));
        }
        // 0x10ffe: addi a0, a0, 1 (straddles); sh t1, 0(t0) rewrites its upper half; loop twice.
        code.extend(bytes(&[addi(10, 10, 1), s(0, 6, 5, 1), addi(7, 7, 1), bne(7, 28, -12), nop()]));
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.max_insts = 3 + 991 + 8;
        let mut m = machine_with(&code, &cfg);
        m.harts[0].x[6] = (addi(10, 10, 100) >> 16) as u64;
        m.harts[0].x[28] = 2;
        assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::MaxInsts);
        assert_eq!(m.harts[0].pc, 0x1100e);
        assert_eq!(m.harts[0].x[10], 101);
    }
}
