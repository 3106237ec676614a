//! Exact-tick tests of the on-chip network: hop latency, serialisation, contention on a link, XY routing, the
//! ring's wrap-around, placement from the socket's parameters, its errors, and the counters the power model reads.

use kvsim_params::{CacheHierarchy, Noc, NocTopology, Socket};
use kvsim_timing::network::{Network, CONTROL_BYTES, DATA_BYTES};
use kvsim_timing::noc::{build, Dir, Mesh, MeshShape};
use kvsim_timing::StatSink;

/// 400 ps cycles (2.5 GHz), a 2-cycle router, a 1-cycle link, a 1-cycle crossbar, 32-byte flits.
fn shape(cols: u16, rows: u16, ring: bool) -> MeshShape {
    MeshShape { cols, rows, ring, cycle: 400, router: 800, link: 400, crossbar: 400, flit_bytes: 32 }
}

/// One endpoint per router: endpoint r sits on router r.
fn mesh(cols: u16, rows: u16, ring: bool) -> Mesh {
    Mesh::new(shape(cols, rows, ring), (0..cols * rows).collect())
}

/// The target socket: 60 cores in 30 clusters of 2 on a 6 x 5 mesh, 30 LLC slices.
fn target_socket() -> Socket {
    Socket {
        cores: 60,
        cores_per_cluster: 2,
        caches: CacheHierarchy { llc_slices: 30, ..CacheHierarchy::default() },
        noc: Noc {
            mesh_x: 6,
            mesh_y: 5,
            mem_ctrl_routers: vec![[0, 0], [0, 2], [0, 4], [5, 0], [5, 2], [5, 4]],
            nic_routers: vec![[2, 0], [3, 0], [2, 4]],
            ..Noc::default()
        },
        ..Socket::default()
    }
}

#[test]
fn a_message_k_hops_away_costs_k_router_and_link_delays_plus_its_tail() {
    let mut m = mesh(6, 5, false);
    // (0,0) -> (3,2): 3 hops along x, 2 along y.
    let dst = 2 * 6 + 3;
    assert_eq!(m.send(0, dst, CONTROL_BYTES, 1_000), 1_000 + 5 * (800 + 400));
    // A data message (72 bytes = 3 flits of 32) arrives two cycles after its head.
    assert_eq!(m.send(29, 5, DATA_BYTES, 100_000), 100_000 + 4 * (800 + 400) + 2 * 400);
    // One hop.
    assert_eq!(m.send(7, 8, CONTROL_BYTES, 0), 800 + 400);
    // Unloaded latency books nothing and agrees with an uncontended send.
    assert_eq!(m.latency(0, dst, CONTROL_BYTES), 5 * 1200);
    assert_eq!(m.latency(29, 5, DATA_BYTES), 4 * 1200 + 800);
    assert_eq!(m.send(0, 0, DATA_BYTES, 77), 77, "a message to itself is free");
}

#[test]
fn two_agents_of_one_cluster_talk_through_its_crossbar() {
    let mut m = Mesh::new(shape(2, 1, false), vec![0, 0, 1]);
    assert_eq!(m.send(0, 1, CONTROL_BYTES, 0), 400);
    assert_eq!(m.send(1, 0, DATA_BYTES, 0), 400 + 2 * 400);
    assert_eq!(m.cluster_of(0), m.cluster_of(1));
    assert_ne!(m.cluster_of(0), m.cluster_of(2));
    // The crossbar is the router's switch: each flit passes it once, no link is used.
    let mut out = StatSink::new();
    m.stats("", 10_000, &mut out);
    assert_eq!(
        (out.get("local_messages"), out.get("router0.flits"), out.get("hops")),
        (Some(2.0), Some(4.0), Some(4.0))
    );
    assert_eq!((out.get("message_hops"), out.get("link0_1.flits")), (Some(0.0), Some(0.0)));
}

