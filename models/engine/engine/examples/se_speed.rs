//! SE-mode speed probe: run a static riscv64 ELF functionally (no timing hook) for at most N instructions and print
//! hart 0's counters and the host time. Two builds of it compared under `valgrind --tool=callgrind` give the hot
//! path's host instruction counts free of the shared machine's noise:
//!
//!   cargo build --release -p kvsim-engine --example se_speed
//!   valgrind --tool=callgrind target/release/examples/se_speed workloads/build/bench/kvmix 5000000
use kvsim_engine::config::EngineConfig;
use kvsim_engine::sim::Machine;
use kvsim_isa::exec::NoHook;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(n)) = (args.get(1), args.get(2).and_then(|n| n.parse().ok())) else {
        eprintln!("usage: se_speed PROGRAM MAX_INSTS");
        std::process::exit(2);
    };
    let mut cfg = EngineConfig::with_binary(path);
    cfg.max_insts = n;
    let image = kvsim_isa::elf::load(path).unwrap_or_else(|e| panic!("{e}"));
    let mut m = Machine::new(&cfg, &image).unwrap_or_else(|e| panic!("{e}"));
    let t = std::time::Instant::now();
    let r = m.run(&mut NoHook, None);
    let h = &m.harts[0];
    println!(
        "{r:?}: insts {} loads {} stores {} pc {:#x} a0 {:#x}, host {:?}",
        h.cnt.insts,
        h.cnt.loads,
        h.cnt.stores,
        h.pc,
        h.x[10],
        t.elapsed()
    );
}
