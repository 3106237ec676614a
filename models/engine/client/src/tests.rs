//! The response checker against hand-made responses: right and wrong values, misses with and without an
//! eviction to explain them.

use super::wire::push_headers;
use super::*;

/// The checker tests' client: one core on one port, four requests a frame, MICA; each test sets what it varies.
pub(super) fn one_core_config() -> ClientConfig {
    ClientConfig {
        items: 16,
        key_len: 8,
        val_len: 8,
        zipf_theta: None,
        get_ratio: 0.5,
        requests_per_packet: 4,
        requests: 10,
        crew: false,
        seed: 1,
        measure_seed: 0,
        window: 4,
        offered_fps: 0.0,
        ports: 1,
        bulk_load: true,
        fuzz_frames: 0,
        warmup_requests: 0,
        warmup_after_load: false,
        stall_rounds: 10,
        cores: 1,
        log_size: 0,
        buckets: 1024,
        base_port: 0x4000,
        core_queue: vec![0],
        queue_port: vec![0],
        mcd: None,
        delete_ratio: 0.0,
        tcp: None,
        schedule_ahead: false,
    }
}

fn client(log_size: u64) -> Client {
    Client::new(ClientConfig { log_size, ..one_core_config() })
}

/// Put `reqs` outstanding as frame `opaque` to core 0.
pub(super) fn outstanding(c: &mut Client, opaque: u32, reqs: Vec<Req>) {
    c.outstanding.insert(opaque, (0, Pkt { reqs, frame_len: 0, resp_len: 0, load: false, sent_ps: 0 }));
    c.out_per_core[0] += 1;
}

/// A response frame: (op, result, keyhash, value) per entry.
fn response(opaque: u32, entries: &[(u8, u8, u64, Vec<u8>)]) -> Vec<u8> {
    let mut payload = Vec::new();
    for (op, res, kh, v) in entries {
        payload.extend_from_slice(&[*op, *res, 0, 0]);
        payload.extend_from_slice(&((8u32 << 24) | v.len() as u32).to_le_bytes());
        payload.extend_from_slice(&kh.to_le_bytes());
        payload.extend_from_slice(&[0; 8]);
        let mut v = v.clone();
        v.resize(pad8(v.len()), 0);
        payload.extend_from_slice(&v);
    }
    let mut f = Vec::new();
    push_headers(&mut f, CLIENT_UDP_PORT, entries.len() as u8, opaque, payload.len());
    f[34..36].copy_from_slice(&0x4000u16.to_be_bytes());
    f.extend_from_slice(&payload);
    f
}

fn with_get(log_size: u64) -> (Client, Req) {
    get_outstanding(client(log_size))
}

/// Item 3 stored at version 1 and acknowledged in `c`; a GET of it outstanding as frame 7.
pub(super) fn get_outstanding(mut c: Client) -> (Client, Req) {
    let (_, put) = c.put_req(3);
    c.store.ack(3, put.ver, put.mark, false);
    let (_, get) = c.get_req(3);
    outstanding(&mut c, 7, vec![get]);
    (c, get)
}

#[test]
fn right_values_pass_and_wrong_ones_fail() {
    let (mut c, get) = with_get(1 << 20);
    c.check_response(0, &response(7, &[(OP_GET, RES_OK, get.keyhash, value_of(3, 1, 8))]), 0).unwrap();
    assert_eq!((c.stats.hits, c.stats.gets, c.stats.requests), (1, 1, 1));

    let (mut c, get) = with_get(1 << 20);
    let err = c.check_response(0, &response(7, &[(OP_GET, RES_OK, get.keyhash, value_of(3, 2, 8))]), 0).unwrap_err();
    assert!(err.contains("wrong value"), "{err}");

    let (mut c, get) = with_get(1 << 20);
    let err =
        c.check_response(0, &response(7, &[(OP_GET, RES_OK, get.keyhash ^ 1, value_of(3, 1, 8))]), 0).unwrap_err();
    assert!(err.contains("echo mismatch"), "{err}");

    let (mut c, get) = with_get(1 << 20);
    let err = c.check_response(0, &response(8, &[(OP_GET, RES_OK, get.keyhash, value_of(3, 1, 8))]), 0).unwrap_err();
    assert!(err.contains("never sent"), "{err}");

    let (mut c, get) = with_get(1 << 20);
    let err = c.check_response(1, &response(7, &[(OP_GET, RES_OK, get.keyhash, value_of(3, 1, 8))]), 0).unwrap_err();
    assert!(err.contains("queue 1"), "{err}");

    let (mut c, get) = with_get(1 << 20);
    let err = c.check_response(0, &response(7, &[(OP_GET, 5, get.keyhash, vec![])]), 0).unwrap_err();
    assert!(err.contains("result 5"), "{err}");
}

