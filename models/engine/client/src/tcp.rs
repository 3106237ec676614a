//! The client's TCP (`Client.transport = 'tcp'`), speaking to the memcached-class server's guest TCP
//! (workloads/mcd/mcd_tcp.c).
//!
//! * Connections: `tcp_connections` per server instance, connection k from client port `CLIENT_TCP_PORT_BASE + k`
//!   to the instance's port (`base + core`); frames of requests for an instance take its connections in turn. They
//!   are opened after the server's queues are ready and before the bulk load, with the three-way handshake (the
//!   SYN carries the MSS option `tcp_mss`; the server's SYN-ACK must acknowledge exactly the SYN).
//! * Sending: a frame of requests (`Pkt`) becomes bytes of the connection's stream (binary-protocol messages, no
//!   UDP frame header); segments of at most min(`tcp_mss`, the server's MSS) bytes leave while the server's
//!   advertised window has room and the instance has fewer than `Client.tcp_segments` (by default
//!   `Client.window`) data segments unacknowledged (so that segments never overrun the server's RX ring, as frames
//!   do not over UDP), every one with the ACK of
//!   everything received piggybacked. Received data not yet
//!   acknowledged by a data segment at the end of a client step gets a bare ACK (the server frees its send
//!   buffer on ACKs, and sends what its window held back).
//! * Receiving, every segment checked: IPv4 and TCP checksums (the pseudo-header), the ports of a connection, the
//!   queue of its instance, no RST, a SYN only in the handshake, the sequence number exactly the next byte
//!   expected (the NIC keeps order and loses nothing in closed loop, so anything else is a server bug), the ACK
//!   number within what was sent. The data joins the connection's stream; every whole response message is taken
//!   off it (a message may span segments); once a frame's responses are all there they are checked as over UDP
//!   (`memcached.rs`). Responses must come in the order the frames were sent on the connection.
//! * Nothing is retransmitted: a segment the NIC drops fails the run (`Client.transport` says so; open loop, where
//!   the NIC may drop, is refused for TCP). Connections are not closed at the end (the run stops).

use std::collections::VecDeque;

use super::wire::ipv4_checksum_ok;
use super::*;
use crate::memcached_binary::{self, Response, BIN_HDR_LEN, MAGIC_RESPONSE, UDP_FRAME_HDR_LEN};

/// Ethernet + IPv4 + TCP headers without options.
pub const TCP_HDRS: usize = 54;
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;
/// Connection k's client port is this + k.
pub const CLIENT_TCP_PORT_BASE: u16 = 0x9000;
/// The client's advertised window: a ghost takes whatever arrives, so the largest window without scaling.
const CLIENT_WINDOW: u16 = 65535;
/// A peer's MSS when its SYN has no MSS option (RFC 879).
const DEFAULT_MSS: usize = 536;
/// The client's addresses (those of `wire::push_udp_headers`: the client 10.0.0.1, the server 10.0.0.2).
const CLIENT_IP: [u8; 4] = [10, 0, 0, 1];
const SERVER_IP: [u8; 4] = [10, 0, 0, 2];

/// The TCP transport's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpConfig {
    /// Connections per server instance.
    pub connections: usize,
    /// The client's MSS (it sends no larger segments, and asks the server for none larger).
    pub mss: usize,
    /// Data segments unacknowledged per instance at most (`Client.tcp_segments`, or `Client.window`).
    pub segments: u64,
}

/// Where the client's frames go: the NICs, or a list in tests. `t` is the send time in detailed timing; the
/// result is the frame's start on the wire (0 without timing), None when the NIC refused the frame.
pub(super) trait Wire {
    fn put(&mut self, port: usize, frame: Vec<u8>, t: Option<u64>) -> Option<u64>;
}

impl Wire for dyn NicPort + '_ {
    fn put(&mut self, port: usize, frame: Vec<u8>, t: Option<u64>) -> Option<u64> {
        match t {
            Some(t) => Some(self.wire_send(port, frame, t)),
            None => self.receive(port, frame).map(|_| 0),
        }
    }
}

