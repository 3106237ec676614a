//! Hardware prefetchers through the real hierarchy (one core, an L2, memory of a fixed latency): what each fetches,
//! into which cache, never across a 4 KB page, and the counters of what became of it.

use kvsim_params::{CacheHierarchy, Prefetcher};
use kvsim_timing::mem::MemSystem;
use kvsim_timing::synth::hierarchy_params;
use kvsim_timing::{AccessKind, FixedLatency, MemPort, MemReq, StatSink};

const PAGE: u64 = 0x40_0000; // a 4 KB-aligned page; line k of it is PAGE / 64 + k
const APART: u64 = 1_000_000; // 1 us between accesses: every fill is done before the next access

fn system(l1d: Prefetcher, l2: Prefetcher) -> MemSystem<FixedLatency> {
    let mut p: CacheHierarchy = hierarchy_params();
    p.l2_enabled = true;
    p.l1d.prefetch = l1d;
    p.l2.prefetch = l2;
    MemSystem::new(&p, &[2_500_000_000], FixedLatency::new(50_000))
}

fn read(m: &mut MemSystem<FixedLatency>, addr: u64, t: u64) -> u64 {
    m.access(&MemReq::new(addr, AccessKind::Read, 0, t))
}

fn line(k: u64) -> u64 {
    PAGE / 64 + k
}

fn l2_has(m: &MemSystem<FixedLatency>, k: u64) -> bool {
    m.cores[0].l2.as_ref().expect("l2").contains(line(k))
}

fn stats(m: &MemSystem<FixedLatency>) -> StatSink {
    let mut out = StatSink::new();
    m.core_stats(0, "c.", None, &mut out);
    out
}

#[test]
fn the_streamer_fills_the_lines_ahead_into_the_l2_and_the_rest_of_the_pass_hits() {
    let mut m = system(Prefetcher::default(), Prefetcher { streamer: true, ..Prefetcher::default() });
    for k in 0..6 {
        read(&mut m, PAGE + k * 64, k * APART);
    }
    // Confirmed by the third access (line 2); from then each access fetches the next two lines not yet fetched.
    assert!((0..=10).all(|k| l2_has(&m, k)), "lines 0-10 in the L2");
    assert!(!l2_has(&m, 11));
    assert!(!m.cores[0].l1d.contains(line(6)), "the streamer fills the L2, not the L1D");
    for k in 6..64 {
        read(&mut m, PAGE + k * 64, k * APART);
    }
    let s = stats(&m);
    assert_eq!(s.get("c.l2.misses"), Some(3.0), "only the lines before the stream was confirmed miss");
    assert_eq!(s.get("c.l2.hits"), Some(61.0));
    assert_eq!(s.get("c.l2.prefetcher.issued"), Some(61.0));
    assert_eq!(s.get("c.l2.prefetcher.useful"), Some(61.0));
    assert_eq!(s.get("c.l2.prefetcher.late"), Some(0.0));
    assert!(!m.cores[0].l2.as_ref().expect("l2").contains(line(64)), "no prefetch crosses the 4 KB page");
}

#[test]
fn the_streamer_follows_a_descending_stream_and_stops_at_its_distance() {
    let mut m =
        system(Prefetcher::default(), Prefetcher { streamer: true, streamer_distance: 4, ..Prefetcher::default() });
    for (i, k) in [40u64, 39, 38, 37, 36].into_iter().enumerate() {
        read(&mut m, PAGE + k * 64, i as u64 * APART);
    }
    // Accesses 38, 37, 36 each fetch two lines below, never more than 4 lines below the access.
    assert!((32..=35).all(|k| l2_has(&m, k)));
    assert!(!l2_has(&m, 31), "line 31 is 5 below the last access: beyond the distance");
}

#[test]
fn the_adjacent_line_prefetcher_fetches_the_pair_of_a_missed_line() {
    let mut m = system(Prefetcher::default(), Prefetcher { adjacent_line: true, ..Prefetcher::default() });
    read(&mut m, PAGE + 6 * 64, 0);
    assert!(l2_has(&m, 7) && !m.cores[0].l1d.contains(line(7)), "line 6's pair, 7, into the L2");
    read(&mut m, PAGE + 9 * 64, APART);
    assert!(l2_has(&m, 8) && !l2_has(&m, 10), "line 9's pair is 8 (the 128-byte chunk), not 10");
    read(&mut m, PAGE + 7 * 64, 2 * APART);
    let s = stats(&m);
    assert_eq!(s.get("c.l2.prefetcher.issued"), Some(2.0));
    assert_eq!(s.get("c.l2.prefetcher.useful"), Some(1.0));
}

