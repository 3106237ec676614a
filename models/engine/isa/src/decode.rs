//! Decoding RV64GC (IMAFDC with Zicsr's counter and floating-point CSRs, Zifencei, Zicbop prefetches and
//! Zihintntl hints) into `Decoded`, a 16-byte record the executor dispatches on. Every compressed instruction
//! becomes its base equivalent with `len = 2`. Register fields an instruction does not use are 0, so a timing
//! model can read dependences straight from `rd`, `rs1`, `rs2`. Floating-point registers f0..f31 are numbered
//! 32..63 (`FREG`), one register file with the integer ones, so dependences through either need no extra field;
//! an FMA's third source (rs3) and every rounding-mode field stay in `raw`.

/// Operations. `Undecoded` (0) marks an empty slot of the decoded-instruction cache.
#[repr(u8)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Op {
    #[default]
    Undecoded = 0,
    /// Not executable; `imm` indexes `ILLEGAL_REASONS`.
    Illegal,
    /// CSR access other than a read of cycle/time/instret; `imm` is the CSR number.
    BadCsr,
    Lui,
    Auipc,
    Jal,
    Jalr,
    Beq,
    Bne,
    Blt,
    Bge,
    Bltu,
    Bgeu,
    Lb,
    Lh,
    Lw,
    Ld,
    Lbu,
    Lhu,
    Lwu,
    Sb,
    Sh,
    Sw,
    Sd,
    Addi,
    Slti,
    Sltiu,
    Xori,
    Ori,
    Andi,
    Slli,
    Srli,
    Srai,
    Add,
    Sub,
    Sll,
    Slt,
    Sltu,
    Xor,
    Srl,
    Sra,
    Or,
    And,
    Addiw,
    Slliw,
    Srliw,
    Sraiw,
    Addw,
    Subw,
    Sllw,
    Srlw,
    Sraw,
    Mul,
    Mulh,
    Mulhsu,
    Mulhu,
    Div,
    Divu,
    Rem,
    Remu,
    Mulw,
    Divw,
    Divuw,
    Remw,
    Remuw,
    LrW,
    ScW,
    AmoSwapW,
    AmoAddW,
    AmoXorW,
    AmoAndW,
    AmoOrW,
    AmoMinW,
    AmoMaxW,
    AmoMinuW,
    AmoMaxuW,
    LrD,
    ScD,
    AmoSwapD,
    AmoAddD,
    AmoXorD,
    AmoAndD,
    AmoOrD,
    AmoMinD,
    AmoMaxD,
    AmoMinuD,
    AmoMaxuD,
    Fence,
    FenceI,
    Ecall,
    Ebreak,
    /// csrr rd, csr (cycle 0xc00, time 0xc01, instret 0xc02); `imm` is the CSR number.
    CsrRead,
    /// Zicbop prefetch.r / prefetch.w / prefetch.i: base rs1, offset imm (a multiple of 32).
    PrefetchR,
    PrefetchW,
    PrefetchI,
    /// Zihintntl hint: the next memory instruction is non-temporal; `imm` is the hint register (2..=5).
    Ntl,
    /// The poll-end hint (`slti x0, rs1, kvsim_base::abi::POLL_END_HINT`): rs1 holds the frames the poll found.
    PollEnd,
    /// No effect (nop and the other hint encodings).
    Nop,
    /// csrrw/csrrs/csrrc (and the immediate forms) on fflags (1), frm (2) or fcsr (3); `imm` is the CSR number,
    /// funct3 and the immediate (rs1 field) are read from `raw`.
    CsrFp,
    // F and D: loads and stores (rd or rs2 is an FP register).
    Flw,
    Fld,
    Fsw,
    Fsd,
    // Computational F/D instructions, executed by `fpu::execute` (single precision first, then double).
    FmaddS,
    FmsubS,
    FnmsubS,
    FnmaddS,
    FaddS,
    FsubS,
    FmulS,
    FdivS,
    FsqrtS,
    FsgnjS,
    FsgnjnS,
    FsgnjxS,
    FminS,
    FmaxS,
    FcvtWS,
    FcvtWuS,
    FcvtLS,
    FcvtLuS,
    FmvXW,
    FclassS,
    FeqS,
    FltS,
    FleS,
    FcvtSW,
    FcvtSWu,
    FcvtSL,
    FcvtSLu,
    FmvWX,
    FcvtSD,
    FmaddD,
    FmsubD,
    FnmsubD,
    FnmaddD,
    FaddD,
    FsubD,
    FmulD,
    FdivD,
    FsqrtD,
    FsgnjD,
    FsgnjnD,
    FsgnjxD,
    FminD,
    FmaxD,
    FcvtWD,
    FcvtWuD,
    FcvtLD,
    FcvtLuD,
    FmvXD,
    FclassD,
    FeqD,
    FltD,
    FleD,
    FcvtDW,
    FcvtDWu,
    FcvtDL,
    FcvtDLu,
    FmvDX,
    FcvtDS,
}

/// Register number of f0 in `Decoded` (f_n is `FREG + n`).
pub const FREG: u32 = 32;

impl Op {
    /// A computational F/D instruction (not a load, store or CSR access): `fpu::execute` runs it.
    #[inline(always)]
    pub const fn is_fp_compute(self) -> bool {
        Op::FmaddS as u8 <= self as u8 && self as u8 <= Op::FcvtDS as u8
    }
}

