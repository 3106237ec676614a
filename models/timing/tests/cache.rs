//! Exact-tick tests of the caches: hits, misses through the levels, MSHR merging and limits, replacement,
//! writebacks, inclusion, way partitioning and non-temporal prefetch fills.

use kvsim_params::{Cache, CacheHierarchy};
use kvsim_timing::cache::{CacheArray, MemSystem};
use kvsim_timing::synth::{cache_params, hierarchy_params};
use kvsim_timing::{AccessKind, FixedLatency, MemPort, MemReq, ReqClass};

const CYCLE: u64 = 400; // 2.5 GHz
const MEM: u64 = 100_000; // 100 ns backing memory

fn system(h: &CacheHierarchy) -> MemSystem<FixedLatency> {
    MemSystem::new(h, &[2_500_000_000, 2_500_000_000], FixedLatency::new(MEM))
}

fn rd(addr: u64, t: u64) -> MemReq {
    MemReq::new(addr, AccessKind::Read, 0, t)
}

fn wr(addr: u64, t: u64) -> MemReq {
    MemReq::new(addr, AccessKind::Write, 0, t)
}

#[test]
fn hit_returns_at_issue_plus_hit_latency() {
    let mut m = system(&hierarchy_params());
    m.access(&rd(0x1000, 0));
    let t = 1_000_000;
    assert_eq!(m.access(&rd(0x1008, t)), t + 4 * CYCLE);
    assert_eq!(m.cores[0].l1d.stats.hits, 1);
}

#[test]
fn miss_returns_at_the_sum_of_the_levels() {
    let mut h = hierarchy_params();
    let mut m = system(&h);
    // L1 (4 cycles) + LLC (20 cycles) + memory.
    assert_eq!(m.access(&rd(0x4000, 1000)), 1000 + 4 * CYCLE + 20 * CYCLE + MEM);
    // Evicted from the L1 (eight more lines in its set) but still in the LLC: L1 + LLC.
    for i in 1..=8u64 {
        m.access(&rd(0x4000 + i * 4096, 1_000_000));
    }
    let t = 2_000_000;
    assert_eq!(m.access(&rd(0x4000, t)), t + 24 * CYCLE);
    // Core 1 reads a line core 0 holds exclusively: the directory (10 cycles) forwards the request to core 0,
    // whose L1 (4 cycles) answers: L1 + directory + the owner's L1, on this zero-latency network.
    let t = 3_000_000;
    assert_eq!(m.access(&MemReq::new(0x4000, AccessKind::Read, 1, t)), t + (4 + 10 + 4) * CYCLE);
    // With a private L2 (8 cycles) in between.
    h.l2_enabled = true;
    let mut m = system(&h);
    assert_eq!(m.access(&rd(0x4000, 1000)), 1000 + (4 + 8 + 20) * CYCLE + MEM);
    assert_eq!(m.cores[0].l2.as_ref().unwrap().stats.misses, 1);
}

#[test]
fn misses_to_one_line_merge_in_the_mshr() {
    let mut m = system(&hierarchy_params());
    let first = m.access(&rd(0x8000, 0));
    let second = m.access(&rd(0x8010, 5 * CYCLE));
    assert_eq!(second, first, "a second miss to an in-flight line completes with the first fill");
    assert_eq!(m.cores[0].l1d.stats.mshr_merges, 1);
    assert_eq!(m.mem.reads, 1, "only one request reaches memory");
    // After the fill it is an ordinary hit.
    assert_eq!(m.access(&rd(0x8000, first + 1)), first + 1 + 4 * CYCLE);
}

#[test]
fn mshr_count_bounds_outstanding_misses() {
    let mut h = hierarchy_params();
    h.l1d.mshrs = 2;
    let mut m = system(&h);
    let miss = 24 * CYCLE + MEM;
    assert_eq!(m.access(&rd(0x10000, 0)), miss);
    assert_eq!(m.access(&rd(0x20000, 0)), miss);
    // The third distinct line waits for the first MSHR to free at `miss`.
    assert_eq!(m.access(&rd(0x30000, 0)), miss + miss);
    assert_eq!(m.cores[0].l1d.stats.mshr_full, 1);
}

#[test]
fn software_prefetch_holds_an_mshr() {
    let mut h = hierarchy_params();
    h.l1d.mshrs = 1;
    let mut m = system(&h);
    let miss = 24 * CYCLE + MEM;
    let pf = m.access(&MemReq::new(0x10000, AccessKind::Prefetch, 0, 0));
    assert_eq!(pf, miss);
    // A demand miss behind it waits for the prefetch's MSHR...
    assert_eq!(m.access(&rd(0x20000, 0)), 2 * miss);
    // ...and a demand access to the prefetched line merges with it.
    assert_eq!(m.access(&rd(0x10000, 10)), miss);
}

