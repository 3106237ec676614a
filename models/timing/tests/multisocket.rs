//! Exact-tick tests of several sockets in one memory system (`TimingSystem::multi_socket`): a line's home slice and
//! memory are on its NUMA socket, and every message between sockets crosses the inter-socket link
//! (`models/link.py`'s defaults: QPI-like, 0.5 ns flits, a control message 1 flit, a 64-byte line 9, 20 ns one way).
//!
//! First on ideal on-chip networks (every on-chip message free), so only the link and the caches count; then on
//! the real meshes, where the trip to and from each socket's link port (router 0) adds its hops.

use kvsim_params::{CacheHierarchy, Noc, Socket, SocketLink};
use kvsim_timing::interconnect::SocketNet;
use kvsim_timing::link::LinkTiming;
use kvsim_timing::network::{IdealNetwork, Placement, CONTROL_BYTES, DATA_BYTES};
use kvsim_timing::numa::NumaMap;
use kvsim_timing::socket_memory::SocketPort;
use kvsim_timing::synth::{core_params, hierarchy_params};
use kvsim_timing::system::{SocketParts, TimingSystem};
use kvsim_timing::{AccessKind, FixedLatency, MemPort, MemReq, StatSink, Tick};

const CYCLE: Tick = 400; // 2.5 GHz: cores, LLC, mesh
const L1: Tick = 4 * CYCLE; // synth::hierarchy_params
const LLC: Tick = 20 * CYCLE;
const DIR: Tick = 10 * CYCLE; // the home directory's lookup (declared default)
const MEM: Tick = 60_000; // the fixed memory latency
const LINK_LAT: Tick = 20_000; // SocketLink.latency default
const FLIT: Tick = 500; // 80 bits over 20 lanes at 8 GT/s
const CTRL_HOLD: Tick = FLIT; // a request: its header flit
const DATA_HOLD: Tick = 9 * FLIT; // a line: header + 8 data flits

/// Socket 0's memory from here, socket 1's from `REMOTE` (the NUMA map).
const LOCAL: u64 = 0x100_0000;
const REMOTE: u64 = 0x200_0000;
const REGION: u64 = 0x100_0000;

fn numa(sockets: u16) -> NumaMap {
    let mut map = NumaMap::new(sockets);
    map.place(REMOTE, REGION, 1).unwrap();
    map
}

/// One socket of `cores` cores on an ideal (free) network: cores 0..n, the slice n, the controller n + 1, the link
/// port n + 2; each core its own cluster.
fn ideal_socket(cores: u16) -> SocketParts {
    let n = cores;
    let placement = Placement { core: (0..n).collect(), llc_slice: vec![n], mem_ctrl: vec![n + 1], io: Vec::new() };
    let mut net = IdealNetwork::new(0);
    net.clusters = (0..n).chain([u16::MAX; 3]).collect();
    SocketParts {
        cores: vec![core_params(); cores as usize],
        memory: SocketPort::other(FixedLatency::new(MEM)),
        net: SocketNet { net: Box::new(net), placement, port: n + 2 },
    }
}

fn ideal_system(sockets: u16, cores: u16, link: &SocketLink) -> TimingSystem {
    ideal_system_with(sockets, cores, link, true)
}

/// As `ideal_system`; `remote_lines`: each socket's LLC also caches the other sockets' lines (the default).
fn ideal_system_with(sockets: u16, cores: u16, link: &SocketLink, remote_lines: bool) -> TimingSystem {
    let parts = (0..sockets).map(|_| ideal_socket(cores)).collect();
    let mut caches = hierarchy_params();
    caches.directory.remote_lines = remote_lines;
    let mut sys = TimingSystem::multi_socket(parts, &caches, link).unwrap();
    sys.set_numa(numa(sockets)).unwrap();
    sys.mem.enable_check();
    sys
}

fn rd(core: u16, addr: u64, t: Tick) -> MemReq {
    MemReq::new(addr, AccessKind::Read, core, t)
}

/// A chase of `n` dependent loads by `core` over lines 4 KiB apart from `base`: the mean ticks per load.
fn chase(sys: &mut TimingSystem, core: u16, base: u64, n: u64) -> Tick {
    let start = 1_000_000;
    let mut t = start;
    for i in 0..n {
        t = sys.mem.access(&rd(core, base + i * 4096, t));
    }
    assert_eq!((t - start) % n, 0, "every load of the chase takes the same time");
    (t - start) / n
}

fn link_stats(sys: &TimingSystem) -> StatSink {
    let mut out = StatSink::new();
    sys.stats("", &mut out);
    out
}

