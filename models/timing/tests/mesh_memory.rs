//! Exact-tick tests of the coherent memory system over the real on-chip mesh (`noc::build` from a socket's
//! parameters, as the engine wires it): an LLC hit pays the slice latency plus the trip each way, a read of a
//! line modified in another core's L1 costs exactly its 3-hop path across the mesh, a NIC's DMA enters at its own
//! router, and two reads whose messages share a link at once are serialised by it.
//!
//! The network: default Noc timing (1-cycle routers, 1-cycle links, 1-cycle cluster crossbar, 32-byte flits at
//! 2.5 GHz), so a control message (8 bytes) is one flit and a data message (72 bytes) three.

use kvsim_params::{CacheHierarchy, Noc, Socket};
use kvsim_timing::mem::{LineState, MemSystem};
use kvsim_timing::network::Placement;
use kvsim_timing::noc::{build, Mesh};
use kvsim_timing::synth::hierarchy_params;
use kvsim_timing::{AccessKind, FixedLatency, MemPort, MemReq, ReqClass, Tick};

const CYCLE: Tick = 400; // 2.5 GHz: the cores, the LLC and the network
const HOP: Tick = 2 * CYCLE; // router + link
const CROSSBAR: Tick = CYCLE;
const DATA_TAIL: Tick = 2 * CYCLE; // a 72-byte message is 3 flits: the tail 2 cycles behind the head
const L1: Tick = 4 * CYCLE;
const LLC: Tick = 20 * CYCLE; // synth::hierarchy_params: the slice's hit latency
const DIR: Tick = 10 * CYCLE; // the home directory's lookup (declared default)
const A: u64 = 0x10_0000;

/// A socket of `cores` cores in clusters of `per_cluster` on a `cols` x `rows` mesh, one LLC slice (on router 0),
/// the memory controller on router 0 and one NIC on router `nic`.
fn socket(cores: u64, per_cluster: u64, cols: u64, rows: u64, nic: [u64; 2]) -> Socket {
    Socket {
        cores,
        cores_per_cluster: per_cluster,
        caches: CacheHierarchy { llc_slices: 1, ..hierarchy_params() },
        noc: Noc { mesh_x: cols, mesh_y: rows, nic_routers: vec![nic], ..Noc::default() },
        ..Socket::default()
    }
}

fn memory_system(s: &Socket) -> (MemSystem<FixedLatency>, Mesh, Placement) {
    let (mesh, placement) = build(s, 1).unwrap();
    let clocks = vec![2_500_000_000; s.cores as usize];
    let m = MemSystem::with_network(
        &s.caches,
        &clocks,
        FixedLatency::new(100_000),
        Box::new(mesh.clone()),
        placement.clone(),
    );
    (m, mesh, placement)
}

fn rd(core: u16, addr: u64, t: Tick) -> MemReq {
    MemReq::new(addr, AccessKind::Read, core, t)
}

fn wr(core: u16, addr: u64, t: Tick) -> MemReq {
    MemReq::new(addr, AccessKind::Write, core, t)
}

/// A DMA write by I/O agent 0 (the NIC): DDIO puts the line in the LLC, held by no core.
fn dma_write(addr: u64, t: Tick) -> MemReq {
    MemReq { class: ReqClass::Io, ..MemReq::new(addr, AccessKind::Write, 0, t) }
}

#[test]
fn an_llc_hit_from_a_core_k_hops_away_costs_the_slice_plus_k_hops_each_way() {
    // Four cores, clusters of one, on a 4 x 1 mesh: core k on router k, k hops from the slice on router 0.
    let s = socket(4, 1, 4, 1, [3, 0]);
    for k in 0..4u64 {
        let (mut m, mesh, p) = memory_system(&s);
        assert_eq!((mesh.router_of(p.core[k as usize]), mesh.router_of(p.llc_slice[0])), (k as u16, 0));
        m.access(&dma_write(A, 0));
        let t = 1_000_000;
        // The request (one flit) k hops to the home, the slice's lookup (the directory's, shorter, runs beside
        // it), the line (three flits) k hops back; in the core's own cluster, the crossbar both ways.
        let trip = |head: Tick| if k == 0 { CROSSBAR + head } else { k * HOP + head };
        let expected = t + L1 + trip(0) + LLC + trip(DATA_TAIL);
        assert_eq!(m.access(&rd(k as u16, A, t)), expected, "core {k}");
        assert_eq!(m.cores[k as usize].l1d.state_of(A >> 6), LineState::Exclusive);
    }
}

