//! Microbenchmarks on synthetic instruction streams through core + caches + DDR4: each asserts what the
//! configuration implies (load-to-use latencies, issue width, MLP bounds, bandwidth, ROB sensitivity).

use kvsim_params::{CacheHierarchy, Core as CoreParams};
use kvsim_timing::dram::DDR4_2400;
use kvsim_timing::inst::{InstClass, InstInfo};
use kvsim_timing::synth::*;

const REGION: u64 = 0x1000_0000;

/// Cycles and instructions spent on `stream` (after whatever the machine already ran).
fn measure<I: Iterator<Item = InstInfo>>(m: &mut CoreRig, stream: I) -> (u64, u64) {
    let (c0, i0) = (m.core.cycles(), m.core.stats.insts);
    run(m, stream);
    (m.core.cycles() - c0, m.core.stats.insts - i0)
}

/// A pointer chase: `iters` dependent loads (x5 = [x5]) along a random cycle over `ws` bytes of lines, each
/// followed by the loop branch. Returns the stream and where it stopped.
/// Bring the code at `pcs` into the L1I (and train nothing else) so a measurement sees no cold I-cache misses.
fn warm_code(m: &mut CoreRig, pcs: impl Iterator<Item = u64>) {
    run(m, pcs.map(|pc| alu(pc, 0, 0, 0)));
}

fn chase(next: &[u32], start: u32, iters: usize) -> impl Iterator<Item = InstInfo> + '_ {
    let mut cur = start;
    (0..iters).flat_map(move |_| {
        cur = next[cur as usize];
        [load(0x1000, 5, 5, REGION + cur as u64 * 64), branch(0x1004, 5, true, 0x1000)]
    })
}

fn chase_cycles_per_load(m: &mut CoreRig, ws: u64, warm_passes: usize, iters: usize) -> f64 {
    let lines = (ws / 64) as usize;
    let next = Rng(42).cycle(lines);
    run(m, chase(&next, 0, lines * warm_passes));
    let (cycles, _) = measure(m, chase(&next, 0, iters));
    cycles as f64 / iters as f64
}

fn dram_chase_expected(core_hz: f64) -> f64 {
    // L1 (4) + LLC (20 cycles at 2.5 GHz) + controller (15 ns) + a row conflict (tRP + tRCD + CL + burst).
    let t = DDR4_2400;
    let ns = 15.0 + ((t.rp + t.rcd + t.cl + 4) * t.t_ck) as f64 / 1000.0 + 8.0;
    4.0 + ns * core_hz / 1e9
}

#[test]
fn pointer_chase_gives_the_configured_load_to_use_latencies() {
    let mut m = CoreRig::default_fixture();
    let l1 = chase_cycles_per_load(&mut m, 16 << 10, 1, 20_000);
    let mut m = CoreRig::default_fixture();
    let llc = chase_cycles_per_load(&mut m, 1 << 20, 2, 20_000);
    let mut m = CoreRig::default_fixture();
    let dram = chase_cycles_per_load(&mut m, 64 << 20, 0, 50_000);
    let expect = dram_chase_expected(2.5e9);
    println!(
        "pointer chase, cycles per load at 2.5 GHz: L1 {l1:.2} (4), LLC {llc:.2} (24), DRAM {dram:.1} ({expect:.1})"
    );
    assert!((l1 - 4.0).abs() < 0.01, "L1 load-to-use {l1}");
    assert!((llc - 24.0).abs() < 0.05, "LLC load-to-use {llc}");
    assert!((dram - expect).abs() / expect < 0.08, "DRAM load-to-use {dram} vs {expect}");
    // A private L2 (8 cycles) adds its lookup to every level below it.
    let mut h = hierarchy_params();
    h.l2_enabled = true;
    let mut m = CoreRig::new(&core_params(), &h, &dram_params());
    let l2 = chase_cycles_per_load(&mut m, 128 << 10, 1, 20_000);
    let mut m = CoreRig::new(&core_params(), &h, &dram_params());
    let llc2 = chase_cycles_per_load(&mut m, 1 << 20, 2, 20_000);
    println!("  with an 8-cycle L2: L2 {l2:.2} (12), LLC {llc2:.2} (32)");
    assert!((l2 - 12.0).abs() < 0.05 && (llc2 - 32.0).abs() < 0.05);
}