#[test]
fn the_qpi_defaults_give_the_published_flit_figures() {
    let t = LinkTiming::from_params(&SocketLink::default()).unwrap();
    assert_eq!((t.flit, t.hold(CONTROL_BYTES), t.hold(DATA_BYTES), t.latency), (FLIT, CTRL_HOLD, DATA_HOLD, LINK_LAT));
}

#[test]
fn a_remote_chase_costs_the_local_one_plus_the_link_each_way_on_ideal_networks() {
    let mut sys = ideal_system(2, 2, &SocketLink::default());
    // Every load misses everywhere: L1, the home slice's lookup, memory; the directory decides during the LLC's
    // longer lookup.
    let local = L1 + LLC + MEM;
    assert_eq!(chase(&mut sys, 0, LOCAL, 64), local, "socket 0's core, socket 0's memory");
    assert_eq!(chase(&mut sys, 2, REMOTE, 64), local, "socket 1's core, socket 1's memory");
    // The request looks in its own socket's slice first (remote lines: the directory's tag lookup finds no copy),
    // then crosses one way (its header flit), the line the other (9 flits), each after the link latency.
    let remote = local + DIR + CTRL_HOLD + LINK_LAT + DATA_HOLD + LINK_LAT;
    assert_eq!(chase(&mut sys, 0, REMOTE + 0x80_0000, 64), remote, "socket 0's core, socket 1's memory");
    assert_eq!(chase(&mut sys, 3, LOCAL + 0x80_0000, 64), remote, "socket 1's core, socket 0's memory");
    // A different latency shows through one for one, each way.
    let slow = SocketLink { latency: 55_000, ..SocketLink::default() };
    let mut sys = ideal_system(2, 2, &slow);
    assert_eq!(chase(&mut sys, 3, LOCAL, 64), local + DIR + CTRL_HOLD + DATA_HOLD + 2 * 55_000);
    // Without remote lines the request goes straight to the home.
    let mut sys = ideal_system_with(2, 2, &SocketLink::default(), false);
    assert_eq!(chase(&mut sys, 3, LOCAL, 64), local + CTRL_HOLD + DATA_HOLD + 2 * LINK_LAT);
}

#[test]
fn each_lines_home_is_its_numa_socket_and_without_remote_lines_only_that_sockets_llc_caches_it() {
    let mut sys = ideal_system_with(2, 1, &SocketLink::default(), false);
    let t = sys.mem.access(&rd(0, REMOTE, 0));
    assert_eq!(sys.mem.slice_of(REMOTE >> 6), 1);
    assert_eq!(sys.mem.slice_of(LOCAL >> 6), 0);
    assert!(sys.mem.llc[1].find(REMOTE >> 6).is_some() && sys.mem.llc[0].find(REMOTE >> 6).is_none());
    // Core 0 holds it exclusively (E): socket 1's core reads it through the home on its own socket, which forwards
    // the request to core 0 across the link (the data comes back the same way): a 3-hop read.
    let done = sys.mem.access(&rd(1, REMOTE, t));
    assert_eq!(done - t, L1 + DIR + (CTRL_HOLD + LINK_LAT) + L1 + (DATA_HOLD + LINK_LAT));
    let out = link_stats(&sys);
    assert_eq!(out.get("system.link0_1.messages"), Some(2.0), "core 0's request, core 0's data to core 1");
    assert_eq!(out.get("system.link1_0.messages"), Some(2.0), "the line to core 0, the forward");
    // A line of socket 1's memory nobody holds: socket 1's core reads it from its own socket, nothing crosses.
    let t = done + 1_000;
    assert_eq!(sys.mem.access(&rd(1, REMOTE + 0x1000, t)) - t, L1 + LLC + MEM);
    let out = link_stats(&sys);
    assert_eq!((out.get("system.link0_1.messages"), out.get("system.link1_0.messages")), (Some(2.0), Some(2.0)));
}

