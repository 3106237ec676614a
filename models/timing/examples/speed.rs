//! Host speed of the detailed timing path: synthetic instructions per host second through the out-of-order
//! core, its caches and DDR4. Run: `cargo run --release -p kvsim-timing --example speed [-- <million insts>]`.

use kvsim_timing::synth::{run, CoreRig, MixedStream};
use std::time::Instant;

fn main() {
    let millions: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let n = millions * 1_000_000;
    let mut m = CoreRig::default_fixture();
    run(&mut m, MixedStream::new(1_000_000, 1)); // warm caches and predictors
    let start = Instant::now();
    let done = run(&mut m, MixedStream::new(n, 2));
    let secs = start.elapsed().as_secs_f64();
    let s = m.stats();
    println!(
        "{done} instructions in {secs:.2} s: {:.1} simulated MIPS per host core (IPC {:.2}, L1D MPKI {:.1}, LLC MPKI {:.1})",
        done as f64 / secs / 1e6,
        s.get("system.core0.ipc").unwrap_or(0.0),
        s.get("system.core0.l1d.mpki").unwrap_or(0.0),
        s.get("system.llc.mpki").unwrap_or(0.0),
    );
}