#[test]
fn a_prefetch_used_before_its_data_arrives_is_late_and_an_unused_one_useless() {
    let mut m = system(Prefetcher::default(), Prefetcher { adjacent_line: true, ..Prefetcher::default() });
    read(&mut m, PAGE, 0); // fetches line 1 too, arriving ~50 ns later
    read(&mut m, PAGE + 64, 1_000); // 1 ns later: merges with the prefetch
    let s = stats(&m);
    assert_eq!((s.get("c.l2.prefetcher.useful"), s.get("c.l2.prefetcher.late")), (Some(1.0), Some(1.0)));
    // Fill the L2 set of line 3 (8 ways, 512 sets: lines 3 + 512 k) so the prefetched line 3 leaves unused.
    read(&mut m, PAGE + 2 * 64, APART);
    for k in 1..=8 {
        read(&mut m, PAGE + (2 + 512 * k) * 64 + (1 << 30), (k + 1) * APART);
    }
    let s = stats(&m);
    assert!(s.get("c.l2.prefetcher.useless").unwrap_or(0.0) >= 1.0, "{:?}", s.get("c.l2.prefetcher.useless"));
}

#[test]
fn the_next_line_prefetcher_fetches_into_the_l1d_within_the_page() {
    let mut m = system(Prefetcher { next_line: true, ..Prefetcher::default() }, Prefetcher::default());
    read(&mut m, PAGE + 10 * 64, 0);
    read(&mut m, PAGE + 11 * 64, APART);
    assert!(!m.cores[0].l1d.contains(line(12)), "a first load of the next line is not a second load of one line");
    read(&mut m, PAGE + 11 * 64 + 8, 2 * APART);
    assert!(m.cores[0].l1d.contains(line(12)), "two ascending loads of line 11: the next line into the L1D");
    read(&mut m, PAGE + 20 * 64 + 16, 3 * APART);
    read(&mut m, PAGE + 20 * 64 + 8, 4 * APART);
    assert!(!m.cores[0].l1d.contains(line(21)), "descending within the line: nothing");
    read(&mut m, PAGE + 63 * 64, 5 * APART);
    read(&mut m, PAGE + 63 * 64 + 8, 6 * APART);
    assert!(!m.cores[0].l1d.contains(line(64)), "not across the page");
    assert_eq!(stats(&m).get("c.l1d.prefetcher.issued"), Some(1.0));
}

#[test]
fn a_scan_that_steps_into_a_buckets_second_line_fetches_the_next_line_only_from_its_second_load_there() {
    // MICA's 128-byte bucket (two lines, entries 7-14 in the second): a scan that stops at entry 7, the second
    // line's first word, sends nothing; one that reads entry 8 too fetches the line after the bucket.
    let mut m = system(Prefetcher { next_line: true, ..Prefetcher::default() }, Prefetcher::default());
    for entry in 0..8u64 {
        read(&mut m, PAGE + 8 + entry * 8, entry * APART); // entries 0-6 at bytes 8..63 of line 0, entry 7 at 0 of line 1
    }
    assert!(!m.cores[0].l1d.contains(line(2)), "stopped at entry 7: no prefetch past the bucket");
    read(&mut m, PAGE + 64 + 8, 10 * APART); // entry 8
    assert!(m.cores[0].l1d.contains(line(2)), "entry 8: the line after the bucket");
}

#[test]
fn the_ip_stride_prefetcher_follows_one_loads_stride() {
    let mut m = system(Prefetcher { ip_stride: true, ..Prefetcher::default() }, Prefetcher::default());
    for (i, off) in [0u64, 256, 512].into_iter().enumerate() {
        m.set_pc(0, 0x1234);
        read(&mut m, PAGE + off, i as u64 * APART);
    }
    assert!(m.cores[0].l1d.contains(line(12)), "512 + 256 = 768: line 12");
    // Another PC interleaved does not disturb it; a stride that leaves the page fetches nothing.
    for (i, off) in [1536u64, 2560, 3584].into_iter().enumerate() {
        m.set_pc(0, 0x5678);
        read(&mut m, PAGE + off, (10 + i as u64) * APART);
    }
    assert!(!m.cores[0].l1d.contains((PAGE + 4608) / 64), "not across the page");
    assert_eq!(stats(&m).get("c.l1d.prefetcher.issued"), Some(1.0));
}

/// A software non-temporal prefetch (MICA's `prefetchnta`: the guest's NTL hint, then `prefetch.r`) of byte `addr`.
fn prefetch_nta(m: &mut MemSystem<FixedLatency>, addr: u64, t: u64) -> u64 {
    m.access(&MemReq { non_temporal: true, ..MemReq::new(addr, AccessKind::Prefetch, 0, t) })
}