/// One decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C)]
pub struct Decoded {
    pub op: Op,
    pub rd: u8,
    pub rs1: u8,
    pub rs2: u8,
    /// 2 (compressed) or 4.
    pub len: u8,
    /// In a pre-decoded block: the instruction's distance from the block's first, in half-words (a block spans
    /// at most 64 instructions of 4 bytes, so < 128), from which the executor derives its PC only when it needs
    /// it. 0 outside blocks. Sits in what was padding: the record stays 16 bytes.
    pub at: u8,
    /// Where the executor writes the result: `rd`, or `hart::DISCARD` when rd is x0 (x0 stays 0 with no store to
    /// put it back). Sits in what was padding.
    pub wd: u8,
    /// In a pre-decoded block: the instruction's index in it (instructions retired before it in the block), so
    /// the executor counts without arithmetic on addresses. 0 outside blocks. Sits in what was padding.
    pub idx: u8,
    pub imm: i32,
    /// The instruction word as fetched (16 bits for compressed instructions).
    pub raw: u32,
}

pub const ILLEGAL_REASONS: [&str; 7] = [
    "not an RV64GC instruction",
    "floating-point format other than single or double (Q and Zfh are not supported)",
    "reserved compressed encoding",
    "the all-zero instruction is defined illegal",
    "privileged or unsupported system instruction",
    "unsupported memory-ordering instruction",
    "reserved floating-point rounding mode (5 or 6)",
];
const R_UNKNOWN: i32 = 0;
const R_FLOAT: i32 = 1;
const R_RESERVED: i32 = 2;
const R_ZERO: i32 = 3;
const R_SYSTEM: i32 = 4;
const R_MISCMEM: i32 = 5;
const R_RM: i32 = 6;

impl Decoded {
    pub const UNDECODED: Decoded =
        Decoded { op: Op::Undecoded, rd: 0, rs1: 0, rs2: 0, len: 0, at: 0, wd: 0, idx: 0, imm: 0, raw: 0 };

    fn new(op: Op, rd: u32, rs1: u32, rs2: u32, imm: i32, raw: u32, len: u8) -> Decoded {
        let wd = if rd == 0 { crate::hart::DISCARD as u8 } else { rd as u8 };
        Decoded { op, rd: rd as u8, rs1: rs1 as u8, rs2: rs2 as u8, len, at: 0, wd, idx: 0, imm, raw }
    }

    pub fn illegal_reason(&self) -> &'static str {
        ILLEGAL_REASONS.get(self.imm as usize).copied().unwrap_or(ILLEGAL_REASONS[0])
    }
}

/// Length in bytes of the instruction whose low 16 bits are `low`.
#[inline]
pub fn insn_len(low: u16) -> u8 {
    if low & 3 == 3 {
        4
    } else {
        2
    }
}

/// Decode either form: `raw` holds a 32-bit word, or a 16-bit one when its low two bits are not 0b11.
pub fn decode(raw: u32) -> Decoded {
    if raw & 3 == 3 {
        decode32(raw)
    } else {
        decode16(raw as u16)
    }
}

#[inline]
fn bits(x: u32, hi: u32, lo: u32) -> u32 {
    (x >> lo) & ((1u32 << (hi - lo + 1)) - 1)
}

/// Sign-extend the low `width` bits of `x`.
#[inline]
fn sext(x: u32, width: u32) -> i32 {
    let shift = 32 - width;
    ((x << shift) as i32) >> shift
}

fn illegal(raw: u32, len: u8, why: i32) -> Decoded {
    Decoded { op: Op::Illegal, rd: 0, rs1: 0, rs2: 0, len, at: 0, wd: 0, idx: 0, imm: why, raw }
}

