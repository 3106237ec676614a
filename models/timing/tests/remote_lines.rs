//! Remote lines (`mem/remote.rs`): a socket's LLC caches lines homed on other sockets, the home directory tracks
//! which sockets hold a copy and invalidates them before a write. Exact ticks on ideal on-chip networks (every
//! on-chip message free, so only the caches and the link count; the link is `models/link.py`'s QPI-like default:
//! a control message 1 flit of 0.5 ns, a line 9, 20 ns one way), then the coherence invariants under random
//! traffic on two and four sockets.

mod common;

use common::{random_request, system, CTRL_HOLD, DATA_HOLD, LINK_LAT, MEM, REGION};
use kvsim_params::{Cache, CacheHierarchy};
use kvsim_timing::mem::Mode;
use kvsim_timing::synth::{cache_params, hierarchy_params};
use kvsim_timing::system::TimingSystem;
use kvsim_timing::{AccessKind, MemPort, MemReq, ReqClass, StatSink, Tick};

const CYCLE: Tick = 400; // 2.5 GHz
const L1: Tick = 4 * CYCLE; // synth::hierarchy_params
const LLC: Tick = 20 * CYCLE;
const DIR: Tick = 10 * CYCLE; // the directory's (and a slice's tag) lookup

/// `sockets` sockets of 2 cores (a cluster each) on free on-chip networks, remote lines on or off; `caches`
/// changes the synthetic caches first (the LLC's inclusion, say).
fn sockets_of_two(sockets: u16, remote_lines: bool, caches: impl FnOnce(&mut CacheHierarchy)) -> TimingSystem {
    let mut h = hierarchy_params();
    h.directory.remote_lines = remote_lines;
    caches(&mut h);
    system(sockets, 2, 1, &h, 0)
}

fn two_sockets(remote_lines: bool) -> TimingSystem {
    sockets_of_two(2, remote_lines, |_| {})
}

/// Each (core, address, kind) in turn, each sent 1 ns after the one before completed, from `t`: when the last
/// completed, plus 1 ns.
fn accesses(sys: &mut TimingSystem, mut t: Tick, steps: &[(u16, u64, AccessKind)]) -> Tick {
    for &(core, addr, kind) in steps {
        t = sys.mem.access(&MemReq::new(addr, kind, core, t)) + 1_000;
    }
    t
}

fn rd(core: u16, addr: u64, t: Tick) -> MemReq {
    MemReq::new(addr, AccessKind::Read, core, t)
}

fn stat(sys: &TimingSystem, name: &str) -> f64 {
    let mut out = StatSink::new();
    sys.stats("", &mut out);
    out.get(name).unwrap_or_else(|| panic!("no statistic {name}"))
}

fn link_messages(sys: &TimingSystem) -> (f64, f64) {
    (stat(sys, "system.link0_1.messages"), stat(sys, "system.link1_0.messages"))
}

#[test]
fn a_line_read_twice_from_another_socket_crosses_the_link_once() {
    // Socket 1's line; cores 0 and 1 are socket 0's.
    let a = REGION + 0x40;
    let mut sys = two_sockets(true);
    let t = 1_000_000;
    // The first read looks in socket 0's slice (no copy), crosses to the home, misses its LLC, reads memory; the line
    // comes back across the link and socket 0's slice keeps a copy on the way. Core 0 holds it exclusively (E).
    let first = sys.mem.access(&rd(0, a, t));
    assert_eq!(first - t, L1 + DIR + (CTRL_HOLD + LINK_LAT) + LLC + MEM + (DATA_HOLD + LINK_LAT));
    assert!(sys.mem.llc[0].contains(a >> 6) && sys.mem.llc[1].contains(a >> 6), "a copy on socket 0, the home's");
    assert_eq!(link_messages(&sys), (1.0, 1.0), "the request, the line");
    // The second read, by socket 0's other core, finds the copy in its own socket's slice: core 0 owns the line, so
    // the slice forwards it to core 0, which answers. Nothing crosses the link.
    let t = first + 1_000;
    let second = sys.mem.access(&rd(1, a, t));
    assert_eq!(second - t, L1 + DIR + L1);
    assert_eq!(link_messages(&sys), (1.0, 1.0), "the second read stayed on socket 0");
    assert_eq!(stat(&sys, "system.socket0.llc.remote_hits"), 1.0);
    assert_eq!(stat(&sys, "system.socket0.llc.remote_fills"), 1.0);

    // A line nobody on socket 0 owns: core 2 (socket 1, the home's) reads it first (E), core 0's read is forwarded
    // to it across the link (core 2 keeps a shared copy), and socket 0's slice keeps the line; core 1's read is then
    // answered by the slice's copy after its hit latency.
    let b = REGION + 0x1000;
    let t = second + 1_000;
    let t = sys.mem.access(&rd(2, b, t)) + 1_000;
    let done = sys.mem.access(&rd(0, b, t));
    assert_eq!(done - t, L1 + DIR + (CTRL_HOLD + LINK_LAT) + DIR + L1 + (DATA_HOLD + LINK_LAT));
    let t = done + 1_000;
    assert_eq!(sys.mem.access(&rd(1, b, t)) - t, L1 + LLC);
    assert_eq!(link_messages(&sys), (2.0, 2.0), "only core 0's read of b crossed");

    // Without remote lines the second reader's request crosses to the home and the line crosses back again.
    let mut sys = two_sockets(false);
    let first = sys.mem.access(&rd(0, a, 1_000_000));
    let t = first + 1_000;
    let second = sys.mem.access(&rd(1, a, t));
    // (Core 0, the owner, is on the reader's socket: the forward crosses back, the data stays on socket 0.)
    assert_eq!(second - t, L1 + (CTRL_HOLD + LINK_LAT) + DIR + (CTRL_HOLD + LINK_LAT) + L1, "the home forwards");
    assert_eq!(link_messages(&sys), (2.0, 2.0));
    assert!(!sys.mem.llc[0].contains(a >> 6));
}

