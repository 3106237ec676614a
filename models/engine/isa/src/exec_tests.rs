//! The executor over blocks whose conditional branches are side exits: a branch not taken goes on in the block, a
//! taken one leaves it, and a budget that ends inside a block leaves the PC and the count exactly where they are.

use crate::asm::{addi, bne, ecall};
use crate::exec::{run, NoHook, Stop};
use crate::hart::Hart;
use crate::memory::Memory;

const BASE: u64 = 0x10_0000;

/// addi a0, a0, 1; bne a0, a1, +8 (to the fourth); addi a2, a2, 1; addi a3, a3, 1; ecall: one block, the branch
/// in its middle.
fn machine(a1: u64) -> (Hart, Memory) {
    let mut m = Memory::new(1 << 20, false, 1);
    m.regions.heap_start = BASE;
    m.regions.brk = BASE + 0x4000;
    for (i, w) in [addi(10, 10, 1), bne(10, 11, 8), addi(12, 12, 1), addi(13, 13, 1), ecall()].iter().enumerate() {
        m.store::<4>(0, BASE + 4 * i as u64, *w as u64).unwrap();
    }
    let mut h = Hart::new(0, BASE, BASE + 0x3000, 1_000_000_000);
    h.x[11] = a1;
    (h, m)
}

fn go(h: &mut Hart, m: &mut Memory, budget: u64) -> Stop {
    run::<NoHook, false>(h, m, budget, &mut NoHook, None)
}

#[test]
fn a_branch_not_taken_goes_on_in_the_block_and_a_taken_one_leaves_it() {
    // (a1, instructions, a2, taken branches): not taken, all five run; taken, the third is skipped.
    for (a1, insts, a2, taken) in [(1, 5, 1, 0), (5, 4, 0, 1)] {
        let (mut h, mut m) = machine(a1);
        assert_eq!(go(&mut h, &mut m, 100), Stop::Ecall);
        assert_eq!((h.pc, h.cnt.insts, h.x[12], h.x[13]), (BASE + 20, insts, a2, 1));
        assert_eq!((h.cnt.branches, h.cnt.taken_branches), (1, taken));
    }
}

#[test]
fn a_budget_ending_inside_a_block_stops_at_the_instruction_it_reached() {
    for (a1, after_two) in [(1, BASE + 8), (5, BASE + 12)] {
        let (mut h, mut m) = machine(a1);
        assert_eq!(go(&mut h, &mut m, 2), Stop::Budget);
        assert_eq!((h.pc, h.cnt.insts), (after_two, 2), "after the branch (taken: {})", a1 != 1);
        // The rest of the block runs from there, and the count goes on.
        assert_eq!(go(&mut h, &mut m, 100), Stop::Ecall);
        assert_eq!((h.pc, h.cnt.insts), (BASE + 20, if a1 == 1 { 5 } else { 4 }));
    }
    // One instruction at a time gives the same PCs as the whole block at once.
    let (mut h, mut m) = machine(1);
    let mut pcs = vec![];
    while go(&mut h, &mut m, 1) == Stop::Budget {
        pcs.push(h.pc);
    }
    assert_eq!(pcs, [BASE + 4, BASE + 8, BASE + 12, BASE + 16]);
    assert_eq!((h.pc, h.cnt.insts), (BASE + 20, 5));
}

/// Two blocks that go to each other through taken branches: a0 += 1 at BASE, a1 += 1 at BASE + 12 (the
/// instruction at BASE + 8 and the ecall are never reached).
fn two_block_loop() -> (Hart, Memory) {
    let (mut h, mut m) = machine(0);
    let code = [addi(10, 10, 1), bne(10, 0, 8), addi(12, 12, 1), addi(11, 11, 1), bne(11, 0, -16), ecall()];
    for (i, w) in code.iter().enumerate() {
        m.store::<4>(0, BASE + 4 * i as u64, *w as u64).unwrap();
    }
    h.x[11] = 0;
    (h, m)
}

#[test]
fn blocks_run_from_one_another_s_links_stop_exactly_at_the_budget() {
    // Runs long enough that blocks follow one another's links many times over (beyond `CHAIN_INSTS` in a row in a
    // test build), each budget ending at a block's end or inside one: the same state as one instruction at a time.
    for budget in [1, 2, 3, 4, 5, 39, 40, 41, 42, 43, 200, 1001] {
        let (mut h, mut m) = two_block_loop();
        assert_eq!(go(&mut h, &mut m, budget), Stop::Budget);
        let (mut one, mut m1) = two_block_loop();
        for _ in 0..budget {
            assert_eq!(go(&mut one, &mut m1, 1), Stop::Budget);
        }
        assert_eq!((h.pc, h.cnt.insts, h.cnt.taken_branches), (one.pc, one.cnt.insts, one.cnt.taken_branches));
        assert_eq!((h.x[10], h.x[11], h.x[12]), (one.x[10], one.x[11], 0), "budget {budget}");
    }
    let (mut h, mut m) = two_block_loop();
    assert_eq!(go(&mut h, &mut m, 40), Stop::Budget);
    assert_eq!((h.pc, h.x[10], h.x[11], h.cnt.insts), (BASE, 10, 10, 40));
}

