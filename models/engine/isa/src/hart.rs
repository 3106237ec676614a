//! One hardware thread: its integer and floating-point registers, fcsr, PC, instruction count and activity
//! counters.

/// A hart blocked in FUTEX_WAIT (the os crate's futex sets and clears it; the scheduler skips such a hart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FutexWait {
    pub addr: u64,
    pub has_timeout: bool,
}

macro_rules! counters {
    ($($field:ident: $desc:literal),* $(,)?) => {
        /// Activity counters of one hart (the `system.hartN.*` statistics). Plain fields, so the executor's
        /// increments compile to single adds.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub struct Counters {
            $(#[doc = $desc] pub $field: u64,)*
        }

        impl Counters {
            /// (name, value, description) in the stable order the stats are reported in.
            pub fn named(&self) -> Vec<(&'static str, u64, &'static str)> {
                vec![$((stringify!($field), self.$field, $desc)),*]
            }

            /// Counts since `base` (a snapshot taken at a stats reset).
            pub fn minus(&self, base: &Counters) -> Counters {
                Counters { $($field: self.$field - base.$field),* }
            }
        }
    };
}

counters! {
    insts: "instructions executed",
    loads: "load instructions executed (not counting atomics)",
    stores: "store instructions executed (not counting atomics)",
    branches: "conditional branches executed",
    taken_branches: "conditional branches taken",
    jumps: "jal/jalr executed",
    atomics: "LR, SC and AMO instructions executed",
    prefetches: "Zicbop prefetch hints executed",
    ntl_hints: "Zihintntl non-temporal hints executed",
    fences: "fence and fence.i instructions executed",
    syscalls: "Linux system calls made",
    simcalls: "simulator calls made",
    fp_ops: "floating-point computational instructions executed (F/D, not counting loads and stores)",
    polls_idle: "polls of a server loop that found no frame (poll-end hints with rs1 = 0)",
    polls_busy: "polls of a server loop that found frames (poll-end hints with rs1 > 0)",
    idle_poll_insts: "instructions of the polls that found no frame (from the previous poll-end hint to this one)",
    busy_poll_insts: "instructions of the polls that found frames: receiving, processing and answering them",
}

/// Slots of `Hart::x`: 64 registers and `DISCARD`.
pub const REGISTERS: usize = 65;
/// The slot of `Hart::x` that writes to x0 go to (`Decoded::wd`); never read as a register.
pub const DISCARD: usize = 64;

/// Serde: a checkpoint saves every hart whole (checkpoint.rs), so a new field is saved with no other change.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Hart {
    pub id: usize,
    /// x0..x31, then f0..f31 at 32..63 (one file, as the decoder numbers them; see `isa::decode::FREG`), then
    /// `DISCARD`, where the executor puts what an instruction writes to x0 (so x0 stays 0 without a store after
    /// every write). Checkpoints hold the 64 registers.
    #[serde(with = "register_file")]
    pub x: [u64; REGISTERS],
    /// The floating-point control and status register: frm in bits 7:5, fflags in bits 4:0.
    pub fcsr: u32,
    pub pc: u64,
    /// Clock (Hz) that turns this hart's instruction count into time in functional mode.
    pub clock: u64,
    /// `cnt.insts` is the total number of instructions this hart has executed.
    pub cnt: Counters,
    /// Counter values at the last stats reset.
    pub base: Counters,
    pub exit_code: Option<i64>,
    /// The hart has stopped (its own exit, or another hart's exit_group).
    pub ended: bool,
    /// Not running a thread: a Linux process's hart before `clone` starts a thread on it, or after its thread
    /// exited (see the os crate's threads).
    pub idle: bool,
    /// Blocked in FUTEX_WAIT.
    pub futex: Option<FutexWait>,
    /// A Zihintntl hint is waiting for the next memory instruction (tracked only when a timing hook listens).
    pub ntl_pending: bool,
    /// Simulated time (ps) from the timing model, once detailed timing has started (None: functional time).
    pub timed_ps: Option<u64>,
    /// `cnt.insts` after the latest poll-end hint (the next poll's instructions start after it).
    #[serde(default)]
    pub poll_mark: u64,
    /// FS mode: time spent asleep in wfi (ps), which functional time adds to the instructions' time. Always 0 in
    /// SE mode.
    #[serde(default)]
    pub idle_ps: u64,
}

