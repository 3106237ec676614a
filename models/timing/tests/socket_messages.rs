//! The messages between sockets (`mem/socket_messages.rs`): each message of the walk that crosses sockets is posted
//! to its sending socket's outbox, named by kind, with when it left and arrived. Exact logs on ideal on-chip
//! networks (every on-chip message free; the link is `models/link.py`'s QPI-like default: a control message 1 flit
//! of 0.5 ns, a line 9, 20 ns one way), then, under random traffic on two and four sockets, that the outboxes hold
//! exactly what crossed the links (per direction, the links' message counts) and that nothing arrives sooner than
//! the link's latency after it left (what the partitioned design's window relies on).

mod common;

use common::{random_request, CTRL_HOLD, DATA_HOLD, LINK_LAT, REGION};
use kvsim_params::{Cache, CacheHierarchy};
use kvsim_timing::mem::socket_messages::{MsgKind, SocketMessage, KINDS};
use kvsim_timing::mem::MemSystem;
use kvsim_timing::mem::Mode;
use kvsim_timing::synth::{cache_params, hierarchy_params};
use kvsim_timing::system::TimingSystem;
use kvsim_timing::{AccessKind, FixedLatency, MemPort, MemReq, ReqClass, StatSink, Tick};

/// `common::system` with the message log kept.
fn system(sockets: u16, cores: u16, per_cluster: u16, h: &CacheHierarchy, hop: Tick) -> TimingSystem {
    let mut sys = common::system(sockets, cores, per_cluster, h, hop);
    sys.mem.keep_socket_message_log();
    sys
}

fn link_messages(sys: &TimingSystem, a: usize, b: usize) -> u64 {
    let mut out = StatSink::new();
    sys.stats("", &mut out);
    out.get(&format!("system.link{a}_{b}.messages")).expect("a link statistic") as u64
}

fn rd(core: u16, addr: u64, t: Tick) -> MemReq {
    MemReq::new(addr, AccessKind::Read, core, t)
}

/// The log since `from`: (kind, from socket, to socket) of each message.
fn kinds(sys: &TimingSystem, from: usize) -> Vec<(MsgKind, u16, u16)> {
    sys.mem.socket_messages().unwrap().log()[from..].iter().map(|m| (m.kind, m.from, m.to)).collect()
}

#[test]
fn a_remote_read_a_write_that_invalidates_another_sockets_copies_and_a_dma_post_the_messages_they_cross_with() {
    use MsgKind::*;
    let mut h = hierarchy_params();
    h.directory.remote_lines = true;
    let mut sys = system(2, 2, 1, &h, 0);
    assert!(system(2, 2, 1, &h, 0).mem.socket_messages().is_some_and(|o| o.log().is_empty()));
    // Socket 1's line; cores 0 and 1 are socket 0's, 2 and 3 socket 1's.
    let a = REGION + 0x40;
    // Core 0's read: its socket's slice has no copy, so the request crosses to the home; the line crosses back.
    let t = sys.mem.access(&rd(0, a, 1_000_000)) + 1_000;
    assert_eq!(kinds(&sys, 0), [(Request, 0, 1), (Data, 1, 0)]);
    let log: Vec<SocketMessage> = sys.mem.socket_messages().unwrap().log().to_vec();
    assert_eq!((log[0].bytes, log[0].arrives - log[0].sent), (8, CTRL_HOLD + LINK_LAT));
    assert_eq!((log[1].bytes, log[1].arrives - log[1].sent), (72, DATA_HOLD + LINK_LAT));
    assert!(log[1].sent >= log[0].arrives, "the home answers after the request arrived");
    // Core 1's read is answered on socket 0 (core 0 owns the line): nothing crosses.
    let t = sys.mem.access(&rd(1, a, t)) + 1_000;
    assert_eq!(kinds(&sys, 2), []);
    // Core 2 (the home's socket) writes: the home invalidates cores 0 and 1 (each acknowledges to core 2), then
    // socket 0's LLC copy (acknowledged to core 2 too); the data is the home LLC's, on socket 1.
    let t = sys.mem.access(&MemReq::new(a, AccessKind::Write, 2, t)) + 1_000;
    assert_eq!(
        kinds(&sys, 2),
        [(Invalidate, 1, 0), (Ack, 0, 1), (Invalidate, 1, 0), (Ack, 0, 1), (Invalidate, 1, 0), (Ack, 0, 1)]
    );
    // Socket 0's NIC writes a line homed on socket 1: the DMA carries its line to the home (posted: no answer).
    let b = REGION + 0x2000;
    let dma = MemReq { class: ReqClass::Io, ..MemReq::new(b, AccessKind::Write, 0, t) };
    sys.mem.access(&dma);
    assert_eq!(kinds(&sys, 8), [(Dma, 0, 1)]);
    assert_eq!(sys.mem.socket_messages().unwrap().log()[8].bytes, 72);
    let o = sys.mem.socket_messages().unwrap();
    assert_eq!((o.count(1, 0, Invalidate), o.count(0, 1, Ack), o.total(0, 1), o.total(1, 0)), (3, 3, 5, 4));
    assert_eq!((o.total(0, 1), o.total(1, 0)), (link_messages(&sys, 0, 1), link_messages(&sys, 1, 0)));
    // A stats reset starts the outboxes afresh, as it does the links.
    sys.reset_stats();
    let o = sys.mem.socket_messages().unwrap();
    assert_eq!((o.total(0, 1), o.total(1, 0), o.log().len()), (0, 0, 0));
}