#[test]
fn misses_need_an_eviction_to_explain_them() {
    // Stored and acknowledged, the log holds everything: a miss fails the run.
    let (mut c, get) = with_get(1 << 20);
    let err = c.check_response(0, &response(7, &[(OP_GET, RES_NOT_FOUND, get.keyhash, vec![])]), 0).unwrap_err();
    assert!(err.contains("no eviction explains"), "{err}");
    // A log smaller than the appends since its PUT: the miss is accepted; not before those appends.
    let (mut c, get) = with_get(200);
    let err = c.check_response(0, &response(7, &[(OP_GET, RES_NOT_FOUND, get.keyhash, vec![])]), 0).unwrap_err();
    assert!(err.contains("no eviction explains"), "{err}");
    let (mut c, get) = with_get(200);
    for item in 4..8 {
        let (_, r) = c.put_req(item);
        c.store.ack(item, r.ver, r.mark, false);
    }
    c.check_response(0, &response(7, &[(OP_GET, RES_NOT_FOUND, get.keyhash, vec![])]), 0).unwrap();
    assert_eq!(c.stats.misses, 1);
    // Never stored: accepted.
    let mut c = client(1 << 20);
    let (_, get) = c.get_req(9);
    outstanding(&mut c, 3, vec![get]);
    c.check_response(0, &response(3, &[(OP_GET, RES_NOT_FOUND, get.keyhash, vec![])]), 0).unwrap();
}

#[test]
fn a_log_window_is_the_log_the_checker_ages_items_against() {
    // The server's log_window_kib= (the part of its log a partition keeps) bounds what eviction explains, in place
    // of the log's own size, whichever argument comes first; without it the log's size does.
    let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let p = kvsim_params::Client { enabled: true, ..Default::default() };
    let resolve = |a: &[&str]| ClientConfig::resolve(&p, &argv(a), 1, 9000, vec![0], vec![0]).unwrap().log_size;
    assert_eq!(resolve(&["mode=erew", "log_mib=64"]), 64 << 20);
    assert_eq!(resolve(&["log_mib=64", "log_window_kib=43690"]), 43690 << 10);
    assert_eq!(resolve(&["log_window_kib=43690", "log_mib=64"]), 43690 << 10);
}

#[test]
fn an_index_of_fewer_buckets_is_the_one_the_checker_counts_keys_in() {
    // buckets_used= (fewer buckets than the power of two allocated) is the count the checker indexes, as the server
    // does (scaled hash bits, not the mask); out of its range (more than half, at most all) it is refused.
    let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let p = kvsim_params::Client { enabled: true, ..Default::default() };
    let resolve = |a: &[&str]| ClientConfig::resolve(&p, &argv(a), 1, 9000, vec![0], vec![0]).map(|c| c.buckets);
    assert_eq!(resolve(&["buckets=4"]), Ok(4));
    assert_eq!(resolve(&["buckets=4", "buckets_used=3"]), Ok(3));
    assert_eq!(resolve(&["buckets_used=3", "buckets=4"]), Ok(3));
    assert_eq!(resolve(&["buckets=4", "buckets_used=4"]), Ok(4));
    for bad in ["buckets_used=2", "buckets_used=5"] {
        let err = resolve(&["buckets=4", bad]).unwrap_err();
        assert!(err.contains("buckets_used"), "{err}");
    }
    // 48 items over 3 buckets: each bucket's count is that of the keys whose 32 hash bits above the tag, times 3,
    // shifted down by 32, name it.
    let mut c = Client::new(ClientConfig { buckets: 3, log_size: 1 << 20, ..one_core_config() });
    let mut want = [0u8; 3];
    for item in 0..48 {
        let kh = keyhash(&key_of(item, 8));
        want[((((kh >> 16) & 0xffff_ffff) * 3) >> 32) as usize] += 1;
        c.put_req(item);
    }
    assert_eq!([0, 1, 2].map(|b| c.store.bucket_keys(0, b)), want);
    assert_eq!(want.iter().map(|&n| n as u32).sum::<u32>(), 48);
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
        failure_persistence: None,
        ..Default::default()
    })]

    /// Response parsing never panics: random frames, and real responses with random bytes changed and random
    /// truncation, are accepted or rejected with a message.
    #[test]
    fn fuzz_response_parsing(noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
                             flips in proptest::collection::vec((0usize..400, proptest::prelude::any::<u8>()), 0..8),
                             cut in 0usize..400, random in proptest::prelude::any::<bool>()) {
        let (mut c, get) = with_get(1 << 20);
        let mut frame = if random {
            noise
        } else {
            response(7, &[(OP_GET, RES_OK, get.keyhash, value_of(3, 1, 8))])
        };
        for (at, byte) in flips {
            if let Some(b) = frame.get_mut(at) {
                *b = byte;
            }
        }
        frame.truncate(cut.max(1));
        let _ = c.check_response(0, &frame, 0);
    }
}

