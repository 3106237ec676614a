//! What the executor tells others: the timing model's tap (`ExecHook`), why a run stopped (`Stop`), hart 0's
//! lockstep trace (`Tracer`). `exec` re-exports them, with an operation's class and access size (`inst_timing`).

use std::io::Write;

use kvsim_timing::inst::InstInfo;

use crate::hart::REGISTERS;
use crate::trap::Trap;

/// What a timing model sees: called after every executed instruction when `ACTIVE`.
/// The other methods have do-nothing defaults; a timing model overrides them (see the engine's driver).
pub trait ExecHook {
    const ACTIVE: bool;
    /// The hook is cache warming alone (`TimingSystem::warm`): the executor does not call it for an instruction
    /// warming does nothing for, known when its block is built (`Block::warm_quiet`). Most instructions are such.
    const SKIPS_WARM_QUIET: bool = false;
    fn on_inst(&mut self, hart: usize, info: &InstInfo);
    /// The hook takes the records of a block's instructions together (`on_insts`), after they ran, where nothing
    /// between them needs the hook: an SE-mode run with no deadline (`exec::run_until`). The executor then
    /// hands them over at the block's exit, and before any call that reads the hook's state in the block (a
    /// poll-end hint, rdtime). Functional execution never reads the timing, so each instruction is timed as if
    /// its record had come alone, in the same order.
    const BATCHES: bool = false;
    /// Records of instructions that retired one after another on `hart`, oldest first: `on_inst` of each.
    #[inline(always)]
    fn on_insts(&mut self, hart: usize, infos: &[InstInfo]) {
        for info in infos {
            self.on_inst(hart, info);
        }
    }
    /// FS mode: `on_inst` with the guest's memory, whose page tables a timing model translates over (its TLBs
    /// and walks, `kvsim_timing::tlb_guest`); without one, `on_inst`.
    #[inline(always)]
    fn on_inst_fs(&mut self, hart: usize, info: &InstInfo, _tables: &mut crate::memory::Memory) {
        self.on_inst(hart, info);
    }
    /// FS mode: the guest flushed `hart`'s translations (sfence.vma, a remote fence).
    fn flush_translations(&mut self, _hart: usize) {}
    /// The simulated time `hart` has reached (ps), when this hook keeps time; the scheduler then runs the hart
    /// furthest behind, and clock_gettime/rdtime read it.
    #[inline(always)]
    fn time_ps(&self, _hart: usize) -> Option<u64> {
        None
    }
    /// FS mode: `hart` sleeps in wfi until `t` (ps, the hook's time scale); a timing model moves its core's clock
    /// there (the sleep is time, not work).
    fn sleep_until(&mut self, _hart: usize, _t: u64) {}
    /// `hart` executed a poll-end hint (workloads/ABI.md): the poll that ends with it found no frame (`idle`) or
    /// found frames. Called before `on_inst` of the hint itself.
    fn poll_end(&mut self, _hart: usize, _idle: bool) {}
    /// The guest reset the statistics (ROI_BEGIN, STATS_RESET).
    fn reset_stats(&mut self) {}
    /// Append this hook's statistics (a STATS_DUMP snapshot, the end of the run).
    fn append_stats(&self, _out: &mut Vec<kvsim_base::output::Stat>) {}
    /// A DMA access by I/O agent `agent` (a NIC: harts + its index) to the line at `addr` at time `t` (ps, the
    /// hook's time scale), for hart `owner` when one owns it (the hart of the NIC queue it serves): returns when
    /// it completes. Without a memory-system model, at once.
    fn io_access(&mut self, _agent: usize, _owner: Option<usize>, _addr: u64, _write: bool, t: u64) -> u64 {
        t
    }
    /// The engine placed guest addresses [start, start + len) on `socket`'s memory (`Machine::place_numa`): a
    /// timing model moves those lines' home there. The socket exists in the engine's map; an error says the
    /// hook's own map refused the placement (the two maps disagree), and the run stops with it.
    fn numa_placed(&mut self, _start: u64, _len: u64, _socket: u16) -> Result<(), String> {
        Ok(())
    }
    /// The engine mapped guest addresses [start, start + len) with 2 MB pages (a hugepage allocation): a timing
    /// model's MMU translates them with 2 MB pages.
    fn huge_mapped(&mut self, _start: u64, _len: u64) {}
    /// The partitioned schedule reached a window's end (or stops inside one): what the partitions posted each other
    /// during the window takes effect now, in a fixed order.
    fn window_end(&mut self) {}
}

/// No deadline (`exec::run_until`).
pub const NO_DEADLINE: u64 = u64::MAX;

pub use crate::hart::PARKED_PS;

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
    pub fn record(&mut self, pc: u64, x: &[u64; REGISTERS]) {
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