#[test]
fn two_messages_on_one_link_at_once_serialise() {
    let mut m = mesh(4, 1, false);
    let first = m.send(0, 1, DATA_BYTES, 0);
    let second = m.send(0, 1, DATA_BYTES, 0);
    assert_eq!(first, 1200 + 800);
    // The second waits for the first's 3 flits to leave the link: 3 cycles.
    assert_eq!(second, first + 3 * 400);
    // A message on another link at the same time does not wait.
    assert_eq!(m.send(2, 3, DATA_BYTES, 0), first);
    // Nor does one in the other direction of the same pair of routers.
    assert_eq!(m.send(1, 0, DATA_BYTES, 0), first);
}

#[test]
fn contention_carries_down_the_path() {
    // Two messages from router 0 to router 2 at once: the second's head is 3 cycles behind on the first link,
    // and the second link is free again by the time it gets there, so it stays 3 cycles behind.
    let mut m = mesh(3, 1, false);
    let a = m.send(0, 2, DATA_BYTES, 0);
    let b = m.send(0, 2, DATA_BYTES, 0);
    assert_eq!(a, 2 * 1200 + 800);
    assert_eq!(b, a + 3 * 400);
}

#[test]
fn a_link_moves_one_flit_per_cycle() {
    // Microbenchmark: 1000 data messages offered at once over one link take 3 cycles each: the link's bandwidth
    // is its width per cycle, 32 B x 2.5 GHz = 80 GB/s.
    let mut m = mesh(2, 1, false);
    let last = (0..1000).map(|_| m.send(0, 1, 96, 0)).max().unwrap();
    let bytes_per_s = 1000.0 * 96.0 / ((last - 1200) as f64 * 1e-12);
    assert_eq!(last, 1200 + 1000 * 3 * 400 - 3 * 400 + 2 * 400);
    assert!((bytes_per_s - 80e9).abs() / 80e9 < 0.002, "{bytes_per_s}");
}

#[test]
fn xy_routing_goes_along_the_row_first() {
    let m = mesh(6, 5, false);
    // (0,0) -> (2,2): east twice, then north twice.
    assert_eq!(m.route(0, 14), vec![0, 1, 2, 8, 14]);
    // (4,3) -> (1,0): west three times, then south three times.
    assert_eq!(m.route(22, 1), vec![22, 21, 20, 19, 13, 7, 1]);
    assert_eq!(m.next_dir(22, 1), Dir::West);
    assert_eq!(m.neighbour(5, Dir::East), None, "no wrap-around on a mesh");
}

#[test]
fn a_ring_takes_the_shorter_way_round() {
    let mut m = mesh(12, 1, true);
    assert_eq!(m.route(0, 11), vec![0, 11], "one hop over the wrap-around link");
    assert_eq!(m.route(10, 1), vec![10, 11, 0, 1]);
    assert_eq!(m.route(0, 6), vec![0, 1, 2, 3, 4, 5, 6], "east on a tie");
    assert_eq!(m.send(0, 11, CONTROL_BYTES, 0), 1200);
    assert_eq!(m.latency(3, 9, CONTROL_BYTES), 6 * 1200);
    let mut out = StatSink::new();
    m.stats("noc.", 1_000_000, &mut out);
    assert_eq!(out.get("noc.link0_11.flits"), Some(1.0));
    assert_eq!(out.get("noc.link11_0.flits"), Some(0.0));
}

#[test]
fn counters_count_flits_per_router_and_link_and_hops() {
    let mut m = mesh(3, 3, false);
    m.send(0, 8, DATA_BYTES, 0); // 0 -> 1 -> 2 -> 5 -> 8: 4 hops, 3 flits
    m.send(4, 4, DATA_BYTES, 0); // to itself: nothing
    let mut out = StatSink::new();
    m.stats("system.socket0.noc.", 10_000, &mut out);
    let get = |n: &str| out.get(&format!("system.socket0.noc.{n}")).unwrap();
    assert_eq!(get("messages"), 1.0);
    assert_eq!(get("message_hops"), 4.0);
    assert_eq!(get("avg_hops"), 4.0);
    assert_eq!(get("flits"), 3.0);
    assert_eq!(get("hops"), 5.0 * 3.0, "flit-hops: 3 flits through 5 routers");
    for link in ["link0_1", "link1_2", "link2_5", "link5_8"] {
        assert_eq!(get(&format!("{link}.flits")), 3.0, "{link}");
        assert_eq!(get(&format!("{link}.messages")), 1.0, "{link}");
        assert_eq!(get(&format!("{link}.utilization")), 1200.0 / 10_000.0, "{link}");
    }
    assert_eq!(get("link1_0.flits"), 0.0);
    for r in [0, 1, 2, 5, 8] {
        assert_eq!(get(&format!("router{r}.flits")), 3.0, "router {r}");
    }
    assert_eq!(get("router4.flits"), 0.0);
    // 3x3 mesh: 12 neighbouring pairs, 24 directed links, 4 of them busy for 1200 of 10000 ps.
    assert_eq!(get("link_utilization_max"), 0.12);
    assert!((get("link_utilization_avg") - 4.0 * 0.12 / 24.0).abs() < 1e-12);
    m.reset_stats();
    let mut out = StatSink::new();
    m.stats("n.", 10_000, &mut out);
    assert_eq!(out.get("n.flits"), Some(0.0));
    assert_eq!(out.get("n.link0_1.flits"), Some(0.0));
}

