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