fn one_set(assoc: u64, policy: &str) -> CacheArray {
    let p = Cache {
        replacement: kvsim_params::CacheReplacement::from_name(policy).unwrap(),
        ..cache_params(64 * assoc, assoc, 4, 4)
    };
    CacheArray::new(&p, p.size, 1, 2_500_000_000, 7)
}

#[test]
fn lru_replaces_the_least_recently_used_way() {
    let mut c = one_set(4, "lru");
    for line in 1..=4 {
        assert!(c.insert(line, 0, false, ReqClass::Core).1.is_none(), "invalid ways fill first");
    }
    let a = c.find(1).unwrap();
    c.touch(a); // 2 is now the least recently used
    let (_, victim) = c.insert(5, 0, false, ReqClass::Core);
    assert_eq!(victim, Some((2, false)));
    let (_, victim) = c.insert(6, 0, false, ReqClass::Core);
    assert_eq!(victim, Some((3, false)));
}

#[test]
fn tree_plru_and_random_replacement() {
    let mut c = one_set(4, "plru");
    for line in 1..=4 {
        c.insert(line, 0, false, ReqClass::Core);
    }
    // Touch 1, 2 (left half) then 3 (right half): the root points left and the left node at way 0, so tree
    // PLRU evicts 1 where true LRU would evict 4.
    for l in [1, 2, 3] {
        let s = c.find(l).unwrap();
        c.touch(s);
    }
    assert_eq!(c.insert(5, 0, false, ReqClass::Core).1, Some((1, false)));
    // Filling way 0 turned the root right, where way 2 (line 3) is more recent than way 3 (line 4).
    assert_eq!(c.insert(6, 0, false, ReqClass::Core).1, Some((4, false)));
    // Random is deterministic for a seed and only evicts allowed ways.
    let victims = |seed: u64| {
        let p = Cache { replacement: kvsim_params::CacheReplacement::Random, ..cache_params(64 * 8, 8, 4, 4) };
        let mut c = CacheArray::new(&p, p.size, 1, 2_500_000_000, seed);
        c.set_way_mask(ReqClass::Core, 0b0011_1100);
        (0..40u64).map(|l| c.insert(100 + l, 0, false, ReqClass::Core).0).collect::<Vec<_>>()
    };
    assert_eq!(victims(3), victims(3));
    assert!(victims(3).iter().all(|&w| (2..6).contains(&w)));
}

#[test]
fn dirty_victims_are_written_back() {
    let mut h = hierarchy_params();
    h.l1d = cache_params(64 * 2, 2, 4, 8); // one set, two ways
    h.llc = Cache { inclusive: false, ..cache_params(64 * 2, 2, 20, 8) };
    let mut m = system(&h);
    m.access(&wr(0x0000, 0)); // A, dirty in L1
    m.access(&rd(0x1000, 0)); // B
    m.access(&rd(0x2000, 0)); // C evicts A (LRU) from the L1 and from the LLC
    assert_eq!(m.cores[0].l1d.stats.writebacks, 1);
    // The dirty copy went to the LLC; A was no longer there (evicted by C), so it went on to memory.
    assert_eq!(m.mem.writes, 1);
    // Clean victims are not written back.
    m.access(&rd(0x3000, 0));
    assert_eq!(m.cores[0].l1d.stats.writebacks, 1);
    assert_eq!(m.mem.writes, 1);
}

#[test]
fn dirty_l1_victim_updates_the_llc_copy() {
    let mut h = hierarchy_params();
    h.l1d = cache_params(64 * 2, 2, 4, 8);
    let mut m = system(&h);
    m.access(&wr(0x0000, 0));
    m.access(&rd(0x1000, 0));
    m.access(&rd(0x2000, 0));
    let slot = m.llc[0].find(0).expect("inclusive LLC still holds A");
    assert!(m.llc[0].is_dirty(slot));
    assert_eq!(m.mem.writes, 0);
}

#[test]
fn inclusive_llc_back_invalidates_private_copies() {
    let mut h = hierarchy_params();
    h.llc = Cache { inclusive: true, ..cache_params(64 * 2, 2, 20, 8) }; // one set, two ways
    let mut m = system(&h);
    m.access(&wr(0x0000, 0)); // A: in L1 (dirty) and LLC
    m.access(&rd(0x1040, 0)); // B
    m.access(&MemReq::new(0x2080, AccessKind::Read, 1, 0)); // C from core 1 evicts A from the LLC
    assert!(m.cores[0].l1d.find(0).is_none(), "A must leave core 0's L1 with the LLC");
    assert_eq!(m.cores[0].l1d.stats.back_invalidations, 1);
    assert_eq!(m.mem.writes, 1, "the dirty private copy is written back");
    // Touching A again misses all the way to memory.
    let t = 10_000_000;
    assert_eq!(m.access(&rd(0x0000, t)), t + 24 * CYCLE + MEM);
    // Without inclusion the L1 keeps its copy.
    h.llc.inclusive = false;
    let mut m = system(&h);
    m.access(&rd(0x0000, 0));
    m.access(&rd(0x1040, 0));
    m.access(&MemReq::new(0x2080, AccessKind::Read, 1, 0));
    assert!(m.cores[0].l1d.find(0).is_some());
}