#[test]
fn an_in_place_put_leaves_the_item_as_old_as_its_append() {
    // Item 3 appended by its first PUT; other items' PUTs fill the log; item 3 is PUT again and acknowledged.
    // The server overwrote it in place (same size), so it sits where the first PUT put it and FIFO evicts it
    // with the log's wrap: a later GET miss is explained (it was reported as unexplained when the checker
    // aged the item from its latest PUT).
    let mut c = client(200);
    let ack = |c: &mut Client, opaque: u32, item: u64| {
        let (_, put) = c.put_req(item);
        outstanding(c, opaque, vec![put]);
        c.check_response(0, &response(opaque, &[(OP_PUT, RES_OK, put.keyhash, vec![])]), 0).unwrap();
    };
    ack(&mut c, 1, 3);
    for item in 4..8 {
        ack(&mut c, 10 + item as u32, item);
    }
    ack(&mut c, 2, 3);
    let (_, get) = c.get_req(3);
    outstanding(&mut c, 7, vec![get]);
    c.check_response(0, &response(7, &[(OP_GET, RES_NOT_FOUND, get.keyhash, vec![])]), 0).unwrap();
    assert_eq!(c.stats.misses, 1);
    // Seen gone, the next acknowledged PUT appends it anew: a miss right after that is not explained.
    ack(&mut c, 3, 3);
    let (_, get) = c.get_req(3);
    outstanding(&mut c, 8, vec![get]);
    let err = c.check_response(0, &response(8, &[(OP_GET, RES_NOT_FOUND, get.keyhash, vec![])]), 0).unwrap_err();
    assert!(err.contains("no eviction explains"), "{err}");
}

#[test]
fn a_bulk_loaded_item_missing_needs_an_eviction_too() {
    // The load's marks are not stored but recomputed: the check is as strict as with stored marks.
    for (log, fails) in [(1 << 20, true), (200, false)] {
        let mut c = client(log);
        for item in 0..16 {
            c.store.before_load_put(item, &c.part_log);
            let (_, put) = c.put_req(item);
            c.store.ack(item, put.ver, put.mark, true);
        }
        // One partition: item i's PUT leaves the bound at (i + 1) PUT sizes.
        assert_eq!((c.load_mark(15, 0), c.load_mark(0, 0)), (c.part_log[0], c.part_log[0] / 16));
        let (_, get) = c.get_req(0);
        assert_eq!((get.ver, get.mark), (1, LOAD_MARK));
        outstanding(&mut c, 7, vec![get]);
        let got = c.check_response(0, &response(7, &[(OP_GET, RES_NOT_FOUND, get.keyhash, vec![])]), 0);
        assert_eq!(got.is_err(), fails, "log {log}: {got:?}");
    }
}

#[test]
fn a_corrupted_value_is_caught_with_the_compact_model() {
    let (mut c, get) = with_get(1 << 20);
    let mut v = value_of(3, 1, 8);
    v[5] ^= 0x10;
    let err = c.check_response(0, &response(7, &[(OP_GET, RES_OK, get.keyhash, v)]), 0).unwrap_err();
    assert!(err.contains("wrong value"), "{err}");
}

#[test]
fn a_put_in_flight_may_or_may_not_be_seen() {
    let (mut c, get) = with_get(1 << 20);
    let (_, put2) = c.put_req(3); // version 2 sent, not acknowledged
    assert_eq!(put2.ver, 2);
    c.check_response(0, &response(7, &[(OP_GET, RES_OK, get.keyhash, value_of(3, 2, 8))]), 0).unwrap();
    let (mut c, get) = with_get(1 << 20);
    let _ = c.put_req(3);
    c.check_response(0, &response(7, &[(OP_GET, RES_OK, get.keyhash, value_of(3, 1, 8))]), 0).unwrap();
    let (mut c, get) = with_get(1 << 20);
    let _ = c.put_req(3);
    let err = c.check_response(0, &response(7, &[(OP_GET, RES_OK, get.keyhash, value_of(3, 3, 8))]), 0).unwrap_err();
    assert!(err.contains("none of versions 1..=2"), "{err}");
}

/// A wire that takes every frame and never answers (a guest that drops them where no NIC counts them); it keeps
/// the times frames were put on it.
struct Swallow(usize, Vec<u64>);

impl NicPort for Swallow {
    fn wire_send(&mut self, _port: usize, _frame: Vec<u8>, t: u64) -> u64 {
        self.0 += 1;
        self.1.push(t);
        t
    }
    fn receive(&mut self, _port: usize, _frame: Vec<u8>) -> Option<usize> {
        self.0 += 1;
        Some(0)
    }
    fn rx_posted(&self, _q: usize) -> bool {
        true
    }
    fn queue_drained(&self, _q: usize) -> bool {
        true
    }
    fn fifo_frames(&self) -> usize {
        0
    }
    fn frames_in_flight(&self) -> usize {
        0
    }
}

