//! The client speaking the memcached binary protocol over UDP to the memcached-class server (workloads/mcd), with
//! the same load generation, steering, windows, loss and latency statistics as for MICA (`mod.rs`, `wire.rs`).
//!
//! * A frame is Ethernet + IPv4 + UDP (with its checksum, which the server verifies) + the memcached UDP frame
//!   header (request id = the frame's id modulo 2^16, sequence 0 of 1) + one binary-protocol request per item
//!   (GET, SET with 8 bytes of extras (flags, expiry) and the value, DELETE); every message's opaque is the frame's
//!   32-bit id. The reply carries one response per request, in order.
//! * Steering as for MICA: instance = core = (keyhash >> 48) mod cores, UDP port `base + core` (the server's
//!   `port=` must be the NIC's steering base port). Memcached instances share nothing, so there is no CREW.
//! * A SET of version v stores `value_of(item, v)` with flags `flags_of(item, v)`; a DELETE takes the next version
//!   too, remembered as a tombstone. The server applies one instance's requests in arrival order, so the state a
//!   request finds is one of the versions between the one acknowledged when it was sent and the last one sent
//!   before it. Checks: a SET answers OK; a GET hit returns the value and flags of a live version in that range; a
//!   GET miss or a DELETE's KEY_ENOENT needs a tombstone (or "never stored") in the range, or an instance that can
//!   evict; a DELETE's OK needs a live version in the range. Anything else fails the run.
//! * Eviction: the server's store gives every item a chunk of the smallest size class (64 B doubling to its
//!   `item_max=` argument, 4 KiB by default, 2 MiB at most) that holds its header, key and value, from one arena of `mem=` minus the bucket heads. With one item size (the
//!   data set's) an instance evicts only when more distinct keys map to it than its arena has chunks; such
//!   instances accept misses, the others must never lose an item.

use super::wire::{ip_end, ipv4_checksum_ok};
use super::*;
use crate::memcached_binary::{self, status, Opcode, Request, BIN_HDR_LEN, MAX_KEY_LEN, UDP_FRAME_HDR_LEN};

/// Ethernet + IPv4 + UDP headers, then the memcached UDP frame header.
pub const MCD_PAYLOAD_OFF: usize = 42;
pub const MCD_FRAME_HDR: usize = MCD_PAYLOAD_OFF + UDP_FRAME_HDR_LEN;
/// Bytes of a SET's extras (flags, expiry) and of a GET hit's (flags).
const SET_EXTRAS: usize = 8;
const GET_EXTRAS: usize = 4;
/// The body of the server's GET miss.
const NOT_FOUND: &[u8] = b"Not found";
/// The server's item header (`sizeof(struct mcd_item)`, workloads/mcd/mcd_store.h, checked there at compile time)
/// and its size classes.
pub const ITEM_HEADER: u64 = 56;
const MIN_CHUNK: u64 = 64;
/// The server's largest chunk (`item_max=`): 4 KiB by default, a power of two up to 2 MiB (workloads/fs/init.c).
const ITEM_MAX_DEFAULT: u64 = 4 << 10;
const ITEM_MAX_LIMIT: u64 = 2 << 20;
/// Where a memcached frame's id (the first message's opaque) sits.
const FIRST_OPAQUE: std::ops::Range<usize> = MCD_FRAME_HDR + 12..MCD_FRAME_HDR + 16;

/// What the client knows of the memcached-class server from its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McdServer {
    /// Items of the data set's size one instance holds without evicting.
    pub capacity: u64,
}

/// The server's `kvsim_parse_size`: digits, then an optional k, m or g (binary multiples).
fn parse_size(arg: &str, v: &str) -> Result<u64, String> {
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    let n: u64 = v[..digits].parse().map_err(|_| format!("Client: cannot read the server argument {arg:?}"))?;
    Ok(match v[digits..].bytes().next() {
        Some(b'k' | b'K') => n << 10,
        Some(b'm' | b'M') => n << 20,
        Some(b'g' | b'G') => n << 30,
        _ => n,
    })
}