pub fn decode32(raw: u32) -> Decoded {
    let opcode = raw & 0x7f;
    let rd = bits(raw, 11, 7);
    let rs1 = bits(raw, 19, 15);
    let rs2 = bits(raw, 24, 20);
    let f3 = bits(raw, 14, 12);
    let f7 = bits(raw, 31, 25);
    let imm_i = (raw as i32) >> 20;
    let imm_s = (((raw as i32) >> 25) << 5) | bits(raw, 11, 7) as i32;
    let imm_b = sext(
        (bits(raw, 31, 31) << 12) | (bits(raw, 7, 7) << 11) | (bits(raw, 30, 25) << 5) | (bits(raw, 11, 8) << 1),
        13,
    );
    let imm_u = (raw & 0xffff_f000) as i32;
    let imm_j = sext(
        (bits(raw, 31, 31) << 20) | (bits(raw, 19, 12) << 12) | (bits(raw, 20, 20) << 11) | (bits(raw, 30, 21) << 1),
        21,
    );
    let d = |op: Op, rd: u32, rs1: u32, rs2: u32, imm: i32| Decoded::new(op, rd, rs1, rs2, imm, raw, 4);
    let bad = illegal(raw, 4, R_UNKNOWN);
    match opcode {
        0x37 => d(Op::Lui, rd, 0, 0, imm_u),
        0x17 => d(Op::Auipc, rd, 0, 0, imm_u),
        0x6f => d(Op::Jal, rd, 0, 0, imm_j),
        0x67 if f3 == 0 => d(Op::Jalr, rd, rs1, 0, imm_i),
        0x63 => {
            let op = match f3 {
                0 => Op::Beq,
                1 => Op::Bne,
                4 => Op::Blt,
                5 => Op::Bge,
                6 => Op::Bltu,
                7 => Op::Bgeu,
                _ => return bad,
            };
            d(op, 0, rs1, rs2, imm_b)
        }
        0x03 => {
            let op = match f3 {
                0 => Op::Lb,
                1 => Op::Lh,
                2 => Op::Lw,
                3 => Op::Ld,
                4 => Op::Lbu,
                5 => Op::Lhu,
                6 => Op::Lwu,
                _ => return bad,
            };
            d(op, rd, rs1, 0, imm_i)
        }
        0x23 => {
            let op = match f3 {
                0 => Op::Sb,
                1 => Op::Sh,
                2 => Op::Sw,
                3 => Op::Sd,
                _ => return bad,
            };
            d(op, 0, rs1, rs2, imm_s)
        }
        0x13 => match f3 {
            0 => d(Op::Addi, rd, rs1, 0, imm_i),
            2 if rd == 0 && imm_i == kvsim_base::abi::POLL_END_HINT => d(Op::PollEnd, 0, rs1, 0, 0),
            2 => d(Op::Slti, rd, rs1, 0, imm_i),
            3 => d(Op::Sltiu, rd, rs1, 0, imm_i),
            4 => d(Op::Xori, rd, rs1, 0, imm_i),
            6 if rd == 0 => {
                // Zicbop: ORI with rd = x0; imm[4:0] selects the kind, imm[11:5] << 5 is the offset.
                let offset = imm_i & !0x1f;
                match imm_i & 0x1f {
                    0 => d(Op::PrefetchI, 0, rs1, 0, offset),
                    1 => d(Op::PrefetchR, 0, rs1, 0, offset),
                    3 => d(Op::PrefetchW, 0, rs1, 0, offset),
                    _ => d(Op::Nop, 0, 0, 0, 0),
                }
            }
            6 => d(Op::Ori, rd, rs1, 0, imm_i),
            7 => d(Op::Andi, rd, rs1, 0, imm_i),
            1 if bits(raw, 31, 26) == 0 => d(Op::Slli, rd, rs1, 0, bits(raw, 25, 20) as i32),
            5 if bits(raw, 31, 26) == 0 => d(Op::Srli, rd, rs1, 0, bits(raw, 25, 20) as i32),
            5 if bits(raw, 31, 26) == 0x10 => d(Op::Srai, rd, rs1, 0, bits(raw, 25, 20) as i32),
            _ => bad,
        },
        0x1b => match (f3, f7) {
            (0, _) => d(Op::Addiw, rd, rs1, 0, imm_i),
            (1, 0) => d(Op::Slliw, rd, rs1, 0, rs2 as i32),
            (5, 0) => d(Op::Srliw, rd, rs1, 0, rs2 as i32),
            (5, 0x20) => d(Op::Sraiw, rd, rs1, 0, rs2 as i32),
            _ => bad,
        },
        0x33 => {
            let op = match (f7, f3) {
                (0, 0) if rd == 0 && rs1 == 0 && (2..=5).contains(&rs2) => {
                    return d(Op::Ntl, 0, 0, 0, rs2 as i32);
                }
                (0, 0) => Op::Add,
                (0, 1) => Op::Sll,
                (0, 2) => Op::Slt,
                (0, 3) => Op::Sltu,
                (0, 4) => Op::Xor,
                (0, 5) => Op::Srl,
                (0, 6) => Op::Or,
                (0, 7) => Op::And,
                (0x20, 0) => Op::Sub,
                (0x20, 5) => Op::Sra,
                (1, 0) => Op::Mul,
                (1, 1) => Op::Mulh,
                (1, 2) => Op::Mulhsu,
                (1, 3) => Op::Mulhu,
                (1, 4) => Op::Div,
                (1, 5) => Op::Divu,
                (1, 6) => Op::Rem,
                (1, 7) => Op::Remu,
                _ => return bad,
            };
            d(op, rd, rs1, rs2, 0)
        }
        0x3b => {
            let op = match (f7, f3) {
                (0, 0) => Op::Addw,
                (0, 1) => Op::Sllw,
                (0, 5) => Op::Srlw,
                (0x20, 0) => Op::Subw,
                (0x20, 5) => Op::Sraw,
                (1, 0) => Op::Mulw,
                (1, 4) => Op::Divw,
                (1, 5) => Op::Divuw,
                (1, 6) => Op::Remw,
                (1, 7) => Op::Remuw,
                _ => return bad,
            };
            d(op, rd, rs1, rs2, 0)
        }
        0x0f => match f3 {
            0 => d(Op::Fence, 0, 0, 0, 0),
            1 => d(Op::FenceI, 0, 0, 0, 0),
            _ => illegal(raw, 4, R_MISCMEM),
        },
        0x73 => {
            if raw == 0x0000_0073 {
                return d(Op::Ecall, 0, 0, 0, 0);
            }
            if raw == 0x0010_0073 {
                return d(Op::Ebreak, 0, 0, 0, 0);
            }
            let csr = bits(raw, 31, 20);
            if (1..=3).contains(&csr) && f3 != 0 && f3 != 4 {
                // The floating-point CSRs; the immediate forms keep their uimm in raw's rs1 field.
                let src = if f3 & 4 == 0 { rs1 } else { 0 };
                return d(Op::CsrFp, rd, src, 0, csr as i32);
            }
            match f3 {
                // csrrs/csrrc with rs1 = x0, csrrsi/csrrci with uimm = 0: pure reads.
                2 | 3 | 6 | 7 if rs1 == 0 => {
                    if (0xc00..=0xc02).contains(&csr) {
                        d(Op::CsrRead, rd, 0, 0, csr as i32)
                    } else {
                        d(Op::BadCsr, 0, 0, 0, csr as i32)
                    }
                }
                1..=3 | 5..=7 => d(Op::BadCsr, 0, 0, 0, csr as i32),
                _ => illegal(raw, 4, R_SYSTEM),
            }
        }
        0x2f if f3 == 2 || f3 == 3 => {
            let w = f3 == 2;
            let f5 = bits(raw, 31, 27);
            let op = match (f5, w) {
                (0x02, true) if rs2 == 0 => return d(Op::LrW, rd, rs1, 0, 0),
                (0x02, false) if rs2 == 0 => return d(Op::LrD, rd, rs1, 0, 0),
                (0x03, true) => Op::ScW,
                (0x03, false) => Op::ScD,
                (0x01, true) => Op::AmoSwapW,
                (0x01, false) => Op::AmoSwapD,
                (0x00, true) => Op::AmoAddW,
                (0x00, false) => Op::AmoAddD,
                (0x04, true) => Op::AmoXorW,
                (0x04, false) => Op::AmoXorD,
                (0x0c, true) => Op::AmoAndW,
                (0x0c, false) => Op::AmoAndD,
                (0x08, true) => Op::AmoOrW,
                (0x08, false) => Op::AmoOrD,
                (0x10, true) => Op::AmoMinW,
                (0x10, false) => Op::AmoMinD,
                (0x14, true) => Op::AmoMaxW,
                (0x14, false) => Op::AmoMaxD,
                (0x18, true) => Op::AmoMinuW,
                (0x18, false) => Op::AmoMinuD,
                (0x1c, true) => Op::AmoMaxuW,
                (0x1c, false) => Op::AmoMaxuD,
                _ => return bad,
            };
            d(op, rd, rs1, rs2, 0)
        }
        0x07 | 0x27 | 0x43 | 0x47 | 0x4b | 0x4f | 0x53 => decode_fp(raw, opcode, rd, rs1, rs2, f3, f7, imm_i, imm_s),
        _ => bad,
    }
}

