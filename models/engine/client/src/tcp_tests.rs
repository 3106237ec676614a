//! The client's TCP against hand-made server segments: the handshake, requests cut into segments within the MSS
//! and the server's window, responses reassembled across segments, and every kind of corruption failing the run
//! (a bad checksum, a wrong sequence number, an ACK of unsent data, a reset, a wrong response, a wrong port).

use super::memcached::{flags_of, McdServer};
use super::tcp::{build_segment, parse_segment, TcpState, Wire, ACK, CLIENT_TCP_PORT_BASE, PSH, RST, SYN};
use super::*;

const BASE: u16 = 0x4000;
/// The server's initial sequence number in these tests (close to the wrap).
const SERVER_ISS: u32 = 0xffff_fff0;

type Sent = Vec<(usize, Vec<u8>)>;

/// One core, one connection of MSS `mss`; 8 items of 8-byte keys and `val_len`-byte values.
fn client(mss: usize, val_len: usize) -> Client {
    Client::new(ClientConfig {
        items: 8,
        val_len,
        buckets: 1,
        base_port: BASE,
        mcd: Some(McdServer { capacity: 100 }),
        tcp: Some(TcpConfig { connections: 1, mss, segments: 4 }),
        ..super::tests::one_core_config()
    })
}

/// A segment from the server to the client's connection 0 (the addresses swapped: both checksums stay right,
/// since they add the two addresses).
fn from_server(seq: u32, ack: u32, flags: u8, window: u16, mss: Option<u16>, payload: &[u8]) -> Vec<u8> {
    let mut f = build_segment(BASE, CLIENT_TCP_PORT_BASE, 1, seq, ack, flags, window, mss, payload);
    let (a, b) = (f[26..30].to_vec(), f[30..34].to_vec());
    f[26..30].copy_from_slice(&b);
    f[30..34].copy_from_slice(&a);
    f
}

