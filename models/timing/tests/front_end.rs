//! The front end's decode paths, exactly: the legacy decoders' aligned fetch block and the decoded-uop cache
//! (`Core.fetch_block_bytes`, `Core.uop_cache_*`; models/timing/src/core/frontend.rs). The core alone before a
//! memory answering every access a fixed time after it is asked, so each fetch cycle follows from the
//! configuration.

use kvsim_params::Core as CoreParams;
use kvsim_timing::core::{Core, InstTiming, L1Latencies};
use kvsim_timing::inst::{InstClass, InstInfo};
use kvsim_timing::synth::*;
use kvsim_timing::FixedLatency;

const MEM: u64 = 40_000;
const L1: L1Latencies = L1Latencies { l1i: 4, l1d: 4 };

fn timed(p: &CoreParams, prog: &[InstInfo]) -> (Vec<InstTiming>, Core) {
    let (mut core, mut mem) = (Core::new(0, p, L1, 64), FixedLatency::new(MEM));
    let t = prog.iter().map(|i| core.step(i, &mut mem)).collect();
    (t, core)
}

/// A direct jump (JAL: its target always predicted) from `pc` to `target`.
fn jump(pc: u64, target: u64) -> InstInfo {
    InstInfo { taken: true, next_pc: target, ..op(pc, InstClass::Jump, 0, 0, 0) }
}

/// An ALU instruction of `len` bytes (2: compressed).
fn alu_len(pc: u64, len: u8) -> InstInfo {
    InstInfo { len, next_pc: pc + len as u64, ..alu(pc, 6, 0, 0) }
}

/// Sandy Bridge's legacy pipeline alone: 16-byte blocks, no uop cache.
fn legacy() -> CoreParams {
    CoreParams { fetch_block_bytes: 16, ..core_params() }
}

/// Sandy Bridge's decoded ICache (32 sets x 8 ways x 6 uops, 32-byte windows, 3 ways a window) before it.
fn with_uop_cache() -> CoreParams {
    CoreParams { uop_cache_sets: 32, ..legacy() }
}

/// A jump to 0x1018 (the middle of the 16-byte block at 0x1010) and four instructions from there: two in that
/// block, two in the next.
fn into_mid_block() -> [InstInfo; 5] {
    [jump(0x0ff0, 0x1018), alu(0x1018, 6, 0, 0), alu(0x101c, 7, 0, 0), alu(0x1020, 8, 0, 0), alu(0x1024, 9, 0, 0)]
}

#[test]
fn without_the_block_bound_a_group_spans_blocks() {
    let (t, _) = timed(&core_params(), &into_mid_block());
    assert!(t[1].fetch > t[0].fetch, "the jump ends its group");
    assert!(t[2..].iter().all(|x| x.fetch == t[1].fetch), "four from the target in one cycle");
}

#[test]
fn the_legacy_decoders_take_one_aligned_16_byte_block_a_cycle() {
    let (t, core) = timed(&legacy(), &into_mid_block());
    assert_eq!(t[2].fetch, t[1].fetch, "0x1018 and 0x101c: one block");
    assert_eq!(t[3].fetch, t[1].fetch + 1, "0x1020 starts the next block: the next cycle");
    assert_eq!(t[4].fetch, t[3].fetch);
    let fe = core.front_end_stats().expect("the decode paths are modelled");
    assert_eq!((fe.legacy_insts, fe.breaks, fe.lookups), (5, 1, 0));
}

#[test]
fn the_instruction_queue_lets_the_decoders_take_four_across_blocks() {
    // Compressed code, five instructions in the block at 0x1000, four in the next: the decoders take four a cycle
    // from the queue the predecoder fills a block a cycle, so the fifth shares its cycle with the next block's
    // first three (a group limited to one block would take three cycles).
    let lens = [4, 2, 2, 4, 4, 4, 4, 4, 4];
    let mut prog = vec![jump(0x0ff0, 0x1000)];
    let mut pc = 0x1000;
    for len in lens {
        prog.push(alu_len(pc, len));
        pc += len as u64;
    }
    let (t, core) = timed(&legacy(), &prog);
    let f = t[1].fetch;
    let cycles: Vec<u64> = t[1..].iter().map(|x| x.fetch - f).collect();
    assert_eq!(cycles, [0, 0, 0, 0, 1, 1, 1, 1, 2]);
    assert_eq!(core.front_end_stats().unwrap().breaks, 0, "the decoders, not the predecoder, set the pace");
}

#[test]
fn a_loop_inside_one_block_is_predecoded_again_at_each_jump_back() {
    // Three instructions at 0x1000-0x1008 and a jump back to 0x1000 at 0x100c: all in one block. The target is
    // predecoded in the cycle fetch gets there (the jump ends its group), never earlier.
    let body =
        |k: usize| [alu(0x1000, 6 + k as u8, 0, 0), alu(0x1004, 7, 0, 0), alu(0x1008, 8, 0, 0), jump(0x100c, 0x1000)];
    let prog: Vec<InstInfo> = (0..3).flat_map(body).collect();
    let (t, _) = timed(&legacy(), &prog);
    let (u, _) = timed(&core_params(), &prog);
    assert_eq!(t.iter().map(|x| x.fetch).collect::<Vec<_>>(), u.iter().map(|x| x.fetch).collect::<Vec<_>>());
}

#[test]
fn an_instruction_belongs_to_the_block_it_ends_in() {
    // Compressed code: a 4-byte instruction at 0x100e ends at 0x1011, in the next block, so it is predecoded with
    // the instruction after it, not with the two before it.
    let prog = [jump(0x0ff0, 0x1008), alu_len(0x1008, 4), alu_len(0x100c, 2), alu_len(0x100e, 4), alu_len(0x1012, 2)];
    let (t, _) = timed(&legacy(), &prog);
    assert_eq!(t[2].fetch, t[1].fetch);
    assert_eq!(t[3].fetch, t[1].fetch + 1);
    assert_eq!(t[4].fetch, t[3].fetch);
}