#[test]
fn a_line_written_on_socket_0_and_read_on_socket_1_moves_through_the_directory_across_the_link() {
    // Home on socket 0: core 0 (socket 0) writes, core 2 (socket 1) reads. The read's request looks in socket 1's
    // slice (no copy), crosses 1 -> 0 to the home, the home forwards it to the owner (socket 0, no crossing), the
    // owner's data crosses 0 -> 1.
    let mut sys = ideal_system(2, 2, &SocketLink::default());
    let a = LOCAL + 0x40;
    let w = sys.mem.access(&MemReq::new(a, AccessKind::Write, 0, 0));
    sys.reset_stats();
    let t = w + 1_000;
    let done = sys.mem.access(&rd(2, a, t));
    let (gets, forwards) = (sys.mem.dir.stats.gets, sys.mem.dir.stats.forwards);
    assert_eq!((gets, forwards), (1, 1));
    assert_eq!(done - t, L1 + DIR + (CTRL_HOLD + LINK_LAT) + DIR + L1 + (DATA_HOLD + LINK_LAT));
    let out = link_stats(&sys);
    let g = |n: &str| out.get(n).unwrap();
    assert_eq!((g("system.link1_0.messages"), g("system.link1_0.flits")), (1.0, 1.0), "the request");
    assert_eq!((g("system.link0_1.messages"), g("system.link0_1.flits")), (1.0, 9.0), "the owner's data");
    assert_eq!(g("system.link0_1.payload_bytes"), 64.0);

    // Home on socket 1: core 0 (socket 0) writes it (request 0 -> 1, line 1 -> 0); core 2 (socket 1) reads: its
    // request stays on socket 1, the forward crosses 1 -> 0 to the owner, the data 0 -> 1.
    let b = REMOTE + 0x40;
    let w = sys.mem.access(&MemReq::new(b, AccessKind::Write, 0, t + 1_000_000));
    let out = link_stats(&sys);
    assert_eq!((out.get("system.link0_1.messages"), out.get("system.link1_0.messages")), (Some(2.0), Some(2.0)));
    sys.reset_stats();
    let t = w + 1_000;
    let done = sys.mem.access(&rd(2, b, t));
    assert_eq!(done - t, L1 + DIR + (CTRL_HOLD + LINK_LAT) + L1 + (DATA_HOLD + LINK_LAT));
    let out = link_stats(&sys);
    assert_eq!(out.get("system.link1_0.messages"), Some(1.0), "the forward");
    assert_eq!(out.get("system.link0_1.messages"), Some(1.0), "the data");
    assert_eq!(out.get("system.directory.forwards"), Some(1.0));
}

#[test]
fn a_stream_across_the_link_saturates_at_its_line_bandwidth() {
    // Socket 1's 8 cores read 4000 distinct lines of socket 0's memory as fast as their MSHRs allow: the data
    // direction 0 -> 1 moves one line per 9 flits, 64 B / 4.5 ns = 14.2 GB/s of payload.
    let link = SocketLink::default();
    let mut sys = ideal_system(2, 8, &link);
    let lines = 4000u64;
    let start = 1_000_000;
    let mut end = 0;
    for i in 0..lines {
        let core = 8 + (i % 8) as u16;
        end = end.max(sys.mem.access(&rd(core, LOCAL + i * 64, start)));
    }
    let bw = (lines * 64) as f64 / ((end - start) as f64 * 1e-12);
    let peak = 64.0 / (DATA_HOLD as f64 * 1e-12);
    assert!((bw / peak - 1.0).abs() < 0.01, "stream {:.3} GB/s vs the link's {:.3} GB/s", bw / 1e9, peak / 1e9);
    let out = link_stats(&sys);
    assert_eq!(out.get("system.link0_1.payload_bytes"), Some((lines * 64) as f64));
    // Two links per pair double it (the cores' MSHRs still cover the longer flight).
    let mut sys = ideal_system(2, 8, &SocketLink { links_per_pair: 2, ..link });
    let mut end = 0;
    for i in 0..lines {
        end = end.max(sys.mem.access(&rd(8 + (i % 8) as u16, LOCAL + i * 64, start)));
    }
    let bw2 = (lines * 64) as f64 / ((end - start) as f64 * 1e-12);
    assert!((bw2 / (2.0 * peak) - 1.0).abs() < 0.02, "two links: {:.3} GB/s", bw2 / 1e9);
}

/// A socket of `cores` cores (clusters of 2) on a `cols` x 1 mesh with the default Noc timing, one LLC slice and
/// the memory controller on router 0 (where the link port is).
fn mesh_socket(cores: u64, cols: u64) -> SocketParts {
    let s = Socket {
        cores,
        cores_per_cluster: 2,
        caches: CacheHierarchy { llc_slices: 1, ..hierarchy_params() },
        noc: Noc { mesh_x: cols, mesh_y: 1, ..Noc::default() },
        ..Socket::default()
    };
    SocketParts {
        cores: vec![core_params(); cores as usize],
        memory: SocketPort::other(FixedLatency::new(MEM)),
        net: kvsim_timing::noc::build_socket(&s, 0).unwrap(),
    }
}