#[test]
fn a_write_on_another_socket_invalidates_the_copy_and_the_next_read_crosses_again() {
    let b = REGION + 0x1000;
    let mut sys = two_sockets(true);
    // Cores 2 (home socket), 0 and 1 read b: socket 0's slice holds a copy, cores 0 and 1 and 2 share the line.
    let mut t = 1_000_000;
    for core in [2, 0, 1] {
        t = sys.mem.access(&rd(core, b, t)) + 1_000;
    }
    assert!(sys.mem.llc[0].contains(b >> 6));
    // Core 2 writes: the home invalidates both cores of socket 0 and socket 0's copy, each acknowledged.
    t = sys.mem.access(&MemReq::new(b, AccessKind::Write, 2, t)) + 1_000;
    assert!(!sys.mem.llc[0].contains(b >> 6), "the copy went");
    assert_eq!(stat(&sys, "system.directory.socket_invalidations"), 1.0);
    assert_eq!(stat(&sys, "system.socket0.llc.remote_invalidations"), 1.0);
    // Core 1's next read finds no copy: it crosses to the home, which forwards it to the writer (the check mode
    // verifies it gets the written data, not the old copy's).
    let before = link_messages(&sys);
    let done = sys.mem.access(&rd(1, b, t));
    assert_eq!(done - t, L1 + DIR + (CTRL_HOLD + LINK_LAT) + DIR + L1 + (DATA_HOLD + LINK_LAT));
    assert_eq!(link_messages(&sys), (before.0 + 1.0, before.1 + 1.0));
    assert_eq!(stat(&sys, "system.socket0.llc.remote_misses"), 2.0, "core 0's first read, this one");
}

#[test]
fn a_dma_write_at_the_home_invalidates_every_sockets_copy() {
    let b = REGION + 0x2000;
    let mut sys = two_sockets(true);
    let t = sys.mem.access(&rd(0, b, 1_000_000)) + 1_000;
    assert!(sys.mem.llc[0].contains(b >> 6));
    let dma = MemReq { class: ReqClass::Io, ..MemReq::new(b, AccessKind::Write, 0, t) };
    let t = sys.mem.access(&dma) + 1_000;
    assert!(!sys.mem.llc[0].contains(b >> 6));
    // Core 1 reads the DMA's data from the home (the check mode verifies the version).
    sys.mem.access(&rd(1, b, t));
    assert!(sys.mem.llc[0].contains(b >> 6));
}

/// Is `line` in any cache: a slice of any socket, any core's private caches?
fn cached_anywhere(sys: &TimingSystem, line: u64) -> bool {
    sys.mem.llc.iter().any(|s| s.contains(line))
        || sys.mem.cores.iter().any(|p| p.state_of(line) != kvsim_timing::mem::LineState::Invalid)
}