#[test]
fn a_window_the_uop_cache_holds_is_delivered_without_the_block_bound() {
    // The same four instructions twice. First pass: windows 0x1000 and 0x1020 miss, so the legacy decoders deliver
    // them a block at a time; fetch leaving each installs it. Second pass: both hit, four in one cycle.
    let body = into_mid_block();
    let back = jump(0x1028, 0x0ff0);
    let prog: Vec<InstInfo> = body.iter().chain([&back]).chain(body.iter()).copied().collect();
    let (t, core) = timed(&with_uop_cache(), &prog);
    assert_eq!(t[3].fetch, t[1].fetch + 1, "first pass: legacy blocks");
    let second = &t[7..11];
    assert!(second.iter().all(|x| x.fetch == second[0].fetch), "second pass: from the uop cache, one cycle");
    let fe = core.front_end_stats().unwrap();
    // Windows entered: 0x0fe0, 0x1000, 0x1020 (first pass), then 0x0fe0, 0x1000, 0x1020 again: the first three
    // miss, the last three hit. The legacy path delivered the first pass (6 instructions), nothing after.
    assert_eq!((fe.lookups, fe.misses, fe.legacy_insts), (6, 3, 6));
}

#[test]
fn a_group_holds_one_decode_path() {
    // 0x1018 and 0x101c come from a cached window (second visit); 0x1020 is in a window never seen: its legacy
    // delivery starts a new cycle although its predecessor's group has room.
    let prog = [
        jump(0x0ff0, 0x1018),
        alu(0x1018, 6, 0, 0),
        alu(0x101c, 7, 0, 0),
        jump(0x1040, 0x0ff0), // leave window 0x1000 (installed), back to the start: its window is cached now
        jump(0x0ff0, 0x1018),
        alu(0x1018, 6, 0, 0),
        alu(0x101c, 7, 0, 0),
        alu(0x1020, 8, 0, 0),
    ];
    let (t, _) = timed(&with_uop_cache(), &prog);
    assert_eq!(t[6].fetch, t[5].fetch);
    assert_eq!(t[7].fetch, t[6].fetch + 1, "uop cache then legacy: two groups");
    let (t, _) = timed(&core_params(), &prog);
    assert_eq!(t[7].fetch, t[6].fetch, "without the decode paths: one group");
}

#[test]
fn the_uop_cache_replaces_the_least_recently_used_window_of_a_set() {
    // One set of two ways: windows A, B, C of one way each; A, B, A, C, B: C evicts B (A was used after B), so the
    // last B misses again and the second A hits.
    let p = CoreParams { uop_cache_sets: 1, uop_cache_ways: 2, uop_cache_window_ways: 2, ..legacy() };
    let (a, b, c) = (0x1000, 0x2000, 0x3000);
    let visit = |w: u64, next: u64| [alu(w, 6, 0, 0), jump(w + 4, next)];
    let prog: Vec<InstInfo> = [visit(a, b), visit(b, a), visit(a, c), visit(c, b), visit(b, 0x9000)].concat();
    let (_, core) = timed(&p, &prog);
    let fe = core.front_end_stats().unwrap();
    assert_eq!((fe.lookups, fe.misses), (5, 4), "A, B, C and the second B miss; the second A hits");
}

#[test]
fn a_window_needing_more_ways_than_allowed_is_never_cached() {
    // Seven instructions in one window need two ways of six; a window may take only one: decoded every time.
    let mut prog: Vec<InstInfo> = Vec::new();
    for _ in 0..2 {
        prog.extend((0..7).map(|k| alu(0x1000 + 4 * k, 6, 0, 0)));
        prog.push(jump(0x101c, 0x2000));
        prog.push(jump(0x2000, 0x1000));
    }
    let p = CoreParams { uop_cache_window_ways: 1, ..with_uop_cache() };
    let (_, core) = timed(&p, &prog);
    let fe = core.front_end_stats().unwrap();
    assert_eq!((fe.lookups, fe.misses), (4, 3), "the 0x1000 window misses twice, 0x2000 hits the second time");
    let (_, core) = timed(&with_uop_cache(), &prog);
    assert_eq!(core.front_end_stats().unwrap().misses, 2, "three ways allowed: cached after the first pass");
}

#[test]
fn the_xeons_mispredict_penalty_loses_agners_15_cycles() {
    // Agner Fog (The microarchitecture of Intel, AMD and VIA CPUs, Sandy Bridge) measured the misprediction
    // penalty at "15 clock cycles or more for branches inside the µop cache". Here a mispredicted branch redirects
    // fetch `mispredict_penalty` cycles after it completes, and it completes one cycle after it issues, one after
    // it dispatches: a branch that issues at once loses penalty + 1 fetch cycles against a right guess. The Xeon's
    // 14 (configs/xeon_e5_2697v2_socket.py) is that 15.
    let prog = [branch(0x1000, 0, true, 0x1010), alu(0x1010, 6, 0, 0)];
    let p = CoreParams { mispredict_penalty: 14, ..core_params() };
    let (wrong, _) = timed(&p, &prog); // the first taken branch: its counter says not taken
    let (right, _) = timed(&CoreParams { bpred: kvsim_params::CoreBpred::Perfect, ..p }, &prog);
    assert_eq!(wrong[0].issue, wrong[0].dispatch + 1);
    assert_eq!(wrong[1].fetch - right[1].fetch, 15);
}