#[test]
fn one_socket_has_no_outboxes() {
    let mem = MemSystem::new(&hierarchy_params(), &[2_500_000_000], FixedLatency::new(60_000));
    assert!(mem.socket_messages().is_none());
}

/// Random traffic from every socket's cores and I/O agents to lines homed on every socket through small caches (so
/// lines are forwarded, upgraded, invalidated, written back, put and back-invalidated, remote copies dropped), with
/// warming mixed in. Returns the outboxes' per-kind totals over every direction.
fn random_traffic(sockets: u16, per_cluster: u16, remote_lines: bool, seed: u64) -> [u64; KINDS.len()] {
    let mut h = hierarchy_params();
    h.l1d = cache_params(64 * 4, 2, 4, 4);
    h.l1i = cache_params(64 * 4, 2, 4, 4);
    h.l2_enabled = true;
    h.l2 = cache_params(64 * 8, 2, 8, 4);
    h.llc = Cache { inclusive: true, ..cache_params(64 * 16, 4, 20, 8) };
    h.llc_slices = 2;
    h.directory.remote_lines = remote_lines;
    let cores = 4u16;
    let mut sys = system(sockets, cores, per_cluster, &h, 700);
    let mut x = seed | 1;
    let mut t = 0;
    for i in 0..8_000u64 {
        let req = random_request(&mut x, &mut t, sockets, cores, |core| core % sockets);
        if i % 4000 < 400 {
            sys.mem.access_mode(&req, Mode::Warm);
        } else {
            sys.mem.access(&req);
        }
    }
    let o = sys.mem.socket_messages().unwrap();
    let n = sockets as usize;
    for (a, b) in (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).filter(|(a, b)| a != b) {
        assert_eq!(o.total(a, b), link_messages(&sys, a, b), "{sockets} sockets: {a} -> {b}");
    }
    let mut per_kind = [0; KINDS.len()];
    for m in o.log() {
        per_kind[m.kind as usize] += 1;
        let hold = if m.bytes > 8 { DATA_HOLD } else { CTRL_HOLD };
        assert!(m.arrives >= m.sent + hold + LINK_LAT, "{m:?} arrives sooner than the link allows");
        assert_ne!(m.from, m.to);
    }
    let counted: u64 = (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).map(|(a, b)| o.total(a, b)).sum();
    assert_eq!(counted, o.log().len() as u64, "the log holds every counted message");
    per_kind
}

#[test]
fn the_outboxes_hold_what_crossed_the_links_on_two_and_four_sockets() {
    use MsgKind::*;
    let mut seen = [0; KINDS.len()];
    for (sockets, per_cluster, remote_lines, seed) in
        [(2, 1, true, 7), (2, 2, false, 11), (4, 1, true, 13), (4, 4, true, 17), (4, 2, false, 19)]
    {
        let per_kind = random_traffic(sockets, per_cluster, remote_lines, seed);
        seen.iter_mut().zip(per_kind).for_each(|(s, k)| *s += k);
    }
    // Every kind of cross-socket step happened somewhere.
    for kind in [Request, Forward, Data, Grant, Invalidate, Ack, WriteBack, Put, CopyDropped, Dma] {
        assert!(seen[kind as usize] > 0, "no {} crossed: {seen:?}", kind.name());
    }
}