#[test]
fn open_loop_frames_unanswered_when_the_server_falls_idle_are_lost_and_the_run_ends() {
    // 1 frame per us, 4 requests of one per frame.
    let cfg =
        ClientConfig { offered_fps: 1e6, requests_per_packet: 1, requests: 4, get_ratio: 1.0, ..one_core_config() };
    let mut c = Client::new(cfg);
    c.phase = Phase::Measure;
    let mut wire = Swallow(0, Vec::new());
    let step = |c: &mut Client, w: &mut Swallow, us: u64| c.step(w, Vec::new(), Vec::new(), 0, Some(us * 1_000_000));
    assert_eq!(step(&mut c, &mut wire, 0).unwrap(), ClientEvent::Nothing);
    assert_eq!(wire.0, 1);
    assert!(!c.open_loop_all_sent());
    assert_eq!(c.give_up_when_server_idle(), ClientEvent::Nothing, "frames still to send: the server may yet answer");
    assert_eq!((c.stats.lost_packets, c.outstanding.len()), (0, 1));
    // The last frames leave (at 1-3 us) in the step at 20 us; however long the wait, nothing is lost by time alone.
    assert_eq!(step(&mut c, &mut wire, 20).unwrap(), ClientEvent::Nothing);
    assert_eq!(step(&mut c, &mut wire, 1_000_000).unwrap(), ClientEvent::Nothing);
    assert_eq!((wire.0, c.outstanding.len(), c.stats.lost_packets), (4, 4, 0));
    assert!(c.open_loop_all_sent());
    assert_eq!(c.give_up_when_server_idle(), ClientEvent::Done);
    assert_eq!((c.stats.lost_packets, c.stats.lost_requests, c.outstanding.len()), (4, 4, 0));
    assert_eq!(c.give_up_when_server_idle(), ClientEvent::Nothing, "done once");
}

#[test]
fn a_closed_loop_run_is_never_given_up_and_a_waiting_open_loop_one_fails_on_its_stall_limit() {
    let cfg =
        ClientConfig { offered_fps: 1e6, requests_per_packet: 1, requests: 4, get_ratio: 1.0, ..one_core_config() };
    let closed = ClientConfig { offered_fps: 0.0, ..cfg.clone() };
    let mut c = Client::new(closed);
    c.phase = Phase::Measure;
    let mut wire = Swallow(0, Vec::new());
    c.step(&mut wire, Vec::new(), Vec::new(), 0, Some(0)).unwrap();
    assert!(!c.open_loop_all_sent());
    assert_eq!(c.give_up_when_server_idle(), ClientEvent::Nothing);
    // SE mode (the NIC reports its drops) never gives up: a run that waits fails after stall_rounds.
    let mut c = Client::new(cfg);
    c.phase = Phase::Measure;
    let mut wire = Swallow(0, Vec::new());
    let step = |c: &mut Client, w: &mut Swallow, us: u64| c.step(w, Vec::new(), Vec::new(), 0, Some(us * 1_000_000));
    step(&mut c, &mut wire, 0).unwrap();
    step(&mut c, &mut wire, 20).unwrap();
    let mut last = Ok(ClientEvent::Nothing);
    for us in 21..60 {
        last = step(&mut c, &mut wire, us);
        if last.is_err() {
            break;
        }
    }
    assert!(last.unwrap_err().contains("no response for"), "stall_rounds fails a run that waits");
    assert_eq!(c.stats.lost_packets, 0);
}

#[test]
fn scheduled_ahead_every_open_loop_frame_goes_on_the_wire_at_its_own_time_in_the_first_step() {
    let cfg = ClientConfig {
        offered_fps: 1e6,
        requests_per_packet: 1,
        requests: 4,
        get_ratio: 1.0,
        schedule_ahead: true,
        ..one_core_config()
    };
    let mut c = Client::new(cfg.clone());
    c.phase = Phase::Measure;
    let mut wire = Swallow(0, Vec::new());
    c.step(&mut wire, Vec::new(), Vec::new(), 0, Some(7_000)).unwrap();
    assert_eq!(wire.1, [7_000, 1_007_000, 2_007_000, 3_007_000]);
    // Without it, only the frame due by the step leaves.
    let mut c = Client::new(ClientConfig { schedule_ahead: false, ..cfg });
    c.phase = Phase::Measure;
    let mut wire = Swallow(0, Vec::new());
    c.step(&mut wire, Vec::new(), Vec::new(), 0, Some(7_000)).unwrap();
    assert_eq!(wire.1, [7_000]);
}