#[test]
fn dram_latency_in_cycles_scales_with_the_core_clock() {
    let mut p = core_params();
    p.clock = 1_250_000_000;
    let mut m = CoreRig::new(&p, &hierarchy_params(), &dram_params());
    let l1 = chase_cycles_per_load(&mut m, 16 << 10, 1, 5_000);
    let mut m = CoreRig::new(&p, &hierarchy_params(), &dram_params());
    let dram = chase_cycles_per_load(&mut m, 64 << 20, 0, 20_000);
    // The LLC runs at its own 2.5 GHz clock: 20 uncore cycles are 10 core cycles at 1.25 GHz.
    let t = DDR4_2400;
    let expect = 4.0 + (8.0 + 15.0 + ((t.rp + t.rcd + t.cl + 4) * t.t_ck) as f64 / 1000.0) * 1.25;
    println!("at 1.25 GHz: L1 {l1:.2} cycles, DRAM {dram:.1} cycles ({expect:.1})");
    assert!((l1 - 4.0).abs() < 0.01);
    assert!((dram - expect).abs() / expect < 0.08);
}

fn stream_lines(lines: u64) -> impl Iterator<Item = InstInfo> {
    (0..lines / 16).flat_map(|j| {
        (0..17u64).map(move |k| {
            if k == 16 {
                branch(0x2040, 9, true, 0x2000)
            } else {
                load(0x2000 + k * 4, 10 + (k % 8) as u8, 0, REGION + (j * 16 + k) * 64)
            }
        })
    })
}

fn stream_bandwidth(l1d_mshrs: u64) -> (f64, f64) {
    let mut h = hierarchy_params();
    h.l1d.mshrs = l1d_mshrs;
    let mut m = CoreRig::new(&core_params(), &h, &dram_params());
    let lines = 200_000;
    run(&mut m, stream_lines(lines));
    let secs = m.core.now() as f64 * 1e-12;
    let bw = (lines * 64) as f64 / secs;
    let s = m.stats();
    let avg_latency_ns = s.get("system.core0.load_latency_avg").unwrap() / 2.5;
    (bw, avg_latency_ns)
}

#[test]
fn streaming_reads_approach_the_ddr4_channel_peak() {
    let peak = 64.0 / (4.0 * DDR4_2400.t_ck as f64 * 1e-12);
    let (bw, lat) = stream_bandwidth(32);
    println!(
        "stream with 32 L1D MSHRs: {:.2} GB/s = {:.1}% of {:.2} GB/s (avg load latency {lat:.0} ns)",
        bw / 1e9,
        100.0 * bw / peak,
        peak / 1e9
    );
    assert!(bw / peak > 0.80, "streaming efficiency {:.3}", bw / peak);
    // With 10 MSHRs the core cannot keep enough lines in flight: Little's law bounds it to 10 lines per
    // (unloaded) miss latency.
    let (bw10, _) = stream_bandwidth(10);
    // Sequential lines are row hits: L1 miss (4 cycles) + LLC (20) + controller (15 ns) + CL + burst.
    let t = DDR4_2400;
    let unloaded_ns = 24.0 / 2.5 + 15.0 + ((t.cl + 4) * t.t_ck) as f64 / 1000.0;
    let bound = 10.0 * 64.0 / (unloaded_ns * 1e-9);
    println!("stream with 10 L1D MSHRs: {:.2} GB/s (Little's-law bound {:.2} GB/s)", bw10 / 1e9, bound / 1e9);
    assert!(bw10 <= bound * 1.01 && bw10 > bound * 0.85, "{bw10} vs {bound}");
}

