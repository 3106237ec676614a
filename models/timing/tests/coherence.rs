//! Exact-tick tests of the MOESI directory over a network whose messages cost a fixed time per hop: an LLC hit
//! pays the trip each way, a read of a modified line is forwarded by its owner (3-hop), an upgrade waits for
//! every sharer's acknowledgement, DMA writes invalidate private copies and DMA reads get the owner's dirty data,
//! the cluster level resolves sibling sharing, and sharers are exact beyond 64 cores.

use kvsim_params::{Cache, CacheHierarchy};
use kvsim_timing::mem::{LineState, MemSystem};
use kvsim_timing::network::{Endpoint, Network, Placement};
use kvsim_timing::synth::{cache_params, hierarchy_params};
use kvsim_timing::{AccessKind, FixedLatency, MemPort, MemReq, ReqClass, Tick};

const CYCLE: u64 = 400; // 2.5 GHz
const MEM: u64 = 100_000;
const HOP: u64 = 1_000; // ps per hop of the test network
const L1: u64 = 4 * CYCLE;
const LLC: u64 = 20 * CYCLE;
const DIR: u64 = 10 * CYCLE;
const CLUSTER: u64 = 4 * CYCLE;

/// Endpoints on a line: endpoint e sits at `pos[e]`; a message takes |pos[src] - pos[dst]| hops of `HOP` ps.
/// `cluster[e]` is its cluster. Counts messages so tests can check how many a transaction sent.
struct LineNetwork {
    pos: Vec<u64>,
    cluster: Vec<u16>,
    messages: u64,
}

impl Network for LineNetwork {
    fn send(&mut self, src: Endpoint, dst: Endpoint, bytes: u32, t: Tick) -> Tick {
        if src != dst {
            self.messages += 1;
        }
        t + self.latency(src, dst, bytes)
    }
    fn latency(&self, src: Endpoint, dst: Endpoint, _bytes: u32) -> Tick {
        self.pos[src as usize].abs_diff(self.pos[dst as usize]) * HOP
    }
    fn cluster_of(&self, e: Endpoint) -> u16 {
        self.cluster[e as usize]
    }
}

/// `cores` cores at positions 0..cores (core i in cluster i / per_cluster), one LLC slice at position
/// `slice_pos` (in cluster `slice_cluster`), an I/O agent at position `io_pos` (no cluster).
fn system_on_a_line(
    h: &CacheHierarchy,
    cores: usize,
    per_cluster: usize,
    slice_pos: u64,
    slice_cluster: u16,
    io_pos: u64,
) -> MemSystem<FixedLatency> {
    let n = cores as u16;
    let placement = Placement { core: (0..n).collect(), llc_slice: vec![n], mem_ctrl: vec![n], io: vec![n + 1] };
    let mut pos: Vec<u64> = (0..cores as u64).collect();
    pos.extend([slice_pos, io_pos]);
    let mut cluster: Vec<u16> = (0..cores).map(|i| (i / per_cluster) as u16).collect();
    cluster.extend([slice_cluster, u16::MAX]);
    let net = LineNetwork { pos, cluster, messages: 0 };
    let clocks = vec![2_500_000_000; cores];
    let mut m = MemSystem::with_network(h, &clocks, FixedLatency::new(MEM), Box::new(net), placement);
    m.enable_check();
    m
}

fn rd(core: u16, addr: u64, t: Tick) -> MemReq {
    MemReq::new(addr, AccessKind::Read, core, t)
}
fn wr(core: u16, addr: u64, t: Tick) -> MemReq {
    MemReq::new(addr, AccessKind::Write, core, t)
}
fn dma(write: bool, addr: u64, t: Tick) -> MemReq {
    let kind = if write { AccessKind::Write } else { AccessKind::Read };
    MemReq { class: ReqClass::Io, ..MemReq::new(addr, kind, 0, t) }
}

const A: u64 = 0x10_0000;