#[test]
fn a_cached_page_that_changes_home_leaves_every_cache_first_and_is_never_served_stale() {
    // A page of socket 1's memory (as a page-table page is when `place_tables` first puts it there), cached in
    // every way a line can be: `a` read by both of socket 0's cores (socket 0's slice keeps a remote copy, the
    // home slice the line), `b` written by core 2 (dirty, the home's socket) and then read by core 0 (core 2
    // keeps it as owner, socket 0 a copy), `c` written by core 0 (socket 0 owns a line of socket 1).
    let page = REGION + 0x3000;
    let (a, b, c) = (page, page + 0x40, page + 0x80);
    let mut sys = two_sockets(true);
    let reads_and_writes = [
        (0, a, AccessKind::Read),
        (1, a, AccessKind::Read),
        (2, b, AccessKind::Write),
        (0, b, AccessKind::Read),
        (0, c, AccessKind::Write),
    ];
    let mut t = accesses(&mut sys, 1_000_000, &reads_and_writes);
    assert!(sys.mem.llc[0].contains(a >> 6) && sys.mem.llc[0].contains(b >> 6), "socket 0 holds copies");
    // The page moves to socket 0 (a placement that re-homes it): its lines leave every cache through socket 1.
    sys.numa_placed(page, 4096, 0).unwrap();
    for addr in [a, b, c] {
        assert!(!cached_anywhere(&sys, addr >> 6), "line {addr:#x} left every cache");
    }
    assert!(sys.mem.dir.get(b >> 6).is_none() && sys.mem.dir.remote_sockets(a >> 6) == 0);
    sys.mem.check_all();
    // Every core reads and writes the page again: the check mode verifies, after every access, the new home's
    // books and that each read gets the latest write (b's and c's dirty data went to memory, not lost).
    let links = link_messages(&sys);
    t = sys.mem.access(&rd(0, a, t)) + 1_000;
    assert_eq!(link_messages(&sys), links, "socket 0's read of its own line stays on socket 0");
    let again = [
        (2, a, AccessKind::Read),
        (1, b, AccessKind::Read),
        (3, c, AccessKind::Read),
        (2, b, AccessKind::Write),
        (0, b, AccessKind::Read),
        (3, a, AccessKind::Write),
        (1, a, AccessKind::Read),
    ];
    accesses(&mut sys, t, &again);
    sys.mem.check_all();
    // Placing it again on its own socket changes no home: nothing leaves.
    assert!(cached_anywhere(&sys, a >> 6));
    sys.numa_placed(page, 4096, 0).unwrap();
    assert!(cached_anywhere(&sys, a >> 6) && cached_anywhere(&sys, b >> 6));
}

/// Random traffic from every socket's cores to lines homed on every socket, through small caches (so private
/// copies, home lines and remote copies are all evicted, written back and back-invalidated), with DMA and
/// warming mixed in; the check mode verifies after every access, over every line, SWMR, exact sharers, the
/// home's exact socket sets, no writer beside another socket's copy and data versions (a stale copy that serves a
/// read is a breach). Returns the remote hits (the traffic must exercise them).
fn random_traffic(sockets: u16, per_cluster: u16, l2: bool, inclusive: bool, seed: u64) -> u64 {
    let mut h = hierarchy_params();
    h.l1d = cache_params(64 * 4, 2, 4, 4);
    h.l1i = cache_params(64 * 4, 2, 4, 4);
    h.l2_enabled = l2;
    h.l2 = cache_params(64 * 8, 2, 8, 4);
    h.llc = Cache { inclusive, ..cache_params(64 * 16, 4, 20, 8) };
    h.llc_slices = 2;
    let cores = 4u16;
    let mut sys = system(sockets, cores, per_cluster, &h, 700);
    let mut x = seed | 1;
    let mut t = 0;
    for i in 0..12_000u64 {
        let req = random_request(&mut x, &mut t, sockets, cores, |_| 0);
        if i % 4000 < 400 {
            sys.mem.access_mode(&req, Mode::Warm);
        } else {
            assert!(sys.mem.access(&req) >= t, "completion before the request");
        }
        sys.mem.check_all();
    }
    assert!(sys.mem.check.as_ref().unwrap().checked > 100_000);
    // Every LLC miss has one cause.
    for s in &sys.mem.llc {
        let c = &s.stats;
        assert_eq!(c.misses, c.demand_misses + c.sw_prefetch_misses + c.hw_prefetch_misses + c.dma_misses);
    }
    sys.mem.llc.iter().map(|s| s.stats.remote_hits).sum()
}

#[test]
fn coherence_invariants_hold_with_remote_lines_on_two_and_four_sockets() {
    for sockets in [2u16, 4] {
        for (per_cluster, l2, inclusive) in [(1, false, true), (2, false, true), (2, true, true), (2, true, false)] {
            let hits = random_traffic(sockets, per_cluster, l2, inclusive, 11 + sockets as u64);
            assert!(hits > 100, "{sockets} sockets: remote copies served {hits} reads");
        }
    }
}