#[test]
fn a_dma_write_crosses_the_mesh_from_its_nics_router() {
    // The NIC on router 3, the home on router 0: the 72-byte write takes 3 hops and its tail; with no private
    // copy to invalidate it completes when the slice has it. Moving the NIC next to the home saves 2 hops.
    for (nic_x, hops) in [(3u64, 3u64), (1, 1)] {
        let (mut m, mesh, p) = memory_system(&socket(4, 1, 4, 1, [nic_x, 0]));
        assert_eq!(mesh.router_of(p.io[0]), nic_x as u16);
        let t = 1_000_000;
        assert_eq!(m.access(&dma_write(A, t)), t + hops * HOP + DATA_TAIL + LLC, "NIC on router {nic_x}");
    }
}

#[test]
fn a_read_of_a_line_modified_in_another_l1_costs_exactly_its_three_hop_path() {
    // Nine cores, clusters of one, on a 3 x 3 mesh: core i on router i (x = i % 3, y = i / 3); the home slice on
    // router 0. Core 2 (2, 0) modifies the line; core 8 (2, 2) reads it.
    let s = socket(9, 1, 3, 3, [0, 2]);
    let (mut m, mesh, p) = memory_system(&s);
    assert_eq!(mesh.router_of(p.llc_slice[0]), 0);
    m.access(&wr(2, A, 0));
    assert_eq!(m.cores[2].l1d.state_of(A >> 6), LineState::Modified);
    let t = 1_000_000;
    // Core 8 -> home: 4 hops (XY: 2 west, 2 north); the directory; home -> owner core 2: 2 hops; core 2's L1;
    // the line core 2 -> core 8: 2 hops and the data's tail.
    let expected = t + L1 + 4 * HOP + DIR + 2 * HOP + L1 + 2 * HOP + DATA_TAIL;
    assert_eq!(m.access(&rd(8, A, t)), expected);
    assert_eq!(m.dir.stats.forwards, 1);
    assert_eq!(m.cores[2].l1d.state_of(A >> 6), LineState::Owned);
    assert_eq!(m.cores[8].l1d.state_of(A >> 6), LineState::Shared);
}

#[test]
fn two_reads_whose_messages_share_links_at_once_are_serialised() {
    // Two cores in one cluster on router 3 of a 4 x 1 mesh read two lines from the slice on router 0 at the same
    // time: their requests and replies take the same links. Alone, each read costs the same.
    let s = socket(8, 2, 4, 1, [3, 0]);
    let (b, c) = (A, A + 64);
    let alone = |core: u16, line: u64| {
        let (mut m, _, _) = memory_system(&s);
        m.access(&dma_write(b, 0));
        m.access(&dma_write(c, 0));
        m.access(&rd(core, line, 1_000_000))
    };
    let t = 1_000_000;
    // Three hops, the slice, three hops back. (The cluster-level directory sits in a cluster's own LLC slice;
    // this cluster has none, so its requests go straight home.)
    let one = t + L1 + 3 * HOP + LLC + 3 * HOP + DATA_TAIL;
    assert_eq!(alone(6, b), one);
    assert_eq!(alone(7, c), one);
    let (mut m, mesh, p) = memory_system(&s);
    assert_eq!((mesh.router_of(p.core[6]), mesh.router_of(p.core[7])), (3, 3));
    m.access(&dma_write(b, 0));
    m.access(&dma_write(c, 0));
    assert_eq!(m.access(&rd(6, b, t)), one, "the first read goes through as if alone");
    // The second request leaves one flit (one cycle) behind the first on link 3 -> 2; its reply then finds the
    // first reply's three flits on link 0 -> 1 and leaves after them: three cycles after the first in all.
    assert_eq!(m.access(&rd(7, c, t)), one + 3 * CYCLE, "the second read waits for the first's flits");
}