/// Read the server's arguments (port=, mem=, buckets=, item_max=; its defaults otherwise) and check they fit the
/// client. Over UDP (`udp`) a request and its response must each fit one datagram (memcached takes no request that
/// spans datagrams); over TCP they may span segments.
pub fn resolve_server(
    argv: &[String],
    base_port: u16,
    key_len: usize,
    val_len: usize,
    udp: bool,
) -> Result<McdServer, String> {
    if !(1..=MAX_KEY_LEN).contains(&key_len) {
        return Err(format!("Client: memcached keys are 1..={MAX_KEY_LEN} bytes, not {key_len}"));
    }
    let (set_req, _) = sizes(OP_PUT, key_len, val_len);
    let (_, get_resp) = sizes(OP_GET, key_len, val_len);
    if udp && MCD_FRAME_HDR + set_req.max(get_resp) > MAX_FRAME {
        return Err(format!(
            "Client: a memcached SET of a {key_len}-byte key and {val_len}-byte value does not fit a frame (over \
             UDP a request must fit one datagram; Client.transport = 'tcp' carries larger ones)"
        ));
    }
    let (mut port, mut mem, mut buckets_log2, mut item_max) = (11211u64, 64u64 << 20, 16u64, ITEM_MAX_DEFAULT);
    for a in argv {
        if let Some(v) = a.strip_prefix("port=") {
            port = parse_size(a, v)?;
        } else if let Some(v) = a.strip_prefix("mem=") {
            mem = parse_size(a, v)?;
        } else if let Some(v) = a.strip_prefix("buckets=") {
            buckets_log2 = parse_size(a, v)?;
        } else if let Some(v) = a.strip_prefix("item_max=") {
            item_max = parse_size(a, v)?;
        } else if ["mode=", "log_mib=", "log_kib="].iter().any(|p| a.starts_with(p)) {
            return Err(format!(
                "Client.protocol is 'memcached' but the server has the MICA server's argument {a:?}: set \
                 client.protocol=mica, or run the memcached-class server"
            ));
        }
    }
    if port != base_port as u64 {
        return Err(format!(
            "Client: the memcached server's port={port} is not Nic.steering_base_port = {base_port}: instance i \
             serves port + i, which the NIC must steer to core i's queue (set both the same)"
        ));
    }
    if !(4..=28).contains(&buckets_log2) {
        return Err(format!(
            "Client: the memcached server's buckets={buckets_log2} (log2 of the buckets) is not in 4..=28"
        ));
    }
    if !item_max.is_power_of_two() || !(ITEM_MAX_DEFAULT..=ITEM_MAX_LIMIT).contains(&item_max) {
        return Err(format!(
            "Client: the memcached server's item_max={item_max} is not a power of two from {ITEM_MAX_DEFAULT} to \
             {ITEM_MAX_LIMIT}"
        ));
    }
    let need = ITEM_HEADER + (key_len + val_len) as u64;
    let chunk = (0..).map(|c| MIN_CHUNK << c).take_while(|&c| c <= item_max).find(|&c| c >= need).ok_or_else(|| {
        format!(
            "Client: an item of {need} bytes (header, {key_len}-byte key, {val_len}-byte value) exceeds the \
                 memcached server's largest chunk, item_max={item_max}"
        )
    })?;
    let heads = ((8u64 << buckets_log2) + 63) & !63;
    Ok(McdServer { capacity: mem.saturating_sub(heads) / chunk })
}

/// (request bytes, worst-case response bytes) of one request in a frame.
pub fn sizes(op: u8, key_len: usize, val_len: usize) -> (usize, usize) {
    match op {
        OP_PUT => (BIN_HDR_LEN + SET_EXTRAS + key_len + val_len, BIN_HDR_LEN),
        OP_GET => (BIN_HDR_LEN + key_len, BIN_HDR_LEN + (GET_EXTRAS + val_len).max(NOT_FOUND.len())),
        _ => (BIN_HDR_LEN + key_len, BIN_HDR_LEN),
    }
}

/// The flags a SET of `item` at `version` stores (checked on a hit, with the value).
pub fn flags_of(item: u64, version: u32) -> u32 {
    (item as u32).wrapping_mul(0x9e37_79b1) ^ version.rotate_left(16)
}

fn opcode(op: u8) -> Opcode {
    match op {
        OP_GET => Opcode::Get,
        OP_PUT => Opcode::Set,
        _ => Opcode::Delete,
    }
}