#[test]
fn a_home_change_on_three_sockets_flushes_the_third_sockets_copy() {
    // A line of socket 1's memory with copies in both other sockets' LLCs (cores 0 and 4 read it, socket 0's and
    // socket 2's), and one written by core 5 (socket 2 owns it dirty, its LLC a copy).
    let mut sys = sockets_of_two(3, true, |_| {});
    let page = REGION + 0x5000;
    let (a, b) = (page, page + 0x40);
    let t =
        accesses(&mut sys, 1_000_000, &[(0, a, AccessKind::Read), (4, a, AccessKind::Read), (5, b, AccessKind::Write)]);
    assert!(sys.mem.llc[0].contains(a >> 6) && sys.mem.llc[2].contains(a >> 6), "copies on sockets 0 and 2");
    assert_eq!(sys.mem.cores[5].state_of(b >> 6), kvsim_timing::mem::LineState::Modified);
    let before = stat(&sys, "system.directory.socket_invalidations");
    assert_eq!(sys.mem.dir.remote_sockets(a >> 6), 0b101, "the home's socket set: sockets 0 and 2");
    // The page moves to socket 0: socket 2's copies leave too, though socket 2 is neither the old home nor the new.
    sys.numa_placed(page, 4096, 0).unwrap();
    for addr in [a, b] {
        assert!(!cached_anywhere(&sys, addr >> 6), "line {addr:#x} left every cache");
        assert_eq!(sys.mem.dir.remote_sockets(addr >> 6), 0);
        assert!(sys.mem.dir.get(addr >> 6).is_none());
    }
    assert_eq!(stat(&sys, "system.directory.socket_invalidations"), before + 2.0, "a's two copies");
    sys.mem.check_all();
    // Socket 2 reads both again from the new home (the check mode verifies b's written data came back from memory).
    accesses(&mut sys, t, &[(4, b, AccessKind::Read), (4, a, AccessKind::Read), (2, a, AccessKind::Write)]);
    sys.mem.check_all();
}

#[test]
fn a_line_only_in_a_private_cache_under_a_non_inclusive_llc_leaves_through_the_directory() {
    // A non-inclusive LLC of 16 lines: core 2 (socket 1, the home's) writes `a`, then core 3 reads other lines of
    // socket 1 until the LLC has evicted `a`, which core 2 still holds modified (no back-invalidation).
    let mut sys = sockets_of_two(2, true, |h| h.llc = Cache { inclusive: false, ..cache_params(64 * 16, 4, 20, 8) });
    let page = REGION + 0x6000;
    let a = page;
    let mut t = sys.mem.access(&MemReq::new(a, AccessKind::Write, 2, 1_000_000)) + 1_000;
    let mut other = REGION + 0x8000;
    while sys.mem.llc[1].contains(a >> 6) {
        assert!(other < REGION + 0x9000, "the LLC kept a");
        t = sys.mem.access(&rd(3, other, t)) + 1_000;
        other += 0x40;
    }
    assert_eq!(sys.mem.cores[2].state_of(a >> 6), kvsim_timing::mem::LineState::Modified);
    assert!(sys.mem.dir.get(a >> 6).is_some() && !sys.mem.llc.iter().any(|s| s.contains(a >> 6)));
    // The page moves to socket 0: the directory names core 2's copy, which leaves, its data written back.
    sys.numa_placed(page, 4096, 0).unwrap();
    assert!(!cached_anywhere(&sys, a >> 6) && sys.mem.dir.get(a >> 6).is_none());
    sys.mem.check_all();
    // Socket 0 reads it from its new home (the check mode verifies it gets core 2's write), socket 1 then too.
    t = sys.mem.access(&rd(0, a, t)) + 1_000;
    sys.mem.access(&rd(2, a, t));
    sys.mem.check_all();
}

/// Two sockets of default caches after random traffic (the same on each call).
fn after_random_traffic() -> TimingSystem {
    let mut sys = two_sockets(true);
    let (mut x, mut t) = (7u64, 0);
    for _ in 0..3_000 {
        let req = random_request(&mut x, &mut t, 2, 2, |_| 0);
        sys.mem.access(&req);
    }
    sys
}

#[test]
fn a_rehome_that_looks_only_at_the_changed_range_flushes_what_a_look_at_every_cached_line_does() {
    // Socket 1's lines 4.75 to 16 of its region move to socket 0 (line 4 keeps its home: its first byte is below
    // the range). One system looks up the range's lines, the other goes through every cached line.
    let (start, end) = (REGION + 0x130, REGION + 0x400);
    let new_home = |addr: u64| if (start..end).contains(&addr) { 0 } else { (addr / REGION) as u16 };
    let (mut ranged, mut every) = (after_random_traffic(), after_random_traffic());
    let (a, b) = (ranged.mem.rehome(Some(&[(start, end)]), new_home), every.mem.rehome(None, new_home));
    assert!(a > 0 && a == b, "{a} and {b} lines left");
    ranged.mem.check_all();
    let stats = |sys: &TimingSystem| {
        let mut out = StatSink::new();
        sys.stats("", &mut out);
        out.entries
    };
    assert_eq!(stats(&ranged), stats(&every));
    for line in (REGION + 0x100) >> 6..end >> 6 {
        assert_eq!(cached_anywhere(&ranged, line), cached_anywhere(&every, line), "line {line:#x}");
    }
}
