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