fn both_l2_prefetchers() -> Prefetcher {
    Prefetcher { streamer: true, adjacent_line: true, ..Prefetcher::default() }
}

#[test]
fn a_non_temporal_prefetch_stream_neither_trains_the_streamer_nor_fetches_pairs_and_skips_the_l2() {
    let mut m = system(Prefetcher::default(), both_l2_prefetchers());
    for k in 0..8 {
        prefetch_nta(&mut m, PAGE + k * 64, k * APART);
    }
    let s = stats(&m);
    assert_eq!(s.get("c.l2.prefetcher.issued"), Some(0.0), "no streamer or adjacent-line prefetch");
    assert!((0..8).all(|k| m.cores[0].l1d.contains(line(k))), "the NTA lines fill the L1D");
    assert!((0..16).all(|k| !l2_has(&m, k)), "and nothing of the page is in the L2");
    // The next line of the page is not on its way: a demand read of it costs exactly a cold miss.
    let t = 20 * APART;
    let after_stream = read(&mut m, PAGE + 8 * 64, t) - t;
    let mut cold = system(Prefetcher::default(), Prefetcher::default());
    assert_eq!(after_stream, read(&mut cold, PAGE + 8 * 64, t) - t);
}

#[test]
fn a_demand_stream_still_trains_them_and_the_switch_restores_training_by_non_temporal_prefetches() {
    let mut m = system(Prefetcher::default(), both_l2_prefetchers());
    for k in 0..8 {
        read(&mut m, PAGE + k * 64, k * APART);
    }
    // Line 0's miss fetches its pair (1); line 1 hits it; the stream is confirmed at line 2 (a miss) and fetches
    // the next 2 lines at each of lines 2..=7: lines 3..=14, 13 prefetches in all.
    assert_eq!(stats(&m).get("c.l2.prefetcher.issued"), Some(13.0));
    assert!((0..=14).all(|k| l2_has(&m, k)) && !l2_has(&m, 15));

    let mut trained =
        system(Prefetcher::default(), Prefetcher { trained_by_non_temporal: true, ..both_l2_prefetchers() });
    for k in 0..8 {
        prefetch_nta(&mut trained, PAGE + k * 64, k * APART);
    }
    assert!(stats(&trained).get("c.l2.prefetcher.issued").unwrap_or(0.0) > 0.0, "switched on: the NTA stream trains");
    assert!(!l2_has(&trained, 0), "the NTA line itself still skips the L2");
}

#[test]
fn with_too_many_misses_in_flight_the_l1d_prefetchers_send_nothing() {
    // Intel's "not many other load misses in progress", as a bound of 2 busy fill buffers (MSHRs).
    let bounded = Prefetcher { next_line: true, max_misses_in_flight: 2, ..Prefetcher::default() };
    let ascending_under_misses = |m: &mut MemSystem<FixedLatency>| {
        read(m, 0x80_0000, 0); // another page's miss, in flight for the next 50 ns
        read(m, PAGE + 10 * 64, 10);
        read(m, PAGE + 11 * 64, 20);
        read(m, PAGE + 11 * 64 + 8, 30); // ascending in line 11: names line 12, with three misses in flight
    };
    let mut m = system(Prefetcher { next_line: true, ..Prefetcher::default() }, Prefetcher::default());
    ascending_under_misses(&mut m);
    assert!(m.cores[0].l1d.contains(line(12)), "unbounded: sent while an MSHR is free");
    assert_eq!(stats(&m).get("c.l1d.prefetcher.throttled"), Some(0.0), "no bound: nothing held back, counted 0");
    let mut m = system(bounded, Prefetcher::default());
    ascending_under_misses(&mut m);
    assert!(!m.cores[0].l1d.contains(line(12)), "three misses in flight: held back");
    // Once those have landed, an ascending access with no miss in flight sends its next line.
    read(&mut m, PAGE + 21 * 64, APART);
    read(&mut m, PAGE + 21 * 64 + 8, 2 * APART);
    assert!(m.cores[0].l1d.contains(line(22)));
    let s = stats(&m);
    assert_eq!((s.get("c.l1d.prefetcher.throttled"), s.get("c.l1d.prefetcher.issued")), (Some(1.0), Some(1.0)));
    assert_eq!(s.get("c.l1d.prefetcher.dropped"), Some(0.0), "not counted as every MSHR busy");
}