#[test]
fn dependent_adds_run_one_per_cycle_and_independent_adds_reach_issue_width() {
    let body = 255u64;
    let dep = |iters: u64| {
        (0..iters).flat_map(move |_| {
            (0..=body).map(move |k| {
                if k == body {
                    branch(0x3000 + k * 4, 6, true, 0x3000)
                } else {
                    alu(0x3000 + k * 4, 5, 5, 6)
                }
            })
        })
    };
    let mut m = CoreRig::default_fixture();
    run(&mut m, dep(16)); // also trains gshare's history on the loop branch
    let (cycles, insts) = measure(&mut m, dep(40));
    let ipc_dep = insts as f64 / cycles as f64;
    let indep = |iters: u64| {
        (0..iters).flat_map(move |_| {
            (0..=1023u64).map(|k| {
                if k == 1023 {
                    branch(0x8000 + k * 4, 6, true, 0x8000)
                } else {
                    alu(0x8000 + k * 4, 5 + (k % 16) as u8, 0, 0)
                }
            })
        })
    };
    let mut m = CoreRig::default_fixture();
    run(&mut m, indep(16));
    let (cycles, insts) = measure(&mut m, indep(20));
    let ipc_indep = insts as f64 / cycles as f64;
    println!("IPC: dependent adds {ipc_dep:.3}, independent adds {ipc_indep:.3} (issue width 4)");
    assert!((ipc_dep - 256.0 / 255.0).abs() < 0.01, "a dependent chain runs one add per cycle: {ipc_dep}");
    assert!(ipc_indep > 3.95 && ipc_indep <= 4.0, "independent adds fill the issue width: {ipc_indep}");
    // A narrower core is bound by its width.
    let mut p = core_params();
    p.fetch_width = 2;
    p.issue_width = 2;
    p.commit_width = 2;
    let mut m = CoreRig::new(&p, &hierarchy_params(), &dram_params());
    run(&mut m, indep(16));
    let (cycles, insts) = measure(&mut m, indep(10));
    assert!((insts as f64 / cycles as f64 - 2.0).abs() < 0.02);
}

/// A memory-latency-bound loop: per iteration one load from a random DRAM line (independent of the others), an
/// add that uses it, 27 independent adds and the loop branch.
fn latency_bound_loop(iters: u64, seed: u64) -> impl Iterator<Item = InstInfo> {
    let mut rng = Rng(seed);
    (0..iters).flat_map(move |_| {
        let addr = REGION + rng.below(1 << 20) * 64;
        (0..30u64).map(move |k| match k {
            0 => load(0x4000, 10, 0, addr),
            1 => alu(0x4004, 11, 10, 11),
            29 => branch(0x4000 + 29 * 4, 11, true, 0x4000),
            _ => alu(0x4000 + k * 4, 12 + (k % 8) as u8, 0, 0),
        })
    })
}

fn ipc_with_rob(rob: u64, mshrs: u64) -> f64 {
    let mut p = core_params();
    p.rob_entries = rob;
    p.lq_entries = rob;
    let mut h = hierarchy_params();
    h.l1d.mshrs = mshrs;
    let mut m = CoreRig::new(&p, &h, &dram_params());
    run(&mut m, latency_bound_loop(1000, 1));
    let (cycles, insts) = measure(&mut m, latency_bound_loop(20_000, 2));
    insts as f64 / cycles as f64
}

#[test]
fn ipc_rises_with_rob_size_and_levels_off_at_the_mshr_limit() {
    let robs = [16u64, 32, 64, 128, 256, 512, 1024];
    let ipc: Vec<f64> = robs.iter().map(|&r| ipc_with_rob(r, 10)).collect();
    for (r, i) in robs.iter().zip(&ipc) {
        println!("ROB {r:5}: IPC {i:.3}");
    }
    for w in 0..4 {
        assert!(ipc[w + 1] > ipc[w] * 1.3, "IPC should grow with the ROB while misses are window-bound: {ipc:?}");
    }
    // 10 MSHRs cover ~300 instructions of this loop: beyond that the ROB no longer helps.
    assert!(ipc[6] < ipc[5] * 1.03, "IPC should level off: {ipc:?}");
    // With more MSHRs the bigger window pays again.
    let more = ipc_with_rob(1024, 32);
    println!("ROB 1024 with 32 MSHRs: IPC {more:.3}");
    assert!(more > ipc[6] * 1.2);
}