impl Wire for Vec<(usize, Vec<u8>)> {
    fn put(&mut self, port: usize, frame: Vec<u8>, t: Option<u64>) -> Option<u64> {
        self.push((port, frame));
        Some(t.unwrap_or(0))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) enum TcpState {
    Closed,
    SynSent,
    Established,
}

/// The client's end of one connection.
#[derive(Debug, Clone)]
pub(super) struct TcpConn {
    pub core: usize,
    pub port: u16,
    pub state: TcpState,
    pub iss: u32,
    /// Oldest unacknowledged, next to send; the server's window and MSS.
    pub snd_una: u32,
    pub snd_nxt: u32,
    pub snd_wnd: u32,
    pub mss: usize,
    /// Next byte expected from the server; the last acknowledgement sent.
    pub rcv_nxt: u32,
    pub ack_sent: u32,
    ip_id: u16,
    /// Request bytes written and not yet sent.
    unsent: VecDeque<u8>,
    /// Stream offsets: bytes sent, bytes written.
    sent_off: u64,
    written_off: u64,
    /// Frames whose first byte is not on the wire yet: (stream offset of that byte, frame id).
    starts: VecDeque<(u64, u32)>,
    /// Where each data segment in flight ends (sequence numbers): a segment counts against the instance's
    /// `Client.window` until the server acknowledges it, so the client never overruns the server's RX ring.
    seg_ends: VecDeque<u32>,
    /// Frames sent on this connection and not yet answered, in order.
    pub awaiting: VecDeque<u32>,
    /// Response bytes received and not yet parsed into messages; the messages of the first awaiting frame so far.
    rx: Vec<u8>,
    got: Vec<Response>,
}

impl TcpConn {
    fn new(core: usize, k: usize) -> TcpConn {
        // Initial sequence numbers: distinct per connection and close to the wrap of the 32-bit space, so runs
        // cross it (deterministic; a real stack hashes the 4-tuple with a clock, RFC 6528).
        let iss = 0xffff_0000u32.wrapping_add((k as u32).wrapping_mul(0x0100_0193));
        TcpConn {
            core,
            port: CLIENT_TCP_PORT_BASE.wrapping_add(k as u16),
            state: TcpState::Closed,
            iss,
            snd_una: iss,
            snd_nxt: iss,
            snd_wnd: 0,
            mss: DEFAULT_MSS,
            rcv_nxt: 0,
            ack_sent: 0,
            ip_id: 0,
            unsent: VecDeque::new(),
            sent_off: 0,
            written_off: 0,
            starts: VecDeque::new(),
            seg_ends: VecDeque::new(),
            awaiting: VecDeque::new(),
            rx: Vec::new(),
            got: Vec::new(),
        }
    }
}

/// What a checkpoint keeps of one connection: its sequence space and stream offsets. Taken only when the
/// connection is quiet (nothing unsent, unacknowledged, awaited or half-received), so its queues need no saving;
/// the guest kernel's end of the connection is in the machine's memory, and a bare ACK still on the wire is in
/// the wire's saved frames.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SavedTcpConn {
    state: TcpState,
    iss: u32,
    snd_una: u32,
    snd_nxt: u32,
    snd_wnd: u32,
    mss: usize,
    rcv_nxt: u32,
    ack_sent: u32,
    ip_id: u16,
    sent_off: u64,
    written_off: u64,
}

impl TcpConn {
    /// The connection's state for a checkpoint; refused (naming what is pending) unless it is established and
    /// quiet.
    pub(super) fn save(&self, k: usize) -> CResult<SavedTcpConn> {
        let pending = [
            (self.state != TcpState::Established, "is not established"),
            (!self.unsent.is_empty() || !self.starts.is_empty(), "has request bytes not yet sent"),
            (self.snd_una != self.snd_nxt || !self.seg_ends.is_empty(), "has segments the server has not acknowledged"),
            (!self.awaiting.is_empty() || !self.rx.is_empty() || !self.got.is_empty(), "awaits responses"),
        ];
        if let Some((_, why)) = pending.iter().find(|(p, _)| *p) {
            return Err(format!("TCP connection {k} (instance {}) {why}", self.core));
        }
        Ok(SavedTcpConn {
            state: self.state,
            iss: self.iss,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            snd_wnd: self.snd_wnd,
            mss: self.mss,
            rcv_nxt: self.rcv_nxt,
            ack_sent: self.ack_sent,
            ip_id: self.ip_id,
            sent_off: self.sent_off,
            written_off: self.written_off,
        })
    }