fn write(m: &mut MemSystem<FixedLatency>, addr: u64, t: u64) -> u64 {
    m.access(&MemReq::new(addr, AccessKind::Write, 0, t))
}

/// Two loads of line 11 (the second ascending: the next-line prefetcher names line 12) with `stores` stores to
/// another page between them.
fn ascending_after_stores(m: &mut MemSystem<FixedLatency>, stores: u64) {
    read(m, PAGE + 11 * 64, 0);
    for k in 0..stores {
        write(m, 0x80_0000 + k * 8, (1 + k) * APART);
    }
    read(m, PAGE + 11 * 64 + 8, (2 + stores) * APART);
}

#[test]
fn after_a_stream_of_stores_the_l1d_prefetchers_send_nothing() {
    // Intel's "there is not a continuous stream of stores", as a run of 3 stores with no load between.
    let held = Prefetcher { next_line: true, hold_after_stores: 3, ..Prefetcher::default() };
    let mut m = system(Prefetcher { next_line: true, ..Prefetcher::default() }, Prefetcher::default());
    ascending_after_stores(&mut m, 3);
    assert!(m.cores[0].l1d.contains(line(12)), "the condition off: sent");
    assert_eq!(stats(&m).get("c.l1d.prefetcher.held_by_stores"), Some(0.0), "off: nothing held, counted 0");
    let mut m = system(held.clone(), Prefetcher::default());
    ascending_after_stores(&mut m, 3);
    assert!(!m.cores[0].l1d.contains(line(12)), "three stores in a row before the load: held back");
    let s = stats(&m);
    assert_eq!((s.get("c.l1d.prefetcher.held_by_stores"), s.get("c.l1d.prefetcher.issued")), (Some(1.0), Some(0.0)));
    // Two stores are no stream; and a load ends a run: the stores before it do not count for the next load.
    let mut m = system(held.clone(), Prefetcher::default());
    ascending_after_stores(&mut m, 2);
    assert!(m.cores[0].l1d.contains(line(12)), "two stores: sent");
    let mut m = system(held.clone(), Prefetcher::default());
    for k in 0..3 {
        write(&mut m, 0x80_0000 + k * 8, k * APART);
    }
    ascending_after_stores(&mut m, 0);
    assert!(m.cores[0].l1d.contains(line(12)), "the stores came before the first load of the line: sent");
    assert_eq!(stats(&m).get("c.l1d.prefetcher.held_by_stores"), Some(0.0));
}

#[test]
fn a_warming_load_between_the_stores_ends_their_run() {
    // Sampling warms between its windows: a warming load is a load between the stores before it and after it, so
    // two timed stores, a warming load, then one more store are no run of three (on 0fe3c0d the warming load left
    // the run at three and the timed load's next-line prefetch was held).
    let held = Prefetcher { next_line: true, hold_after_stores: 3, ..Prefetcher::default() };
    let mut m = system(held, Prefetcher::default());
    read(&mut m, PAGE + 11 * 64 + 8, 0);
    write(&mut m, 0x80_0000, APART);
    write(&mut m, 0x80_0008, 2 * APART);
    m.warm_load(0, PAGE + 11 * 64, 0, false); // lower in the line: names nothing
    assert!(!m.cores[0].l1d.contains(line(12)));
    write(&mut m, 0x80_0010, 3 * APART);
    read(&mut m, PAGE + 11 * 64 + 16, 4 * APART); // ascending: names line 12
    assert!(m.cores[0].l1d.contains(line(12)), "one store since the last load: sent");
    assert_eq!(stats(&m).get("c.l1d.prefetcher.held_by_stores"), Some(0.0));
}

#[test]
fn while_a_fence_is_in_flight_the_l1d_prefetchers_send_nothing() {
    // Intel's "no fence is in progress in the pipeline": the core says when its loads issue under a fence.
    let held = Prefetcher { next_line: true, hold_during_fence: true, ..Prefetcher::default() };
    let ascending = |m: &mut MemSystem<FixedLatency>, k: u64, t: u64| {
        read(m, PAGE + k * 64, t);
        read(m, PAGE + k * 64 + 8, t + APART);
    };
    let mut m = system(Prefetcher { next_line: true, ..Prefetcher::default() }, Prefetcher::default());
    m.fence_in_flight(0, true);
    ascending(&mut m, 11, 0);
    assert!(m.cores[0].l1d.contains(line(12)), "the condition off: sent under the fence");
    let mut m = system(held.clone(), Prefetcher::default());
    m.fence_in_flight(0, true);
    ascending(&mut m, 11, 0);
    assert!(!m.cores[0].l1d.contains(line(12)), "under a fence: held back");
    m.fence_in_flight(0, false);
    ascending(&mut m, 21, 3 * APART);
    assert!(m.cores[0].l1d.contains(line(22)), "the fence done: sent");
    let s = stats(&m);
    assert_eq!((s.get("c.l1d.prefetcher.held_by_fence"), s.get("c.l1d.prefetcher.issued")), (Some(1.0), Some(1.0)));
    assert_eq!(s.get("c.l1d.prefetcher.held_by_stores"), Some(0.0));
}