impl Hart {
    pub fn new(id: usize, pc: u64, sp: u64, clock: u64) -> Hart {
        let mut x = [0u64; REGISTERS];
        x[2] = sp;
        Hart {
            id,
            x,
            fcsr: 0,
            pc,
            clock,
            cnt: Counters::default(),
            base: Counters::default(),
            exit_code: None,
            ended: false,
            idle: false,
            futex: None,
            ntl_pending: false,
            timed_ps: None,
            poll_mark: 0,
            idle_ps: 0,
        }
    }

    /// Will not run again (stopped, or idle until a clone).
    pub fn exited(&self) -> bool {
        self.ended || self.idle
    }

    /// Can be scheduled now (not exited, not blocked on a futex).
    #[inline]
    pub fn runnable(&self) -> bool {
        !self.exited() && self.futex.is_none()
    }

    /// Simulated time of this hart in picoseconds: the timing model's once detailed timing has started, else one
    /// cycle per instruction at `clock`.
    pub fn time_ps(&self) -> u64 {
        match self.timed_ps {
            Some(t) => t,
            None => insts_to_ps(self.cnt.insts, self.clock) + self.idle_ps,
        }
    }

    /// The `time` CSR in functional mode after `retired` instructions: timebase ticks (abi::TIMEBASE_HZ) of the
    /// instructions' time at `clock` plus the time asleep, rounded down. Without sleep this is
    /// retired * TIMEBASE_HZ / clock, as SE mode has always read it.
    #[inline]
    pub fn functional_time_ticks(&self, retired: u64) -> u64 {
        time_ticks(retired, self.clock, self.idle_ps)
    }
}

/// `Hart::functional_time_ticks` from the fields it reads (the executor holds the registers borrowed).
#[inline]
pub fn time_ticks(retired: u64, clock: u64, idle_ps: u64) -> u64 {
    let clock = clock.max(1) as u128;
    let num = (retired as u128 * 1_000_000_000_000 + idle_ps as u128 * clock) * kvsim_base::abi::TIMEBASE_HZ as u128;
    (num / (clock * 1_000_000_000_000)) as u64
}

pub fn insts_to_ps(insts: u64, clock: u64) -> u64 {
    ((insts as u128 * 1_000_000_000_000u128) / clock.max(1) as u128).min(u64::MAX as u128) as u64
}

/// serde for the 64-entry register file (serde's own arrays stop at 32): a list of 64 numbers.
mod register_file {
    use super::REGISTERS;

    pub fn serialize<S: serde::Serializer>(x: &[u64; REGISTERS], s: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&x[..64], s)
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[u64; REGISTERS], D::Error> {
        let v: Vec<u64> = serde::Deserialize::deserialize(d)?;
        if v.len() != 64 {
            return Err(serde::de::Error::invalid_length(v.len(), &"64 registers (x0..x31, f0..f31)"));
        }
        let mut x = [0u64; REGISTERS];
        x[..64].copy_from_slice(&v);
        Ok(x)
    }
}

/// The time a timing hook reports for a hart whose instruction waits for the partitioned schedule's window's end (a
/// remote miss, `kvsim_timing::parked`): past every window's end and below `NO_DEADLINE`, so that a run with this
/// deadline ends the hart's turn after that instruction. Not a time the hart has reached (`sim_ticks`).
pub const PARKED_PS: u64 = u64::MAX - 1;

/// The simulated time of a machine (ps): the furthest any of its harts has got (a hart whose instruction is parked
/// until the window's end, `PARKED_PS`, has not got past it: left out).
pub fn sim_ticks(harts: &[Hart]) -> u64 {
    harts.iter().map(|h| h.time_ps()).filter(|&t| t != PARKED_PS).max().unwrap_or(0)
}
