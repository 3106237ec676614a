//! Cache warming's in-place L1 hit (`MemSystem::warm_access`) against the walk it stands for (`access_mode` in
//! `Mode::Warm`): after the same random warming traffic of every kind, on two cores sharing lines, the two hold the
//! same contents, states, replacement order, directory, prefetcher training and counters.

use kvsim_params::Prefetcher;
use kvsim_timing::mem::Mode;
use kvsim_timing::synth::{cache_params, core_params, dram_params, hierarchy_params, load, store};
use kvsim_timing::system::TimingSystem;
use kvsim_timing::{MemPort, MemReq, StatSink};

#[path = "common/two_cores.rs"]
mod two_cores;
use two_cores::{hierarchy, random_access, state, system, Access};

fn same_state_after_random_warming(prefetch: bool, seed: u64) {
    let h = hierarchy(prefetch);
    let (mut fast, mut walk) = (system(&h), system(&h));
    let mut x = seed | 1;
    for i in 0..30_000u64 {
        let Access { core, kind, addr, non_temporal, pc, .. } = random_access(&mut x);
        fast.set_pc(core as u16, pc);
        walk.set_pc(core as u16, pc);
        fast.warm_access(core, addr, kind, non_temporal);
        let req = MemReq { non_temporal, ..MemReq::new(addr, kind, core as u16, 0) };
        walk.access_mode(&req, Mode::Warm);
        if i % 1000 == 999 {
            assert_eq!(state(&fast), state(&walk), "after access {i}");
        }
    }
    let hits = fast.cores[0].l1d.stats.hits + fast.cores[1].l1d.stats.hits;
    let misses = fast.cores[0].l1d.stats.misses + fast.cores[1].l1d.stats.misses;
    assert!(hits > 8_000 && misses > 4_000, "both hits and misses: {hits}, {misses}");
}

#[test]
fn warm_hit_equals_the_walk() {
    for seed in [1, 7, 12345] {
        same_state_after_random_warming(false, seed);
    }
}

#[test]
fn warm_hit_equals_the_walk_with_prefetchers() {
    for seed in [3, 99] {
        same_state_after_random_warming(true, seed);
    }
}

/// Warming trains the L1D's IP-stride prefetcher on each load's own PC, as the timed core does (`MemPort::set_pc`
/// before its load): a strided load warmed three times, with a store from another PC between, has fetched the
/// line its stride names next, and the first detailed load of that line finds it in the L1D, a useful prefetch. (Before
/// warming passed the PC, the prefetcher saw PC 0, which it skips, and fetched nothing.)
#[test]
fn warming_trains_the_ip_stride_prefetcher_on_the_loads_pc() {
    const PAGE: u64 = 0x40_0000;
    let (load_pc, store_pc) = (0x1_0000, 0x1_0040);
    let mut h = hierarchy_params();
    h.l1d.prefetch = Prefetcher { ip_stride: true, ..Prefetcher::default() };
    let mut sys = TimingSystem::new(&[core_params()], &h, &dram_params());
    for (i, off) in [0u64, 256, 512].into_iter().enumerate() {
        sys.warm(0, &load(load_pc, 5, 6, PAGE + off));
        sys.warm(0, &store(store_pc, 7, 8, PAGE + 0x800 + i as u64 * 64));
    }
    let next = (PAGE + 768) / 64;
    assert!(sys.mem.cores[0].l1d.contains(next), "the stride 256 names byte 768 next: its line was prefetched");
    assert_eq!(sys.mem.cores[0].pc, load_pc, "the core's latest load PC is the warmed load's");
    let useful = |sys: &TimingSystem| {
        let mut out = StatSink::new();
        sys.mem.core_stats(0, "c.", None, &mut out);
        out.get("c.l1d.prefetcher.useful")
    };
    assert_eq!(useful(&sys), Some(0.0));
    let misses = sys.mem.cores[0].l1d.stats.misses;
    sys.on_inst(0, &load(load_pc, 5, 6, PAGE + 768));
    assert_eq!(sys.mem.cores[0].l1d.stats.misses, misses, "the first detailed load of it finds it in the L1D");
    assert_eq!(useful(&sys), Some(1.0), "a prefetched line's first use");
}

/// DRAM line reads and writes of a timing system's statistics.
fn dram_traffic(sys: &TimingSystem) -> (f64, f64) {
    let mut out = StatSink::new();
    sys.stats("", &mut out);
    let sum = |what: &str| -> f64 {
        out.entries.iter().filter(|(n, _, _)| n.contains(".channel") && n.ends_with(what)).map(|(_, v, _)| v).sum()
    };
    (sum(".reads"), sum(".writes"))
}

#[test]
fn sampling_warming_reaches_the_memory_controllers_and_other_warming_does_not() {
    // Stores to 4,096 lines (256 KiB) overflow a 64 KiB LLC: its misses read memory and its dirty victims are
    // written back. Sampling's warming (`warm_at`) sends both to the DRAM model at the hart's time, so the memory
    // controllers' queues carry warming's load; plain warming (`warm`) leaves them idle.
    let mut h = hierarchy_params();
    h.llc = cache_params(64 * 1024, 8, 20, 8);
    let mut timed = TimingSystem::new(&[core_params()], &h, &dram_params());
    let mut plain = TimingSystem::new(&[core_params()], &h, &dram_params());
    for k in 0..4096u64 {
        let inst = store(0x1000 + 4 * k, 5, 6, 0x100_0000 + 64 * k);
        timed.warm_at(0, &inst, timed.hart_time(0));
        plain.warm(0, &inst);
    }
    assert_eq!(dram_traffic(&plain), (0.0, 0.0), "plain warming takes no memory time");
    let (reads, writes) = dram_traffic(&timed);
    assert!(reads >= 4096.0 - 1.0, "every line missed the LLC and was read: {reads}");
    assert!(writes >= 4096.0 - 1024.0 - 64.0, "the LLC's dirty victims went to memory: {writes}");
    assert_eq!(timed.mem.warm_clock, None, "the clock is the warming instruction's only");
}