    /// Take a checkpoint's state (this connection was just built, with its queues empty).
    pub(super) fn restore(&mut self, s: SavedTcpConn) {
        (self.state, self.iss, self.snd_una, self.snd_nxt, self.snd_wnd) =
            (s.state, s.iss, s.snd_una, s.snd_nxt, s.snd_wnd);
        (self.mss, self.rcv_nxt, self.ack_sent, self.ip_id) = (s.mss, s.rcv_nxt, s.ack_sent, s.ip_id);
        (self.sent_off, self.written_off) = (s.sent_off, s.written_off);
    }
}

/// One received segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    pub mss: Option<u16>,
    pub payload: Vec<u8>,
}

fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn sum16(bytes: &[u8]) -> u32 {
    bytes.chunks(2).map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32).sum()
}

/// The TCP checksum of a segment (header with its checksum field as it is, and data) between the frame's IPv4
/// addresses: 0 when a received checksum is right.
fn tcp_sum(frame: &[u8], tcp: &[u8]) -> u16 {
    fold(sum16(&frame[26..34]) + 6 + tcp.len() as u32 + sum16(tcp))
}

/// A segment from the client (port `sport`) to the server (port `dport`), with both checksums.
#[allow(clippy::too_many_arguments)]
pub fn build_segment(
    sport: u16,
    dport: u16,
    ip_id: u16,
    seq: u32,
    ack: u32,
    flags: u8,
    window: u16,
    mss: Option<u16>,
    payload: &[u8],
) -> Vec<u8> {
    let hlen = 20 + if mss.is_some() { 4 } else { 0 };
    let tcp_len = hlen + payload.len();
    let mut f = Vec::with_capacity(34 + tcp_len);
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01]);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&((20 + tcp_len) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&ip_id.to_be_bytes());
    ip[6] = 0x40; // don't fragment
    ip[8] = 64;
    ip[9] = 6;
    ip[12..16].copy_from_slice(&CLIENT_IP);
    ip[16..20].copy_from_slice(&SERVER_IP);
    let c = ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend_from_slice(&ack.to_be_bytes());
    f.push(((hlen / 4) << 4) as u8);
    f.push(flags);
    f.extend_from_slice(&window.to_be_bytes());
    f.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    if let Some(m) = mss {
        f.extend_from_slice(&[2, 4]);
        f.extend_from_slice(&m.to_be_bytes());
    }
    f.extend_from_slice(payload);
    let c = tcp_sum(&f, &f[34..]);
    f[50..52].copy_from_slice(&c.to_be_bytes());
    f
}

/// Check and split a frame from the server: Ethernet II, IPv4 without options (its checksum), TCP (its checksum
/// with the pseudo-header, its data offset and options). Frames shorter than 60 bytes arrive padded: the IPv4
/// length counts.
pub fn parse_segment(frame: &[u8]) -> Result<Segment, String> {
    if frame.len() < TCP_HDRS || frame[12..14] != [0x08, 0x00] || frame[14] != 0x45 || frame[23] != 6 {
        return Err("not an IPv4/TCP frame".into());
    }
    let total = u16::from_be_bytes([frame[16], frame[17]]) as usize;
    if total < 40 || 14 + total > frame.len() {
        return Err(format!("IPv4 length {total} disagrees with the frame's {} bytes", frame.len()));
    }
    if !ipv4_checksum_ok(frame) {
        return Err("bad IPv4 header checksum".into());
    }
    let tcp = &frame[34..14 + total];
    if tcp_sum(frame, tcp) != 0 {
        return Err("bad TCP checksum".into());
    }
    let off = (tcp[12] >> 4) as usize * 4;
    if off < 20 || off > tcp.len() {
        return Err(format!("TCP data offset {off} out of range"));
    }
    let mut mss = None;
    let mut o = 20;
    while o < off {
        match tcp[o] {
            0 => break,
            1 => o += 1,
            kind => {
                let len = *tcp.get(o + 1).unwrap_or(&0) as usize;
                if len < 2 || o + len > off {
                    return Err("malformed TCP option".into());
                }
                if kind == 2 && len == 4 {
                    mss = Some(u16::from_be_bytes([tcp[o + 2], tcp[o + 3]]));
                }
                o += len;
            }
        }
    }
    let be32 = |b: &[u8]| u32::from_be_bytes(b.try_into().unwrap());
    Ok(Segment {
        sport: u16::from_be_bytes([tcp[0], tcp[1]]),
        dport: u16::from_be_bytes([tcp[2], tcp[3]]),
        seq: be32(&tcp[4..8]),
        ack: be32(&tcp[8..12]),
        flags: tcp[13] & 0x3f,
        window: u16::from_be_bytes([tcp[14], tcp[15]]),
        mss,
        payload: tcp[off..].to_vec(),
    })
}

