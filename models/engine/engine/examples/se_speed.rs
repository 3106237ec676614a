//! SE-mode speed probe (not committed): run an ELF functionally for N instructions, print counters.
use kvsim_engine::config::EngineConfig;
use kvsim_engine::sim::Machine;
use kvsim_isa::exec::NoHook;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let mut cfg = EngineConfig::with_binary(&a[1]);
    cfg.max_insts = a[2].parse().unwrap();
    let image = kvsim_isa::elf::load(&a[1]).unwrap();
    let mut m = Machine::new(&cfg, &image).unwrap();
    let t = std::time::Instant::now();
    let r = m.run(&mut NoHook, None);
    let h = &m.harts[0];
    println!("{r:?} insts {} loads {} stores {} pc {:#x} a0 {:#x} host {:?}", h.cnt.insts, h.cnt.loads, h.cnt.stores, h.pc, h.x[10], t.elapsed());
}
