//! Exact-cycle tests of the TLBs and the page walker: a TLB miss costs the STLB lookup and its walk's reads at the
//! cache latencies they meet; a 2 MB page walks one level fewer; a hit costs nothing; the paging-structure caches
//! shorten walks; flushes and ASIDs separate translations.

use kvsim_params::{Mmu as MmuParams, MmuHugePages, Tlb as TlbParams};
use kvsim_timing::synth::*;
use kvsim_timing::tlb::{pte_read, Mmu, PageMap, Side};
use kvsim_timing::MemPort;

const HUGE_AREA: u64 = 0x10_0000_0000;
const STLB: u64 = 7;

/// Ivy Bridge's TLBs (the declared defaults), translation on, no paging-structure caches unless asked, the area
/// [HUGE_AREA, 2 x HUGE_AREA) in 2 MB pages.
fn mmu_params(pwc_entries: u64) -> MmuParams {
    MmuParams {
        enabled: true,
        pwc_entries,
        huge_pages: MmuHugePages::Area,
        huge_start: HUGE_AREA,
        huge_end: 2 * HUGE_AREA,
        ..MmuParams::default()
    }
}

/// Translate `va` at cycle 100 with every page-table read taking `read_cycles`: the ready cycle and the entries
/// read, in order.
fn translate(m: &mut Mmu, va: u64, read_cycles: u64) -> (u64, Vec<u64>) {
    let mut reads = Vec::new();
    let ready = m.translate(Side::Data, va, 100, |addr, c| {
        reads.push(addr);
        c + read_cycles
    });
    (ready, reads)
}

#[test]
fn a_miss_walks_four_levels_a_2mb_page_three_and_a_hit_costs_nothing() {
    let mut m = Mmu::new(&mmu_params(0));
    let va = 0x1234_5678;
    let (ready, reads) = translate(&mut m, va, 4);
    assert_eq!(ready, 100 + STLB + 4 * 4, "STLB lookup, then four dependent reads of 4 cycles");
    assert_eq!(reads, (1..=4).rev().map(|l| m.pte_addr(l, va)).collect::<Vec<_>>(), "root first, leaf last");
    // The leaf entries of neighbouring pages share a line; every level's tables are distinct pages.
    assert_eq!(m.pte_addr(1, va + 4096), m.pte_addr(1, va) + 8);
    assert_eq!(translate(&mut m, va + 8, 4), (100, vec![]), "an L1 hit: no cycles, no reads");
    let huge = HUGE_AREA + (5 << 21) + 0x1_2345;
    let (ready, reads) = translate(&mut m, huge, 4);
    assert_eq!(ready, 100 + STLB + 3 * 4, "a 2 MB page: its PDE is the leaf, one level fewer");
    assert_eq!(reads, (2..=4).rev().map(|l| m.pte_addr(l, huge)).collect::<Vec<_>>());
    assert_eq!(translate(&mut m, huge + (1 << 20), 4), (100, vec![]), "the same 2 MB page hits");
    let mut stats = kvsim_timing::StatSink::new();
    m.stats("c.", &mut stats);
    assert_eq!(stats.get("c.dtlb.4k.accesses"), Some(2.0));
    assert_eq!(stats.get("c.dtlb.4k.misses"), Some(1.0));
    assert_eq!(stats.get("c.dtlb.4k.walk_cycles"), Some(16.0));
    assert_eq!(stats.get("c.dtlb.2m.accesses"), Some(2.0));
    assert_eq!(stats.get("c.dtlb.2m.walk_cycles"), Some(12.0));
    assert_eq!(stats.get("c.dtlb.2m.pte_reads"), Some(3.0));
    assert_eq!(stats.get("c.stlb.4k.misses"), Some(1.0));
    assert_eq!(stats.get("c.stlb.2m.accesses"), None, "Ivy Bridge's STLB holds no 2 MB pages: no counters");
}