/// `n` independent loads from random DRAM lines, then the MLP they achieved relative to `latency` cycles each.
fn mlp(p: &CoreParams, h: &CacheHierarchy, latency: f64) -> f64 {
    let mut m = CoreRig::new(p, h, &dram_params());
    let mut rng = Rng(9);
    let n = 4000u64;
    warm_code(&mut m, [0x5000, 0x5004].into_iter());
    let loads = (0..n).flat_map(|i| {
        // A random row and column, with the 16 banks taken in turn so the banks are not what limits overlap.
        let bank = i % 16;
        let line = rng.below(1 << 10) * 2048 + (bank / 4) * 512 + rng.below(128) * 4 + bank % 4;
        let a = REGION + line * 64;
        [load(0x5000, 10 + (i % 8) as u8, 0, a), branch(0x5004, 0, true, 0x5000)]
    });
    let (cycles, _) = measure(&mut m, loads.collect::<Vec<_>>().into_iter());
    n as f64 * latency / cycles as f64
}

#[test]
fn memory_level_parallelism_is_bounded_by_the_mshrs() {
    let lat = dram_chase_expected(2.5e9);
    let mut p = core_params();
    p.rob_entries = 512;
    p.lq_entries = 512;
    for mshrs in [1u64, 2, 4, 8] {
        let mut h = hierarchy_params();
        h.l1d.mshrs = mshrs;
        let x = mlp(&p, &h, lat);
        println!("OoO, {mshrs} L1D MSHRs: MLP {x:.2}");
        assert!(x <= mshrs as f64 * 1.05, "MLP {x} exceeds {mshrs} MSHRs");
        assert!(x >= mshrs as f64 * 0.75, "MLP {x} far below {mshrs} MSHRs");
    }
    // A one-entry ROB (in-order issue, nothing overlaps) never overlaps misses, however many MSHRs.
    let mut p1 = core_params();
    p1.rob_entries = 1;
    let x = mlp(&p1, &hierarchy_params(), lat);
    println!("ROB 1: MLP {x:.2}");
    assert!(x <= 1.02 && x > 0.85);
}

#[test]
fn in_order_core_overlaps_misses_only_as_far_as_it_allows() {
    let lat = dram_chase_expected(2.5e9);
    let mut p = core_params();
    p.model = kvsim_params::CoreModel::Inorder;
    p.fetch_width = 2;
    p.issue_width = 2;
    p.commit_width = 2;
    p.rob_entries = 32;
    for mshrs in [1u64, 2, 4] {
        let mut h = hierarchy_params();
        h.l1d.mshrs = mshrs;
        let x = mlp(&p, &h, lat);
        println!("in-order, {mshrs} L1D MSHRs: MLP {x:.2}");
        assert!(x <= mshrs as f64 * 1.05 && x >= mshrs as f64 * 0.75, "MLP {x} with {mshrs} MSHRs");
    }
    // Stall on use: a consumer of a missing load holds up every younger instruction, so a second, independent
    // miss behind it cannot start; out of order it issues at once and the two misses overlap.
    let seq = || {
        vec![
            load(0x6000, 5, 0, REGION + (1 << 24)),
            alu(0x6004, 6, 5, 0),
            load(0x6008, 7, 0, REGION + (1 << 25) + 64), // another bank group
            alu(0x600c, 8, 7, 0),
        ]
        .into_iter()
    };
    let mut m = CoreRig::new(&p, &hierarchy_params(), &dram_params());
    warm_code(&mut m, (0..4).map(|k| 0x6000 + k * 4));
    let (inorder, _) = measure(&mut m, seq());
    let mut q = p.clone();
    q.model = kvsim_params::CoreModel::Ooo;
    let mut m = CoreRig::new(&q, &hierarchy_params(), &dram_params());
    warm_code(&mut m, (0..4).map(|k| 0x6000 + k * 4));
    let (ooo, _) = measure(&mut m, seq());
    println!("two misses with a consumer between them: in-order {inorder} cycles, out-of-order {ooo} cycles");
    assert!(
        inorder as f64 > ooo as f64 + 0.7 * lat && (ooo as f64) < 1.1 * lat,
        "in-order {inorder}, ooo {ooo}, miss {lat}"
    );
}