/// A timing model whose every instruction costs 10 ps (hart 0), counting the instructions it saw.
struct TenPs(u64);

impl crate::exec::ExecHook for TenPs {
    const ACTIVE: bool = true;
    fn on_inst(&mut self, _hart: usize, _info: &kvsim_timing::inst::InstInfo) {
        self.0 += 1;
    }
    fn time_ps(&self, _hart: usize) -> Option<u64> {
        Some(10 * self.0)
    }
}

#[test]
fn a_deadline_stops_the_run_after_the_instruction_at_which_the_harts_time_reaches_it() {
    // Deadlines falling inside a block, at a block's last instruction and after a taken branch, over runs that
    // follow links: the run stops after the first instruction whose time is at or past the deadline, in the same
    // state as a run with that many instructions of budget.
    for deadline in [1, 10, 11, 25, 30, 31, 50, 395, 400, 401, 2_000] {
        let (mut h, mut m) = two_block_loop();
        let mut hook = TenPs(0);
        let stop = crate::exec::run_until::<TenPs, false>(&mut h, &mut m, 1_000, deadline, &mut hook, None);
        assert_eq!(stop, Stop::Budget);
        let expected = deadline.div_ceil(10);
        assert_eq!((hook.0, h.cnt.insts), (expected, expected), "deadline {deadline} ps");
        let (mut one, mut m1) = two_block_loop();
        assert_eq!(go(&mut one, &mut m1, expected), Stop::Budget);
        assert_eq!((h.pc, h.x[10], h.x[11]), (one.pc, one.x[10], one.x[11]), "deadline {deadline} ps");
    }
    // No deadline: the budget alone.
    let (mut h, mut m) = two_block_loop();
    let mut hook = TenPs(0);
    let no = crate::exec::NO_DEADLINE;
    assert_eq!(crate::exec::run_until::<TenPs, false>(&mut h, &mut m, 77, no, &mut hook, None), Stop::Budget);
    assert_eq!((hook.0, h.cnt.insts), (77, 77));
}

/// jal rd, off (J-type).
fn jal(rd: u32, off: i32) -> u32 {
    let o = off as u32;
    ((o >> 20) & 1) << 31 | ((o >> 1) & 0x3ff) << 21 | ((o >> 11) & 1) << 20 | ((o >> 12) & 0xff) << 12 | rd << 7 | 0x6f
}

/// A loop of 50 rounds with a store, a load, a call over a skipped instruction and a branch back, then ecall.
fn loop_with_memory_and_jumps() -> (Hart, Memory) {
    let (mut h, mut m) = machine(0);
    let code = [
        addi(10, 10, 1),
        crate::asm::sw(10, 12, 0),
        crate::asm::i(0, 12, 2, 13, 3), // lw a3, 0(a2)
        jal(1, 8),
        addi(14, 14, 1), // skipped by the jal
        bne(10, 11, -20),
        ecall(),
    ];
    for (i, w) in code.iter().enumerate() {
        m.store::<4>(0, BASE + 4 * i as u64, *w as u64).unwrap();
    }
    (h.x[11], h.x[12]) = (50, BASE + 0x2000);
    (h, m)
}

#[test]
fn a_functional_run_through_the_handlers_the_blocks_hold_equals_a_run_through_the_tables() {
    // A run without a hook jumps to the handler each instruction holds; one with a hook goes through its table. In
    // budgets ending inside blocks and at their ends, both give the same state and counters.
    for budget in [1, 3, 7, 1_000] {
        let (mut h, mut m) = loop_with_memory_and_jumps();
        while go(&mut h, &mut m, budget) == Stop::Budget {}
        let (mut t, mut mt) = loop_with_memory_and_jumps();
        let mut hook = TenPs(0);
        while crate::exec::run::<TenPs, false>(&mut t, &mut mt, budget, &mut hook, None) == Stop::Budget {}
        let counts = |h: &Hart| (h.pc, h.cnt.insts, h.cnt.loads, h.cnt.stores, h.cnt.branches, h.cnt.taken_branches);
        assert_eq!(counts(&h), (BASE + 28, 50 * 5 + 1, 50, 50, 50, 49), "budget {budget}");
        assert_eq!((counts(&h), h.cnt.jumps), (counts(&t), t.cnt.jumps), "budget {budget}");
        assert_eq!((h.cnt.jumps, h.x[13], h.x[14], h.x[1]), (50, 50, 0, BASE + 16), "budget {budget}");
        assert_eq!(hook.0, t.cnt.insts);
    }
}