/// The F and D extensions (opcodes LOAD-FP, STORE-FP, the four fused multiply-adds and OP-FP).
#[allow(clippy::too_many_arguments)]
fn decode_fp(raw: u32, opcode: u32, rd: u32, rs1: u32, rs2: u32, f3: u32, f7: u32, imm_i: i32, imm_s: i32) -> Decoded {
    let d = |op: Op, rd: u32, rs1: u32, rs2: u32, imm: i32| Decoded::new(op, rd, rs1, rs2, imm, raw, 4);
    let bad = illegal(raw, 4, R_UNKNOWN);
    let (frd, frs1, frs2) = (FREG + rd, FREG + rs1, FREG + rs2);
    // A static rounding mode of 5 or 6 is reserved; 7 (dynamic) is checked against frm when executed.
    let rm_ok = f3 != 5 && f3 != 6;
    match opcode {
        0x07 => match f3 {
            2 => d(Op::Flw, frd, rs1, 0, imm_i),
            3 => d(Op::Fld, frd, rs1, 0, imm_i),
            _ => bad,
        },
        0x27 => match f3 {
            2 => d(Op::Fsw, 0, rs1, frs2, imm_s),
            3 => d(Op::Fsd, 0, rs1, frs2, imm_s),
            _ => bad,
        },
        0x43 | 0x47 | 0x4b | 0x4f => {
            let double = match bits(raw, 26, 25) {
                0 => false,
                1 => true,
                _ => return illegal(raw, 4, R_FLOAT),
            };
            if !rm_ok {
                return illegal(raw, 4, R_RM);
            }
            let op = match (opcode, double) {
                (0x43, false) => Op::FmaddS,
                (0x47, false) => Op::FmsubS,
                (0x4b, false) => Op::FnmsubS,
                (0x4f, false) => Op::FnmaddS,
                (0x43, true) => Op::FmaddD,
                (0x47, true) => Op::FmsubD,
                (0x4b, true) => Op::FnmsubD,
                _ => Op::FnmaddD,
            };
            d(op, frd, frs1, frs2, 0)
        }
        _ => {
            let double = match f7 & 3 {
                0 => false,
                1 => true,
                _ => return illegal(raw, 4, R_FLOAT),
            };
            let pick = |s: Op, dd: Op| if double { dd } else { s };
            // (op, rd, rs1, rs2, uses the rounding mode)
            let (op, rd, rs1, rs2, rounds) = match (f7 >> 2, f3, rs2) {
                (0x00, _, _) => (pick(Op::FaddS, Op::FaddD), frd, frs1, frs2, true),
                (0x01, _, _) => (pick(Op::FsubS, Op::FsubD), frd, frs1, frs2, true),
                (0x02, _, _) => (pick(Op::FmulS, Op::FmulD), frd, frs1, frs2, true),
                (0x03, _, _) => (pick(Op::FdivS, Op::FdivD), frd, frs1, frs2, true),
                (0x0b, _, 0) => (pick(Op::FsqrtS, Op::FsqrtD), frd, frs1, 0, true),
                (0x04, 0, _) => (pick(Op::FsgnjS, Op::FsgnjD), frd, frs1, frs2, false),
                (0x04, 1, _) => (pick(Op::FsgnjnS, Op::FsgnjnD), frd, frs1, frs2, false),
                (0x04, 2, _) => (pick(Op::FsgnjxS, Op::FsgnjxD), frd, frs1, frs2, false),
                (0x05, 0, _) => (pick(Op::FminS, Op::FminD), frd, frs1, frs2, false),
                (0x05, 1, _) => (pick(Op::FmaxS, Op::FmaxD), frd, frs1, frs2, false),
                (0x08, _, 1) if !double => (Op::FcvtSD, frd, frs1, 0, true),
                (0x08, _, 0) if double => (Op::FcvtDS, frd, frs1, 0, true),
                (0x14, 0, _) => (pick(Op::FleS, Op::FleD), rd, frs1, frs2, false),
                (0x14, 1, _) => (pick(Op::FltS, Op::FltD), rd, frs1, frs2, false),
                (0x14, 2, _) => (pick(Op::FeqS, Op::FeqD), rd, frs1, frs2, false),
                (0x18, _, 0) => (pick(Op::FcvtWS, Op::FcvtWD), rd, frs1, 0, true),
                (0x18, _, 1) => (pick(Op::FcvtWuS, Op::FcvtWuD), rd, frs1, 0, true),
                (0x18, _, 2) => (pick(Op::FcvtLS, Op::FcvtLD), rd, frs1, 0, true),
                (0x18, _, 3) => (pick(Op::FcvtLuS, Op::FcvtLuD), rd, frs1, 0, true),
                (0x1a, _, 0) => (pick(Op::FcvtSW, Op::FcvtDW), frd, rs1, 0, true),
                (0x1a, _, 1) => (pick(Op::FcvtSWu, Op::FcvtDWu), frd, rs1, 0, true),
                (0x1a, _, 2) => (pick(Op::FcvtSL, Op::FcvtDL), frd, rs1, 0, true),
                (0x1a, _, 3) => (pick(Op::FcvtSLu, Op::FcvtDLu), frd, rs1, 0, true),
                (0x1c, 0, 0) => (pick(Op::FmvXW, Op::FmvXD), rd, frs1, 0, false),
                (0x1c, 1, 0) => (pick(Op::FclassS, Op::FclassD), rd, frs1, 0, false),
                (0x1e, 0, 0) => (pick(Op::FmvWX, Op::FmvDX), frd, rs1, 0, false),
                _ => return bad,
            };
            if rounds && !rm_ok {
                return illegal(raw, 4, R_RM);
            }
            d(op, rd, rs1, rs2, 0)
        }
    }
}