#[test]
fn software_prefetch_ahead_hides_latency_without_blocking_commit() {
    let lines: Vec<u64> = {
        let mut rng = Rng(5);
        (0..20_000).map(|_| REGION + rng.below(1 << 20) * 64).collect()
    };
    let dist = 16;
    let program = |with_prefetch: bool| {
        let lines = &lines;
        (0..lines.len()).flat_map(move |i| {
            let mut v = Vec::with_capacity(3);
            if with_prefetch && i + dist < lines.len() {
                v.push(prefetch(0x7000, lines[i + dist], false));
            }
            // Dependent on the previous load, as a linked-list walk is.
            v.push(load(0x7004, 5, 5, lines[i]));
            v.push(branch(0x7008, 5, true, 0x7000));
            v
        })
    };
    let mut m = CoreRig::default_fixture();
    let (without, _) = measure(&mut m, program(false));
    let mut m = CoreRig::default_fixture();
    let (with, _) = measure(&mut m, program(true));
    println!(
        "dependent walk of 20000 DRAM lines: {:.1} cycles/elem without prefetch, {:.1} with (distance {dist})",
        without as f64 / 20_000.0,
        with as f64 / 20_000.0
    );
    assert!((with as f64) < 0.25 * without as f64);
    // Prefetches do not wait for their data: as many prefetches to DRAM lines as the L1D has MSHRs (10) commit
    // long before their data returns.
    let mut m = CoreRig::default_fixture();
    warm_code(&mut m, (0..8).map(|k| 0x7100 + k * 4));
    let pfs: Vec<InstInfo> = (0..10).map(|i| prefetch(0x7100 + (i % 8) * 4, lines[i as usize], false)).collect();
    let (cycles, _) = measure(&mut m, pfs.into_iter());
    println!("10 prefetches committed in {cycles} cycles");
    assert!((cycles as f64) < 40.0, "prefetches block commit: {cycles} cycles");
    assert_eq!(m.stats().get("system.core0.l1d.prefetches"), Some(10.0));
}

#[test]
fn a_prefetch_without_a_free_l1d_mshr_completes_when_one_is_granted() {
    // Two L1D MSHRs, three prefetches to cold DRAM lines: the first two are sent at once and complete the cycle
    // after issue; the third waits in the core until the first fill frees an MSHR (not dated ahead at issue + 1).
    let mut h = hierarchy_params();
    h.l1d.mshrs = 2;
    let mut m = CoreRig::new(&core_params(), &h, &dram_params());
    warm_code(&mut m, (0..3).map(|k| 0x7200 + k * 4));
    let lines = [REGION, REGION + (1 << 20), REGION + (2 << 20)];
    let t: Vec<_> =
        (0..3).map(|k| m.core.step(&prefetch(0x7200 + k * 4, lines[k as usize], false), &mut m.mem)).collect();
    assert_eq!(t[0].complete, t[0].issue + 1);
    assert_eq!(t[1].complete, t[1].issue + 1);
    let l1d = &m.mem.cores[0].l1d;
    let fill = |line: u64| l1d.ready(l1d.find(line >> 6).expect("prefetched"));
    let first_free = fill(lines[0]).min(fill(lines[1]));
    assert!(first_free > (t[2].issue + 100) * 400, "the MSHRs are busy with DRAM misses");
    // The core runs at 2.5 GHz: 400 ps a cycle.
    assert_eq!(t[2].complete, first_free.div_ceil(400));
    assert!(t[2].commit >= t[2].complete);
}