#[test]
fn sv39_walks_three_levels() {
    let mut m = Mmu::new(&MmuParams { levels: 3, ..mmu_params(0) });
    let (ready, reads) = translate(&mut m, 0x4000_1000, 10);
    assert_eq!((ready, reads.len()), (100 + STLB + 30, 3));
}

#[test]
fn an_stlb_hit_costs_its_lookup_and_the_stlb_holds_what_the_dtlb_lost() {
    let mut m = Mmu::new(&mmu_params(0));
    // 64 DTLB entries in 16 sets of 4: five pages 16 pages apart share a set, so the first is evicted from the
    // DTLB but stays in the 512-entry STLB (128 sets).
    for k in 0..5 {
        translate(&mut m, k * 16 * 4096, 4);
    }
    assert_eq!(translate(&mut m, 0, 4), (100 + STLB, vec![]));
}

#[test]
fn paging_structure_caches_skip_the_upper_levels() {
    let mut m = Mmu::new(&mmu_params(32));
    translate(&mut m, 0x1234_5000, 4);
    m.flush_page(0x1234_5000, 0);
    // flush_page empties the PSCs as well (an invlpg does), so this walk is full again ...
    assert_eq!(translate(&mut m, 0x1234_5000, 4).1.len(), 4);
    // ... and the next page of the same 2 MB region finds its PDE cached: one read, the leaf's.
    let (ready, reads) = translate(&mut m, 0x1234_6000, 4);
    assert_eq!((ready, reads), (100 + STLB + 4, vec![m.pte_addr(1, 0x1234_6000)]));
    // A page in another 1 GB region of the same 512 GB one: the PML4E is cached, three reads.
    assert_eq!(translate(&mut m, 0x8000_0000, 4).1.len(), 3);
}

#[test]
fn asids_keep_translations_apart_and_flushes_drop_them() {
    let mut m = Mmu::new(&mmu_params(0));
    translate(&mut m, 0x5000, 4);
    m.set_asid(3);
    assert_eq!(translate(&mut m, 0x5000, 4).1.len(), 4, "another address space misses");
    m.set_asid(0);
    assert_eq!(translate(&mut m, 0x5000, 4).1.len(), 0, "its own still hits");
    m.flush_asid(3);
    assert_eq!(translate(&mut m, 0x5000, 4).1.len(), 0, "flushing ASID 3 leaves ASID 0's");
    m.flush_all();
    assert_eq!(translate(&mut m, 0x5000, 4).1.len(), 4);
}

#[test]
fn the_page_map_merges_registered_ranges_into_2mb_pages() {
    let mut p = PageMap::default();
    p.map_huge(0x20_0000 + 5, 10);
    p.map_huge(0x40_0000, 0x20_0000);
    p.map_huge(0x100_0000, 1);
    assert_eq!(p.ranges(), &[(0x20_0000, 0x60_0000), (0x100_0000, 0x120_0000)]);
    assert_eq!((p.size_of(0x1f_ffff), p.size_of(0x20_0000), p.size_of(0x5f_ffff), p.size_of(0x60_0000)), (0, 1, 1, 0));
    // huge_pages = 'none': every page is 4 KB, whatever the engine registers.
    let mut m = Mmu::new(&MmuParams { huge_pages: MmuHugePages::None, ..mmu_params(0) });
    assert_eq!(translate(&mut m, HUGE_AREA, 4).1.len(), 4, "no huge pages: a 4 KB walk");
    m.map_huge(HUGE_AREA, 1);
    assert_eq!(translate(&mut m, HUGE_AREA + 4096, 4).1.len(), 4, "'none' ignores the engine's ranges");
    // huge_pages = 'alloc': the engine's hugepage allocations are 2 MB pages, nothing else is.
    let mut m = Mmu::new(&MmuParams { huge_pages: MmuHugePages::Alloc, ..mmu_params(0) });
    assert_eq!(translate(&mut m, HUGE_AREA, 4).1.len(), 4, "not registered: a 4 KB walk");
    m.map_huge(HUGE_AREA, 1);
    assert_eq!(translate(&mut m, HUGE_AREA + 4096, 4).1.len(), 3, "registered by the engine: a 2 MB walk");
}