/// Recompute a segment's TCP checksum after an edit (pseudo-header: the addresses, protocol 6, TCP length).
fn fix_tcp_checksum(f: &mut [u8]) {
    f[50..52].copy_from_slice(&[0, 0]);
    let mut sum: u32 = 6 + (f.len() - 34) as u32;
    for ch in f[26..].chunks(2) {
        sum += u16::from_be_bytes([ch[0], *ch.get(1).unwrap_or(&0)]) as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    f[50..52].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

/// A client with its connection established (server window `window`, MSS 1460), the SYN and ACK taken off.
fn established(mss: usize, val_len: usize, window: u16) -> Client {
    let mut c = client(mss, val_len);
    let mut sent = Sent::new();
    c.tcp_open(&mut sent);
    let syn = parse_segment(&sent[0].1).unwrap();
    assert_eq!((syn.flags, syn.dport, syn.mss), (SYN, BASE, Some(mss as u16)));
    let synack = from_server(SERVER_ISS, syn.seq.wrapping_add(1), SYN | ACK, window, Some(1460), &[]);
    c.tcp_receive(&mut sent, 0, &synack, 0).unwrap();
    assert!(c.tcp_all_established());
    let ack = parse_segment(&sent[1].1).unwrap();
    assert_eq!((ack.flags, ack.seq, ack.ack), (ACK, syn.seq.wrapping_add(1), SERVER_ISS.wrapping_add(1)));
    c
}

/// Response messages (opcode, status, extras, value) with `opaque`, as the server writes them to its stream.
fn messages(opaque: u32, msgs: &[(u8, u16, Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (op, status, extras, value) in msgs {
        out.extend_from_slice(&[0x81, *op, 0, 0, extras.len() as u8, 0]);
        out.extend_from_slice(&status.to_be_bytes());
        out.extend_from_slice(&((extras.len() + value.len()) as u32).to_be_bytes());
        out.extend_from_slice(&opaque.to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 9]);
        out.extend_from_slice(extras);
        out.extend_from_slice(value);
    }
    out
}

/// Item 3 stored at version 1 and acknowledged; frame `opaque` with a GET of it sent on the connection. Returns
/// the request bytes' segments.
fn send_get(c: &mut Client, opaque: u32) -> Sent {
    let (_, put) = c.put_req(3);
    c.store.ack(3, put.ver, put.mark, false);
    let (_, get) = c.get_req(3);
    let mut sent = Sent::new();
    let pkt = Pkt { reqs: vec![get], frame_len: 0, resp_len: 0, load: false, sent_ps: 0 };
    c.send_tcp(&mut sent, 0, opaque, pkt);
    sent
}

fn hit(item: u64, ver: u32, val_len: usize) -> (u8, u16, Vec<u8>, Vec<u8>) {
    (0x00, 0, flags_of(item, ver).to_be_bytes().to_vec(), value_of(item, ver, val_len))
}

#[test]
fn requests_leave_in_segments_within_the_mss_and_the_servers_window() {
    // A SET of a 300-byte value is 24 + 8 + 8 + 300 = 340 bytes: 100, 100 and then only 50 fill a 250-byte window.
    let mut c = established(100, 300, 250);
    let (_, put) = c.put_req(5);
    let mut sent = Sent::new();
    c.send_tcp(&mut sent, 0, 11, Pkt { reqs: vec![put], frame_len: 0, resp_len: 0, load: false, sent_ps: 0 });
    let segs: Vec<_> = sent.iter().map(|(_, f)| parse_segment(f).unwrap()).collect();
    assert_eq!(segs.iter().map(|s| s.payload.len()).collect::<Vec<_>>(), vec![100, 100, 50]);
    let isn = c.tcp[0].iss.wrapping_add(1);
    for (i, s) in segs.iter().enumerate() {
        assert_eq!(s.seq, isn.wrapping_add(100 * i as u32));
        assert_eq!((s.ack, s.flags), (SERVER_ISS.wrapping_add(1), ACK | PSH));
    }
    // The bytes are the SET message (no memcached UDP header over TCP), opaque 11.
    let stream: Vec<u8> = segs.iter().flat_map(|s| s.payload.clone()).collect();
    assert_eq!(&stream[..2], &[0x80, 0x01]);
    assert_eq!(&stream[12..16], &11u32.to_be_bytes());
    // The server's ACK of the first 100 bytes opens the window for the remaining 90 (two segments).
    let ack = from_server(SERVER_ISS.wrapping_add(1), isn.wrapping_add(100), ACK, 250, None, &[]);
    let mut more = Sent::new();
    let k = c.tcp_receive(&mut more, 0, &ack, 0).unwrap();
    c.tcp_push(&mut more, k);
    let lens: Vec<usize> = more.iter().map(|(_, f)| parse_segment(f).unwrap().payload.len()).collect();
    assert_eq!(lens, vec![90]);
    assert_eq!(c.tcp[0].snd_nxt, isn.wrapping_add(340));
}

#[test]
fn a_response_spanning_segments_is_checked_once_complete_and_acknowledged() {
    let mut c = established(1460, 200, 65535);
    let sent = send_get(&mut c, 7);
    assert_eq!(sent.len(), 1);
    let req = parse_segment(&sent[0].1).unwrap();
    let acked = req.seq.wrapping_add(req.payload.len() as u32);
    let bytes = messages(7, &[hit(3, 1, 200)]);
    let mut seq = SERVER_ISS.wrapping_add(1);
    let mut acks = Sent::new();
    for (i, part) in bytes.chunks(90).enumerate() {
        // Not checked before the last piece; still outstanding.
        assert_eq!(c.stats.responses_checked, 0, "piece {i}");
        let f = from_server(seq, acked, ACK | PSH, 65535, None, part);
        c.tcp_receive(&mut acks, 0, &f, 0).unwrap();
        seq = seq.wrapping_add(part.len() as u32);
    }
    assert_eq!((c.stats.responses_checked, c.stats.hits), (1, 1));
    assert!(c.outstanding.is_empty());
    assert_eq!(c.tcp[0].rcv_nxt, seq);
    // With nothing to piggyback it on, a bare ACK of everything received.
    c.tcp_flush_acks(&mut acks);
    let a = parse_segment(&acks.last().unwrap().1).unwrap();
    assert_eq!((a.flags, a.ack, a.payload.len()), (ACK, seq, 0));
    assert_eq!(c.tcp_stats.bare_acks, 1);
}

/// A client with a GET outstanding as frame 7 and the right response's segment, which each test spoils.
fn get_and_response() -> (Client, u32, Vec<u8>) {
    let mut c = established(1460, 8, 65535);
    let sent = send_get(&mut c, 7);
    let req = parse_segment(&sent[0].1).unwrap();
    let acked = req.seq.wrapping_add(req.payload.len() as u32);
    (c, acked, messages(7, &[hit(3, 1, 8)]))
}

#[test]
fn the_right_response_passes_and_every_corruption_fails_the_run() {
    let seq = SERVER_ISS.wrapping_add(1);
    let (mut c, acked, bytes) = get_and_response();
    c.tcp_receive(&mut Sent::new(), 0, &from_server(seq, acked, ACK, 65535, None, &bytes), 0).unwrap();
    assert_eq!(c.stats.hits, 1);

    let fail = |frame: Vec<u8>, queue: usize, want: &str| {
        let (mut c, _, _) = get_and_response();
        let e = c.tcp_receive(&mut Sent::new(), queue, &frame, 0).unwrap_err();
        assert!(e.contains(want), "want {want:?}: {e}");
    };
    // A flipped bit in the data: the TCP checksum.
    let mut f = from_server(seq, acked, ACK, 65535, None, &bytes);
    let last = f.len() - 1;
    f[last] ^= 0x04;
    fail(f, 0, "bad TCP checksum");
    // A flipped bit in the IPv4 header.
    let mut f = from_server(seq, acked, ACK, 65535, None, &bytes);
    f[22] ^= 0x01;
    fail(f, 0, "IPv4 header checksum");
    // A segment ahead of the next byte expected (one lost), and one repeating bytes already received.
    fail(from_server(seq.wrapping_add(1), acked, ACK, 65535, None, &bytes), 0, "wrong sequence number");
    fail(from_server(seq.wrapping_sub(3), acked, ACK, 65535, None, &bytes), 0, "wrong sequence number");
    // An ACK of bytes the client never sent, and one before what the server already acknowledged.
    fail(from_server(seq, acked.wrapping_add(1), ACK, 65535, None, &bytes), 0, "outside what was sent");
    fail(from_server(seq, acked.wrapping_sub(100), ACK, 65535, None, &bytes), 0, "outside what was sent");
    // No ACK flag, a SYN, a reset.
    fail(from_server(seq, acked, PSH, 65535, None, &bytes), 0, "flags");
    fail(from_server(seq, acked, SYN | ACK, 65535, None, &bytes), 0, "flags");
    fail(from_server(seq, acked, RST | ACK, 65535, None, &[]), 0, "reset");
    // A wrong value, a response to another frame, a stream that is not responses.
    let wrong = messages(7, &[hit(3, 2, 8)]);
    fail(from_server(seq, acked, ACK, 65535, None, &wrong), 0, "wrong value or flags");
    let other = messages(8, &[hit(3, 1, 8)]);
    fail(from_server(seq, acked, ACK, 65535, None, &other), 0, "echo mismatch");
    fail(from_server(seq, acked, ACK, 65535, None, &[0x80; 30]), 0, "where a response message starts");
    // The wrong queue; the wrong server port.
    fail(from_server(seq, acked, ACK, 65535, None, &bytes), 1, "queue");
    let mut f = from_server(seq, acked, ACK, 65535, None, &bytes);
    f[35] ^= 1; // source port, checksum fixed below
    fix_tcp_checksum(&mut f);
    fail(f, 0, "from port");
}

#[test]
fn the_handshake_must_acknowledge_the_syn() {
    let mut c = client(1460, 8);
    let mut sent = Sent::new();
    c.tcp_open(&mut sent);
    let syn = parse_segment(&sent[0].1).unwrap();
    let e = c
        .tcp_receive(&mut sent, 0, &from_server(SERVER_ISS, syn.seq.wrapping_add(2), SYN | ACK, 100, None, &[]), 0)
        .unwrap_err();
    assert!(e.contains("handshake"), "{e}");
    assert_eq!(c.tcp[0].state, TcpState::SynSent);
    // Without an MSS option the server takes 536-byte segments (RFC 879).
    let mut c = client(1460, 8);
    c.tcp_open(&mut sent);
    c.tcp_receive(&mut sent, 0, &from_server(SERVER_ISS, syn.seq.wrapping_add(1), SYN | ACK, 100, None, &[]), 0)
        .unwrap();
    assert_eq!(c.tcp[0].mss, 536);
}

/// A NIC that refuses every frame.
struct Refusing;
impl Wire for Refusing {
    fn put(&mut self, _: usize, _: Vec<u8>, _: Option<u64>) -> Option<u64> {
        None
    }
}

#[test]
fn a_segment_the_nic_refuses_fails_the_run_since_nothing_is_retransmitted() {
    let mut c = client(1460, 8);
    c.tcp_open(&mut Refusing);
    let e = c.tcp_failure.take().unwrap();
    assert!(e.contains("does not retransmit"), "{e}");
}

#[test]
fn frames_take_an_instances_connections_in_turn() {
    let mut c = Client::new(ClientConfig {
        items: 8,
        buckets: 1,
        base_port: BASE,
        mcd: Some(McdServer { capacity: 100 }),
        tcp: Some(TcpConfig { connections: 3, mss: 1460, segments: 4 }),
        ..super::tests::one_core_config()
    });
    let mut sent = Sent::new();
    c.tcp_open(&mut sent);
    let ports: Vec<u16> = sent.iter().map(|(_, f)| parse_segment(f).unwrap().sport).collect();
    assert_eq!(ports, vec![CLIENT_TCP_PORT_BASE, CLIENT_TCP_PORT_BASE + 1, CLIENT_TCP_PORT_BASE + 2]);
    assert_eq!(c.tcp.len(), 3);
    for k in 0..3 {
        let syn = parse_segment(&sent[k].1).unwrap();
        let mut f = from_server(SERVER_ISS, syn.seq.wrapping_add(1), SYN | ACK, 65535, Some(1460), &[]);
        f[36..38].copy_from_slice(&syn.sport.to_be_bytes()); // to connection k (the checksum adds the same sum)
        fix_tcp_checksum(&mut f);
        c.tcp_receive(&mut sent, 0, &f, 0).unwrap();
    }
    assert!(c.tcp_all_established());
    for opaque in 1..=4u32 {
        let (_, get) = c.get_req(1);
        let mut out = Sent::new();
        c.send_tcp(&mut out, 0, opaque, Pkt { reqs: vec![get], frame_len: 0, resp_len: 0, load: false, sent_ps: 0 });
        let s = parse_segment(&out[0].1).unwrap();
        assert_eq!(s.sport, CLIENT_TCP_PORT_BASE + ((opaque - 1) % 3) as u16);
    }
}

#[test]
fn an_instance_has_at_most_tcp_segments_data_segments_unacknowledged() {
    // Client.tcp_segments = 2: of the 340-byte SET's four 100-byte segments, two leave; each ACK lets one more go.
    let mut c = established(100, 300, 65535);
    c.cfg.tcp.as_mut().unwrap().segments = 2;
    let (_, put) = c.put_req(5);
    let mut sent = Sent::new();
    c.send_tcp(&mut sent, 0, 11, Pkt { reqs: vec![put], frame_len: 0, resp_len: 0, load: false, sent_ps: 0 });
    assert_eq!(sent.len(), 2);
    let isn = c.tcp[0].iss.wrapping_add(1);
    // An ACK of half the first segment frees nothing; of all of it, one slot.
    for (acked, more) in [(50u32, 0usize), (100, 1), (300, 1)] {
        let ack = from_server(SERVER_ISS.wrapping_add(1), isn.wrapping_add(acked), ACK, 65535, None, &[]);
        let mut out = Sent::new();
        c.tcp_receive(&mut out, 0, &ack, 0).unwrap();
        c.tcp_push_core(&mut out, 0);
        assert_eq!(out.len(), more, "after an ACK of {acked} bytes");
    }
    assert_eq!(c.tcp[0].snd_nxt, isn.wrapping_add(340));
}

/// The server's segments carrying `bytes` of its stream from sequence number `seq`, `mss` bytes each at most,
/// every one acknowledging `ack`.
fn server_stream(seq: u32, ack: u32, bytes: &[u8], mss: usize) -> Vec<Vec<u8>> {
    let mut off = 0;
    bytes
        .chunks(mss)
        .map(|chunk| {
            let f = from_server(seq.wrapping_add(off as u32), ack, ACK | PSH, 65535, None, chunk);
            off += chunk.len();
            f
        })
        .collect()
}

#[test]
fn a_1_mib_set_and_get_span_hundreds_of_segments_each_way_and_the_value_is_checked_byte_for_byte() {
    const MIB: usize = 1 << 20;
    let mut c = established(1460, MIB, 65535);
    c.cfg.tcp.as_mut().unwrap().segments = 1000;
    let isn = c.tcp[0].iss.wrapping_add(1);
    // The SET: 24 + 8 + 8 + 1 MiB bytes in segments of at most 1,460 bytes, 44 at a time within the server's
    // 65,535-byte window; each ACK of everything sent lets the next window go.
    let (_, put) = c.put_req(3);
    let mut sent = Sent::new();
    c.send_tcp(&mut sent, 0, 21, Pkt { reqs: vec![put], frame_len: 0, resp_len: 0, load: false, sent_ps: 0 });
    let total = 24 + 8 + 8 + MIB;
    let mut stream = Vec::new();
    let (mut segments, mut rounds) = (0, 1);
    loop {
        for (_, f) in sent.drain(..) {
            let seg = parse_segment(&f).unwrap();
            assert!(seg.payload.len() <= 1460);
            assert_eq!(seg.seq, isn.wrapping_add(stream.len() as u32), "in order, none skipped");
            stream.extend_from_slice(&seg.payload);
            segments += 1;
        }
        if stream.len() == total {
            break;
        }
        let ack = from_server(SERVER_ISS.wrapping_add(1), isn.wrapping_add(stream.len() as u32), ACK, 65535, None, &[]);
        c.tcp_receive(&mut sent, 0, &ack, 0).unwrap();
        c.tcp_push_core(&mut sent, 0);
        assert!(!sent.is_empty(), "the window opened, so more of the SET leaves");
        rounds += 1;
    }
    // Full segments but the last of each window's round (65,535 is not a multiple of 1,460).
    assert!((total.div_ceil(1460)..=total.div_ceil(1460) + rounds).contains(&segments), "{segments} segments");
    assert_eq!(rounds, total.div_ceil(65535));
    assert_eq!(stream[1], 0x01, "a SET");
    assert_eq!(&stream[40..], &value_of(3, put.ver, MIB)[..], "the value on the wire, byte for byte");
    // Its response, then the GET of the same item answered with the 1 MiB value in 719 segments.
    let set_ok = messages(21, &[(0x01, 0, vec![], vec![])]);
    let acked = isn.wrapping_add(total as u32);
    let mut out = Sent::new();
    c.tcp_receive(&mut out, 0, &from_server(SERVER_ISS.wrapping_add(1), acked, ACK | PSH, 65535, None, &set_ok), 0)
        .unwrap();
    let (_, get) = c.get_req(3);
    c.send_tcp(&mut out, 0, 22, Pkt { reqs: vec![get], frame_len: 0, resp_len: 0, load: false, sent_ps: 0 });
    let get_end = acked.wrapping_add(24 + 8);
    let hit_bytes = messages(22, &[hit(3, put.ver, MIB)]);
    let seq0 = SERVER_ISS.wrapping_add(1 + set_ok.len() as u32);
    let mut good = c.clone();
    let segs = server_stream(seq0, get_end, &hit_bytes, 1460);
    assert_eq!(segs.len(), (24 + 4 + MIB).div_ceil(1460));
    let last = segs.len() - 1;
    for (i, f) in segs.iter().enumerate() {
        good.tcp_receive(&mut out, 0, f, 0).unwrap();
        assert_eq!(good.outstanding.contains_key(&22), i < last, "answered with the last segment, not before");
    }
    assert_eq!(good.stats.hits, 1);
    // One byte of the value flipped in the middle of the stream (checksums right): the run fails.
    let mut bad_bytes = hit_bytes.clone();
    bad_bytes[28 + MIB / 2] ^= 0x01;
    let mut e = None;
    for f in server_stream(seq0, get_end, &bad_bytes, 1460) {
        if let Err(m) = c.tcp_receive(&mut out, 0, &f, 0) {
            e = Some(m);
        }
    }
    assert!(e.unwrap().contains("wrong value"));
}

#[test]
fn a_quiet_connection_is_saved_and_restored_and_carries_on_in_its_sequence_space() {
    let (mut c, acked, bytes) = get_and_response();
    // A GET awaiting its response: no checkpoint now.
    let err = c.save().map(|_| ()).unwrap_err();
    assert!(err.contains("frames in flight") || err.contains("awaits responses"), "{err}");
    let mut acks = Sent::new();
    let f = from_server(SERVER_ISS.wrapping_add(1), acked, ACK | PSH, 4000, None, &bytes);
    c.tcp_receive(&mut acks, 0, &f, 0).unwrap();
    c.tcp_flush_acks(&mut acks);
    let rcv = SERVER_ISS.wrapping_add(1 + bytes.len() as u32);
    let (state, versions, dense) = c.save().unwrap();
    let (versions, dense) = (versions.clone(), dense.map(<[u8]>::to_vec));
    // A fresh client (a restored run builds one from its configuration) takes the connection's state.
    let mut r = client(1460, 8);
    assert_eq!(r.tcp[0].state, TcpState::Closed);
    r.restore(state, versions, dense).unwrap();
    assert_eq!(r.tcp[0].state, TcpState::Established);
    assert_eq!((r.tcp[0].snd_una, r.tcp[0].snd_nxt, r.tcp[0].snd_wnd), (acked, acked, 4000));
    assert_eq!((r.tcp[0].rcv_nxt, r.tcp[0].ack_sent, r.tcp[0].mss), (rcv, rcv, 1460));
    assert_eq!((r.tcp_stats.handshakes, r.tcp_stats.bare_acks), (1, c.tcp_stats.bare_acks));
    // The next GET continues the stream where it stopped, and its response is taken at the saved rcv_nxt.
    let sent = send_get(&mut r, 8);
    let req = parse_segment(&sent[0].1).unwrap();
    assert_eq!((req.seq, req.ack), (acked, rcv));
    let next = req.seq.wrapping_add(req.payload.len() as u32);
    // (send_get PUT item 3 again first: version 2.)
    let resp = from_server(rcv, next, ACK | PSH, 4000, None, &messages(8, &[hit(3, 2, 8)]));
    r.tcp_receive(&mut acks, 0, &resp, 0).unwrap();
    assert_eq!(r.stats.responses_checked, c.stats.responses_checked + 1);
    // A client that was not restored has no connection to take it on.
    let mut fresh = client(1460, 8);
    assert!(fresh.tcp_receive(&mut acks, 0, &resp, 0).is_err());
}

#[test]
fn a_checkpoint_refuses_unacknowledged_segments_and_another_connection_count() {
    let mut c = established(1460, 8, 65535);
    // A SET sent and answered, but its segment not acknowledged (the server's ACK lags): refused.
    c.tcp[0].snd_nxt = c.tcp[0].snd_nxt.wrapping_add(40);
    let err = c.save().map(|_| ()).unwrap_err();
    assert!(err.contains("has segments the server has not acknowledged"), "{err}");
    c.tcp[0].snd_una = c.tcp[0].snd_nxt;
    let (state, versions, dense) = c.save().unwrap();
    let (versions, dense) = (versions.clone(), dense.map(<[u8]>::to_vec));
    let mut two = Client::new(ClientConfig {
        tcp: Some(TcpConfig { connections: 2, mss: 1460, segments: 4 }),
        ..client(1460, 8).cfg
    });
    let err = two.restore(state, versions, dense).unwrap_err();
    assert!(err.contains("1 TCP connections, this run's 2"), "{err}");
}