#[test]
fn mispredictions_cost_the_configured_penalty() {
    let run_branches = |bpred: &str, random: bool| {
        let mut p = core_params();
        p.bpred = kvsim_params::CoreBpred::from_name(bpred).expect("a predictor of models/core.py");
        let mut m = CoreRig::new(&p, &hierarchy_params(), &dram_params());
        let mut rng = Rng(3);
        let prog = (0..20_000u64).flat_map(move |_| {
            let taken = if random { rng.below(2) == 0 } else { true };
            [
                alu(0x9000, 5, 0, 0),
                branch(0x9004, 5, taken, 0x9000),
                alu(0x9008, 6, 0, 0),
                branch(0x900c, 6, true, 0x9000),
            ]
        });
        let (cycles, _) = measure(&mut m, prog);
        let s = m.stats();
        (cycles, s.get("system.core0.branch_mispredicts").unwrap())
    };
    let (easy, easy_misses) = run_branches("gshare", false);
    let (hard, hard_misses) = run_branches("gshare", true);
    let (perfect, perfect_misses) = run_branches("perfect", true);
    println!("predictable {easy} cycles ({easy_misses} mispredicts), random {hard} ({hard_misses}), perfect {perfect} ({perfect_misses})");
    assert!(easy_misses < 30.0, "only while gshare's history warms up");
    assert!(hard_misses > 8000.0 && hard_misses < 12_000.0, "random branches mispredict about half the time");
    assert_eq!(perfect_misses, 0.0);
    // Each mispredict costs the refill penalty (14) on top of the branch's own resolution.
    let per_miss = (hard - perfect) as f64 / hard_misses;
    assert!(per_miss > 14.0 && per_miss < 18.0, "cycles per mispredict {per_miss}");
}

#[test]
fn same_stream_and_config_give_identical_stats() {
    let go = || {
        let mut m = CoreRig::default_fixture();
        run(&mut m, MixedStream::new(300_000, 11));
        m.stats()
    };
    let (a, b) = (go(), go());
    assert!(a.get("system.core0.committed_insts") == Some(300_000.0));
    assert_eq!(a, b);
    for name in [
        "system.core0.ipc",
        "system.core0.rob_occupancy_avg",
        "system.core0.l1d.misses",
        "system.core0.l1d.mpki",
        "system.llc.misses",
        "system.mem.channel0.read_bw",
        "system.mem.channel0.row_hit_rate",
    ] {
        assert!(a.get(name).is_some(), "missing stat {name}");
    }
}

#[test]
fn stores_drain_through_the_store_buffer_and_forward_to_loads() {
    // Stores to one line, each followed by a load of the same word: forwarded, so never waits for the L1D.
    let prog = (0..1000u64).flat_map(|i| {
        let a = 0x9_0000 + (i % 8) * 8;
        [store(0xa000, 5, 0, a), load(0xa004, 6, 0, a), branch(0xa008, 0, true, 0xa000)]
    });
    let mut m = CoreRig::default_fixture();
    run(&mut m, prog);
    let s = m.stats();
    assert!(s.get("system.core0.forwarded_loads").unwrap() >= 999.0);
    assert_eq!(s.get("system.core0.stores"), Some(1000.0));
    // A store miss does not block commit: the store buffer absorbs it.
    let mut m = CoreRig::default_fixture();
    warm_code(&mut m, (0..16).map(|k| 0xb000 + k * 4));
    let prog: Vec<InstInfo> = (0..16u64).map(|i| store(0xb000 + i * 4, 5, 0, REGION + i * 4096)).collect();
    let (cycles, _) = measure(&mut m, prog.into_iter());
    assert!(cycles < 20, "16 store misses committed in {cycles} cycles");
    let _ = InstClass::Store;
}

/// Independent loads and stores to L1-resident lines, and independent branches: cycles per group, with and without
/// Ivy Bridge's port rules (Intel's optimization manual: ports 2 and 3 generate load and store addresses, port 4
/// takes store data, port 5 alone executes branches).
fn port_bound(core: CoreParams, group: impl Fn(u64) -> Vec<InstInfo>, groups: u64) -> f64 {
    let mut m = CoreRig::new(&core, &hierarchy_params(), &dram_params());
    // Warm the code and the data lines first, and run long enough that the first misses are long committed and
    // the issue ports set the pace.
    run(&mut m, (0..groups).flat_map(&group));
    let (cycles, _) = measure(&mut m, (0..groups).flat_map(&group));
    cycles as f64 / groups as f64
}

#[test]
fn stores_share_the_load_ports_address_units_when_the_core_says_so() {
    // Two loads and one store each group, all independent, to lines that stay in the L1D; 100 groups.
    let group = |_: u64| {
        vec![
            load(0x2000, 6, 0, REGION),
            load(0x2004, 7, 0, REGION + 64),
            store(0x2008, 0, 0, REGION + 128),
            alu(0x200c, 8, 0, 0),
        ]
    };
    let separate = port_bound(core_params(), group, 1000);
    let shared = port_bound(CoreParams { store_address_on_load_ports: true, ..core_params() }, group, 1000);
    // Separate store port: 2 loads + 1 store + 1 ALU fit one 4-wide cycle. Shared address units: 3 address generations on 2 ports take 1.5 cycles a group.
    assert!((separate - 1.0).abs() < 0.02, "{separate}");
    assert!((shared - 1.5).abs() < 0.02, "separate {separate}, shared {shared}");
}