/// The UDP checksum of an IPv4/UDP frame (RFC 768, with the pseudo-header; 0 is sent as 0xffff).
pub fn udp_checksum(frame: &[u8], end: usize) -> u16 {
    let udp = &frame[34..end];
    let mut sum: u32 = 17 + udp.len() as u32;
    for c in frame[26..34].chunks(2) {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    for (i, c) in udp.chunks(2).enumerate() {
        if i != 3 {
            sum += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
        }
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    match !(sum as u16) {
        0 => 0xffff,
        c => c,
    }
}

/// Ethernet + IPv4 + UDP headers (the UDP checksum over `payload`) and the payload.
pub(super) fn push_frame(f: &mut Vec<u8>, dport: u16, ip_id: u16, payload: &[u8]) {
    super::wire::push_udp_headers(f, dport, ip_id, payload.len());
    f.extend_from_slice(payload);
    let c = udp_checksum(f, f.len());
    f[40..42].copy_from_slice(&c.to_be_bytes());
}

/// The id of a memcached frame the client sent (its first message's opaque).
pub fn frame_opaque(frame: &[u8]) -> Option<u32> {
    frame.get(FIRST_OPAQUE).map(|b| u32::from_be_bytes(b.try_into().unwrap()))
}

/// Per partition: whether more distinct keys of the data set map to its instance than the instance holds.
pub fn evictable(items: u64, key_len: usize, cores: usize, capacity: u64) -> Vec<bool> {
    let mut count = vec![0u64; cores];
    for i in 0..items {
        count[partition_of(keyhash(&key_of(i, key_len)), cores as u64) as usize] += 1;
    }
    count.into_iter().map(|n| n > capacity).collect()
}

impl Client {
    /// A DELETE of `item`: it takes the next version, remembered as a tombstone; `mark` carries the version
    /// acknowledged when it was sent (the state it may find starts there).
    pub(super) fn delete_req(&mut self, item: u64) -> (usize, Req) {
        let kh = keyhash(&key_of(item, self.cfg.key_len));
        let prior = self.store.acked(item);
        let ver = self.store.next_version(item);
        self.tombstones.insert((item, ver));
        (self.partition(kh), Req { item, op: OP_DELETE, ver, keyhash: kh, mark: prior as u64 })
    }

    /// The memcached UDP frame header (request id = the frame's id modulo 2^16) and every request of `pkt`; over
    /// TCP the stream carries the requests without the header.
    pub(super) fn mcd_payload(&self, opaque: u32, pkt: &Pkt) -> Vec<u8> {
        let keys: Vec<Vec<u8>> = pkt.reqs.iter().map(|r| key_of(r.item, self.cfg.key_len)).collect();
        let values: Vec<Vec<u8>> = pkt
            .reqs
            .iter()
            .map(|r| if r.op == OP_PUT { value_of(r.item, r.ver, self.cfg.val_len) } else { Vec::new() })
            .collect();
        let reqs: Vec<Request> = pkt
            .reqs
            .iter()
            .zip(keys.iter().zip(&values))
            .map(|(r, (key, value))| Request {
                op: opcode(r.op),
                key,
                value,
                flags: if r.op == OP_PUT { flags_of(r.item, r.ver) } else { 0 },
                expiry: 0,
                opaque,
            })
            .collect();
        let mut payload = Vec::with_capacity(pkt.frame_len);
        // Keys are at most MAX_KEY_LEN bytes (resolve_server checked), so encoding cannot fail.
        memcached_binary::encode_datagram(opaque as u16, &reqs, &mut payload).expect("keys fit the memcached limit");
        payload
    }

    pub(super) fn build_mcd_frame(&self, core: usize, opaque: u32, pkt: &Pkt) -> Vec<u8> {
        let payload = self.mcd_payload(opaque, pkt);
        let mut f = Vec::with_capacity(MCD_PAYLOAD_OFF + payload.len());
        push_frame(&mut f, self.cfg.base_port.wrapping_add(core as u16), opaque as u16, &payload);
        f
    }

    /// A version in `lo..=hi` that is a DELETE (or 0: never stored).
    fn absent_in(&self, item: u64, lo: u32, hi: u32) -> bool {
        lo == 0 || (lo..=hi).any(|v| self.tombstones.contains(&(item, v)))
    }

    /// A version in `lo..=hi` that a SET stored.
    fn live_in(&self, item: u64, lo: u32, hi: u32) -> impl Iterator<Item = u32> + '_ {
        (lo.max(1)..=hi).filter(move |&v| !self.tombstones.contains(&(item, v)))
    }

    pub(super) fn check_mcd_response(&mut self, queue: usize, frame: &[u8], at: u64) -> CResult<()> {
        let end =
            ip_end(frame).ok_or_else(|| format!("a response on queue {queue} is not a well-formed IPv4/UDP frame"))?;
        let opaque = frame_opaque(&frame[..end])
            .ok_or_else(|| format!("a response on queue {queue} is too short to hold a memcached response"))?;
        let (core, pkt) = self.settle(queue, opaque, at)?;
        let sport = u16::from_be_bytes([frame[34], frame[35]]);
        let dport = u16::from_be_bytes([frame[36], frame[37]]);
        if sport != self.cfg.base_port.wrapping_add(core as u16) || dport != CLIENT_UDP_PORT {
            return Err(format!("the response to frame {opaque:#x} has wrong UDP ports ({sport:#x} -> {dport:#x})"));
        }
        let csum = u16::from_be_bytes([frame[40], frame[41]]);
        if !ipv4_checksum_ok(frame) || (csum != 0 && csum != udp_checksum(frame, end)) {
            return Err(format!("the response to frame {opaque:#x} has a bad IPv4 or UDP checksum"));
        }
        let (req_id, msgs) = memcached_binary::decode_datagram(&frame[MCD_PAYLOAD_OFF..end])
            .map_err(|e| format!("the response to frame {opaque:#x}: {e}"))?;
        if req_id != opaque as u16 {
            return Err(format!(
                "the response to frame {opaque:#x} has request id {req_id:#x}; the frame had id {:#x}",
                opaque as u16
            ));
        }
        self.check_mcd_messages(opaque, &pkt, &msgs)
    }

    /// Check the responses to frame `opaque` (`pkt`, already settled), one per request in order, whatever carried
    /// them (a UDP datagram, or a TCP stream).
    pub(super) fn check_mcd_messages(
        &mut self,
        opaque: u32,
        pkt: &Pkt,
        msgs: &[memcached_binary::Response],
    ) -> CResult<()> {
        if msgs.len() != pkt.reqs.len() {
            return Err(format!(
                "the response to frame {opaque:#x} has {} responses; the frame had {} requests",
                msgs.len(),
                pkt.reqs.len()
            ));
        }
        for (i, (r, m)) in pkt.reqs.iter().zip(msgs).enumerate() {
            let what = |msg: String| format!("frame {opaque:#x} request {i} (item {}, op {}): {msg}", r.item, r.op);
            if m.opcode != opcode(r.op) as u8 || m.opaque != opaque || !m.key.is_empty() {
                return Err(what(format!("echo mismatch: opcode {:#04x}, opaque {:#x}", m.opcode, m.opaque)));
            }
            self.stats.responses_checked += 1;
            let p = self.partition(r.keyhash);
            let evicts = self.evictable[p];
            match r.op {
                OP_PUT => {
                    if m.status != status::OK || !m.value.is_empty() || !m.extras.is_empty() {
                        return Err(what(format!("SET answered with status {:#06x}", m.status)));
                    }
                    self.store.ack(r.item, r.ver, r.mark, pkt.load);
                    if !pkt.load {
                        self.stats.puts += 1;
                    }
                }
                OP_DELETE => {
                    let prior = r.mark as u32;
                    let ok = match m.status {
                        status::OK => self.live_in(r.item, prior, r.ver - 1).next().is_some(),
                        status::KEY_ENOENT => evicts || self.absent_in(r.item, prior, r.ver - 1),
                        _ => false,
                    };
                    if !ok || !m.value.is_empty() {
                        return Err(what(format!(
                            "DELETE answered with status {:#06x}, which no version {prior}..={} explains",
                            m.status,
                            r.ver - 1
                        )));
                    }
                    self.store.ack(r.item, r.ver, 0, pkt.load);
                    self.stats.deletes += 1;
                }
                _ => {
                    self.stats.gets += 1;
                    let (lo, hi) = (r.ver, self.store.sent(r.item));
                    match m.status {
                        status::OK => {
                            if m.value.len() != self.cfg.val_len || m.extras.len() != GET_EXTRAS {
                                return Err(what(format!("GET hit with value length {}", m.value.len())));
                            }
                            let flags = u32::from_be_bytes(m.extras[..4].try_into().unwrap());
                            let right = self.live_in(r.item, lo, hi).any(|v| {
                                flags == flags_of(r.item, v) && value_of(r.item, v, self.cfg.val_len) == m.value
                            });
                            if !right {
                                return Err(what(format!(
                                    "wrong value or flags: they are none of the stored versions {lo}..={hi}"
                                )));
                            }
                            self.stats.hits += 1;
                        }
                        status::KEY_ENOENT => {
                            if !(evicts || self.absent_in(r.item, lo, hi)) || m.value != NOT_FOUND {
                                return Err(what(format!(
                                    "GET miss that neither a DELETE nor an eviction explains (version {lo} \
                                     acknowledged, {hi} sent; the instance holds {} items)",
                                    self.cfg.mcd.as_ref().map_or(0, |s| s.capacity)
                                )));
                            }
                            self.stats.misses += 1;
                        }
                        s => return Err(what(format!("GET answered with status {s:#06x}"))),
                    }
                }
            }
            if !pkt.load {
                self.stats.requests += 1;
            }
        }
        Ok(())
    }
}
