//! Host speed of core + caches + DRAM on a synthetic mix. Ignored by default (timing-sensitive); run with
//! `cargo test -p kvsim-timing --release --test speed -- --ignored --nocapture`.

use kvsim_timing::synth::{run, CoreRig, MixedStream};
use std::time::Instant;

#[test]
#[ignore]
fn synthetic_mips_through_ooo_core_caches_and_dram() {
    let mut m = CoreRig::default_fixture();
    run(&mut m, MixedStream::new(1_000_000, 1));
    let n = 10_000_000;
    let start = Instant::now();
    run(&mut m, MixedStream::new(n, 2));
    let mips = n as f64 / start.elapsed().as_secs_f64() / 1e6;
    println!("{mips:.1} simulated MIPS per host core (IPC {:.2})", m.stats().get("system.core0.ipc").unwrap());
    assert!(mips >= 5.0, "the detailed mode targets >= 5 MIPS per host core; got {mips:.1}");
}

/// Host time per instruction of the engine's timing object (`TimingSystem`, one socket) on the synthetic mix, and
/// per load on independent loads spread over 256 MiB (nearly every one a miss to DRAM: the path through the home
/// slice, the socket's memory and the NUMA routing). Best of 5 rounds; for before/after comparisons of the
/// per-access path (`-- --ignored --nocapture`).
#[test]
#[ignore]
fn host_time_of_the_timing_system_on_the_mix_and_on_dram_bound_loads() {
    use kvsim_timing::inst::{InstClass, InstInfo};
    use kvsim_timing::synth::{core_params, dram_params, hierarchy_params};
    use kvsim_timing::system::TimingSystem;
    let (mut best_mix, mut best_mem) = (f64::MAX, f64::MAX);
    for _ in 0..5 {
        let mut sys = TimingSystem::new(&[core_params()], &hierarchy_params(), &dram_params());
        MixedStream::new(1_000_000, 1).for_each(|i| {
            sys.on_inst(0, &i);
        });
        let n = 5_000_000u64;
        let start = Instant::now();
        MixedStream::new(n, 2).for_each(|i| {
            sys.on_inst(0, &i);
        });
        best_mix = best_mix.min(start.elapsed().as_secs_f64() / n as f64 * 1e9);
        let loads = 2_000_000u64;
        let mut x: u64 = 88_172_645_463_325_252;
        let start = Instant::now();
        for k in 0..loads {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let pc = 0x1000 + (k % 64) * 4;
            let info = InstInfo {
                pc,
                len: 4,
                next_pc: pc + 4,
                class: InstClass::Load,
                mem_addr: (0x1000_0000 + x % (1 << 28)) & !63,
                mem_size: 8,
                ..InstInfo::default()
            };
            sys.on_inst(0, &info);
        }
        best_mem = best_mem.min(start.elapsed().as_secs_f64() / loads as f64 * 1e9);
    }
    println!("timing system: mix {best_mix:.1} ns/inst, DRAM-bound {best_mem:.1} ns/load (best of 5)");
}

/// Host time per instruction of core + caches + DRAM on the synthetic mix with the core's window bounds and 4K
/// aliasing off and on (the Xeon's 54 scheduler entries, 144 rename registers, 7-cycle alias), one at a time and
/// together: best of 5 rounds each, for the cost of each mechanism (`-- --ignored --nocapture`).
#[test]
#[ignore]
fn host_time_of_the_core_window_bounds_and_4k_aliasing() {
    use kvsim_params::Core as CoreParams;
    use kvsim_timing::synth::{core_params, dram_params, hierarchy_params};
    let base = core_params();
    let variants = [
        ("off", base.clone()),
        ("scheduler 54", CoreParams { scheduler_entries: 54, ..base.clone() }),
        ("rename 144", CoreParams { int_rename_registers: 144, ..base.clone() }),
        ("4K alias 7", CoreParams { alias_4k_penalty: 7, ..base.clone() }),
        ("all three", CoreParams { scheduler_entries: 54, int_rename_registers: 144, alias_4k_penalty: 7, ..base }),
    ];
    for (name, p) in variants {
        let mut best = f64::MAX;
        for _ in 0..5 {
            let mut m = CoreRig::new(&p, &hierarchy_params(), &dram_params());
            run(&mut m, MixedStream::new(500_000, 1));
            let n = 3_000_000u64;
            let start = Instant::now();
            run(&mut m, MixedStream::new(n, 2));
            best = best.min(start.elapsed().as_secs_f64() / n as f64 * 1e9);
        }
        println!("{name:>12}: {best:.1} ns per instruction");
    }
}

/// The synthetic mix through core + caches + DRAM, 1 M instructions after 200,000 of warm-up, with the decode paths
/// off or as the Xeon has them (16-byte legacy blocks, a 32 x 8 x 6 uop cache over 32-byte windows): one variant a
/// test, so a host-instruction counter (callgrind) run on each gives the mechanism's cost
/// (`-- --ignored --exact <name>`).
fn the_mix_with_decode_paths(fetch_block_bytes: u64, uop_cache_sets: u64) {
    use kvsim_params::Core as CoreParams;
    use kvsim_timing::synth::{core_params, dram_params, hierarchy_params};
    let p = CoreParams { fetch_block_bytes, uop_cache_sets, ..core_params() };
    let mut m = CoreRig::new(&p, &hierarchy_params(), &dram_params());
    run(&mut m, MixedStream::new(200_000, 1));
    run(&mut m, MixedStream::new(1_000_000, 2));
}

#[test]
#[ignore]
fn the_mix_without_decode_paths() {
    the_mix_with_decode_paths(0, 0);
}

#[test]
#[ignore]
fn the_mix_with_the_xeons_decode_paths() {
    the_mix_with_decode_paths(16, 32);
}