#[test]
fn an_llc_hit_from_k_hops_away_costs_the_slice_plus_the_trip_each_way() {
    // Slice at position 8; core k sits 8 - k hops from it. A DMA write puts the line in the LLC, held by no core.
    for k in 0..4u64 {
        let mut m = system_on_a_line(&hierarchy_params(), 4, 1, 8, u16::MAX, 9);
        m.access(&dma(true, A, 0));
        let t = 1_000_000;
        let hops = 8 - k;
        assert_eq!(m.access(&rd(k as u16, A, t)), t + L1 + hops * HOP + LLC + hops * HOP, "core {k}");
        // The directory's lookup runs beside the LLC's: a slower directory sets the pace instead.
        let mut h = hierarchy_params();
        h.directory.latency = 30;
        let mut m = system_on_a_line(&h, 4, 1, 8, u16::MAX, 9);
        m.access(&dma(true, A, 0));
        assert_eq!(m.access(&rd(k as u16, A, t)), t + L1 + 2 * hops * HOP + 30 * CYCLE);
    }
}

#[test]
fn a_read_of_a_line_modified_in_another_l1_is_forwarded_by_its_owner() {
    let mut m = system_on_a_line(&hierarchy_params(), 4, 1, 8, u16::MAX, 9);
    m.access(&wr(0, A, 0));
    assert_eq!(m.cores[0].l1d.state_of(A >> 6), LineState::Modified);
    let t = 1_000_000;
    // Core 3 -> home (5 hops), directory, home -> core 0 (8 hops), core 0's L1, core 0 -> core 3 (3 hops).
    let done = m.access(&rd(3, A, t));
    assert_eq!(done, t + L1 + 5 * HOP + DIR + 8 * HOP + L1 + 3 * HOP);
    assert_eq!(m.dir.stats.forwards, 1);
    assert_eq!(m.cores[0].l1d.state_of(A >> 6), LineState::Owned, "the owner keeps the dirty line, shared");
    assert_eq!(m.cores[3].l1d.state_of(A >> 6), LineState::Shared);
    // A third reader is forwarded to the O owner too.
    let done = m.access(&rd(2, A, 2 * t));
    assert_eq!(done, 2 * t + L1 + 6 * HOP + DIR + 8 * HOP + L1 + 2 * HOP);
    // An exclusive (clean) owner also answers: the directory cannot tell E from a silent E -> M.
    let mut m = system_on_a_line(&hierarchy_params(), 4, 1, 8, u16::MAX, 9);
    m.access(&rd(0, A, 0));
    assert_eq!(m.cores[0].l1d.state_of(A >> 6), LineState::Exclusive);
    assert_eq!(m.access(&rd(1, A, t)), t + L1 + 7 * HOP + DIR + 8 * HOP + L1 + HOP);
    assert_eq!(m.cores[0].l1d.state_of(A >> 6), LineState::Shared);
}

#[test]
fn an_upgrade_waits_for_every_sharers_acknowledgement() {
    // Core 0 and sharers 1..=n read the line, then core 0 writes it. The slice sits at position 0 (core 0's);
    // sharer s is s hops away: the farthest one's invalidation and acknowledgement set the completion.
    for n in 1..=5u64 {
        let mut m = system_on_a_line(&hierarchy_params(), 6, 1, 0, u16::MAX, 0);
        for s in 0..=n {
            m.access(&rd(s as u16, A, s * 1_000_000));
        }
        assert_eq!(m.cores[0].l1d.state_of(A >> 6), LineState::Shared);
        let t = 10_000_000;
        let done = m.access(&wr(0, A, t));
        // Request to the home at distance 0, directory, invalidation to n (n hops), acknowledgement back (n hops).
        assert_eq!(done, t + L1 + DIR + 2 * n * HOP, "{n} sharers");
        assert_eq!(m.dir.stats.invalidations, n, "one invalidation per sharer");
        assert_eq!(m.dir.stats.upgrades, 1, "no data moved");
        assert_eq!(m.cores[0].l1d.stats.upgrades, 1);
        for s in 1..=n as usize {
            assert_eq!(m.cores[s].l1d.state_of(A >> 6), LineState::Invalid);
            assert_eq!(m.cores[s].l1d.stats.coherence_invalidations, 1);
        }
        assert_eq!(m.cores[0].l1d.state_of(A >> 6), LineState::Modified);
        // Once the line is M, the next store hits: no directory traffic.
        assert_eq!(m.access(&wr(0, A, 2 * t)), 2 * t + L1);
    }
}

