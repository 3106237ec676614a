//! Several harts on one socket: per-core clocks, a shared LLC, per-hart time, statistics paths, determinism.

use kvsim_timing::synth::*;
use kvsim_timing::system::TimingSystem;
use kvsim_timing::StatSink;

fn two_cores() -> TimingSystem {
    let fast = core_params();
    let mut slow = core_params();
    slow.clock = 1_250_000_000;
    TimingSystem::new(&[fast, slow], &hierarchy_params(), &dram_params())
}

/// Interleave the harts in quanta, always advancing the one furthest behind in simulated time.
fn run_two(sys: &mut TimingSystem, n: u64) {
    let mut streams = [MixedStream::new(n, 1), MixedStream::new(n, 2)];
    let mut live = [true, true];
    while live.iter().any(|&l| l) {
        let hart = (0..2).filter(|&h| live[h]).min_by_key(|&h| sys.hart_time(h)).unwrap();
        for _ in 0..1000 {
            match streams[hart].next() {
                Some(inst) => {
                    sys.on_inst(hart, &inst);
                }
                None => {
                    live[hart] = false;
                    break;
                }
            }
        }
    }
    sys.finish();
}

#[test]
fn cores_share_the_llc_and_keep_their_own_clocks() {
    let mut sys = two_cores();
    // Hart 0 brings a line into the LLC (and holds it exclusively); hart 1's read is forwarded to hart 0's L1.
    let line = 0x4000_0000;
    sys.on_inst(0, &load(0x100, 5, 0, line));
    let t0 = sys.hart_time(0);
    run(&mut sys, 1, (0..4).map(|k| alu(0x200 + 4 * k, 0, 0, 0))); // warm hart 1's L1I
    let lat = sys.on_inst(1, &load(0x200, 5, 0, line));
    // 4 cycles of L1 at 1.25 GHz (3.2 ns) + 10 directory cycles and hart 0's 4 L1 cycles at 2.5 GHz (5.6 ns) =
    // 11 cycles at 1.25 GHz.
    assert_eq!(lat.complete - lat.issue, 11);
    assert!(t0 > 0);
    // Straight-line ALU work takes the same cycles on both, but twice the ticks on the slow core.
    // (Once the code is in the L1Is: a cold I-cache miss costs more cycles on the faster core.)
    let mut sys = two_cores();
    let mut spent = [(0, 0); 2];
    for (h, used) in spent.iter_mut().enumerate() {
        run(&mut sys, h, (0..4000u64).map(|k| alu(0x1000 + 4 * (k % 64), 5 + (k % 8) as u8, 0, 0)));
        let (c0, t0) = (sys.cores[h].cycles(), sys.hart_time(h));
        run(&mut sys, h, (0..4000u64).map(|k| alu(0x1000 + 4 * (k % 64), 5 + (k % 8) as u8, 0, 0)));
        *used = (sys.cores[h].cycles() - c0, sys.hart_time(h) - t0);
    }
    assert_eq!(spent[0].0, spent[1].0);
    let (a, b) = (spent[0].1, spent[1].1);
    assert!((b as f64 / a as f64 - 2.0).abs() < 0.01, "{a} vs {b}");
    // DVFS: raise hart 1 to 2.5 GHz and its further work runs at the fast clock.
    sys.set_clock(1, 2_500_000_000);
    let (c0, t0) = (sys.cores[1].cycles(), sys.hart_time(1));
    run(&mut sys, 1, (0..4000u64).map(|k| alu(0x1000 + 4 * (k % 64), 5 + (k % 8) as u8, 0, 0)));
    assert_eq!(sys.hart_time(1) - t0, (sys.cores[1].cycles() - c0) * 400);
}

fn run<I: Iterator<Item = kvsim_timing::inst::InstInfo>>(sys: &mut TimingSystem, hart: usize, s: I) {
    for inst in s {
        sys.on_inst(hart, &inst);
    }
}

#[test]
fn system_stats_are_named_per_core_and_deterministic() {
    let go = || {
        let mut sys = two_cores();
        run_two(&mut sys, 200_000);
        let mut out = StatSink::new();
        sys.stats("system.", &mut out);
        out
    };
    let a = go();
    assert_eq!(a, go());
    for name in [
        "system.core0.ipc",
        "system.core1.ipc",
        "system.core1.l1d.mpki",
        "system.core0.rob_occupancy_avg",
        "system.llc.misses",
        "system.llc.mpki",
        "system.mem.channel0.read_bw",
        "system.mem.channel0.row_hit_rate",
        "system.mem.channel0.read_queue_latency_avg",
    ] {
        assert!(a.get(name).is_some(), "missing {name}");
    }
    assert_eq!(a.get("system.core1.committed_insts"), Some(200_000.0));
    assert!(a.get("system.core1.stores").unwrap() > 0.0);
}
