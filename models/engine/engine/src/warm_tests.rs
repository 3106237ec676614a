//! The executor skips the warming hook for the instructions warming does nothing for (`Block::warm_quiet`,
//! `ExecHook::SKIPS_WARM_QUIET`): the caches and TLBs it leaves equal those of a hook called for every instruction.

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

/// Warming called for every instruction, as before the skip.
struct EveryInst<'a>(&'a mut TimingSystem);

impl ExecHook for EveryInst<'_> {
    const ACTIVE: bool = true;
    fn on_inst(&mut self, hart: usize, info: &InstInfo) {
        self.0.warm(hart, info);
    }
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
    let stop = if every { m.run(&mut EveryInst(&mut sys), None) } else { m.run(&mut WarmHook(&mut sys), None) };
    assert_eq!(stop.unwrap(), StopReason::MaxInsts);
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