#[test]
fn a_dma_write_invalidates_l1_copies_and_a_dma_read_gets_the_owners_dirty_data() {
    let mut m = system_on_a_line(&hierarchy_params(), 4, 1, 8, u16::MAX, 10);
    m.access(&rd(1, A, 0));
    m.access(&rd(2, A, 1_000_000));
    // I/O agent -> home 2 hops, directory, invalidations to cores 1 and 2 (7, 6 hops) and acks back.
    let t = 2_000_000;
    assert_eq!(m.access(&dma(true, A, t)), t + 2 * HOP + DIR + 2 * 7 * HOP);
    for c in [1, 2] {
        assert_eq!(m.cores[c].l1d.state_of(A >> 6), LineState::Invalid, "core {c}'s copy must go");
    }
    assert!(m.dir.get(A >> 6).is_none());
    // Core 1 now misses its L1 and finds the packet in the LLC (DDIO).
    let t = 3_000_000;
    assert_eq!(m.access(&rd(1, A, t)), t + L1 + 2 * 7 * HOP + LLC);
    assert_eq!(m.io.core_read_hits, 1);
    // Core 3 writes the line; a DMA read is forwarded to it: io -> home, directory, home -> core 3, its L1,
    // core 3 -> io.
    m.access(&wr(3, A, 4_000_000));
    let t = 5_000_000;
    assert_eq!(m.access(&dma(false, A, t)), t + 2 * HOP + DIR + 5 * HOP + L1 + 7 * HOP);
    assert_eq!(m.io.read_forwards, 1);
    assert_eq!(m.cores[3].l1d.state_of(A >> 6), LineState::Modified, "a non-caching read leaves the owner as is");
    // Without DDIO the write also invalidates, and the line goes to memory.
    m.ddio = false;
    m.access(&dma(true, A, 6_000_000));
    assert_eq!(m.cores[3].l1d.state_of(A >> 6), LineState::Invalid);
    assert!(m.llc[0].find(A >> 6).is_none());
}

#[test]
fn the_cluster_level_resolves_sharing_between_siblings() {
    // Two clusters of two cores; cluster 0's directory is the slice at position 1 (its crossbar).
    let mut m = system_on_a_line(&hierarchy_params(), 4, 2, 1, 0, 9);
    m.access(&wr(0, A, 0));
    let t = 1_000_000;
    // Core 1 -> cluster directory (0 hops), its lookup, -> core 0 (1 hop), core 0's L1, -> core 1 (1 hop).
    assert_eq!(m.access(&rd(1, A, t)), t + L1 + CLUSTER + HOP + L1 + HOP);
    assert_eq!(m.dir.stats.cluster_resolved, 1);
    // Core 1 writes: cores 0 and 1 are the only holders, so the cluster grants it; core 0 acknowledges.
    let t = 2_000_000;
    assert_eq!(m.access(&wr(1, A, t)), t + L1 + CLUSTER + HOP + HOP);
    assert_eq!(m.dir.stats.cluster_resolved, 2);
    // Core 2 (cluster 1, which has no slice of its own: no cluster level) goes home and is forwarded to core 1.
    let t = 3_000_000;
    assert_eq!(m.access(&rd(2, A, t)), t + L1 + HOP + DIR + L1 + HOP); // home -> core 1: 0 hops
    assert_eq!(m.dir.stats.forwards, 2);
    // A request the cluster cannot resolve pays the cluster lookup on its way home: core 0 reads a line in the
    // LLC that nobody holds (put there by DMA): core 0 -> cluster directory (1 hop), its lookup, on to the home
    // (the same slice: 0 hops), the LLC, the data back (1 hop).
    let b = A + 0x4_0000;
    m.access(&dma(true, b, 4_000_000));
    let t = 5_000_000;
    assert_eq!(m.access(&rd(0, b, t)), t + L1 + HOP + CLUSTER + LLC + HOP);
    assert_eq!(m.dir.stats.cluster_resolved, 2, "not resolved in the cluster");
}