#[test]
fn the_target_socket_places_clusters_slices_controllers_and_nics_on_its_mesh() {
    let socket = target_socket();
    let (mut m, p) = build(&socket, 3).unwrap();
    assert_eq!((m.shape().cols, m.shape().rows), (6, 5));
    assert_eq!((p.core.len(), p.llc_slice.len(), p.mem_ctrl.len(), p.io.len()), (60, 30, 6, 3));
    // Cores 2k and 2k+1 share cluster k, which is router k, with LLC slice k.
    for k in 0..30u16 {
        assert_eq!(m.router_of(p.core[2 * k as usize]), k);
        assert_eq!(m.router_of(p.core[2 * k as usize + 1]), k);
        assert_eq!(m.router_of(p.llc_slice[k as usize]), k);
        assert_eq!(m.cluster_of(p.core[2 * k as usize]), m.cluster_of(p.llc_slice[k as usize]));
    }
    assert_eq!(p.mem_ctrl.iter().map(|&e| m.router_of(e)).collect::<Vec<_>>(), vec![0, 12, 24, 5, 17, 29]);
    assert_eq!(p.io.iter().map(|&e| m.router_of(e)).collect::<Vec<_>>(), vec![2, 3, 26]);
    // The configured clock and latencies: 2.5 GHz, 1-cycle router and link (the defaults).
    let (core0, slice29) = (p.core[0], p.llc_slice[29]);
    assert_eq!(m.send(core0, slice29, CONTROL_BYTES, 0), 9 * (400 + 400)); // (0,0) -> (5,4): 9 hops
    assert_eq!(m.send(p.core[1], p.llc_slice[0], CONTROL_BYTES, 0), 400); // the cluster crossbar
}

#[test]
fn a_ring_socket_and_an_automatic_mesh() {
    let ring = Socket {
        cores: 12,
        caches: CacheHierarchy { llc_slices: 12, ..CacheHierarchy::default() },
        noc: Noc { topology: NocTopology::Ring, ..Noc::default() },
        ..Socket::default()
    };
    let (m, p) = build(&ring, 0).unwrap();
    assert_eq!((m.shape().cols, m.shape().rows, m.shape().ring), (12, 1, true));
    assert_eq!(m.latency(p.core[0], p.llc_slice[11], CONTROL_BYTES), 800);
    // A slice per core (the Xeon's layout on a mesh of clusters of 2): core c's slice shares its router.
    let per_core = Socket { caches: CacheHierarchy { llc_slices: 60, ..CacheHierarchy::default() }, ..target_socket() };
    let (m, p) = build(&per_core, 3).unwrap();
    assert!((0..60).all(|c| m.router_of(p.core[c]) == m.router_of(p.llc_slice[c])));
    // Fewer slices than routers spread over the mesh: 4 slices on 30 routers sit on routers 0, 7, 15 and 22.
    let few = Socket { caches: CacheHierarchy { llc_slices: 4, ..CacheHierarchy::default() }, ..target_socket() };
    let (m, p) = build(&few, 3).unwrap();
    assert_eq!(p.llc_slice.iter().map(|&e| m.router_of(e)).collect::<Vec<_>>(), vec![0, 7, 15, 22]);
    // 7 clusters and no dimensions: a 3 x 3 grid.
    let auto = Socket { cores: 7, ..Socket::default() };
    let (m, p) = build(&auto, 1).unwrap();
    assert_eq!((m.shape().cols, m.shape().rows), (3, 3));
    assert_eq!(m.router_of(p.io[0]), 0);
}