#[test]
fn one_branch_unit_issues_one_branch_a_cycle() {
    // Two not-taken independent branches and two ALU ops per group (4 instructions: one fetch cycle).
    let group = |_: u64| {
        vec![
            branch(0x3000, 0, false, 0x3100),
            alu(0x3004, 6, 0, 0),
            branch(0x3008, 0, false, 0x3100),
            alu(0x300c, 7, 0, 0),
        ]
    };
    let any_alu = port_bound(core_params(), group, 1000);
    let one_unit = port_bound(CoreParams { branch_units: 1, ..core_params() }, group, 1000);
    assert!((any_alu - 1.0).abs() < 0.02, "{any_alu}");
    assert!((one_unit - 2.0).abs() < 0.02, "{one_unit}");
}

#[test]
fn store_forwarding_needs_the_load_inside_one_store() {
    use kvsim_timing::core::{Core, L1Latencies};
    use kvsim_timing::FixedLatency;
    const MEM: u64 = 40_000; // every access answered 40 ns after it is asked
    let l1 = L1Latencies { l1i: 4, l1d: 4 };
    let a = 0x9_0000u64;
    let sized = |mut i: InstInfo, size: u8| {
        i.mem_size = size;
        i
    };
    // An 8-byte store, then a 1-byte load inside it: forwarded, the store's data 4 cycles after both are ready.
    let (mut core, mut mem) = (Core::new(0, &core_params(), l1, 64), FixedLatency::new(MEM));
    let st = core.step(&store(0x1000, 5, 0, a), &mut mem);
    let ld = core.step(&sized(load(0x1004, 6, 0, a + 3), 1), &mut mem);
    assert_eq!(ld.complete, ld.issue.max(st.complete) + 4);
    assert_eq!((core.stats.forwarded_loads, core.stats.forward_blocked_loads), (1, 0));
    // A 1-byte store, then an 8-byte load over it: not contained, so the load waits until the store has left
    // the store buffer (after its commit, once its line is owned: MEM after it issued) and reads the L1D.
    let (mut core, mut mem) = (Core::new(0, &core_params(), l1, 64), FixedLatency::new(MEM));
    let st = core.step(&sized(store(0x1000, 5, 0, a), 1), &mut mem);
    let ld = core.step(&load(0x1004, 6, 0, a), &mut mem);
    let clock = *core.clock();
    let drained = st.commit.max(clock.cycle_at_or_after(clock.tick(st.issue) + MEM));
    assert_eq!(ld.complete, drained + 4);
    assert_eq!((core.stats.forwarded_loads, core.stats.forward_blocked_loads), (0, 1));
    // A 4-byte store and a 4-byte load of the other half of its word: no overlap, the load goes to memory.
    let (mut core, mut mem) = (Core::new(0, &core_params(), l1, 64), FixedLatency::new(MEM));
    core.step(&sized(store(0x1000, 5, 0, a), 4), &mut mem);
    let ld = core.step(&sized(load(0x1004, 6, 0, a + 4), 4), &mut mem);
    assert_eq!(ld.complete, clock.cycle_at_or_after(clock.tick(ld.issue) + MEM));
    assert_eq!((core.stats.forwarded_loads, core.stats.forward_blocked_loads), (0, 0));
}