/// A memory that answers every access 40 ns after it is asked and records what the core says of its fences.
struct FenceRecorder {
    mem: FixedLatency,
    said: Vec<bool>,
}

impl MemPort for FenceRecorder {
    fn access(&mut self, req: &MemReq) -> u64 {
        self.mem.access(req)
    }
    fn fence_in_flight(&mut self, _requester: u16, on: bool) {
        self.said.push(on);
    }
}

#[test]
fn the_core_says_a_load_issues_under_a_fence_only_while_the_fence_is_in_flight() {
    use kvsim_params::Core as CoreParams;
    use kvsim_timing::core::{Core, L1Latencies};
    use kvsim_timing::inst::{InstClass, InstInfo};
    use kvsim_timing::synth::{core_params, load, op};
    // A load that misses (100 cycles), a fence after it (committing after the miss), a younger independent load,
    // then loads after the fence has committed.
    let fence = InstInfo { tso_implied: true, ..op(0x1004, InstClass::Fence, 0, 0, 0) };
    let prog = [load(0x1000, 5, 0, 0x9_0000), fence, load(0x1008, 6, 0, 0xA_0000)];
    let run = |p: &CoreParams| {
        let mut core = Core::new(0, p, L1Latencies { l1i: 4, l1d: 4 }, 64);
        let mut mem = FenceRecorder { mem: FixedLatency::new(40_000), said: Vec::new() };
        let t: Vec<_> = prog.iter().map(|i| core.step(i, &mut mem)).collect();
        // Two loads, each waiting for the one before (x6, then x7): the second issues long after the fence.
        core.step(&load(0x100c, 7, 6, 0xB_0000), &mut mem);
        let late = core.step(&load(0x1010, 8, 7, 0xC_0000), &mut mem);
        (t, late, mem.said)
    };
    // A TSO core runs the implied fence as an ALU operation: the younger load issues before the fence commits,
    // under it; the late load issues after it: the core says so once each way.
    let (t, late, said) = run(&CoreParams { tso_fences: true, ..core_params() });
    assert!(t[2].issue < t[1].commit, "the younger load issues while the fence is in flight");
    assert!(late.issue >= t[1].commit);
    assert_eq!(said, vec![true, false], "the younger load under the fence, the late load after it");
    // A serialising fence holds the younger load's dispatch until it commits: no load issues under it.
    let (t, _, said) = run(&core_params());
    assert!(t[2].issue > t[1].commit);
    assert_eq!(said, Vec::<bool>::new());
}

#[test]
fn page_walk_reads_trigger_the_l1d_prefetchers_only_where_they_are_trained_by_walks() {
    // Two PTE reads of line 11, the second at a higher offset (the next-line trigger, were they loads), then a load.
    let walk_reads = |m: &mut MemSystem<FixedLatency>| {
        kvsim_timing::tlb::pte_read(m, 0, PAGE + 11 * 64, 0);
        kvsim_timing::tlb::pte_read(m, 0, PAGE + 11 * 64 + 8, APART);
    };
    let mut m = system(Prefetcher { next_line: true, ..Prefetcher::default() }, Prefetcher::default());
    walk_reads(&mut m);
    assert!(m.cores[0].l1d.contains(line(12)), "trained by walks (the default): the walk's reads fetch line 12");
    let untrained = Prefetcher { next_line: true, trained_by_page_walks: false, ..Prefetcher::default() };
    let mut m = system(untrained.clone(), Prefetcher::default());
    walk_reads(&mut m);
    assert!(!m.cores[0].l1d.contains(line(12)), "not trained by walks: PTE reads are no loads, nothing sent");
    assert_eq!(stats(&m).get("c.l1d.prefetcher.issued"), Some(0.0));
    // Nor do they train it: a load of line 11 after them is a first load of the line, not a second.
    read(&mut m, PAGE + 11 * 64 + 16, 2 * APART);
    assert!(!m.cores[0].l1d.contains(line(12)));
    read(&mut m, PAGE + 11 * 64 + 24, 3 * APART);
    assert!(m.cores[0].l1d.contains(line(12)), "two loads: the next line");
}