/// a before-or-at b in the sequence space.
fn seq_le(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) >= 0
}

/// Take one whole response message off the front of `rx` (None: not all there yet).
fn take_message(rx: &mut Vec<u8>) -> CResult<Option<Response>> {
    if rx.is_empty() {
        return Ok(None);
    }
    if rx[0] != MAGIC_RESPONSE {
        return Err(format!("the stream holds {:#04x} where a response message starts", rx[0]));
    }
    if rx.len() < BIN_HDR_LEN {
        return Ok(None);
    }
    let total = BIN_HDR_LEN + u32::from_be_bytes(rx[8..12].try_into().unwrap()) as usize;
    if rx.len() < total {
        return Ok(None);
    }
    // The codec reads datagrams: give it this one message behind a single-datagram header.
    let mut dgram = vec![0, 0, 0, 0, 0, 1, 0, 0];
    dgram.extend(rx.drain(..total));
    debug_assert_eq!(dgram.len(), UDP_FRAME_HDR_LEN + total);
    let (_, mut msgs) = memcached_binary::decode_datagram(&dgram).map_err(|e| e.to_string())?;
    Ok(msgs.pop())
}

impl Client {
    /// Connection `k` of instance `core` is `core * connections + k`.
    pub(super) fn tcp_init(&mut self) {
        if let Some(t) = self.cfg.tcp {
            self.tcp = (0..self.cfg.cores * t.connections).map(|k| TcpConn::new(k / t.connections, k)).collect();
            self.tcp_next = vec![0; self.cfg.cores];
            self.tcp_segs_out = vec![0; self.cfg.cores];
        }
    }

    fn port_of_core(&self, core: usize) -> usize {
        self.cfg.queue_port[self.cfg.core_queue[core]]
    }

    /// Put one of connection k's segments on the wire; a segment the NIC refuses fails the run (no retransmission).
    fn tcp_emit<W: Wire + ?Sized>(&mut self, wire: &mut W, k: usize, frame: Vec<u8>) -> u64 {
        let port = self.port_of_core(self.tcp[k].core);
        self.tcp[k].ip_id = self.tcp[k].ip_id.wrapping_add(1);
        self.tcp_stats.segments_sent += 1;
        match wire.put(port, frame, self.send_at) {
            Some(t) => t,
            None => {
                self.tcp_failure.get_or_insert(format!(
                    "the NIC dropped a TCP segment of connection {k} (instance {}): the TCP transport does not \
                     retransmit (Client.transport = 'tcp' needs a NIC that never drops in closed loop)",
                    self.tcp[k].core
                ));
                0
            }
        }
    }

    /// Send every connection's SYN (with the MSS option).
    pub(super) fn tcp_open<W: Wire + ?Sized>(&mut self, wire: &mut W) {
        let mss = self.cfg.tcp.map_or(DEFAULT_MSS, |t| t.mss) as u16;
        for k in 0..self.tcp.len() {
            let c = &mut self.tcp[k];
            c.state = TcpState::SynSent;
            c.snd_nxt = c.iss.wrapping_add(1);
            let dport = self.cfg.base_port.wrapping_add(c.core as u16);
            let f = build_segment(c.port, dport, c.ip_id, c.iss, 0, SYN, CLIENT_WINDOW, Some(mss), &[]);
            self.tcp_emit(wire, k, f);
        }
    }

    /// Send what the windows allow on every connection of `core`'s instance.
    pub(super) fn tcp_push_core<W: Wire + ?Sized>(&mut self, wire: &mut W, core: usize) {
        let per = self.cfg.tcp.map_or(1, |t| t.connections);
        for k in core * per..(core + 1) * per {
            self.tcp_push(wire, k);
        }
    }

