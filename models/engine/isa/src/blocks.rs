//! Pre-decoded blocks: the instructions from a PC up to the next unconditional control transfer (or a page end, or
//! `MAX_INSTS`), decoded once and kept contiguous, so the executor runs a block without looking up each
//! instruction, and checks its budget once per block. A conditional branch does not end a block: taken, it leaves
//! the block (a side exit); not taken, the block goes on, so that the lookup and set-up of a block are paid once
//! per taken transfer rather than once per branch (kvmix: 5.5 instructions a block when every branch ended one).
//!
//! A block ends in a marker (`Op::Undecoded`, never a decoded instruction), so the executor's loop over a block
//! has no end test: reaching the marker is the fall-through exit. A block's exits remember the block they led to
//! last (`Block::links`, checked by PC), so going from block to block usually needs no lookup. A link is followed
//! only while decoded code is unchanged since the block holding it was looked up: every change to decoded code
//! inside the executor (a store into it, fence.i) ends the block without a link, and the lookup after it empties
//! the cache, links and all; changes made outside (system calls, the loader, a checkpoint) come before the
//! executor's first lookup.
//!
//! Invalidation is by generation: guest memory counts every change to decoded code (a store to a page holding
//! decoded instructions, fence.i, unmapping or losing execute permission: `Memory::code_generation`), and the cache
//! empties itself at its next lookup after a change. The executor checks the generation after every store, so a
//! store into the running block takes effect from the next instruction, as with the decoded-instruction cache.

use kvsim_timing::inst::InstInfo;
use kvsim_timing::system::TimingSystem;

use crate::decode::{Decoded, Op};
use crate::inst_timing::static_info;
use crate::page_map::PageMap;

/// Longest block (instructions).
pub const MAX_INSTS: usize = 64;
/// Entries of the direct-mapped table in front of the map (a power of two).
const TABLE: usize = 4096;
const NO_PC: u64 = u64::MAX;

/// The block an exit of a block led to last: (its PC, the block), or (`NO_PC`, null).
pub type Link = std::cell::Cell<(u64, *const Block)>;

/// An instruction of a block: the decoded record, and the handler that runs it in a functional run (no hook, no
/// trace), so that such a run goes from one instruction to the next by one load and one jump, with no table in
/// between (threaded dispatch). Runs with a hook or a trace find their handler through their table by `op`
/// (`handlers::dispatch`), as the record is shared by every kind of run. The handler is set when the executor
/// first looks the block up (`handlers::thread`; null before), which keeps this module free of the handlers'.
#[repr(C)]
pub struct Inst {
    /// First, so that a pointer to an `Inst` is one to its `Decoded` (the handlers take the latter).
    pub d: Decoded,
    /// The functional run's handler of `d.op`, as an untyped pointer.
    pub(crate) run: std::cell::Cell<*const ()>,
}

impl Inst {
    pub(crate) fn new(d: Decoded) -> Inst {
        Inst { d, run: std::cell::Cell::new(std::ptr::null()) }
    }
}

impl std::ops::Deref for Inst {
    type Target = Decoded;
    fn deref(&self) -> &Decoded {
        &self.d
    }
}

/// The L1I line (log2 bytes) blocks are built for until a warming hook sets its own (`Memory::set_warm_fetch_shift`):
/// the shipped configurations' 64-byte line, so their runs build their blocks once.
pub const DEFAULT_WARM_FETCH_SHIFT: u32 = 6;

pub struct Block {
    /// The PC of its first instruction.
    pub pc: u64,
    /// The number of instructions (the end marker not counted).
    pub count: u64,
    /// The block's instructions (each with its `at` and `idx`), then the end marker: `Op::Undecoded`, its `at` the
    /// offset of the instruction after the block (where the fall-through exit goes on), its `idx` the number of
    /// instructions.
    pub insts: Vec<Inst>,
    /// The link of each exit, by the `idx` of the instruction it leaves from (a taken branch, a jump, the end
    /// marker's fall-through).
    pub links: Vec<Link>,
    /// Its instructions hold their functional-run handlers (`Inst::run`).
    pub(crate) threaded: std::cell::Cell<bool>,
    /// Each instruction's record for a timing hook, by `idx`: its static part (PC, class, registers, access size)
    /// computed here once, the dynamic part written by the executor as each instance retires
    /// (`handlers::retire_hook`). Building the whole record per retired instruction was the largest part of the
    /// hook's own cost. Apart from the `Inst`s, so functional runs do not step over it.
    pub(crate) timing: Box<[std::cell::UnsafeCell<InstInfo>]>,
    /// Bit i: cache warming does nothing for instruction i (`TimingSystem::warm_quiet`: no data access, and it
    /// fetches from the L1I line (of 2^`warm_shift` bytes, `Block::new`) of instruction i - 1, which ran just before it on the same hart, as a block is only
    /// entered at its first instruction); nor does the executor, but for a Zihintntl hint (the hart's pending
    /// non-temporal flag). A warming hook is not called for these (`ExecHook::SKIPS_WARM_QUIET`).
    pub(crate) warm_quiet: u64,
}