/// What a hook saw, in order: each record (PC, address, non-temporal, taken, next PC) and each poll end.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Inst(u64, u64, bool, bool, u64),
    PollEnd(bool),
}

/// A hook that logs what it sees; `B`: it takes a block's records together (`ExecHook::BATCHES`). Its time is 1 us
/// an instruction it was given (rdtime: 10 ticks of the 10 MHz timebase).
#[derive(Default)]
struct Log<const B: bool> {
    seen: Vec<Seen>,
    insts: u64,
    /// Calls that brought records (one per record without batching).
    calls: u64,
}

impl<const B: bool> crate::exec::ExecHook for Log<B> {
    const ACTIVE: bool = true;
    const BATCHES: bool = B;
    fn on_inst(&mut self, _hart: usize, i: &kvsim_timing::inst::InstInfo) {
        self.seen.push(Seen::Inst(i.pc, i.mem_addr, i.non_temporal, i.taken, i.next_pc));
        self.insts += 1;
        if !B {
            self.calls += 1;
        }
    }
    fn on_insts(&mut self, hart: usize, infos: &[kvsim_timing::inst::InstInfo]) {
        self.calls += 1;
        for i in infos {
            self.on_inst(hart, i);
        }
    }
    fn poll_end(&mut self, _hart: usize, idle: bool) {
        self.seen.push(Seen::PollEnd(idle));
    }
    fn time_ps(&self, _hart: usize) -> Option<u64> {
        Some(1_000_000 * self.insts)
    }
}

/// 20 rounds of: a0 += 1; a non-temporal hint and the store it marks; a poll-end hint; rdtime; a load; a call over
/// a skipped instruction; a branch back; then ecall.
fn loop_with_hints() -> (Hart, Memory) {
    let (mut h, mut m) = machine(0);
    let code = [
        addi(10, 10, 1),
        crate::asm::r(0, 5, 0, 0, 0, 0x33), // ntl.all (add x0, x0, x5)
        crate::asm::sw(10, 12, 0),
        crate::asm::i(kvsim_base::abi::POLL_END_HINT, 10, 2, 0, 0x13), // the poll-end hint on a0
        crate::asm::i(0xc01, 0, 2, 14, 0x73),                          // rdtime a4
        crate::asm::i(0, 12, 2, 13, 3),                                // lw a3, 0(a2)
        jal(1, 8),
        addi(15, 15, 1), // skipped by the jal
        bne(10, 11, -32),
        ecall(),
    ];
    for (i, w) in code.iter().enumerate() {
        m.store::<4>(0, BASE + 4 * i as u64, *w as u64).unwrap();
    }
    (h.x[11], h.x[12]) = (20, BASE + 0x2000);
    (h, m)
}

#[test]
fn a_hook_given_a_blocks_records_together_sees_what_one_given_them_one_by_one_sees() {
    // Budgets ending inside blocks and at their ends: the batching hook has every record, poll end and time read in
    // the same order, with the same contents, as the hook called per instruction (a poll end after the records of
    // the instructions before its hint, rdtime reading a time that counts them), in fewer calls.
    for budget in [1, 3, 7, 1_000] {
        let (mut h, mut m) = loop_with_hints();
        let mut one = Log::<false>::default();
        while crate::exec::run::<Log<false>, false>(&mut h, &mut m, budget, &mut one, None) == Stop::Budget {}
        let (mut hb, mut mb) = loop_with_hints();
        let mut batched = Log::<true>::default();
        while crate::exec::run::<Log<true>, false>(&mut hb, &mut mb, budget, &mut batched, None) == Stop::Budget {}
        // The last rdtime follows 19 rounds of 8 and 4 instructions; the ecall retires too.
        assert_eq!((h.pc, h.cnt.insts, h.x[14]), (BASE + 40, 20 * 8 + 1, 10 * (19 * 8 + 4)), "budget {budget}");
        assert_eq!((hb.pc, hb.cnt.insts, hb.x[14]), (h.pc, h.cnt.insts, h.x[14]), "budget {budget}");
        assert_eq!(one.seen.len() as u64, h.cnt.insts + 20, "budget {budget}"); // the records and the poll ends
        assert!(one.seen.contains(&Seen::Inst(BASE + 8, BASE + 0x2000, true, false, BASE + 12)));
        assert_eq!(batched.seen, one.seen, "budget {budget}");
        assert_eq!(one.calls, h.cnt.insts);
        if budget == 1_000 {
            // Per round: the records before the poll end, the hint's before rdtime, the rest at the jal, the bne's (the
            // last round: with the ecall).
            assert_eq!(batched.calls, 20 * 4, "budget {budget}");
        }
    }
}