#[test]
fn sharers_are_exact_beyond_64_cores() {
    let mut h = hierarchy_params();
    // One LLC set of two ways, so the third line evicts the first.
    h.llc = Cache { inclusive: true, ..cache_params(64 * 2, 2, 20, 8) };
    let mut m = system_on_a_line(&h, 70, 1, 0, u16::MAX, 0);
    m.access(&rd(64, A, 0));
    assert_eq!(m.dir.get(A >> 6).unwrap().holders(), vec![64]);
    for c in 65..70 {
        m.access(&rd(c, A, 1_000_000 * c as u64));
    }
    assert_eq!(m.dir.get(A >> 6).unwrap().holders().len(), 6);
    m.access(&rd(0, 0x20_0000, 80_000_000)); // core 0 (64 mod 64) reads another line
    m.access(&rd(1, 0x30_0000, 81_000_000)); // evicts A from the LLC: back-invalidate its six holders only
    for c in 64..70 {
        assert_eq!(m.cores[c].l1d.state_of(A >> 6), LineState::Invalid);
    }
    assert_eq!(m.cores[0].l1d.state_of(0x20_0000 >> 6), LineState::Exclusive, "core 0 is not core 64");
    assert_eq!(m.dir.stats.back_invalidations, 6);
}

/// Random multi-core traffic to a few shared lines through small caches (so lines are evicted, written back and
/// back-invalidated), with DMA and warming mixed in; the check mode verifies SWMR, exact sharers and data
/// versions after every access.
fn random_traffic(cores: usize, per_cluster: usize, l2: bool, seed: u64) -> u64 {
    let mut h = hierarchy_params();
    h.l1d = cache_params(64 * 4, 2, 4, 4);
    h.l1i = cache_params(64 * 4, 2, 4, 4);
    h.l2_enabled = l2;
    h.l2 = cache_params(64 * 8, 2, 8, 4);
    h.llc = Cache { inclusive: true, ..cache_params(64 * 16, 4, 20, 8) };
    let mut m = system_on_a_line(&h, cores, per_cluster, cores as u64 / 2, 0, cores as u64 + 1);
    let mut x = seed | 1;
    let mut t = 0;
    for i in 0..20_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let core = (x % cores as u64) as u16;
        let addr = ((x >> 8) % 24) * 64 + (x >> 40) % 8 * 8;
        t += (x >> 20) % 3000;
        let req = match (x >> 32) % 10 {
            0..=3 => rd(core, addr, t),
            4..=6 => wr(core, addr, t), // stores, AMOs and SCs write their line
            7 => MemReq::new(addr, AccessKind::IFetch, core, t),
            8 => MemReq::new(addr, AccessKind::Prefetch, core, t),
            _ => dma((x >> 36) & 1 == 1, addr, t),
        };
        if i % 5000 < 500 {
            m.access_mode(&req, kvsim_timing::mem::Mode::Warm);
        } else {
            let done = m.access(&req);
            assert!(done >= t, "completion before the request");
        }
        if cores <= 4 {
            m.check_all(); // every line, not only the one touched: evictions' side effects too
        }
    }
    m.check.as_ref().unwrap().checked
}

#[test]
fn coherence_invariants_hold_under_random_traffic_on_2_to_64_cores() {
    for cores in [2usize, 3, 4, 8, 16, 64] {
        for l2 in [false, true] {
            for per_cluster in [1usize, 2] {
                let checked = random_traffic(cores, per_cluster, l2, 7 + cores as u64);
                assert!(checked > 15_000, "the check ran: {checked}");
            }
        }
    }
}

#[test]
fn the_same_traffic_gives_the_same_times() {
    let run = || {
        let mut m = system_on_a_line(&hierarchy_params(), 8, 2, 4, 2, 9);
        (0..2000u64)
            .map(|i| m.access(&MemReq::new((i * 7919) % 4096 * 64, AccessKind::Write, (i % 8) as u16, i * 100)))
            .sum::<u64>()
    };
    assert_eq!(run(), run());
}

