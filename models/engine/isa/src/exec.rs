//! The executor: runs one hart for up to a budget of instructions out of pre-decoded blocks (`blocks`).
//!
//! It is generic over an `ExecHook` (the timing model's tap) and over whether hart 0's trace is being written,
//! so functional mode compiles to handlers with neither: `NoHook::ACTIVE` is false and the InstInfo is never built.
//! A block runs as a chain of handlers, one per operation, each jumping to the next instruction's (`handlers`);
//! this loop goes from block to block, checks the budget once per block and follows the blocks' links.

pub use crate::hook::{ExecHook, NoHook, Stop, Tracer, NO_DEADLINE, PARKED_PS};
pub use crate::inst_timing::{mem_size, op_class};

use crate::blocks::{Block, Inst, Link, MAX_INSTS};
use crate::decode::{Decoded, Op};
use crate::handlers::{dispatch, functional_handler, thread, Ctx, Exit, HotCounts, CHAIN_INSTS};
use crate::hart::Hart;
use crate::memory::Memory;

/// Run `h` for at most `budget` instructions. `TRACE` writes a trace line before each instruction.
#[inline(always)]
pub fn run<H: ExecHook, const TRACE: bool>(
    h: &mut Hart,
    mem: &mut Memory,
    budget: u64,
    hook: &mut H,
    tracer: Option<&mut Tracer>,
) -> Stop {
    run_until::<H, TRACE>(h, mem, budget, NO_DEADLINE, hook, tracer)
}

/// `run`, and with a timing hook (`ExecHook::time_ps`) stop also after the first instruction at which the hart's
/// time reaches `deadline` (ps): FS mode's detailed runs stop there to take a timer interrupt or a device's event at
/// its tick, where the number of instructions before it is not known ahead. The check follows the hook's record of
/// each instruction, so a run without a deadline (or without a timing hook) pays nothing for it.
#[inline(never)]
pub fn run_until<H: ExecHook, const TRACE: bool>(
    h: &mut Hart,
    mem: &mut Memory,
    budget: u64,
    deadline: u64,
    hook: &mut H,
    tracer: Option<&mut Tracer>,
) -> Stop {
    let generation = mem.code_generation();
    // The hook may take a block's records together where nothing needs its time between them: no deadline, and
    // SE mode (in FS mode a record is timed over the guest's page tables as they are when it retires).
    let batch = H::BATCHES && deadline == NO_DEADLINE && !mem.full_system();
    let x = h.x.as_mut_ptr();
    let mut c = Ctx {
        resume: h.pc,
        h,
        mem,
        hook,
        tracer: tracer.map_or(std::ptr::null_mut(), |t| t as *mut Tracer),
        block: std::ptr::null(),
        block_pc: 0,
        budget,
        deadline,
        cut: false,
        chain_end: 0,
        n: 0,
        generation,
        exit: Exit::Follow,
        exit_idx: 0,
        stop: None,
        cnt: HotCounts::default(),
        batch,
        handed: 0,
    };
    // The block at `c.resume` when an exit's link gave it (no lookup needed), else null.
    let mut chained: *const Block = std::ptr::null();
    // The link to point at the block at `c.resume` after its lookup; null when there is none to fill, or when
    // decoded code changed (the lookup then empties the cache, the block holding the link with it).
    let mut link_from: *const Link = std::ptr::null();
    // The first instructions of a block that the budget ends inside, and an end marker after them.
    let mut partial = [const { std::mem::MaybeUninit::<Inst>::uninit() }; MAX_INSTS + 1];
    // A block at a time: its instructions run without a lookup each, the budget checked once per block. A store
    // that changes decoded code (the generation moves) ends the block after it. Within a block the PC is not
    // carried from instruction to instruction: an instruction that needs its own (auipc, jumps, branches, traps,
    // the hook) derives it from the block's PC and its offset (`Decoded::at`).
    let stop = loop {
        // The budget may have been cut short by the deadline (`Ctx::cut`).
        let budget = c.budget;
        if c.n >= budget {
            break Stop::Budget;
        }
        // SAFETY: `c.mem` is the `mem` borrowed for the whole run; no handler runs during the lookup.
        let mem = unsafe { &mut *c.mem };
        let block: &Block = if !chained.is_null() {
            // SAFETY: a link is followed only while decoded code is unchanged since the block holding it was looked
            // up, so the block it points at (looked up under the same generation) is still in the cache.
            unsafe { &*chained }
        } else {
            match mem.block(c.resume) {
                Ok(b) => {
                    // SAFETY: the block is cached (just looked up).
                    thread(unsafe { &*b });
                    if !link_from.is_null() && mem.code_generation() == c.generation {
                        // SAFETY: decoded code is unchanged, so the block holding the link is still cached.
                        unsafe { (*link_from).set((c.resume, b)) };
                    }
                    c.generation = mem.code_generation();
                    // SAFETY: the block stays in the cache until a lookup after decoded code changed.
                    unsafe { &*b }
                }
                Err(t) => break Stop::Fault(t),
            }
        };
        let first: *const Inst = if block.count <= budget - c.n {
            block.insts.as_ptr()
        } else {
            // The budget ends inside the block: run a copy of its first instructions, ended by a marker whose offset
            // is that of the first one left out.
            let k = (budget - c.n) as usize;
            let buf = partial.as_mut_ptr() as *mut Inst;
            // SAFETY: k < count <= MAX_INSTS, so the copy and the marker fit in `partial`. The copies keep their
            // `idx`, which the marker continues.
            unsafe {
                std::ptr::copy_nonoverlapping(block.insts.as_ptr(), buf, k);
                let end = Inst::new(Decoded { at: block.insts[k].at, idx: k as u8, ..Decoded::UNDECODED });
                end.run.set(functional_handler(Op::Undecoded));
                buf.add(k).write(end);
            }
            buf
        };
        c.block = block;
        c.block_pc = block.pc;
        c.handed = 0;
        c.chain_end = budget.min(c.n + CHAIN_INSTS);
        // SAFETY: `first` starts a run of decoded instructions ended by a marker, inside the block or `partial`;
        // the handlers reach the hart, memory and hook only through `c`, which holds this run's borrows.
        unsafe { dispatch::<H, TRACE>(&mut c, first as *const Decoded, x) };
        match c.exit {
            Exit::Follow => {
                // Go on through the link of the exit that left the last block run (a block the chain went on to,
                // perhaps) if it is for `c.resume`, else through a lookup that fills it.
                // SAFETY: that block is cached (no change to decoded code on the way); every instruction's idx,
                // and the end marker's, is below links.len() (Block::new).
                let links: &[Link] = unsafe { &(*c.block).links };
                let link: &Link = unsafe { links.get_unchecked(c.exit_idx as usize) };
                let (linked_pc, linked) = link.get();
                chained = if linked_pc == c.resume { linked } else { std::ptr::null() };
                link_from = link;
            }
            Exit::Changed => {
                chained = std::ptr::null();
                link_from = std::ptr::null();
            }
            Exit::Stop => break c.stop.take().expect("a handler that stops the run says why"),
        }
    };
    // SAFETY: the handlers are done; `c.h` is the `h` borrowed for the run.
    let h = unsafe { &mut *c.h };
    h.pc = c.resume;
    h.cnt.insts += c.n;
    c.cnt.add_to(h);
    stop
}
