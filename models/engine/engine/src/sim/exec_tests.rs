//! The executor's instruction tests, run on a whole machine (moved from the isa crate, whose own tests use
//! memory alone).

use kvsim_isa::asm::*;
use kvsim_isa::exec::*;
use kvsim_timing::inst::{InstClass, InstInfo, PrefetchKind};

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

#[test]
fn poll_end_hints_split_the_instructions_into_idle_and_busy_polls() {
    // Two nops and a poll-end with a0 = 0 (an idle poll of 3 instructions), a nop and a poll-end with a1 = 3 (a busy
    // poll of 2), then a nop and an SLTI x0 with another immediate (no hint: the next poll's, uncounted).
    let (idle_end, busy_end, plain) = (0x4b55_2013, 0x4b55_a013, 0x4b65_2013);
    let words = [nop(), nop(), idle_end, nop(), busy_end, nop(), plain];
    let m = run_words(&words, &[(10, 0), (11, 3)]);
    let c = &m.harts[0].cnt;
    assert_eq!((c.polls_idle, c.idle_poll_insts), (1, 3));
    assert_eq!((c.polls_busy, c.busy_poll_insts), (1, 2));
    assert_eq!((m.harts[0].x[0], m.harts[0].x[10], m.harts[0].x[11]), (0, 0, 3));
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

    // The executor writes the address and the hint only into a data access's record: the others keep none.
    for k in [1, 4, 5] {
        assert_eq!((v[k].mem_addr, v[k].non_temporal), (0, false), "instruction {k}");
    }
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
    use crate::sim::tests::{machine_with, ENTRY};
    use crate::sim::EngineConfig;
    use kvsim_base::output::StopReason;
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

/// Code of two blocks that jump to each other: A (ENTRY) adds a0 += 1 and jumps to B; B (ENTRY + 12) counts t2 up
/// and branches back to A until t2 = t3.
fn two_linked_blocks() -> Vec<u32> {
    let jal_x0_8 = 0x0080_006f;
    vec![addi(10, 10, 1), jal_x0_8, nop(), addi(7, 7, 1), bne(7, 28, -16), nop()]
}

#[test]
fn linked_blocks_run_code_changed_between_runs() {
    // Five turns of the loop link A to B (a jump) and B to A (a taken branch); then A's instruction is overwritten
    // the way a system call or the loader writes guest memory, between two runs of the executor. The links must not
    // lead to the old decoded block: the next turns add 100.
    use crate::sim::tests::{machine_with, ENTRY};
    use crate::sim::EngineConfig;
    let mut m = machine_with(&bytes(&two_linked_blocks()), &EngineConfig::with_binary("/t"));
    m.harts[0].x[28] = 10;
    assert_eq!(run::<NoHook, false>(&mut m.harts[0], &mut m.mem, 5 * 4, &mut NoHook, None), Stop::Budget);
    assert_eq!((m.harts[0].x[10], m.harts[0].x[7], m.harts[0].pc), (5, 5, ENTRY));
    m.mem.write_bytes(0, ENTRY, &addi(10, 10, 100).to_le_bytes()).unwrap();
    // A budget that ends inside block B (after its addi): the run stops between two instructions of a block.
    assert_eq!(run::<NoHook, false>(&mut m.harts[0], &mut m.mem, 2 * 4 + 3, &mut NoHook, None), Stop::Budget);
    assert_eq!((m.harts[0].x[10], m.harts[0].x[7], m.harts[0].pc), (5 + 300, 8, ENTRY + 16));
    assert_eq!(m.harts[0].cnt.insts, 5 * 4 + 2 * 4 + 3);
}

#[test]
fn a_store_into_a_linked_block_takes_effect_on_its_next_run() {
    // A loop whose second block (B: sw, add, addi, bne) stores a new instruction over the first block's (A: addi a0,
    // jal to B) on every turn: addi a0, a0, 10, then 11, 12, ... (t1 += 1 << 20 moves the immediate). B's branch back
    // to A and A's jump to B are linked after the first turn; each store must still be seen by the next turn.
    use crate::sim::tests::{run_words_n, ENTRY};
    let words = [
        addi(10, 10, 1),
        0x0080_006f, // jal x0, +8
        nop(),
        sw(6, 5, 0),
        r(0, 29, 6, 0, 6, OP), // add t1, t1, t4
        addi(7, 7, 1),
        bne(7, 28, -24),
        nop(),
    ];
    let init = [(5, ENTRY), (6, addi(10, 10, 10) as u64), (29, 1 << 20), (28, 5)];
    let m = run_words_n(&words, &init, 5 * 6);
    assert_eq!(m.harts[0].x[10], 1 + 10 + 11 + 12 + 13);
    assert_eq!(m.harts[0].pc, ENTRY + 28);
}

#[test]
fn a_jalr_link_is_only_followed_to_the_target_it_was_made_for() {
    // A function (F: addi a0, a0, 1; ret) called from two sites in turn: its return's link, made for one site, must
    // not take the other call back there. Site 1 is followed by addi a1, site 2 by addi a2.
    use crate::sim::tests::{run_words_n, ENTRY};
    let jal_ra = |from: u64, to: u64| -> u32 {
        let off = (to as i64 - from as i64) as u32;
        ((off >> 20) & 1) << 31
            | ((off >> 1) & 0x3ff) << 21
            | ((off >> 11) & 1) << 20
            | ((off >> 12) & 0xff) << 12
            | 1 << 7
            | 0x6f
    };
    let f = ENTRY + 32;
    let words = [
        jal_ra(ENTRY, f),     // 0: call F
        addi(11, 11, 1),      // 4: site 1
        jal_ra(ENTRY + 8, f), // 8: call F
        addi(12, 12, 1),      // 12: site 2
        addi(7, 7, 1),        // 16
        bne(7, 28, -20),      // 20: back to 0
        nop(),                // 24
        nop(),                // 28
        addi(10, 10, 1),      // 32: F
        i(0, 1, 0, 0, 0x67),  // 36: jalr x0, 0(ra)
    ];
    let m = run_words_n(&words, &[(28, 4)], 4 * 10);
    assert_eq!((m.harts[0].x[10], m.harts[0].x[11], m.harts[0].x[12]), (8, 4, 4));
    assert_eq!(m.harts[0].pc, ENTRY + 24);
}

#[test]
fn writes_to_x0_are_discarded() {
    // addi x0, x0, 5; lw x0, 0(sp) (a load to x0 still loads); addi a0, x0, 1; add a1, x0, x0
    let m = run_words(&[addi(0, 0, 5), i(0, 2, 2, 0, 3), addi(10, 0, 1), r(0, 0, 0, 0, 11, OP)], &[(11, 9)]);
    let h = &m.harts[0];
    assert_eq!((h.x[0], h.x[10], h.x[11], h.cnt.loads), (0, 1, 0, 1));
}

#[test]
fn a_hart_saves_its_64_registers_without_the_discard_slot() {
    use kvsim_isa::hart::{Hart, DISCARD};
    let mut h = Hart::new(0, 0x1000, 0x2000, 1_000_000_000);
    h.x[63] = 9;
    h.x[DISCARD] = 7;
    let saved = serde_json::to_value(&h).unwrap();
    assert_eq!(saved["x"].as_array().unwrap().len(), 64);
    let back: Hart = serde_json::from_value(saved).unwrap();
    assert_eq!((back.x[2], back.x[63], back.x[DISCARD]), (0x2000, 9, 0));
}
