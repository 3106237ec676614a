//! The partitioned schedule's order of turns, against a reference written out here, on a hook whose harts advance
//! a fixed time per instruction (each its own).

use crate::sim::tests::machine_with;
use crate::sim::{EngineConfig, Machine};
use kvsim_base::output::StopReason;
use kvsim_isa::asm::bytes;
use kvsim_isa::exec::ExecHook;
use kvsim_timing::inst::InstInfo;

/// Hart h's time advances `step[h]` ps per instruction; every instruction is recorded (hart, its start time).
struct Clocked {
    step: Vec<u64>,
    time: Vec<u64>,
    insts: Vec<(usize, u64)>,
}

impl ExecHook for Clocked {
    const ACTIVE: bool = true;
    fn on_inst(&mut self, hart: usize, _info: &InstInfo) {
        self.insts.push((hart, self.time[hart]));
        self.time[hart] += self.step[hart];
    }
    fn time_ps(&self, hart: usize) -> Option<u64> {
        Some(self.time[hart])
    }
}

const QUANTUM: u64 = 5;
const MAX_INSTS: u64 = 3000;

fn machine(sockets: &[u16], window: Option<u64>) -> Machine {
    let mut cfg = EngineConfig::with_binary("/t");
    cfg.harts = sockets.len() as u64;
    cfg.hart_socket = sockets.to_vec();
    cfg.quantum = QUANTUM;
    cfg.max_insts = MAX_INSTS;
    cfg.partition_window = window;
    let mut m = machine_with(&bytes(&[0x0000_006f]), &cfg); // j . on every hart
    for hart in &mut m.harts {
        hart.timed_ps = Some(0);
    }
    m
}

/// The turns (hart, start time) of a run; `pause_every` > 0 pauses it that often (in instructions) and resumes.
fn turns(sockets: &[u16], step: &[u64], window: Option<u64>, pause_every: u64) -> Vec<(usize, u64)> {
    let mut m = machine(sockets, window);
    let mut hook = Clocked { step: step.to_vec(), time: vec![0; step.len()], insts: Vec::new() };
    loop {
        if pause_every > 0 {
            m.pause_at = m.total_insts() + pause_every;
        }
        match m.run(&mut hook, None).unwrap() {
            StopReason::Pause => continue,
            stop => {
                assert_eq!(stop, StopReason::MaxInsts);
                break;
            }
        }
    }
    // Every turn is QUANTUM instructions of one hart (the loop makes no system calls).
    hook.insts.chunks(QUANTUM as usize).map(|c| c[0]).collect()
}

/// The partitioned schedule as the module documents it, on harts that advance `step` ps per instruction.
fn reference(sockets: &[u16], step: &[u64], window: u64) -> Vec<(usize, u64)> {
    let mut time = vec![0u64; step.len()];
    let (mut total, mut out) = (0, Vec::new());
    let partitions = *sockets.iter().max().unwrap() + 1;
    while total < MAX_INSTS {
        let end = (time.iter().min().unwrap() / window + 1) * window;
        for p in 0..partitions {
            loop {
                let next = (0..step.len()).filter(|&h| sockets[h] == p && time[h] < end).min_by_key(|&h| (time[h], h));
                let Some(h) = next else { break };
                if total >= MAX_INSTS {
                    break;
                }
                out.push((h, time[h]));
                time[h] += QUANTUM * step[h];
                total += QUANTUM;
            }
        }
    }
    out
}

#[test]
fn sockets_run_in_order_within_each_window_their_harts_furthest_behind_first() {
    for (sockets, step) in [
        (vec![0, 0, 1, 1], vec![400, 530, 470, 310]),
        (vec![0, 1, 2, 3], vec![400, 530, 470, 310]),
        (vec![0, 0, 0, 1, 1, 1, 2, 2, 3, 3], vec![400, 400, 530, 470, 310, 620, 400, 290, 350, 410]),
    ] {
        let window = 20_000;
        let got = turns(&sockets, &step, Some(window), 0);
        assert_eq!(got, reference(&sockets, &step, window), "sockets {sockets:?}");
        // The global schedule interleaves the sockets differently (the reason the partitioned one is a choice).
        assert_ne!(got, turns(&sockets, &step, None, 0), "sockets {sockets:?}");
    }
}

#[test]
fn one_partition_is_the_global_schedule() {
    let (sockets, step) = (vec![0, 0, 0], vec![400, 530, 310]);
    assert_eq!(turns(&sockets, &step, Some(20_000), 0), turns(&sockets, &step, None, 0));
}

#[test]
fn pausing_and_resuming_keeps_the_order() {
    let (sockets, step) = (vec![0, 0, 1, 1, 2, 3], vec![400, 530, 470, 310, 350, 610]);
    let whole = turns(&sockets, &step, Some(20_000), 0);
    for every in [7, 64, 333] {
        assert_eq!(turns(&sockets, &step, Some(20_000), every), whole, "paused every {every} instructions");
    }
}

#[test]
fn several_host_threads_and_a_zero_window_are_refused() {
    let image = kvsim_isa::elf::parse(&kvsim_isa::elf::tiny_elf(0x10000, &bytes(&[0x0000_006f]))).unwrap();
    let mut cfg = EngineConfig::with_binary("/t");
    cfg.host_threads = 2;
    let err = Machine::new(&cfg, &image).err().unwrap().to_string();
    assert!(err.contains("System.host_threads = 2"), "{err}");
    cfg.host_threads = 1;
    cfg.partition_window = Some(0);
    let err = Machine::new(&cfg, &image).err().unwrap().to_string();
    assert!(err.contains("socket_link.latency > 0"), "{err}");
}