#[test]
fn way_partitioning_confines_a_requester_class() {
    let mut h = hierarchy_params();
    h.llc = Cache { inclusive: true, ..cache_params(64 * 8, 8, 20, 8) }; // one set, eight ways
    let mut m = system(&h);
    m.set_llc_way_mask(ReqClass::Io, 0b11);
    m.set_llc_way_mask(ReqClass::Core, !0b11);
    let core_lines: Vec<u64> = (0..6).map(|i| i * 0x1000).collect();
    for &a in &core_lines {
        m.access(&rd(a, 0));
    }
    for i in 0..10u64 {
        let io = MemReq { class: ReqClass::Io, ..MemReq::new(0x100_0000 + i * 0x1000, AccessKind::Write, 9, 0) };
        m.access(&io);
    }
    for &a in &core_lines {
        let slot = m.llc[0].find(a >> 6).expect("core lines stay: I/O writes only use ways 0-1");
        // and the core class only allocates in ways 2-7
        assert!(m.llc[0].way_of(slot) >= 2);
    }
    let io_ways: Vec<usize> =
        (0..10u64).filter_map(|i| m.llc[0].find((0x100_0000 + i * 0x1000) >> 6)).map(|s| m.llc[0].way_of(s)).collect();
    assert_eq!(io_ways.len(), 2, "only the last two I/O lines fit in the I/O ways");
    assert!(io_ways.iter().all(|&w| w < 2));
}

#[test]
fn non_temporal_prefetch_skips_the_mid_level_cache() {
    let mut h = hierarchy_params();
    h.l2_enabled = true;
    let mut m = system(&h);
    let nt = MemReq { non_temporal: true, ..MemReq::new(0x40000, AccessKind::Prefetch, 0, 0) };
    m.access(&nt);
    m.access(&MemReq::new(0x50000, AccessKind::Prefetch, 0, 0));
    let l2 = m.cores[0].l2.as_ref().unwrap();
    assert!(m.cores[0].l1d.find(0x40000 >> 6).is_some());
    assert!(l2.find(0x40000 >> 6).is_none(), "non-temporal fill must skip the L2");
    assert!(m.llc[0].find(0x40000 >> 6).is_some());
    assert!(l2.find(0x50000 >> 6).is_some(), "an ordinary prefetch fills the L2");
}

#[test]
fn llc_slices_interleave_lines() {
    let mut h = hierarchy_params();
    h.llc_slices = 4;
    let mut m = system(&h);
    for i in 0..8u64 {
        m.access(&rd(i * 64, 0));
    }
    for s in 0..4 {
        assert_eq!(m.llc[s].stats.misses, 2, "consecutive lines go to consecutive slices");
        assert!(m.llc[s].find(s as u64).is_some());
    }
}

#[test]
fn private_cache_latency_follows_the_core_clock() {
    let mut m = system(&hierarchy_params());
    m.access(&rd(0x1000, 0));
    m.set_core_clock(0, 1_250_000_000); // half speed: 800 ps cycles
    let t = 1_000_000;
    assert_eq!(m.access(&rd(0x1000, t)), t + 4 * 800);
}

#[test]
fn private_caches_split_lookups_and_misses_by_what_asked() {
    // A software prefetch of line A (misses L1D and L2), a load of A (hits the L1D), a load of line B (misses
    // both): the L1D has one demand miss in two demand lookups and one software-prefetch miss in one lookup;
    // the L2 sees one lookup of each kind, both missing. No hardware prefetcher is on.
    let mut h = hierarchy_params();
    h.l2_enabled = true;
    let mut m = system(&h);
    m.access(&MemReq::new(0x4000, AccessKind::Prefetch, 0, 1000));
    m.access(&rd(0x4008, 1_000_000));
    m.access(&rd(0x9000, 2_000_000));
    let l1 = &m.cores[0].l1d.stats;
    assert_eq!((l1.accesses, l1.misses), (3, 2));
    assert_eq!((l1.demand_accesses, l1.demand_misses), (2, 1));
    assert_eq!((l1.sw_prefetch_accesses, l1.sw_prefetch_misses), (1, 1));
    assert_eq!((l1.hw_prefetch_accesses, l1.hw_prefetch_misses), (0, 0));
    let l2 = &m.cores[0].l2.as_ref().unwrap().stats;
    assert_eq!((l2.demand_accesses, l2.demand_misses), (1, 1));
    assert_eq!((l2.sw_prefetch_accesses, l2.sw_prefetch_misses), (1, 1));
}
