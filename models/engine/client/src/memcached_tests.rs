//! The memcached checker against hand-made responses: right ones pass; a wrong value, wrong flags, a corrupted
//! byte, a miss or DELETE result no version explains, and a wrong echo fail the run.

use super::memcached::{flags_of, push_frame, resolve_server, udp_checksum, McdServer, MCD_PAYLOAD_OFF};
use super::tests::{get_outstanding, outstanding};
use super::*;

const BASE: u16 = 0x4000;

/// One core; `capacity` items per instance (8 items in the data set: above 8 nothing is evicted).
fn client(capacity: u64) -> Client {
    Client::new(ClientConfig {
        items: 8,
        buckets: 1,
        base_port: BASE,
        mcd: Some(McdServer { capacity }),
        delete_ratio: 0.1,
        ..super::tests::one_core_config()
    })
}

/// A response frame from the server on port BASE: (opcode, status, extras, value) per message, all with `opaque`.
fn response(opaque: u32, msgs: &[(u8, u16, Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut payload = vec![(opaque >> 8) as u8, opaque as u8, 0, 0, 0, 1, 0, 0];
    for (op, status, extras, value) in msgs {
        payload.extend_from_slice(&[0x81, *op, 0, 0, extras.len() as u8, 0]);
        payload.extend_from_slice(&status.to_be_bytes());
        payload.extend_from_slice(&((extras.len() + value.len()) as u32).to_be_bytes());
        payload.extend_from_slice(&opaque.to_be_bytes());
        payload.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 9]); // CAS
        payload.extend_from_slice(extras);
        payload.extend_from_slice(value);
    }
    let mut f = Vec::new();
    push_frame(&mut f, CLIENT_UDP_PORT, 1, &payload);
    f[34..36].copy_from_slice(&BASE.to_be_bytes());
    f[36..38].copy_from_slice(&CLIENT_UDP_PORT.to_be_bytes());
    fix_udp_checksum(&mut f);
    f
}

fn fix_udp_checksum(f: &mut [u8]) {
    let c = udp_checksum(f, f.len());
    f[40..42].copy_from_slice(&c.to_be_bytes());
}

fn hit(item: u64, ver: u32) -> (u8, u16, Vec<u8>, Vec<u8>) {
    (0x00, 0, flags_of(item, ver).to_be_bytes().to_vec(), value_of(item, ver, 8))
}

fn miss() -> (u8, u16, Vec<u8>, Vec<u8>) {
    (0x00, 1, vec![], b"Not found".to_vec())
}

/// Item 3 stored at version 1 and acknowledged; a GET of it outstanding as frame 7.
fn with_get(capacity: u64) -> (Client, Req) {
    get_outstanding(client(capacity))
}

#[test]
fn a_right_hit_passes_and_every_corruption_fails() {
    let (mut c, _) = with_get(100);
    c.check_response(0, &response(7, &[hit(3, 1)]), 0).unwrap();
    assert_eq!((c.stats.hits, c.stats.responses_checked), (1, 1));

    let wrong_value = (0x00, 0, flags_of(3, 1).to_be_bytes().to_vec(), value_of(3, 2, 8));
    let wrong_flags = (0x00, 0, flags_of(3, 2).to_be_bytes().to_vec(), value_of(3, 1, 8));
    for (msg, want) in [(wrong_value, "wrong value or flags"), (wrong_flags, "wrong value or flags")] {
        let (mut c, _) = with_get(100);
        let e = c.check_response(0, &response(7, &[msg]), 0).unwrap_err();
        assert!(e.contains(want), "{e}");
    }
    // One flipped bit anywhere in the value: the UDP checksum catches it even before the value check.
    for at in [MCD_PAYLOAD_OFF + 8 + 24 + 4, MCD_PAYLOAD_OFF + 8 + 24 + 11] {
        let (mut c, _) = with_get(100);
        let mut f = response(7, &[hit(3, 1)]);
        f[at] ^= 0x10;
        assert!(c.check_response(0, &f, 0).unwrap_err().contains("checksum"));
        // With a recomputed checksum (corrupted before the server checksummed it) the value check catches it.
        let (mut c, _) = with_get(100);
        fix_udp_checksum(&mut f);
        assert!(c.check_response(0, &f, 0).unwrap_err().contains("wrong value or flags"));
    }
    // A response to a frame never sent, a wrong opcode echo, a wrong message count.
    let (mut c, _) = with_get(100);
    assert!(c.check_response(0, &response(8, &[hit(3, 1)]), 0).unwrap_err().contains("never sent"));
    let (mut c, _) = with_get(100);
    let e = c.check_response(0, &response(7, &[(0x04, 0, vec![], vec![])]), 0).unwrap_err();
    assert!(e.contains("echo mismatch"), "{e}");
    let (mut c, _) = with_get(100);
    assert!(c.check_response(0, &response(7, &[hit(3, 1), hit(3, 1)]), 0).unwrap_err().contains("2 responses"));
}