#[test]
fn on_the_meshes_a_remote_chase_adds_the_trips_to_and_from_the_link_ports() {
    const HOP: Tick = 2 * CYCLE; // router + link
    const XBAR: Tick = CYCLE; // two agents on one router
    const DATA_TAIL: Tick = 2 * CYCLE; // 72 bytes in 32-byte flits: 3 flits
    let parts = vec![mesh_socket(4, 2), mesh_socket(4, 2)];
    let mut sys = TimingSystem::multi_socket(parts, &hierarchy_params(), &SocketLink::default()).unwrap();
    sys.set_numa(numa(2)).unwrap();
    // Core 3 of socket 0 (cluster 1, router 1) chases socket 0's memory: to the slice (router 0) one hop, the
    // slice to the controller and back in router 0's crossbar, the line back one hop.
    let local = L1 + HOP + LLC + XBAR + MEM + (XBAR + DATA_TAIL) + (HOP + DATA_TAIL);
    assert_eq!(chase(&mut sys, 3, LOCAL, 32), local);
    // Core 3 of socket 1 (global 7, also on router 1) chases socket 0's memory: one hop to its socket's slice
    // (router 0), whose lookup finds no copy, the crossbar to the port, the link, the crossbar of socket 0's router
    // 0 to the slice; the line back through the crossbar to the port, the link, one hop to the core.
    let to_home = HOP + DIR + XBAR + CTRL_HOLD + LINK_LAT + XBAR;
    let back = (XBAR + DATA_TAIL) + DATA_HOLD + LINK_LAT + (HOP + DATA_TAIL);
    let remote = L1 + to_home + LLC + XBAR + MEM + (XBAR + DATA_TAIL) + back;
    assert_eq!(chase(&mut sys, 7, LOCAL + 0x80_0000, 32), remote);
    assert_eq!(remote - local, DIR + 2 * LINK_LAT + CTRL_HOLD + DATA_HOLD + 3 * XBAR + DATA_TAIL);
    let out = link_stats(&sys);
    // Lines 4 KiB apart share an L1 set (8 ways): from the 9th load on, each evicts a clean line, whose PUTS goes
    // home (posted: it delays nothing). Socket 1's mesh carries each request to its slice and on to the port, each
    // line from it and the 24 PUTS to it; the link 1 -> 0 the requests and the PUTS, 0 -> 1 the lines.
    assert_eq!(out.get("system.socket1.noc.messages"), Some((32 * 3 + 24) as f64));
    assert_eq!(out.get("system.link1_0.messages"), Some((32 + 24) as f64));
    assert_eq!((out.get("system.link0_1.messages"), out.get("system.link0_1.flits")), (Some(32.0), Some(32.0 * 9.0)));
    assert!(
        out.get("system.socket0.core3.l1d.misses").is_some() && out.get("system.socket1.core3.l1d.misses").is_some()
    );
}

#[test]
fn a_link_to_a_socket_that_does_not_exist_is_refused() {
    let link = SocketLink { pairs: vec![[0, 2]], ..SocketLink::default() };
    let parts = vec![ideal_socket(1), ideal_socket(1)];
    let err = TimingSystem::multi_socket(parts, &hierarchy_params(), &link).err().expect("an error");
    assert!(err.contains("(0, 2)") && err.contains("sockets 0..1"), "{err}");
}

#[test]
fn four_sockets_are_fully_connected_and_a_message_crosses_only_its_own_pair_of_links() {
    let mut sys = ideal_system(4, 1, &SocketLink::default());
    let mut map = NumaMap::new(4);
    for k in 0..4u16 {
        map.place(k as u64 * REGION, REGION, k).unwrap();
    }
    sys.set_numa(map).unwrap();
    let local = L1 + LLC + MEM;
    let remote = local + DIR + CTRL_HOLD + DATA_HOLD + 2 * LINK_LAT;
    // Core 3 (socket 3) reads socket 2's memory, core 1 (socket 1) socket 0's, core 2 its own.
    let t = 1_000_000;
    assert_eq!(sys.mem.access(&rd(3, 2 * REGION + 0x40, t)) - t, remote);
    assert_eq!(sys.mem.access(&rd(1, 0x40, t)) - t, remote);
    assert_eq!(sys.mem.access(&rd(2, 2 * REGION + 0x1040, t)) - t, local);
    let out = link_stats(&sys);
    for a in 0..4 {
        for b in (0..4).filter(|&b| b != a) {
            let expected = matches!((a, b), (3, 2) | (2, 3) | (1, 0) | (0, 1)) as u64 as f64;
            assert_eq!(out.get(&format!("system.link{a}_{b}.messages")), Some(expected), "link {a} -> {b}");
        }
    }
}