    pub(super) fn tcp_all_established(&self) -> bool {
        self.tcp.iter().all(|c| c.state == TcpState::Established)
    }

    /// Write a frame of requests (id `opaque`, already outstanding) to a connection of `core` and send what the
    /// window allows.
    pub(super) fn tcp_write<W: Wire + ?Sized>(&mut self, wire: &mut W, core: usize, opaque: u32, bytes: &[u8]) {
        let per = self.cfg.tcp.map_or(1, |t| t.connections);
        let k = core * per + self.tcp_next[core];
        self.tcp_next[core] = (self.tcp_next[core] + 1) % per;
        let c = &mut self.tcp[k];
        c.starts.push_back((c.written_off, opaque));
        c.awaiting.push_back(opaque);
        c.unsent.extend(bytes);
        c.written_off += bytes.len() as u64;
        self.tcp_push(wire, k);
    }

    /// Send connection k's unsent bytes in segments of at most its MSS while the server's window has room.
    pub(super) fn tcp_push<W: Wire + ?Sized>(&mut self, wire: &mut W, k: usize) {
        let core = self.tcp[k].core;
        let dport = self.cfg.base_port.wrapping_add(core as u16);
        loop {
            if self.tcp_segs_out[core] >= self.cfg.tcp.map_or(self.cfg.window, |t| t.segments) {
                return;
            }
            let c = &mut self.tcp[k];
            let in_flight = c.snd_nxt.wrapping_sub(c.snd_una);
            let n = c.unsent.len().min(c.snd_wnd.saturating_sub(in_flight) as usize).min(c.mss);
            if n == 0 || c.state != TcpState::Established {
                return;
            }
            let payload: Vec<u8> = c.unsent.drain(..n).collect();
            let f =
                build_segment(c.port, dport, c.ip_id, c.snd_nxt, c.rcv_nxt, ACK | PSH, CLIENT_WINDOW, None, &payload);
            c.snd_nxt = c.snd_nxt.wrapping_add(n as u32);
            c.seg_ends.push_back(c.snd_nxt);
            self.tcp_segs_out[core] += 1;
            let c = &mut self.tcp[k];
            c.ack_sent = c.rcv_nxt;
            let (from, to) = (c.sent_off, c.sent_off + n as u64);
            c.sent_off = to;
            let t = self.tcp_emit(wire, k, f);
            // Frames whose first byte left in this segment: their latency counts from here.
            while let Some(&(at, opaque)) = self.tcp[k].starts.front() {
                if at >= to {
                    break;
                }
                debug_assert!(at >= from);
                self.tcp[k].starts.pop_front();
                if let Some((_, pkt)) = self.outstanding.get_mut(&opaque) {
                    if self.send_at.is_some() {
                        pkt.sent_ps = t;
                        if !pkt.load {
                            self.first_send.get_or_insert(t);
                        }
                    }
                }
            }
        }
    }

    /// A bare ACK on every connection with data received since its last acknowledgement.
    pub(super) fn tcp_flush_acks<W: Wire + ?Sized>(&mut self, wire: &mut W) {
        for k in 0..self.tcp.len() {
            let c = &self.tcp[k];
            if c.state != TcpState::Established || c.ack_sent == c.rcv_nxt {
                continue;
            }
            let dport = self.cfg.base_port.wrapping_add(c.core as u16);
            let f = build_segment(c.port, dport, c.ip_id, c.snd_nxt, c.rcv_nxt, ACK, CLIENT_WINDOW, None, &[]);
            self.tcp[k].ack_sent = self.tcp[k].rcv_nxt;
            self.tcp_stats.bare_acks += 1;
            self.tcp_emit(wire, k, f);
        }
    }

