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

fn machine(sockets: &[u16], window: Option<u64>, reversed: bool) -> Machine {
    let mut cfg = EngineConfig::with_binary("/t");
    cfg.partition_reversed = reversed;
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
    turns_in_order(sockets, step, window, pause_every, false)
}

/// `turns`, the partitions of each window taken from the last socket to the first when `reversed`.
fn turns_in_order(
    sockets: &[u16],
    step: &[u64],
    window: Option<u64>,
    pause_every: u64,
    reversed: bool,
) -> Vec<(usize, u64)> {
    let mut m = machine(sockets, window, reversed);
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
    reference_in_order(sockets, step, window, false)
}

/// `reference` with each window's partitions from the last to the first when `reversed`.
fn reference_in_order(sockets: &[u16], step: &[u64], window: u64, reversed: bool) -> Vec<(usize, u64)> {
    let mut time = vec![0u64; step.len()];
    let (mut total, mut out) = (0, Vec::new());
    let partitions = *sockets.iter().max().unwrap() + 1;
    while total < MAX_INSTS {
        let end = (time.iter().min().unwrap() / window + 1) * window;
        for k in 0..partitions {
            let p = if reversed { partitions - 1 - k } else { k };
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
fn reversed_each_window_runs_its_sockets_from_the_last_and_each_hart_sees_the_same_times() {
    for (sockets, step) in [
        (vec![0, 0, 1, 1], vec![400, 530, 470, 310]),
        (vec![0, 0, 0, 1, 1, 1, 2, 2, 3, 3], vec![400, 400, 530, 470, 310, 620, 400, 290, 350, 410]),
    ] {
        let window = 20_000;
        let reversed = turns_in_order(&sockets, &step, Some(window), 0, true);
        assert_eq!(reversed, reference_in_order(&sockets, &step, window, true), "sockets {sockets:?}");
        let forward = turns(&sockets, &step, Some(window), 0);
        assert_ne!(reversed, forward, "sockets {sockets:?}");
        // Harts whose times depend on nothing but their own turns (as this hook's do) take the same turns at the
        // same times either way: only the interleaving of the partitions differs, up to the run's last window.
        let of = |turns: &[(usize, u64)], h: usize| turns.iter().filter(|t| t.0 == h).map(|t| t.1).collect::<Vec<_>>();
        for h in 0..sockets.len() {
            let (r, f) = (of(&reversed, h), of(&forward, h));
            let n = r.len().min(f.len()).saturating_sub(1);
            assert_eq!(r[..n], f[..n], "hart {h}, sockets {sockets:?}");
        }
        let pause = turns_in_order(&sockets, &step, Some(window), 97, true);
        assert_eq!(pause, reversed, "paused, sockets {sockets:?}");
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

/// A run with one NIC (no client) under the partitioned schedule, or the global one without a window: the times
/// the NIC's steps advanced it to, and the harts' turns.
fn net_steps(sockets: &[u16], step: &[u64], window: Option<u64>) -> (Vec<u64>, Vec<(usize, u64)>) {
    let mut cfg = EngineConfig::with_binary("/t");
    cfg.harts = sockets.len() as u64;
    cfg.hart_socket = sockets.to_vec();
    cfg.quantum = QUANTUM;
    cfg.max_insts = MAX_INSTS;
    cfg.partition_window = window;
    cfg.nics = vec![kvsim_params::Nic { enabled: true, ..Default::default() }];
    let mut m = machine_with(&bytes(&[0x0000_006f]), &cfg);
    for hart in &mut m.harts {
        hart.timed_ps = Some(0);
    }
    let mut hook = Clocked { step: step.to_vec(), time: vec![0; step.len()], insts: Vec::new() };
    assert_eq!(m.run(&mut hook, None).unwrap(), StopReason::MaxInsts);
    (m.net_step_times.clone(), hook.insts.chunks(QUANTUM as usize).map(|c| c[0]).collect())
}

#[test]
fn the_nics_step_once_at_each_windows_end_to_the_least_time_of_the_harts() {
    let (sockets, step) = (vec![0, 0, 1, 1, 2], vec![400, 530, 470, 310, 350]);
    let window = 20_000;
    let (got, turns) = net_steps(&sockets, &step, Some(window));
    // The reference: after each whole window (the last one is cut by the instruction limit), the least hart time.
    let mut time = vec![0u64; step.len()];
    let mut want = Vec::new();
    let mut rest = turns.as_slice();
    while !rest.is_empty() {
        let end = (time.iter().min().unwrap() / window + 1) * window;
        while let Some((&(h, t), tail)) = rest.split_first() {
            if t >= end || time[h] >= end {
                break;
            }
            time[h] += QUANTUM * step[h];
            rest = tail;
        }
        // (A run stopped by its limit stops before its window's step, even when that turn completed the window.)
        if time.iter().all(|&t| t >= end) && !rest.is_empty() {
            want.push(*time.iter().min().unwrap());
        }
    }
    assert_eq!(got, want);
    assert!(got.iter().zip(got.iter().skip(1)).all(|(a, b)| a < b), "{got:?}");
    // The global schedule steps them after every turn (but the last, which the limit stops).
    let (global, global_turns) = net_steps(&sockets, &step, None);
    assert_eq!(global.len() + 1, global_turns.len());
    assert!(got.len() < global.len() / 2, "{} steps against {}", got.len(), global.len());
}

/// `Clocked`, whose hart 1 parks its instruction number `park_at` (from 1) until the window's end, as the timing hook
/// does for a remote miss: its time reads `PARKED_PS` until `window_end` times the instruction.
struct Parking {
    clocked: Clocked,
    park_at: usize,
    parked: bool,
    /// The instructions recorded when each window ended.
    ends: Vec<usize>,
}

impl ExecHook for Parking {
    const ACTIVE: bool = true;
    fn on_inst(&mut self, hart: usize, info: &InstInfo) {
        let of_hart_1 = self.clocked.insts.iter().filter(|&&(h, _)| h == 1).count();
        if hart == 1 && of_hart_1 + 1 == self.park_at {
            self.clocked.insts.push((1, self.clocked.time[1]));
            self.parked = true;
            return;
        }
        self.clocked.on_inst(hart, info);
    }
    fn time_ps(&self, hart: usize) -> Option<u64> {
        if hart == 1 && self.parked {
            return Some(super::PARKED_PS);
        }
        self.clocked.time_ps(hart)
    }
    fn window_end(&mut self) {
        if std::mem::take(&mut self.parked) {
            self.clocked.time[1] += self.clocked.step[1];
        }
        self.ends.push(self.clocked.insts.len());
    }
}

#[test]
fn a_parked_instruction_ends_its_harts_turn_and_window_and_the_hart_resumes_after_the_windows_end() {
    // Hart 1 (socket 1) would take several 5-instruction turns in the first 20 ns window (400 ps an instruction).
    let mut m = machine(&[0, 1], Some(20_000), false);
    let clocked = Clocked { step: vec![400, 400], time: vec![0, 0], insts: Vec::new() };
    let mut hook = Parking { clocked, park_at: 3, parked: false, ends: Vec::new() };
    assert_eq!(m.run(&mut hook, None).unwrap(), StopReason::MaxInsts);
    let insts = &hook.clocked.insts;
    let hart_1: Vec<usize> = (0..insts.len()).filter(|&i| insts[i].0 == 1).collect();
    let parked = hart_1[2];
    // Its turn and its window's turns end with the parked instruction: the window ends right after it.
    assert_eq!(insts[parked], (1, 800));
    assert!(hook.ends.contains(&(parked + 1)), "the window ends after the parked instruction: {:?}", hook.ends);
    // Then the hart goes on from the parked instruction's end, in the next window.
    assert_eq!(insts[hart_1[3]], (1, 1_200));
    assert!(hook.ends.iter().any(|&e| e > parked && e <= hart_1[3]));
    // Unparked, the same hart runs its quantum and more turns in the first window.
    let again = turns(&[0, 1], &[400, 400], Some(20_000), 0);
    assert!(again.iter().filter(|&&(h, t)| h == 1 && t < 20_000).count() > 1);
}
