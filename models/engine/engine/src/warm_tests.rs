//! The executor skips the warming hook for the instructions warming does nothing for (`Block::warm_quiet`,
//! `ExecHook::SKIPS_WARM_QUIET`): the caches and TLBs it leaves equal those of a hook called for every instruction,
//! and warming fetches every L1I line of the configured size.

use kvsim_base::output::StopReason;
use kvsim_isa::asm::*;
use kvsim_isa::hook::ExecHook;
use kvsim_params::System;
use kvsim_timing::inst::InstInfo;
use kvsim_timing::system::TimingSystem;
use kvsim_timing::StatSink;

use crate::config::EngineConfig;
use crate::driver::{timing_system, WarmHook};
use crate::sim::tests::machine_with;
use crate::sim::Machine;

/// Warming called for every instruction, as before the skip.
struct EveryInst<'a>(&'a mut TimingSystem);

impl ExecHook for EveryInst<'_> {
    const ACTIVE: bool = true;
    fn on_inst(&mut self, hart: usize, info: &InstInfo) {
        self.0.warm(hart, info);
    }
}

/// Run `m` to its instruction limit, warming `sys` with the skip or by a hook called for every instruction.
fn warm_run(m: &mut Machine, sys: &mut TimingSystem, every: bool) {
    let stop = if every {
        m.run(&mut EveryInst(sys), None)
    } else {
        let mut hook = WarmHook::new(sys, &mut m.mem);
        m.run(&mut hook, None)
    };
    assert_eq!(stop.unwrap(), StopReason::MaxInsts);
}

const A0: u32 = 10;
const A1: u32 = 11;
const T0: u32 = 5;
const SP: u32 = 2;

/// A loop over 4 KB of the stack below its top whose body spans several instruction lines and two blocks (longer than a
/// block): loads, stores, a non-temporal hint before a load, and runs of ALU instructions between them, some longer than a line.
fn program() -> Vec<u32> {
    let ld = |rd, rs1, off| i(off, rs1, 3, rd, 0x03);
    let sd = |rs2, rs1, off| s(off, rs2, rs1, 3);
    let ntl_all = r(0, 5, 0, 0, 0, 0x33); // add x0, x0, x5
    let mut w = vec![li(T0, 200), addi(A0, SP, -2048), addi(A0, A0, -2048)];
    let top = w.len();
    for k in 0..5 {
        w.extend((0..11 + 8 * k).map(|j| addi(A1, A1, j)));
        w.push(ld(A1, A0, 64 * k));
        if k == 2 {
            w.extend([ntl_all, ld(A1, A0, 1024 + 64 * k)]);
        }
        w.push(sd(A1, A0, 512 + 8 * k));
    }
    w.extend([addi(A0, A0, 8), addi(T0, T0, -1)]);
    let back = (top as i32 - w.len() as i32) * 4;
    w.push(bne(T0, 0, back));
    w
}

/// The state warming leaves after `insts` instructions of `program`, the hook called for every instruction or not.
fn warmed(insts: u64, every: bool) -> String {
    let mut system = System::default();
    system.caches.l2_enabled = true;
    let mut sys = timing_system(&system).unwrap();
    let mut cfg = EngineConfig::with_binary("/t");
    cfg.max_insts = insts;
    let mut m = machine_with(&bytes(&program()), &cfg);
    warm_run(&mut m, &mut sys, every);
    let mut out = StatSink::new();
    sys.stats("", &mut out);
    format!("{:?}\n{:?}\n{:?}", sys.mem.cores, sys.mem.llc, out.entries)
}

#[test]
fn skipping_quiet_instructions_leaves_the_state_of_warming_every_one() {
    let n = program().len() as u64 * 150;
    let every = warmed(n, true);
    assert!(every.contains("l1i"), "the state names the caches");
    assert_eq!(warmed(n, false), every);
}

/// Warming `n` instructions of straight-line code (addi, 4 bytes each) with every cache's line `line` bytes: the
/// PC of the first, and the L1I's lines (their numbers) and its access count after, warmed with the skip or by a
/// hook called for every instruction.
fn straight_line_warmed(n: u64, line: u64, every: bool) -> (u64, Vec<u64>, u64) {
    let mut system = System::default();
    for c in [&mut system.caches.l1i, &mut system.caches.l1d, &mut system.caches.l2, &mut system.caches.llc] {
        c.line_size = line;
    }
    // Built directly: the engine's own systems refuse lines other than 64 bytes (its DRAM moves 64-byte lines,
    // `timing_system`), but the timing side takes any, and warming must follow them.
    let mut sys = TimingSystem::new(&[system.core.clone()], &system.caches, &system.memory);
    let mut cfg = EngineConfig::with_binary("/t");
    cfg.max_insts = n;
    let code: Vec<u32> = (0..n + 1).map(|j| addi(A1, A1, j as i32 & 0x3ff)).collect();
    let mut m = machine_with(&bytes(&code), &cfg);
    let entry = m.harts[0].pc;
    warm_run(&mut m, &mut sys, every);
    let l1i = &sys.mem.cores[0].l1i;
    let mut lines: Vec<u64> = l1i.lines().collect();
    lines.sort_unstable();
    (entry, lines, l1i.stats.accesses)
}

#[test]
fn warming_fetches_every_l1i_line_of_the_configured_size() {
    // 2,048 bytes of code: with 32-byte lines the L1I (32 KiB) holds every one of the 64 (65 if the entry is not
    // on a line's start) and warming fetched each once. The skip must follow the line too: with bits made for
    // 64-byte lines, an instruction in a region's second half would neither be warmed nor counted.
    let n = 512;
    for line in [32u64, 64, 128] {
        let shift = line.trailing_zeros();
        let (entry, lines, accesses) = straight_line_warmed(n, line, false);
        let want: Vec<u64> = (entry >> shift..=(entry + 4 * n - 1) >> shift).collect();
        assert_eq!(lines, want, "{line}-byte lines: the L1I holds the code's lines");
        assert_eq!(accesses, want.len() as u64, "{line}-byte lines: one warm fetch per line");
        assert_eq!(straight_line_warmed(n, line, true), (entry, lines, accesses), "{line}-byte lines: skip = every");
    }
}