#[test]
fn a_store_or_load_across_two_words_is_matched_by_either_word() {
    // The store queue's filter is asked per 8-byte word (a store notes, a load asks, its first and, when another,
    // its last word): a store straddling two words must be found by a load of its second word alone, and a load
    // straddling two words by a store in its second word alone.
    use kvsim_timing::core::{Core, L1Latencies};
    use kvsim_timing::FixedLatency;
    const MEM: u64 = 40_000;
    let l1 = L1Latencies { l1i: 4, l1d: 4 };
    let a = 0x9_0000u64; // 8-byte aligned: words a / 8 and a / 8 + 1 fall in different filter entries
    let sized = |mut i: InstInfo, size: u8| {
        i.mem_size = size;
        i
    };
    // An 8-byte store at a + 4 (bytes a + 4 .. a + 12), then 4-byte loads of its first word's part and of its
    // second word's part: both inside it, both forwarded.
    let (mut core, mut mem) = (Core::new(0, &core_params(), l1, 64), FixedLatency::new(MEM));
    let st = core.step(&store(0x1000, 5, 0, a + 4), &mut mem);
    let second = core.step(&sized(load(0x1004, 6, 0, a + 8), 4), &mut mem);
    let first = core.step(&sized(load(0x1008, 7, 0, a + 4), 4), &mut mem);
    assert_eq!(second.complete, second.issue.max(st.complete) + 4);
    assert_eq!(first.complete, first.issue.max(st.complete) + 4);
    assert_eq!((core.stats.forwarded_loads, core.stats.forward_blocked_loads), (2, 0));
    // A 4-byte store at a + 8 (the second word only), then an 8-byte load at a + 4 over both words: it overlaps the
    // store only in its second word, is not contained, and waits for the store to drain.
    let (mut core, mut mem) = (Core::new(0, &core_params(), l1, 64), FixedLatency::new(MEM));
    core.step(&sized(store(0x1000, 5, 0, a + 8), 4), &mut mem);
    core.step(&load(0x1004, 6, 0, a + 4), &mut mem);
    assert_eq!((core.stats.forwarded_loads, core.stats.forward_blocked_loads), (0, 1));
}

#[test]
fn idle_poll_cycles_count_the_cycles_of_the_polls_that_found_no_frame() {
    // Three polls: idle, busy, idle. The idle ones' cycles (from the previous poll end, or the stats reset, to
    // theirs) are counted, the busy one's not; a stats reset starts both the count and the poll afresh.
    let mut m = CoreRig::default_fixture();
    warm_code(&mut m, (0..64).map(|i| 0x1000 + 4 * i));
    m.core.reset_stats();
    let poll = |m: &mut CoreRig, n: u64, idle: bool| {
        let (cycles, _) = measure(m, (0..n).map(|i| alu(0x1000 + 4 * (i % 64), 5, 5, 0)));
        m.core.poll_end(idle);
        cycles
    };
    let first = poll(&mut m, 400, true);
    let busy = poll(&mut m, 4_000, false);
    let last = poll(&mut m, 800, true);
    assert!(first > 0 && busy > first && last > 0);
    assert_eq!(m.core.stats.idle_poll_cycles, first + last);
    assert_eq!(m.core.measured_cycles(), first + busy + last);
    m.core.reset_stats();
    let after = poll(&mut m, 400, true);
    assert_eq!(m.core.stats.idle_poll_cycles, after);
}

/// `Core::step_block` (the engine's loop over a block's records: SE mode's `on_insts`) times a block as `step` does
/// each of its instructions, on a plain core (the target's shape: out of order, no scheduler or rename bound, no
/// decode paths) and on cores that are not plain (in order; a bounded scheduler), whose pipeline copies differ.
#[test]
fn step_block_times_a_block_as_step_does_each_instruction() {
    let in_order = CoreParams { model: kvsim_params::CoreModel::Inorder, ..core_params() };
    let bounded = CoreParams { scheduler_entries: 16, int_rename_registers: 48, ..core_params() };
    let stream: Vec<InstInfo> = MixedStream::new(60_000, 5).collect();
    for p in [core_params(), in_order, bounded] {
        let (mut one, mut block) = (rig(&p), rig(&p));
        run(&mut one, stream.iter().copied());
        for b in stream.chunks(7) {
            block.core.step_block(b, &mut block.mem);
        }
        assert_eq!((one.core.cycles(), one.stats()), (block.core.cycles(), block.stats()), "{:?}", p.model);
    }
}

fn rig(p: &CoreParams) -> CoreRig {
    CoreRig::new(p, &hierarchy_params(), &dram_params())
}