/// Through the core and the real caches: the walk's reads are loads that hit the L1D once the table's lines are
/// there, so a DTLB and STLB miss adds exactly the STLB lookup and four L1D hits to a load.
#[test]
fn a_loads_tlb_miss_costs_the_walks_l1d_hits_through_the_core() {
    let core = kvsim_params::Core { mmu: mmu_params(0), ..core_params() };
    let mut rig = CoreRig::new(&core, &hierarchy_params(), &dram_params());
    let (a, b) = (0x4000_0000, 0x4000_1000);
    // Page a's walk brings the table lines (shared with page b's) in; b's data line comes in too.
    // Each load depends on the one before (base x5), so it issues once the line before it has arrived.
    for addr in [a, b] {
        rig.step(&load(0x100, 5, 5, addr));
    }
    let latency = |rig: &mut CoreRig, pc: u64, addr: u64| {
        let t = rig.core.step(&load(pc, 5, 5, addr), &mut rig.mem);
        t.complete - t.issue
    };
    assert_eq!(latency(&mut rig, 0x108, b), 4, "a TLB hit and an L1D hit: the L1D's latency alone");
    rig.core.mmu_mut().expect("mmu").flush_all();
    assert_eq!(latency(&mut rig, 0x10c, b), STLB + 4 * 4 + 4, "STLB lookup, four L1D-hit walk reads, the data");
    let stats = rig.stats();
    assert_eq!(stats.get("system.core0.dtlb.4k.walks"), Some(3.0), "pages a, b, and b after the flush");
    assert_eq!(stats.get("system.core0.dtlb.4k.pte_reads"), Some(12.0));
}

/// The caches count the page walker's misses apart from the loads' (Ivy Bridge's MEM_LOAD_UOPS_RETIRED.L1_MISS
/// counts retired loads only): a walk whose PTE reads miss the L1D counts each, one whose reads hit counts none, and a
/// load's own miss is not one of them.
#[test]
fn the_l1d_counts_the_walks_pte_read_misses_apart_from_the_loads() {
    let core = kvsim_params::Core { mmu: mmu_params(0), ..core_params() };
    let caches = kvsim_params::CacheHierarchy { l2_enabled: true, ..hierarchy_params() };
    let mut rig = CoreRig::new(&core, &caches, &dram_params());
    let stat = |rig: &CoreRig, name: &str| rig.stats().get(&format!("system.core0.{name}")).expect(name);
    let counts = |rig: &CoreRig| {
        ["l1d.page_walk_misses", "l2.page_walk_misses", "l1d.read_misses", "l1i.page_walk_misses"].map(|n| stat(rig, n))
    };
    // The code's page walked first (an ALU instruction: no data access), so what follows is the data side's.
    rig.step(&alu(0x100, 6, 0, 0));
    let before = counts(&rig);
    // A load in another 512 GB region: none of its walk's four PTE lines is the code walk's, so all four miss the
    // L1D and the L2; the load's own line misses too, a read miss that is not the walker's.
    let data = 0x400_0000_0000;
    rig.step(&load(0x104, 5, 5, data));
    let after = counts(&rig);
    let diff = |a: [f64; 4], b: [f64; 4]| [0, 1, 2, 3].map(|i| a[i] - b[i]);
    assert_eq!(diff(after, before), [4.0, 4.0, 5.0, 0.0], "walk misses in L1D and L2, read misses, L1I's");
    // After a flush, the next page's walk reads the same PTE lines (its leaf entry is the next one in the line):
    // four L1D hits, no walk miss; the load's new line is a read miss only.
    rig.core.mmu_mut().expect("mmu").flush_all();
    rig.step(&load(0x108, 5, 5, data + 0x1000));
    assert_eq!(diff(counts(&rig), after), [0.0, 0.0, 1.0, 0.0]);
    assert_eq!(stat(&rig, "dtlb.4k.walks"), 2.0);
}

