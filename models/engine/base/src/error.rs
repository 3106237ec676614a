//! Every way a run can fail. Each variant becomes the Python exception of the same name in `models/errors.py`.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum FaultKind {
    /// Undecodable or unsupported instruction.
    IllegalInstruction,
    /// Misaligned or unmapped access.
    Memory,
    /// Touching a new page would exceed the configured guest memory limit.
    MemoryLimit,
    /// A system or simulator call the engine does not implement.
    UnsupportedSyscall,
    /// Every live thread waits (futex) and nothing can wake it.
    Deadlock,
    /// A simulator call's argument names something the system does not have (a NUMA socket).
    BadSimcall,
    /// FS mode: the guest reset the machine (a kernel panic) or stopped where the machine cannot go on.
    Halted,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The configuration is inconsistent.
    Config(String),
    /// The workload binary is missing or malformed.
    Elf(String),
    /// The guest did something the machine cannot do.
    Guest { kind: FaultKind, hart: usize, pc: u64, insn: u32, reason: String },
    /// The ghost client found a wrong or missing response (a wrong value, an unexplained miss, a response to a
    /// request never sent, or no response at all).
    Client(String),
    /// An internal error (also what a caught panic becomes).
    Bug(String),
    /// A progress report found a pending signal (Ctrl-C): the driver stops the run and keeps its results.
    Interrupted,
}

impl SimError {
    /// Name of the Python exception class in `models.errors`.
    pub fn python_class(&self) -> &'static str {
        match self {
            SimError::Config(_) => "ConfigError",
            SimError::Elf(_) => "ElfError",
            SimError::Guest { kind, .. } => match kind {
                FaultKind::IllegalInstruction => "IllegalInstruction",
                FaultKind::Memory => "MemoryFault",
                FaultKind::MemoryLimit => "MemoryLimitExceeded",
                FaultKind::UnsupportedSyscall => "UnsupportedSyscall",
                FaultKind::Deadlock => "GuestDeadlock",
                FaultKind::BadSimcall => "BadSimcall",
                FaultKind::Halted => "GuestHalted",
            },
            SimError::Client(_) => "ClientCheckFailed",
            SimError::Bug(_) | SimError::Interrupted => "EngineBug",
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Config(m) => write!(f, "configuration error: {m}"),
            SimError::Elf(m) => write!(f, "bad ELF: {m}"),
            SimError::Guest { hart, pc, insn, reason, .. } => {
                write!(f, "hart {hart} at pc {pc:#x} (insn {insn:#010x}): {reason}")
            }
            SimError::Client(m) => write!(f, "client check failed: {m}"),
            SimError::Bug(m) => write!(f, "engine bug: {m}"),
            SimError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for SimError {}

pub type SimResult<T> = Result<T, SimError>;
