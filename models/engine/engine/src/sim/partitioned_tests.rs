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
    /// For each statistics reset the hook was told of: whether an instruction was parked then (not timed yet).
    resets: Vec<bool>,
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
    fn reset_stats(&mut self) {
        self.resets.push(self.parked);
    }
}

#[test]
fn a_parked_instruction_ends_its_harts_turn_and_window_and_the_hart_resumes_after_the_windows_end() {
    // Hart 1 (socket 1) would take several 5-instruction turns in the first 20 ns window (400 ps an instruction).
    let mut m = machine(&[0, 1], Some(20_000), false);
    let clocked = Clocked { step: vec![400, 400], time: vec![0, 0], insts: Vec::new() };
    let mut hook = Parking { clocked, park_at: 3, parked: false, ends: Vec::new(), resets: Vec::new() };
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

// ---- system calls under the partitioned schedule (performed at the window's end: `perform_waiting_ecalls`) ----

use kvsim_base::abi::simcall;
use kvsim_isa::asm::{addi, ecall, lui, nop};

const LOOP: u32 = 0x0000_006f; // j .

/// Every hart runs `nops` no-ops, sets a0 = `a0`, a1 = 0, calls simulator call `nr` (its `ecall` is instruction
/// `nops` + 5) and loops.
fn calling(nops: usize, a0: u32, nr: u64) -> Vec<u8> {
    let mut code = vec![nop(); nops];
    code.extend([lui(10, a0 >> 12), addi(11, 0, 0), lui(17, (nr >> 12) as u32), addi(17, 17, (nr & 0xfff) as i32)]);
    code.extend([ecall(), LOOP]);
    bytes(&code)
}

/// A machine of `sockets.len()` harts (hart h on socket `sockets[h]`) running `code` under the partitioned schedule
/// (20 ns windows) in the given order, its harts timed from 0.
fn calling_machine(code: &[u8], sockets: &[u16], reversed: bool) -> Machine {
    let mut cfg = EngineConfig::with_binary("/t");
    cfg.partition_reversed = reversed;
    cfg.harts = sockets.len() as u64;
    cfg.hart_socket = sockets.to_vec();
    cfg.quantum = QUANTUM;
    cfg.max_insts = 400;
    cfg.partition_window = Some(20_000);
    let mut m = machine_with(code, &cfg);
    for hart in &mut m.harts {
        hart.timed_ps = Some(0);
    }
    m
}

/// The snapshots a run's STATS_DUMP calls took, as (time, [(name, value)]).
fn dumps(m: &Machine) -> Vec<(u64, Vec<(String, f64)>)> {
    m.stat_dumps.iter().map(|(t, s)| (*t, s.iter().map(|x| (x.name.clone(), x.value)).collect())).collect()
}

fn value(dump: &[(String, f64)], name: &str) -> f64 {
    dump.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no {name} in the dump")).1
}

#[test]
fn a_dump_in_a_window_is_taken_at_its_end_whatever_the_partitions_order() {
    // Both harts dump at their 17th instruction, inside the first window. Taken when called (session 25), socket 1's
    // dump saw socket 0's hart at the window's end in socket order and at its start reversed.
    let code = calling(12, 0, simcall::STATS_DUMP);
    let run = |reversed: bool| {
        let mut m = calling_machine(&code, &[0, 1], reversed);
        let clocked = Clocked { step: vec![400, 530], time: vec![0, 0], insts: Vec::new() };
        let mut hook = clocked;
        assert_eq!(m.run(&mut hook, None).unwrap(), StopReason::MaxInsts);
        dumps(&m)
    };
    let forward = run(false);
    assert_eq!(forward.len(), 2);
    assert_eq!(forward, run(true), "the dumps depend on the partitions' order");
    // Taken at the window's end: each hart stopped at its call (17 instructions), no further.
    for (_, dump) in &forward {
        assert_eq!(value(dump, "system.hart0.insts"), 17.0);
        assert_eq!(value(dump, "system.hart1.insts"), 17.0);
        assert_eq!(value(dump, "system.hart1.sim_ticks"), 17.0 * 530.0);
    }
}

#[test]
fn a_dump_shows_a_parked_harts_own_time_never_the_parked_sentinel() {
    // Reversed: socket 1's hart parks its 3rd instruction first; then socket 0's hart dumps inside the window. Taken
    // when called (session 25), the dump printed hart 1's time as PARKED_PS (~1.8e19 ps).
    let code = calling(12, 0, simcall::STATS_DUMP);
    let mut m = calling_machine(&code, &[0, 1], true);
    let clocked = Clocked { step: vec![400, 400], time: vec![0, 0], insts: Vec::new() };
    let mut hook = Parking { clocked, park_at: 3, parked: false, ends: Vec::new(), resets: Vec::new() };
    assert_eq!(m.run(&mut hook, None).unwrap(), StopReason::MaxInsts);
    let all = dumps(&m);
    let (ticks, first) = &all[0];
    // Hart 1's three instructions are timed (the parked one at the window's end): 1,200 ps.
    assert_eq!(value(first, "system.hart1.sim_ticks"), 1_200.0);
    assert_eq!(value(first, "system.hart0.sim_ticks"), 17.0 * 400.0);
    assert_eq!(*ticks, 17 * 400);
    for (_, dump) in &all {
        assert!(dump.iter().all(|(n, v)| !n.ends_with("sim_ticks") || *v < 1e15), "{dump:?}");
    }
}

#[test]
fn a_parked_ecalls_call_reads_its_harts_time_after_the_instruction_is_timed() {
    // Hart 1's `ecall` (its 17th instruction) is itself parked (its fetch would leave the socket): the dump it asks
    // for is taken once the window's end has timed it. Performed at once (session 25), it read PARKED_PS.
    let code = calling(12, 0, simcall::STATS_DUMP);
    for reversed in [false, true] {
        let mut m = calling_machine(&code, &[0, 1], reversed);
        let clocked = Clocked { step: vec![400, 400], time: vec![0, 0], insts: Vec::new() };
        let mut hook = Parking { clocked, park_at: 17, parked: false, ends: Vec::new(), resets: Vec::new() };
        assert_eq!(m.run(&mut hook, None).unwrap(), StopReason::MaxInsts);
        let all = dumps(&m);
        assert_eq!(all.len(), 2);
        for (_, dump) in &all {
            assert_eq!(value(dump, "system.hart1.sim_ticks"), 17.0 * 400.0, "reversed {reversed}");
        }
    }
}

#[test]
fn a_reset_in_a_window_takes_effect_at_its_end_after_the_parked_instructions() {
    // Reversed: hart 1 parks its 3rd instruction, then hart 0 resets the statistics inside the window. The parked
    // instruction ran before the reset (the engine counted it there), so its timing belongs before it too: the reset
    // reaches the timing hook at the window's end, after the parked instruction is timed, and every instruction of
    // the window (each hart's, in either order) counts before it. Session 25 reset at once: the parked instruction
    // was timed after the reset, in the next epoch, and the harts' bases depended on the order.
    let code = calling(12, 0, simcall::STATS_RESET);
    let run = |reversed: bool| {
        let mut m = calling_machine(&code, &[0, 1], reversed);
        let clocked = Clocked { step: vec![400, 400], time: vec![0, 0], insts: Vec::new() };
        let mut hook = Parking { clocked, park_at: 3, parked: false, ends: Vec::new(), resets: Vec::new() };
        m.max_insts = 80; // two windows' calls and a little more
        assert_eq!(m.run(&mut hook, None).unwrap(), StopReason::MaxInsts);
        (hook.resets.clone(), m.harts.iter().map(|h| h.base.insts).collect::<Vec<_>>(), m.stats_resets)
    };
    let (resets, bases, count) = run(true);
    assert_eq!(resets, [false, false], "a reset reached the hook with an instruction parked");
    assert_eq!(count, 2);
    // Hart 0 resets at its 17th instruction in the first window, hart 1 (stopped at its parked 3rd there) at its 17th
    // in the second, through which hart 0 runs (its last 5-instruction turn starts before the window's 20 ns end and
    // ends past it: 52 instructions): the bases are the harts' counts at the end of the second window.
    assert_eq!(bases, [52, 17]);
    assert_eq!(run(false), (resets, bases, count));
}

#[test]
fn numa_placements_in_a_window_do_not_depend_on_the_partitions_order() {
    // Each hart allocates 4 KB of its socket's memory inside the first window: each socket's first block takes a
    // new 2 MB page below the last mapping. Made when called (session 25), socket 0's page was the upper one in
    // socket order and socket 1's reversed: the blocks' addresses and the NUMA map depended on the order.
    let code = calling(12, 4096, simcall::ALLOC_LOCAL);
    let run = |reversed: bool| {
        let mut m = calling_machine(&code, &[0, 1, 0, 1], reversed);
        let clocked = Clocked { step: vec![400, 530, 470, 310], time: vec![0; 4], insts: Vec::new() };
        let mut hook = clocked;
        assert_eq!(m.run(&mut hook, None).unwrap(), StopReason::MaxInsts);
        let blocks: Vec<u64> = m.harts.iter().map(|h| h.x[10]).collect();
        (blocks, m.process.numa.ranges().to_vec())
    };
    let (blocks, ranges) = run(false);
    assert!(blocks.iter().all(|&b| b != 0), "{blocks:?}");
    assert_eq!(run(true), (blocks.clone(), ranges));
    // Performed in hart order at the window's end: hart 0's (socket 0) page is the upper one.
    assert!(blocks[0] > blocks[1], "{blocks:?}");
}

/// Records, at each checkpoint, hart 1's a0 and whether any hart's system call still waited for its window's end.
struct Recorder(std::sync::Arc<std::sync::Mutex<Vec<(u64, bool)>>>);

impl crate::sim::CheckpointWriter for Recorder {
    fn write(&mut self, m: &Machine) -> Result<(String, u64), String> {
        self.0.lock().unwrap().push((m.harts[1].x[10], m.ecall_waiting.contains(&true)));
        Ok(("recorded".into(), 0))
    }
}

#[test]
fn a_checkpoint_is_not_written_while_a_system_call_waits_for_its_windows_end() {
    // Reversed: hart 1 reaches its HART_ID call (its 17th instruction) first and waits; System.checkpoint_at_insts
    // (20) is reached in hart 0's next turn. Written then, the checkpoint would hold hart 1 past its `ecall` with the
    // call never made (a0 still 0): it is written at the window's end, after the calls.
    let code = calling(12, 0, simcall::HART_ID);
    let mut m = calling_machine(&code, &[0, 1], true);
    m.checkpoint_at = 20;
    let written = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    m.checkpoint_writer = Some(Box::new(Recorder(written.clone())));
    let mut hook = Clocked { step: vec![400, 400], time: vec![0, 0], insts: Vec::new() };
    assert_eq!(m.run(&mut hook, None).unwrap(), StopReason::MaxInsts);
    assert_eq!(*written.lock().unwrap(), [(1, false)]);
    assert_eq!((m.harts[0].x[10], m.harts[1].x[10]), (0, 1));
}
