//! What the functional executor tells a timing model about each instruction it has just executed.
//! The executor fills this only when a timing model is attached, so functional mode pays nothing for it.

/// The resource class of an instruction: decides its functional unit and latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InstClass {
    #[default]
    IntAlu,
    IntMul,
    IntDiv,
    Load,
    Store,
    /// LR, SC and AMOs: a load and a store to one address, ordered.
    Atomic,
    /// Conditional branch.
    Branch,
    /// JAL / JALR (calls, returns, indirect jumps).
    Jump,
    Fence,
    /// ecall / ebreak / CSR access: serialising.
    System,
    /// Zicbop prefetch (see `prefetch_kind`).
    Prefetch,
    /// An instruction with no effect (including Zihintntl hints, which set `non_temporal` on the next access).
    Nop,
    /// F/D add, subtract, compare, min/max, sign injection, classify and moves between register files.
    FpAdd,
    FpMul,
    /// Fused multiply-add (three sources: `src3`).
    FpFma,
    /// Conversions between FP formats and to/from integers.
    FpCvt,
    /// FP divide and square root share the unpipelined divider.
    FpDiv,
    FpSqrt,
}

impl InstClass {
    /// The number of classes (a counter per class is indexed by `class as usize`).
    pub const COUNT: usize = InstClass::FpSqrt as usize + 1;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrefetchKind {
    #[default]
    Read,
    Write,
    Instruction,
}

/// One executed instruction. Register numbers are 0..=31 for x0..x31 and 32..=63 for f0..f31; 0 means "none"
/// (x0 is never a dependence).
#[derive(Debug, Clone, Copy, Default)]
pub struct InstInfo {
    pub pc: u64,
    /// Instruction length in bytes (2 for compressed, 4 otherwise).
    pub len: u8,
    pub class: InstClass,
    pub dst: u8,
    pub src1: u8,
    pub src2: u8,
    /// The third source of a fused multiply-add (0 otherwise).
    pub src3: u8,
    /// Effective address of a load, store, atomic or prefetch.
    pub mem_addr: u64,
    /// Access size in bytes (0 if no memory access).
    pub mem_size: u8,
    /// Branch outcome (true for jumps).
    pub taken: bool,
    /// Next PC actually executed.
    pub next_pc: u64,
    /// Preceded by a Zihintntl hint: non-temporal access.
    pub non_temporal: bool,
    pub prefetch_kind: PrefetchKind,
    /// A fence whose orderings a TSO core keeps by itself: its predecessor set has no writes (W, O) or its successor
    /// set no reads (R, I), so it asks no store to drain before a later load (`Core.tso_fences`). False for every
    /// other instruction, FENCE.I, PAUSE and the fences that order writes before reads.
    pub tso_implied: bool,
}