#[test]
fn a_miss_needs_a_delete_or_an_eviction() {
    // Nothing evicts (capacity 100 >= 8 items): a miss of a stored item fails.
    let (mut c, _) = with_get(100);
    let e = c.check_response(0, &response(7, &[miss()]), 0).unwrap_err();
    assert!(e.contains("neither a DELETE nor an eviction"), "{e}");
    // The instance holds fewer items than map to it: the miss is accepted and counted.
    let (mut c, _) = with_get(4);
    c.check_response(0, &response(7, &[miss()]), 0).unwrap();
    assert_eq!(c.stats.misses, 1);
    // A DELETE sent after the GET's acknowledged version (still in flight) explains a miss ...
    let mut c = client(100);
    let (_, put) = c.put_req(3);
    c.store.ack(3, put.ver, put.mark, false);
    let (_, get) = c.get_req(3);
    let (_, del) = c.delete_req(3);
    outstanding(&mut c, 7, vec![get]);
    outstanding(&mut c, 8, vec![del]);
    c.check_response(0, &response(7, &[miss()]), 0).unwrap();
    // ... and that DELETE finds the item stored: OK is right, KEY_ENOENT would be wrong.
    let mut bad = c.clone();
    assert!(bad.check_response(0, &response(8, &[(0x04, 1, vec![], vec![])]), 0).unwrap_err().contains("DELETE"));
    c.check_response(0, &response(8, &[(0x04, 0, vec![], vec![])]), 0).unwrap();
    assert_eq!(c.stats.deletes, 1);
    // Now deleted: a GET must miss; a hit of the old version fails.
    let (_, get) = c.get_req(3);
    outstanding(&mut c, 9, vec![get]);
    assert!(c.clone().check_response(0, &response(9, &[hit(3, 1)]), 0).unwrap_err().contains("wrong value"));
    c.check_response(0, &response(9, &[miss()]), 0).unwrap();
    // A DELETE of an item never stored must answer KEY_ENOENT.
    let (_, del) = c.delete_req(5);
    outstanding(&mut c, 10, vec![del]);
    assert!(c.clone().check_response(0, &response(10, &[(0x04, 0, vec![], vec![])]), 0).is_err());
    c.check_response(0, &response(10, &[(0x04, 1, vec![], vec![])]), 0).unwrap();
}

#[test]
fn a_set_must_succeed_and_is_then_acknowledged() {
    let mut c = client(100);
    let (_, put) = c.put_req(2);
    outstanding(&mut c, 3, vec![put]);
    assert!(c.clone().check_response(0, &response(3, &[(0x01, 0x82, vec![], vec![])]), 0).is_err());
    c.check_response(0, &response(3, &[(0x01, 0, vec![], vec![])]), 0).unwrap();
    assert_eq!((c.store.acked(2), c.stats.puts), (1, 1));
}