pub fn decode16(h: u16) -> Decoded {
    let raw = h as u32;
    if raw == 0 {
        return illegal(raw, 2, R_ZERO);
    }
    let d = |op: Op, rd: u32, rs1: u32, rs2: u32, imm: i32| Decoded::new(op, rd, rs1, rs2, imm, raw, 2);
    let reserved = illegal(raw, 2, R_RESERVED);
    let f3 = bits(raw, 15, 13);
    // Full register fields (CR/CI/CSS) and the 3-bit x8..x15 ones (CIW/CL/CS/CA/CB).
    let rd_full = bits(raw, 11, 7);
    let rs2_full = bits(raw, 6, 2);
    let rdp = bits(raw, 4, 2) + 8;
    let rs1p = bits(raw, 9, 7) + 8;
    let ci_imm = sext((bits(raw, 12, 12) << 5) | bits(raw, 6, 2), 6);
    let ci_shamt = ((bits(raw, 12, 12) << 5) | bits(raw, 6, 2)) as i32;
    match (raw & 3, f3) {
        // Quadrant 0
        (0, 0) => {
            let imm =
                (bits(raw, 12, 11) << 4) | (bits(raw, 10, 7) << 6) | (bits(raw, 6, 6) << 2) | (bits(raw, 5, 5) << 3);
            if imm == 0 {
                return reserved;
            }
            d(Op::Addi, rdp, 2, 0, imm as i32)
        }
        (0, 1) => {
            let imm = (bits(raw, 12, 10) << 3) | (bits(raw, 6, 5) << 6);
            d(Op::Fld, FREG + rdp, rs1p, 0, imm as i32)
        }
        (0, 5) => {
            let imm = (bits(raw, 12, 10) << 3) | (bits(raw, 6, 5) << 6);
            d(Op::Fsd, 0, rs1p, FREG + rdp, imm as i32)
        }
        (0, 2) => {
            let imm = (bits(raw, 12, 10) << 3) | (bits(raw, 6, 6) << 2) | (bits(raw, 5, 5) << 6);
            d(Op::Lw, rdp, rs1p, 0, imm as i32)
        }
        (0, 3) => {
            let imm = (bits(raw, 12, 10) << 3) | (bits(raw, 6, 5) << 6);
            d(Op::Ld, rdp, rs1p, 0, imm as i32)
        }
        (0, 6) => {
            let imm = (bits(raw, 12, 10) << 3) | (bits(raw, 6, 6) << 2) | (bits(raw, 5, 5) << 6);
            d(Op::Sw, 0, rs1p, rdp, imm as i32)
        }
        (0, 7) => {
            let imm = (bits(raw, 12, 10) << 3) | (bits(raw, 6, 5) << 6);
            d(Op::Sd, 0, rs1p, rdp, imm as i32)
        }
        (0, _) => reserved,
        // Quadrant 1
        (1, 0) => {
            if rd_full == 0 {
                d(Op::Nop, 0, 0, 0, 0)
            } else {
                d(Op::Addi, rd_full, rd_full, 0, ci_imm)
            }
        }
        (1, 1) => {
            if rd_full == 0 {
                return reserved;
            }
            d(Op::Addiw, rd_full, rd_full, 0, ci_imm)
        }
        (1, 2) => {
            if rd_full == 0 {
                return d(Op::Nop, 0, 0, 0, 0);
            }
            d(Op::Addi, rd_full, 0, 0, ci_imm)
        }
        (1, 3) => {
            if rd_full == 2 {
                let imm = (bits(raw, 12, 12) << 9)
                    | (bits(raw, 6, 6) << 4)
                    | (bits(raw, 5, 5) << 6)
                    | (bits(raw, 4, 3) << 7)
                    | (bits(raw, 2, 2) << 5);
                if imm == 0 {
                    return reserved;
                }
                d(Op::Addi, 2, 2, 0, sext(imm, 10))
            } else {
                if ci_imm == 0 {
                    return reserved;
                }
                if rd_full == 0 {
                    return d(Op::Nop, 0, 0, 0, 0);
                }
                d(Op::Lui, rd_full, 0, 0, ci_imm << 12)
            }
        }
        (1, 4) => match bits(raw, 11, 10) {
            0 => d(Op::Srli, rs1p, rs1p, 0, ci_shamt),
            1 => d(Op::Srai, rs1p, rs1p, 0, ci_shamt),
            2 => d(Op::Andi, rs1p, rs1p, 0, ci_imm),
            _ => {
                let op = match (bits(raw, 12, 12), bits(raw, 6, 5)) {
                    (0, 0) => Op::Sub,
                    (0, 1) => Op::Xor,
                    (0, 2) => Op::Or,
                    (0, 3) => Op::And,
                    (1, 0) => Op::Subw,
                    (1, 1) => Op::Addw,
                    _ => return reserved,
                };
                d(op, rs1p, rs1p, rdp, 0)
            }
        },
        (1, 5) => {
            let imm = (bits(raw, 12, 12) << 11)
                | (bits(raw, 11, 11) << 4)
                | (bits(raw, 10, 9) << 8)
                | (bits(raw, 8, 8) << 10)
                | (bits(raw, 7, 7) << 6)
                | (bits(raw, 6, 6) << 7)
                | (bits(raw, 5, 3) << 1)
                | (bits(raw, 2, 2) << 5);
            d(Op::Jal, 0, 0, 0, sext(imm, 12))
        }
        (1, 6) | (1, 7) => {
            let imm = (bits(raw, 12, 12) << 8)
                | (bits(raw, 11, 10) << 3)
                | (bits(raw, 6, 5) << 6)
                | (bits(raw, 4, 3) << 1)
                | (bits(raw, 2, 2) << 5);
            let op = if f3 == 6 { Op::Beq } else { Op::Bne };
            d(op, 0, rs1p, 0, sext(imm, 9))
        }
        // Quadrant 2
        (2, 0) => {
            if rd_full == 0 {
                return d(Op::Nop, 0, 0, 0, 0);
            }
            d(Op::Slli, rd_full, rd_full, 0, ci_shamt)
        }
        (2, 1) => {
            let imm = (bits(raw, 12, 12) << 5) | (bits(raw, 6, 5) << 3) | (bits(raw, 4, 2) << 6);
            d(Op::Fld, FREG + rd_full, 2, 0, imm as i32)
        }
        (2, 5) => {
            let imm = (bits(raw, 12, 10) << 3) | (bits(raw, 9, 7) << 6);
            d(Op::Fsd, 0, 2, FREG + rs2_full, imm as i32)
        }
        (2, 2) => {
            if rd_full == 0 {
                return reserved;
            }
            let imm = (bits(raw, 12, 12) << 5) | (bits(raw, 6, 4) << 2) | (bits(raw, 3, 2) << 6);
            d(Op::Lw, rd_full, 2, 0, imm as i32)
        }
        (2, 3) => {
            if rd_full == 0 {
                return reserved;
            }
            let imm = (bits(raw, 12, 12) << 5) | (bits(raw, 6, 5) << 3) | (bits(raw, 4, 2) << 6);
            d(Op::Ld, rd_full, 2, 0, imm as i32)
        }
        (2, 4) => {
            let bit12 = bits(raw, 12, 12);
            match (bit12, rd_full, rs2_full) {
                (0, 0, 0) => reserved,
                (0, rs1, 0) => d(Op::Jalr, 0, rs1, 0, 0),
                (0, 0, _) => d(Op::Nop, 0, 0, 0, 0),
                (0, rd, rs2) => d(Op::Add, rd, 0, rs2, 0),
                (_, 0, 0) => d(Op::Ebreak, 0, 0, 0, 0),
                (_, rs1, 0) => d(Op::Jalr, 1, rs1, 0, 0),
                (_, 0, rs2) if (2..=5).contains(&rs2) => d(Op::Ntl, 0, 0, 0, rs2 as i32),
                (_, 0, _) => d(Op::Nop, 0, 0, 0, 0),
                (_, rd, rs2) => d(Op::Add, rd, rd, rs2, 0),
            }
        }
        (2, 6) => {
            let imm = (bits(raw, 12, 9) << 2) | (bits(raw, 8, 7) << 6);
            d(Op::Sw, 0, 2, rs2_full, imm as i32)
        }
        (2, 7) => {
            let imm = (bits(raw, 12, 10) << 3) | (bits(raw, 9, 7) << 6);
            d(Op::Sd, 0, 2, rs2_full, imm as i32)
        }
        _ => reserved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (word, op, rd, rs1, rs2, imm, len); words from binutils 2.40 (`riscv64-linux-gnu-as`, objdump).
    #[rustfmt::skip]
    const CASES: &[(u32, Op, u8, u8, u8, i32, u8)] = &[
        (0x00c58533, Op::Add, 10, 11, 12, 0, 4),
        (0x407302b3, Op::Sub, 5, 6, 7, 0, 4),
        (0xff010113, Op::Addi, 2, 2, 0, -16, 4),
        (0x123457b7, Op::Lui, 15, 0, 0, 0x12345000, 4),
        (0xfffff097, Op::Auipc, 1, 0, 0, -4096, 4),
        (0x001000ef, Op::Jal, 1, 0, 0, 2048, 4),
        (0x00808067, Op::Jalr, 0, 1, 0, 8, 4),
        (0x80b50063, Op::Beq, 0, 10, 11, -4096, 4),
        (0x0062f663, Op::Bgeu, 0, 5, 6, 12, 4),
        (0xff813403, Op::Ld, 8, 2, 0, -8, 4),
        (0x7ff5c503, Op::Lbu, 10, 11, 0, 2047, 4),
        (0x00113c23, Op::Sd, 0, 2, 1, 24, 4),
        (0x80a5a023, Op::Sw, 0, 11, 10, -2048, 4),
        (0x03f51513, Op::Slli, 10, 10, 0, 63, 4),
        (0x42165593, Op::Srai, 11, 12, 0, 33, 4),
        (0xfff5051b, Op::Addiw, 10, 10, 0, -1, 4),
        (0x41f5d51b, Op::Sraiw, 10, 11, 0, 31, 4),
        (0x02c5a533, Op::Mulhsu, 10, 11, 12, 0, 4),
        (0x02f776bb, Op::Remuw, 13, 14, 15, 0, 4),
        (0x1405a52f, Op::LrW, 10, 11, 0, 0, 4),
        (0x1ad7362f, Op::ScD, 12, 14, 13, 0, 4),
        (0x08b6252f, Op::AmoSwapW, 10, 12, 11, 0, 4),
        (0xe6b6352f, Op::AmoMaxuD, 10, 12, 11, 0, 4),
        (0x8063a2af, Op::AmoMinW, 5, 7, 6, 0, 4),
        (0x0330000f, Op::Fence, 0, 0, 0, 0, 4),
        (0x0000100f, Op::FenceI, 0, 0, 0, 0, 4),
        (0x00000073, Op::Ecall, 0, 0, 0, 0, 4),
        (0x00100073, Op::Ebreak, 0, 0, 0, 0, 4),
        (0xc0002573, Op::CsrRead, 10, 0, 0, 0xc00, 4),
        (0xc01025f3, Op::CsrRead, 11, 0, 0, 0xc01, 4),
        (0xc0202673, Op::CsrRead, 12, 0, 0, 0xc02, 4),
        (0x300026f3, Op::BadCsr, 0, 0, 0, 0x300, 4),
        (0xc0051073, Op::BadCsr, 0, 0, 0, 0xc00, 4),
        // Zicbop and Zihintntl (riscv-notes.md)
        (0x00156013, Op::PrefetchR, 0, 10, 0, 0, 4),
        (0x0435e013, Op::PrefetchW, 0, 11, 0, 64, 4),
        (0x00056013 | (0xfe0 << 20), Op::PrefetchI, 0, 10, 0, -32, 4),
        (0x00500033, Op::Ntl, 0, 0, 0, 5, 4),
        (0x00200033, Op::Ntl, 0, 0, 0, 2, 4),
        (0x00600033, Op::Add, 0, 0, 6, 0, 4),
        (0x4b552013, Op::PollEnd, 0, 10, 0, 0, 4), // slti x0, a0, 0x4b5
        (0x4b652013, Op::Slti, 0, 10, 0, 0x4b6, 4), // another SLTI x0: a plain (no-effect) SLTI
        (0x00256013, Op::Nop, 0, 0, 0, 0, 4), // ORI x0 with imm[4:0] = 2: no prefetch kind
        // F and D (f_n is 32 + n)
        (0xffc12007, Op::Flw, 32, 2, 0, -4, 4),
        (0x01f2a027, Op::Fsw, 0, 5, 63, 0, 4),
        (0x6ac59543, Op::FmaddD, 42, 43, 44, 0, 4),
        (0x1820f04b, Op::FnmsubS, 32, 33, 34, 0, 4),
        (0x02c5f553, Op::FaddD, 42, 43, 44, 0, 4),
        (0x08c5b553, Op::FsubS, 42, 43, 44, 0, 4),
        (0x5a0777d3, Op::FsqrtD, 47, 46, 0, 0, 4),
        (0x22b5a553, Op::FsgnjxD, 42, 43, 43, 0, 4),
        (0x283100d3, Op::FminS, 33, 34, 35, 0, 4),
        (0x4015f553, Op::FcvtSD, 42, 43, 0, 0, 4),
        (0x42058553, Op::FcvtDS, 42, 43, 0, 0, 4),
        (0xa2c5a553, Op::FeqD, 10, 43, 44, 0, 4),
        (0xc2159553, Op::FcvtWuD, 10, 43, 0, 0, 4),
        (0xd235f553, Op::FcvtDLu, 42, 11, 0, 0, 4),
        (0xe2050553, Op::FmvXD, 10, 42, 0, 0, 4),
        (0xe00095d3, Op::FclassS, 11, 33, 0, 0, 4),
        (0xf0078053, Op::FmvWX, 32, 15, 0, 0, 4),
        (0x00302573, Op::CsrFp, 10, 0, 0, 3, 4),  // frcsr a0
        (0x002615f3, Op::CsrFp, 11, 12, 0, 2, 4), // fsrm a1, a2
        (0x0012d073, Op::CsrFp, 0, 0, 0, 1, 4),   // fsflagsi 5 (the immediate stays in raw)
        (0x2588, Op::Fld, 42, 11, 0, 8, 2),
        (0xa904, Op::Fsd, 0, 10, 41, 16, 2),
        (0xbd70, Op::Fsd, 0, 10, 44, 248, 2),
        (0x2406, Op::Fld, 40, 2, 0, 64, 2),
        (0xbf82, Op::Fsd, 0, 2, 32, 504, 2),
        // compressed
        (0x0808, Op::Addi, 10, 2, 0, 16, 2),
        (0x414c, Op::Lw, 11, 10, 0, 4, 2),
        (0x6510, Op::Ld, 12, 10, 0, 8, 2),
        (0xc14c, Op::Sw, 0, 10, 11, 4, 2),
        (0xfd70, Op::Sd, 0, 10, 12, 248, 2),
        (0x0001, Op::Nop, 0, 0, 0, 0, 2),
        (0x157d, Op::Addi, 10, 10, 0, -1, 2),
        (0x2505, Op::Addiw, 10, 10, 0, 1, 2),
        (0x5781, Op::Addi, 15, 0, 0, -32, 2),
        (0x7101, Op::Addi, 2, 2, 0, -512, 2),
        (0x65fd, Op::Lui, 11, 0, 0, 0x1f000, 2),
        (0x917d, Op::Srli, 10, 10, 0, 63, 2),
        (0x8585, Op::Srai, 11, 11, 0, 1, 2),
        (0x9a7d, Op::Andi, 12, 12, 0, -1, 2),
        (0x8d0d, Op::Sub, 10, 10, 11, 0, 2),
        (0x8d2d, Op::Xor, 10, 10, 11, 0, 2),
        (0x8d4d, Op::Or, 10, 10, 11, 0, 2),
        (0x8d6d, Op::And, 10, 10, 11, 0, 2),
        (0x9d0d, Op::Subw, 10, 10, 11, 0, 2),
        (0x9d2d, Op::Addw, 10, 10, 11, 0, 2),
        (0xb001, Op::Jal, 0, 0, 0, -2048, 2),
        (0xd101, Op::Beq, 0, 10, 0, -256, 2),
        (0xedfd, Op::Bne, 0, 11, 0, 254, 2),
        (0x0506, Op::Slli, 10, 10, 0, 1, 2),
        (0x557e, Op::Lw, 10, 2, 0, 252, 2),
        (0x70fe, Op::Ld, 1, 2, 0, 504, 2),
        (0x8082, Op::Jalr, 0, 1, 0, 0, 2),
        (0x852e, Op::Add, 10, 0, 11, 0, 2),
        (0x9002, Op::Ebreak, 0, 0, 0, 0, 2),
        (0x9782, Op::Jalr, 1, 15, 0, 0, 2),
        (0x952e, Op::Add, 10, 10, 11, 0, 2),
        (0xdfaa, Op::Sw, 0, 2, 10, 252, 2),
        (0xff86, Op::Sd, 0, 2, 1, 504, 2),
        (0x900a, Op::Ntl, 0, 0, 0, 2, 2),
        (0x9016, Op::Ntl, 0, 0, 0, 5, 2),
        (0x802a, Op::Nop, 0, 0, 0, 0, 2),
    ];

    #[test]
    fn known_encodings() {
        for &(word, op, rd, rs1, rs2, imm, len) in CASES {
            let d = decode(word);
            assert_eq!((d.op, d.rd, d.rs1, d.rs2, d.imm, d.len), (op, rd, rs1, rs2, imm, len), "word {word:#010x}");
            assert_eq!(d.raw, word);
        }
    }

    #[test]
    fn illegal_forms_have_reasons() {
        for (word, why) in [
            (0x06c5f553u32, R_FLOAT), // fadd.q
            (0x02c5d553, R_RM),       // fadd.d with rm = 5
            (0x02c5e553, R_RM),       // fadd.d with rm = 6
            (0x0000, R_ZERO),
            (0x6001, R_RESERVED),   // c.lui x0, 0 / c.addi16sp 0 family: nzimm = 0
            (0x6101, R_RESERVED),   // c.addi16sp sp, 0
            (0x8002, R_RESERVED),   // c.jr x0
            (0x4002, R_RESERVED),   // c.lwsp x0
            (0x2001, R_RESERVED),   // c.addiw x0
            (0x30200073, R_SYSTEM), // mret
            (0xffffffff, R_UNKNOWN),
            (0x0200101b, R_UNKNOWN), // slliw with shamt[5] set
        ] {
            let d = decode(word);
            assert_eq!((d.op, d.imm), (Op::Illegal, why), "word {word:#x}");
            assert!(!d.illegal_reason().is_empty());
        }
    }

    #[test]
    fn decoded_is_compact() {
        assert_eq!(std::mem::size_of::<Decoded>(), 16);
    }
}