#[test]
fn lines_leaving_a_core_tell_the_home_and_keep_the_sharers_exact() {
    let mut m = system_on_a_line(&hierarchy_params(), 2, 1, 2, u16::MAX, 3);
    // A: M in core 0; B: E in core 0 (another set of the LLC's, the same L1 set).
    m.access(&wr(0, A, 0));
    m.access(&rd(0, A + 0x100_0000, 0));
    // Eight more lines in the same L1 set push A and B out (32 KiB, 8 ways: 64 sets, a 4 KiB stride).
    for i in 1..=8u64 {
        m.access(&rd(0, A + i * 4096, 1_000_000 + i));
    }
    assert_eq!(m.dir.stats.putx, 1, "the dirty line went home with its data");
    assert_eq!(m.dir.stats.puts, 1, "the clean one told the home it left");
    assert!(m.dir.get(A >> 6).is_none() && m.dir.get((A + 0x100_0000) >> 6).is_none());
    let slot = m.llc[0].find(A >> 6).expect("inclusive");
    assert!(m.llc[0].is_dirty(slot), "the LLC holds the written-back data");
    // Core 1 now reads A from the LLC, exclusively: nobody else holds it.
    let t = 5_000_000;
    assert_eq!(m.access(&rd(1, A, t)), t + L1 + 2 * HOP + LLC);
    assert_eq!(m.cores[1].l1d.state_of(A >> 6), LineState::Exclusive);
    assert_eq!(m.dir.stats.forwards, 0);
}

#[test]
fn each_write_back_to_memory_is_counted_by_whose_data_it_carries_and_what_displaced_it() {
    // An LLC of one set of two ways (LRU): every new line displaces the least recently used one.
    let mut h = hierarchy_params();
    h.llc = Cache { inclusive: true, ..cache_params(2 * 64, 2, 20, 64) };
    let mut m = system_on_a_line(&h, 2, 1, 2, u16::MAX, 3);
    let line = |k: u64| A + 64 * k;
    let (a, b, c, e, f, g, hh, i) = (line(0), line(1), line(2), line(3), line(4), line(5), line(6), line(7));
    let mut t = 0;
    let mut step = |m: &mut MemSystem<FixedLatency>, req: fn(u16, u64, Tick) -> MemReq, addr: u64| {
        t += 1_000_000;
        m.access(&req(0, addr, t));
    };
    let dma_wr = |_: u16, addr: u64, t: Tick| dma(true, addr, t);
    step(&mut m, dma_wr, a);
    step(&mut m, dma_wr, b);
    // A core's fill displaces A, a packet no core has touched: the DMA write's data goes to memory.
    step(&mut m, rd, c);
    assert_eq!((m.io.writebacks_dma_data, m.io.dma_lines_displaced_by_cores), (1, 1));
    // The core builds a response in B (LLC hit: C is now the older); a DMA write displaces C, clean: no write.
    step(&mut m, wr, b);
    step(&mut m, dma_wr, e);
    assert_eq!(m.mem.writes, 1);
    assert_eq!(m.io.dma_lines_displaced_by_dma, 0, "C is a core's line");
    // A core's fill displaces B: the core's dirty copy (back-invalidated) is a core's data in a DMA-written line.
    step(&mut m, rd, f);
    assert_eq!(m.io.writebacks_core_data_in_dma_lines, 1);
    assert_eq!(m.io.dma_lines_displaced_by_cores, 2);
    // The core writes G, a line no I/O agent wrote, displacing E (DMA data); two DMA writes then displace F
    // (clean) and G (dirty in the core): a core line's write-back that a DDIO allocation displaced.
    step(&mut m, wr, g);
    assert_eq!(m.io.writebacks_dma_data, 2);
    step(&mut m, dma_wr, hh);
    step(&mut m, dma_wr, i);
    assert_eq!((m.io.writebacks_core_lines, m.io.writebacks_displaced_by_dma), (1, 1));
    // A DDIO allocation that displaces another DMA-written line: A's displaces H (DMA data, dirty).
    step(&mut m, dma_wr, a);
    assert_eq!(m.io.dma_lines_displaced_by_dma, 1, "A's allocation displaced H");
    assert_eq!((m.io.writebacks_dma_data, m.io.writebacks_displaced_by_dma), (3, 2));
    // The three kinds account for every write to memory.
    let io = &m.io;
    assert_eq!(io.writebacks_dma_data + io.writebacks_core_data_in_dma_lines + io.writebacks_core_lines, m.mem.writes);
}