#[test]
fn requests_are_well_formed_memcached_frames() {
    let mut c = client(100);
    let (_, put) = c.put_req(6);
    let (_, get) = c.get_req(6);
    let pkt = Pkt { reqs: vec![put, get], frame_len: 0, resp_len: 0, load: false, sent_ps: 0 };
    let f = c.build_mcd_frame(0, 0x1_0203, &pkt);
    assert_eq!(kvsim_base::frame::udp_dst_port(&f), Some(BASE));
    assert!(wire::ipv4_checksum_ok(&f));
    assert_eq!(u16::from_be_bytes([f[40], f[41]]), udp_checksum(&f, f.len()));
    let p = &f[MCD_PAYLOAD_OFF..];
    assert_eq!(&p[..8], &[0x02, 0x03, 0, 0, 0, 1, 0, 0]); // request id, sequence 0 of 1
    let set = &p[8..];
    assert_eq!((set[0], set[1], set[4]), (0x80, 0x01, 8)); // magic, SET, 8 bytes of extras
    assert_eq!(u32::from_be_bytes(set[12..16].try_into().unwrap()), 0x1_0203);
    assert_eq!(&set[24..28], &flags_of(6, 1).to_be_bytes());
    assert_eq!(&set[32..40], &key_of(6, 8)[..]);
    assert_eq!(&set[40..48], &value_of(6, 1, 8)[..]);
    let getm = &set[48..];
    assert_eq!((getm[1], getm.len()), (0x00, 24 + 8));
    assert_eq!(memcached::frame_opaque(&f), Some(0x1_0203));
}

#[test]
fn the_servers_arguments_are_read_and_checked() {
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // 8 + 8 bytes + a 56-byte header fit 128-byte chunks; 1 MiB minus 2^10 8-byte heads.
    let s = resolve_server(&args(&["port=16384", "mem=1M", "buckets=10"]), 16384, 8, 8, true).unwrap();
    assert_eq!(s.capacity, ((1 << 20) - 8192) / 128);
    let s = resolve_server(&args(&["port=16384"]), 16384, 16, 64, true).unwrap();
    assert_eq!(s.capacity, ((64 << 20) - (8 << 16)) / 256);
    assert!(resolve_server(&args(&["port=11211"]), 16384, 8, 8, true).unwrap_err().contains("steering_base_port"));
    assert!(resolve_server(&args(&["port=16384", "log_mib=8"]), 16384, 8, 8, true).unwrap_err().contains("MICA"));
    assert!(resolve_server(&args(&["port=16384", "buckets=3"]), 16384, 8, 8, true).unwrap_err().contains("4..=28"));
    assert!(resolve_server(&args(&["port=16384"]), 16384, 251, 8, true).unwrap_err().contains("1..=250"));
}

#[test]
fn values_beyond_a_frame_need_tcp_and_values_beyond_the_largest_chunk_are_refused() {
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mib = 1 << 20;
    // 2 KiB values: too big for a datagram, but a 4 KiB chunk holds them.
    assert!(resolve_server(&args(&["port=16384"]), 16384, 8, 2048, true).unwrap_err().contains("does not fit a frame"));
    assert_eq!(
        resolve_server(&args(&["port=16384", "mem=1m", "buckets=4"]), 16384, 8, 2048, false).unwrap().capacity,
        255
    );
    // 1 MiB values: 56 + 8 + 1 MiB bytes need the 2 MiB chunk, so the server's item_max=2m.
    let e = resolve_server(&args(&["port=16384"]), 16384, 8, mib, false).unwrap_err();
    assert!(e.contains("largest chunk, item_max=4096"), "{e}");
    let e = resolve_server(&args(&["port=16384", "item_max=1m"]), 16384, 8, mib, false).unwrap_err();
    assert!(e.contains("item_max=1048576"), "{e}");
    let s = resolve_server(&args(&["port=16384", "item_max=2m", "mem=9m", "buckets=4"]), 16384, 8, mib, false);
    assert_eq!(s.unwrap().capacity, 4, "(9 MiB - 128 B of heads) / 2 MiB");
    for bad in ["item_max=3m", "item_max=2k", "item_max=4m"] {
        let e = resolve_server(&args(&["port=16384", bad]), 16384, 8, 8, false).unwrap_err();
        assert!(e.contains("not a power of two from 4096 to 2097152"), "{bad}: {e}");
    }
}