    /// Take a segment from the server on `queue` at time `at`: check it, advance the connection, and check every
    /// frame of responses it completes. Returns the connection's index (its window, and its instance's, may have
    /// opened).
    pub(super) fn tcp_receive<W: Wire + ?Sized>(
        &mut self,
        wire: &mut W,
        queue: usize,
        frame: &[u8],
        at: u64,
    ) -> CResult<usize> {
        let seg = parse_segment(frame).map_err(|e| format!("a TCP segment on queue {queue}: {e}"))?;
        self.tcp_stats.segments_received += 1;
        let k = seg.dport.wrapping_sub(CLIENT_TCP_PORT_BASE) as usize;
        let Some(c) = self.tcp.get(k) else {
            return Err(format!("a TCP segment on queue {queue} to port {:#x}, which no connection has", seg.dport));
        };
        let what = |m: String| format!("connection {k} (instance {}): {m}", c.core);
        let core = c.core;
        if seg.sport != self.cfg.base_port.wrapping_add(core as u16) {
            return Err(what(format!("a segment from port {:#x}", seg.sport)));
        }
        let want_q = self.cfg.core_queue[core];
        if queue != want_q {
            return Err(what(format!("a segment came from queue {queue}, not queue {want_q}")));
        }
        if seg.flags & RST != 0 {
            return Err(what("the server reset the connection".into()));
        }
        if c.state == TcpState::SynSent {
            if seg.flags & (SYN | ACK | FIN) != SYN | ACK || seg.ack != c.iss.wrapping_add(1) || !seg.payload.is_empty()
            {
                return Err(what(format!(
                    "the handshake's reply has flags {:#04x} and ACK {:#x} (want SYN+ACK acknowledging {:#x})",
                    seg.flags,
                    seg.ack,
                    c.iss.wrapping_add(1)
                )));
            }
            let mss = self.cfg.tcp.map_or(DEFAULT_MSS, |t| t.mss);
            let c = &mut self.tcp[k];
            c.state = TcpState::Established;
            c.rcv_nxt = seg.seq.wrapping_add(1);
            c.snd_una = seg.ack;
            c.snd_wnd = seg.window as u32;
            c.mss = mss.min(seg.mss.map_or(DEFAULT_MSS, |m| m as usize));
            // The handshake's third segment.
            let dport = seg.sport;
            let f = build_segment(c.port, dport, c.ip_id, c.snd_nxt, c.rcv_nxt, ACK, CLIENT_WINDOW, None, &[]);
            c.ack_sent = c.rcv_nxt;
            self.tcp_stats.handshakes += 1;
            self.tcp_emit(wire, k, f);
            return Ok(k);
        }
        if c.state != TcpState::Established || seg.flags & (SYN | FIN) != 0 || seg.flags & ACK == 0 {
            return Err(what(format!("a segment with flags {:#04x} on an established connection", seg.flags)));
        }
        if seg.seq != c.rcv_nxt {
            return Err(what(format!(
                "wrong sequence number {:#x}, expected {:#x} (the server's segments must come in order, none lost)",
                seg.seq, c.rcv_nxt
            )));
        }
        if !seq_le(c.snd_una, seg.ack) || !seq_le(seg.ack, c.snd_nxt) {
            return Err(what(format!(
                "ACK {:#x} outside what was sent and not yet acknowledged ({:#x}..={:#x})",
                seg.ack, c.snd_una, c.snd_nxt
            )));
        }
        let c = &mut self.tcp[k];
        c.snd_una = seg.ack;
        c.snd_wnd = seg.window as u32;
        while c.seg_ends.front().is_some_and(|&end| seq_le(end, seg.ack)) {
            c.seg_ends.pop_front();
            self.tcp_segs_out[core] -= 1;
        }
        let c = &mut self.tcp[k];
        c.rcv_nxt = c.rcv_nxt.wrapping_add(seg.payload.len() as u32);
        c.rx.extend_from_slice(&seg.payload);
        loop {
            let c = &mut self.tcp[k];
            let Some(m) = take_message(&mut c.rx).map_err(|e| format!("connection {k} (instance {core}): {e}"))? else {
                break;
            };
            let Some(&opaque) = c.awaiting.front() else {
                return Err(format!(
                    "connection {k} (instance {core}): a response to no request (opaque {:#x})",
                    m.opaque
                ));
            };
            c.got.push(m);
            let want = self.outstanding.get(&opaque).map_or(0, |(_, p)| p.reqs.len());
            if self.tcp[k].got.len() < want {
                continue;
            }
            let c = &mut self.tcp[k];
            c.awaiting.pop_front();
            let msgs = std::mem::take(&mut c.got);
            let (_, pkt) = self.settle(queue, opaque, at)?;
            self.check_mcd_messages(opaque, &pkt, &msgs)?;
        }
        Ok(k)
    }
}