impl Block {
    /// The block at `pc` of `insts` (decoded), ending at `end` half-words from its start; its `warm_quiet` bits
    /// for L1I lines of 2^`warm_shift` bytes.
    pub fn new(pc: u64, insts: Vec<Decoded>, end: u8, warm_shift: u32) -> Block {
        let mut insts: Vec<Inst> =
            insts.into_iter().enumerate().map(|(i, d)| Inst::new(Decoded { idx: i as u8, ..d })).collect();
        insts.push(Inst::new(Decoded { at: end, idx: insts.len() as u8, ..Decoded::UNDECODED }));
        let links = (0..insts.len()).map(|_| std::cell::Cell::new((NO_PC, std::ptr::null()))).collect();
        let count = insts.len() - 1;
        let info: Vec<InstInfo> =
            insts[..count].iter().map(|i| static_info(i, pc.wrapping_add(2 * i.at as u64))).collect();
        let warm_quiet = (1..count)
            .filter(|&i| insts[i].op != Op::Ntl && TimingSystem::warm_quiet(info[i - 1].pc, &info[i], warm_shift))
            .fold(0u64, |m, i| m | 1 << i);
        let timing = info.into_iter().map(Into::into).collect();
        Block { pc, count: count as u64, insts, links, threaded: std::cell::Cell::new(false), timing, warm_quiet }
    }

    /// The instructions, without the end marker.
    pub fn instructions(&self) -> &[Inst] {
        &self.insts[..self.count as usize]
    }
}

/// Does a block end after this operation? Unconditional control transfers (the next PC is never the following
/// instruction) and the operations that stop the executor or change decoded code. Conditional branches are side
/// exits (see the module doc).
pub fn ends_block(op: Op) -> bool {
    use Op::*;
    matches!(op, Jal | Jalr | Ecall | Ebreak | FenceI | BadCsr | Illegal)
}

pub struct BlockCache {
    map: PageMap<Box<Block>>,
    table: Box<[(u64, *const Block)]>,
    generation: u64,
}

impl Default for BlockCache {
    fn default() -> Self {
        BlockCache {
            map: PageMap::default(),
            table: vec![(NO_PC, std::ptr::null()); TABLE].into_boxed_slice(),
            generation: 0,
        }
    }
}

impl BlockCache {
    /// The block at `pc` if cached and decoded code has not changed since (generation `generation`).
    #[inline(always)]
    pub fn get(&mut self, pc: u64, generation: u64) -> Option<*const Block> {
        if generation != self.generation {
            self.clear(generation);
            return None;
        }
        // SAFETY: the index is masked to the table's size.
        let e = unsafe { *self.table.get_unchecked((pc >> 1) as usize & (TABLE - 1)) };
        if e.0 == pc {
            return Some(e.1);
        }
        let b: *const Block = &**self.map.get(&pc)?;
        self.table[(pc >> 1) as usize & (TABLE - 1)] = (pc, b);
        Some(b)
    }

    /// Keep `block` as the block at `pc`. The pointer returned stays valid until the cache is cleared, which only
    /// `get` does, at the next lookup after decoded code changed.
    pub fn insert(&mut self, pc: u64, block: Block) -> *const Block {
        let b: *const Block = self.map.entry(pc).insert_entry(Box::new(block)).into_mut().as_ref();
        self.table[(pc >> 1) as usize & (TABLE - 1)] = (pc, b);
        b
    }

    /// Forget every block at the next lookup (FS mode: the translation they were fetched under changed).
    pub fn invalidate(&mut self) {
        self.generation = u64::MAX;
    }

    fn clear(&mut self, generation: u64) {
        self.map.clear();
        self.table.fill((NO_PC, std::ptr::null()));
        self.generation = generation;
    }
}

#[cfg(test)]
mod tests {
    use crate::asm::addi;
    use crate::memory::Memory;

    #[test]
    fn blocks_mark_the_instructions_warming_skips_by_the_warming_line() {
        let mut m = Memory::new(1 << 20, false, 1);
        let base = 0x10_0000; // on a 64-byte line's start
        m.regions.heap_start = base;
        m.regions.brk = base + 4 * kvsim_base::abi::PAGE_SIZE;
        // 17 addi, then zeros (illegal: the block's 18th and last instruction).
        for k in 0..17 {
            m.store::<4>(0, base + 4 * k, addi(10, 10, 1) as u64).unwrap();
        }
        let quiet = |m: &mut Memory| unsafe { (*m.block(base).unwrap()).warm_quiet };
        // 64-byte lines (until a warming hook says otherwise): every instruction but the first and the 17th (at byte
        // 64, a new line) fetches from its predecessor's line.
        assert_eq!(quiet(&mut m), 0x3fffe & !(1 << 16));
        // 32-byte lines: the block is built again; the 9th (byte 32) starts a line too.
        let g = m.code_generation();
        m.set_warm_fetch_shift(5);
        assert!(m.code_generation() > g, "blocks made for 64-byte lines are forgotten");
        assert_eq!(quiet(&mut m), 0x3fffe & !(1 << 16) & !(1 << 8));
        let g = m.code_generation();
        m.set_warm_fetch_shift(5);
        assert_eq!(m.code_generation(), g, "the same line keeps them");
    }
}