/// One PTE read straight to the memory system: a miss counts 1, a hit on its line 0, a load's miss 0.
#[test]
fn a_pte_read_that_misses_the_l1d_counts_one_and_a_hit_none() {
    let mut rig = CoreRig::default_fixture();
    let misses = |rig: &CoreRig| rig.stats().get("system.core0.l1d.page_walk_misses").expect("counter");
    pte_read(&mut rig.mem, 0, 0x9000_0000, 1_000);
    assert_eq!(misses(&rig), 1.0, "a miss");
    pte_read(&mut rig.mem, 0, 0x9000_0008, 1_000_000);
    assert_eq!(misses(&rig), 1.0, "a hit in the same line: none");
    rig.mem.access(&kvsim_timing::MemReq::new(0x9100_0000, kvsim_timing::AccessKind::Read, 0, 2_000_000));
    assert_eq!(misses(&rig), 1.0, "a load's miss is not the walker's");
    assert!(!rig.mem.cores[0].walking, "the mark ends with the read");
}

#[test]
fn a_tlb_that_holds_nothing_still_translates_through_the_stlb() {
    let p = MmuParams { dtlb_4k: TlbParams { entries: 0, assoc: 1 }, ..mmu_params(0) };
    let mut m = Mmu::new(&p);
    assert_eq!(translate(&mut m, 0x7000, 4).1.len(), 4);
    assert_eq!(translate(&mut m, 0x7008, 4), (100 + STLB, vec![]), "no DTLB entry: every access asks the STLB");
}

/// An L1 TLB hit on a page other than the last makes it most recently used (LRU order decides what three new pages
/// evict), and a page its way lost misses (a guard for any shortcut past the set search).
#[test]
fn the_page_before_the_last_hits_as_most_recently_used_and_misses_once_evicted() {
    let mut m = Mmu::new(&mmu_params(0));
    // 64 DTLB entries in 16 sets of 4: pages 16 pages apart share a set (the STLB, 128 sets, keeps them all).
    let page = |k: u64| k * 16 * 4096;
    for k in 0..4 {
        translate(&mut m, page(k), 4);
    }
    // P0 and P1 by search, then P0 again as the page before the last: P0 must end younger than P1.
    for k in [0, 1, 0] {
        assert_eq!(translate(&mut m, page(k), 4), (100, vec![]));
    }
    // Three new pages evict the set's three oldest: P2, P3, then P1 (not P0).
    for k in 4..7 {
        translate(&mut m, page(k), 4);
    }
    assert_eq!(translate(&mut m, page(0), 4), (100, vec![]), "P0 was made most recently used: still in the DTLB");
    assert_eq!(translate(&mut m, page(1), 4), (100 + STLB, vec![]), "P1 was the oldest: evicted, the STLB has it");

    // A direct-mapped DTLB: P0, then P16 in its set evicts it, so P0 (the page before the last) must miss.
    let p = MmuParams { dtlb_4k: TlbParams { entries: 16, assoc: 1 }, ..mmu_params(0) };
    let mut m = Mmu::new(&p);
    translate(&mut m, page(0), 4);
    translate(&mut m, page(1), 4);
    assert_eq!(translate(&mut m, page(0), 4), (100 + STLB, vec![]), "its way holds P16 now: a DTLB miss");
    let mut stats = kvsim_timing::StatSink::new();
    m.stats("c.", &mut stats);
    assert_eq!(stats.get("c.dtlb.4k.accesses"), Some(3.0));
    assert_eq!(stats.get("c.dtlb.4k.misses"), Some(3.0));
}