#[test]
fn bad_topologies_are_refused_with_the_parameter_named() {
    let mut s = target_socket();
    s.cores = 61;
    assert!(build(&s, 3).unwrap_err().contains("cores_per_cluster"));
    let mut s = target_socket();
    s.noc.mesh_y = 4;
    assert!(build(&s, 3).unwrap_err().contains("cannot hold 30 clusters"));
    let mut s = target_socket();
    s.noc.mem_ctrl_routers[1] = [2, 2];
    assert!(build(&s, 3).unwrap_err().contains("mem_ctrl_routers[1] = (2, 2)"));
    let mut s = target_socket();
    s.noc.nic_routers[0] = [6, 0];
    assert!(build(&s, 3).unwrap_err().contains("nic_routers[0] = (6, 0)"));
    assert!(build(&target_socket(), 2).unwrap_err().contains("nic_routers places 3 NICs"));
}

#[test]
fn automatic_dimensions_match_the_python_rule() {
    // The same table as tests/test_topology.py checks for Noc.dimensions in models/noc.py.
    for (clusters, dims) in [(1, (1, 1)), (2, (2, 1)), (7, (3, 3)), (30, (6, 5)), (64, (8, 8))] {
        let s = Socket { cores: clusters, ..Socket::default() };
        assert_eq!(kvsim_timing::noc::dimensions(&s), dims, "{clusters} clusters");
        let row = Socket { noc: Noc { mesh_x: clusters, ..Noc::default() }, ..s };
        assert_eq!(kvsim_timing::noc::dimensions(&row), (clusters, 1));
    }
}

#[test]
fn the_target_mesh_adds_fourteen_cycles_to_an_average_llc_hit() {
    // Microbenchmark of the configured figure behind the target's assumed LLC slice latency (configs/
    // brps_target_socket.py): the unloaded round trip (request there, reply back, one flit each) from a core to an
    // LLC slice, averaged over every core and slice, is 2 x (router + link) per hop each way, or the crossbar both
    // ways in the core's own cluster. On the 6 x 5 mesh, XY hops average 35/18 along x and 8/5 along y.
    let (m, p) = build(&target_socket(), 3).unwrap();
    let cycle = m.shape().cycle as f64;
    let mut total = 0.0;
    for &core in &p.core {
        for &slice in &p.llc_slice {
            total += (m.latency(core, slice, CONTROL_BYTES) + m.latency(slice, core, CONTROL_BYTES)) as f64 / cycle;
        }
    }
    let mean = total / (p.core.len() * p.llc_slice.len()) as f64;
    // Mean hops over all pairs of routers (the same router counting 0), and 1 pair in 30 in one cluster.
    let hops = 35.0 / 18.0 + 8.0 / 5.0;
    let expected = 2.0 * 2.0 * hops + 2.0 / 30.0;
    println!("mean core-slice round trip on the target mesh: {mean:.3} cycles");
    assert!((mean - expected).abs() < 1e-9, "{mean} vs {expected}");
    assert!((14.0..14.5).contains(&mean));
}

/// Host speed of the network model (not a check of behaviour): run with
/// `cargo test -p kvsim-timing --release --test noc -- --ignored --nocapture`.
#[test]
#[ignore]
fn host_time_per_message_on_the_target_mesh() {
    let (mut m, p) = build(&target_socket(), 3).unwrap();
    let mut rng = kvsim_timing::synth::Rng(1);
    let n = 2_000_000u64;
    let start = std::time::Instant::now();
    let mut t = 0;
    let mut last = 0;
    for _ in 0..n {
        let core = p.core[rng.below(60) as usize];
        let slice = p.llc_slice[rng.below(30) as usize];
        t += 500; // one message every 500 ps
        last = last.max(m.send(core, slice, DATA_BYTES, t));
    }
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    println!("{ns:.1} ns of host time per message (random core -> slice, 3 flits, 6 x 5 mesh); last arrival {last}");
}
