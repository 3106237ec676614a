//! A core's timed L1 hit taken in `MemPort::access` itself (`mem/l1_hit.rs`) against the walk it stands for
//! (`access_mode` in `Mode::Timed`): after the same random timed traffic of every kind, on two cores sharing lines,
//! with accesses that arrive before their line's fill (MSHR merges), the two return the same completion ticks and
//! hold the same contents, states, replacement order, directory, prefetcher training and counters.

use kvsim_timing::mem::{MemSystem, Mode};
use kvsim_timing::{FixedLatency, MemPort, MemReq};

#[path = "common/two_cores.rs"]
mod two_cores;
use two_cores::{hierarchy, random_access, state, system, Access};

fn same_state_after_random_timed_traffic(prefetch: bool, seed: u64) {
    let h = hierarchy(prefetch);
    let (mut fast, mut walk) = (system(&h), system(&h));
    let mut x = seed | 1;
    // Each core's time: steps of 0-20 ns, so many accesses find their line's fill still on its way (100 ns away).
    let mut now = [0u64; 2];
    for i in 0..30_000u64 {
        let Access { core, kind, addr, non_temporal, pc, step } = random_access(&mut x);
        now[core] += step;
        fast.set_pc(core as u16, pc);
        walk.set_pc(core as u16, pc);
        let req = MemReq { non_temporal, ..MemReq::new(addr, kind, core as u16, now[core]) };
        let (done_fast, done_walk) = (fast.access(&req), walk.access_mode(&req, Mode::Timed));
        assert_eq!(done_fast, done_walk, "access {i}: {req:?}");
        if i % 1000 == 999 {
            assert_eq!(state(&fast), state(&walk), "after access {i}");
        }
    }
    let l1 = |m: &MemSystem<FixedLatency>, f: fn(&kvsim_timing::mem::CacheStats) -> u64| {
        (0..2).map(|c| f(&m.cores[c].l1d.stats) + f(&m.cores[c].l1i.stats)).sum::<u64>()
    };
    let (hits, merges, misses) = (l1(&fast, |s| s.hits), l1(&fast, |s| s.mshr_merges), l1(&fast, |s| s.misses));
    assert!(hits > 4_000 && merges > 1_000 && misses > 4_000, "hits, merges and misses: {hits}, {merges}, {misses}");
}

#[test]
fn timed_l1_hit_equals_the_walk() {
    for seed in [1, 7, 12345] {
        same_state_after_random_timed_traffic(false, seed);
    }
}

#[test]
fn timed_l1_hit_equals_the_walk_with_prefetchers() {
    for seed in [3, 99] {
        same_state_after_random_timed_traffic(true, seed);
    }
}
