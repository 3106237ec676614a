//! The messages between sockets' memory parts (issue 24 item 5, `models/engine/engine/HOST_THREADS.md`, blocker
//! 1). Every message of the walk names what it is ([`MsgKind`]); on several sockets, each message whose source and
//! destination are on different sockets is also posted to its sending socket's outbox ([`SocketOutboxes`]) with
//! when it left and when it arrived. The walk still runs synchronously on one thread and books the links as it
//! goes (the outboxes only record: nothing here changes a time), so this is the list of exactly what a partition
//! would hand another at a window's boundary: per sending socket, per receiving socket, per kind, in send order.
//!
//! The receiving part of each kind: a [`MsgKind::Request`] or [`MsgKind::Dma`] goes to the line's home slice and
//! directory; a [`MsgKind::Forward`] or [`MsgKind::Invalidate`] to a core's private caches or (remote lines) to
//! another socket's LLC slice; [`MsgKind::Data`], [`MsgKind::Grant`] and [`MsgKind::Ack`] to the requester (a core,
//! an I/O agent, or the home collecting acknowledgements); [`MsgKind::WriteBack`], [`MsgKind::Put`] and
//! [`MsgKind::CopyDropped`] to the home.

use crate::network::Endpoint;
use crate::{StatSink, Tick};

/// What a message of the memory walk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum MsgKind {
    /// A core's request (GETS, GETX, upgrade) on its way to a directory: its cluster's, its socket's slice (remote
    /// lines) or the line's home.
    Request = 0,
    /// A directory asks the owning core to send the line to the requester.
    Forward = 1,
    /// A line's data on its way to the requester.
    Data = 2,
    /// Write permission for a core that already holds the data (an upgrade).
    Grant = 3,
    /// A directory invalidates a core's private copies or another socket's LLC copy.
    Invalidate = 4,
    /// The acknowledgement of an invalidation.
    Ack = 5,
    /// Dirty data on its way home (a PUTX, or a write-back that keeps a clean copy).
    WriteBack = 6,
    /// A clean copy left a core's private caches (PUTS): keeps the directory's sharers exact.
    Put = 7,
    /// A socket's LLC dropped its copy of a line homed elsewhere (remote lines): keeps the home's socket set exact.
    CopyDropped = 8,
    /// An I/O agent's DMA request (a write carries its line).
    Dma = 9,
}

/// Every kind, in the order of their numbers.
pub const KINDS: [MsgKind; 10] = [
    MsgKind::Request,
    MsgKind::Forward,
    MsgKind::Data,
    MsgKind::Grant,
    MsgKind::Invalidate,
    MsgKind::Ack,
    MsgKind::WriteBack,
    MsgKind::Put,
    MsgKind::CopyDropped,
    MsgKind::Dma,
];

impl MsgKind {
    pub fn name(self) -> &'static str {
        match self {
            MsgKind::Request => "request",
            MsgKind::Forward => "forward",
            MsgKind::Data => "data",
            MsgKind::Grant => "grant",
            MsgKind::Invalidate => "invalidate",
            MsgKind::Ack => "ack",
            MsgKind::WriteBack => "write_back",
            MsgKind::Put => "put",
            MsgKind::CopyDropped => "copy_dropped",
            MsgKind::Dma => "dma",
        }
    }
}

/// One message from one socket's memory parts to another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocketMessage {
    pub kind: MsgKind,
    pub from: u16,
    pub to: u16,
    /// Its size on chip (header and payload), as the links count it.
    pub bytes: u32,
    /// When it left its source endpoint, and when it reached its destination (after both sockets' networks and
    /// the link).
    pub sent: Tick,
    pub arrives: Tick,
}

/// Every socket's outbox: what each sent each other socket, counted per kind, and (when the log is on) each
/// message in send order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketOutboxes {
    sockets: usize,
    /// The socket of each endpoint of the system network.
    endpoint_socket: Vec<u16>,
    /// Messages from socket a to socket b of each kind, at `(a * sockets + b) * KINDS.len() + kind`.
    counts: Vec<u64>,
    log: Option<Vec<SocketMessage>>,
    /// Whether the statistics list the counts (the partitioned schedule's runs: what its partitions exchange).
    pub(super) report: bool,
    /// The partitioned schedule: the posted `Put`s to another socket's home sent in the current window, delivered
    /// at its end (`MemSystem::deliver_posted`; None: every message takes effect as its walk sends it).
    pub(super) posted: Option<Vec<PostedPut>>,
    /// Messages that crossed sockets since the start (`sent_across`).
    sent_across: u64,
}

/// What the home of a line on another socket hears at the window's end: a core's clean copy left its private caches
/// (the `Put`), or (`share`) a core took a copy from its own socket's LLC copy of the line, which the home lists it
/// for (no message of its own in the model: the socket's slice keeps its cores' copies and tells the home).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostedPut {
    pub share: bool,
    /// The sending core's socket (the delivery order's first key).
    pub from: u16,
    pub core: u16,
    pub line: u64,
    /// The core's endpoint and the home slice's, as the walk saw them when it sent.
    pub src: Endpoint,
    pub home: Endpoint,
    pub sent: Tick,
}

impl SocketOutboxes {
    /// The outboxes of `sockets` sockets whose network puts endpoint e on socket `endpoint_socket[e]`.
    pub fn new(sockets: usize, endpoint_socket: Vec<u16>) -> Self {
        SocketOutboxes {
            sockets,
            endpoint_socket,
            counts: vec![0; sockets * sockets * KINDS.len()],
            log: None,
            report: false,
            posted: None,
            sent_across: 0,
        }
    }

    /// Every message that crossed sockets since the start, never reset: the partitioned schedule's check that an
    /// instruction timed in its partition's turn sent none (`TimingSystem::on_inst_in_turn`).
    #[inline]
    pub fn sent_across(&self) -> u64 {
        self.sent_across
    }

    /// A message of the walk left `src` at `sent` and reached `dst` at `arrives`: posted if it crossed sockets.
    #[inline]
    pub fn post(&mut self, kind: MsgKind, src: Endpoint, dst: Endpoint, bytes: u32, sent: Tick, arrives: Tick) {
        let (from, to) = (self.endpoint_socket[src as usize], self.endpoint_socket[dst as usize]);
        if from == to {
            return;
        }
        self.counts[(from as usize * self.sockets + to as usize) * KINDS.len() + kind as usize] += 1;
        self.sent_across += 1;
        if let Some(log) = &mut self.log {
            log.push(SocketMessage { kind, from, to, bytes, sent, arrives });
        }
    }

    /// Messages of `kind` socket `from` sent socket `to` since the last reset.
    pub fn count(&self, from: usize, to: usize, kind: MsgKind) -> u64 {
        self.counts[(from * self.sockets + to) * KINDS.len() + kind as usize]
    }

    /// Messages of every kind socket `from` sent socket `to` since the last reset.
    pub fn total(&self, from: usize, to: usize) -> u64 {
        KINDS.iter().map(|&k| self.count(from, to, k)).sum()
    }

    pub fn sockets(&self) -> usize {
        self.sockets
    }

    /// Keep every message from now on (tests and measurements; the counts are always kept).
    pub fn keep_log(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }

    /// The messages kept since `keep_log` (and the last reset), in send order.
    pub fn log(&self) -> &[SocketMessage] {
        self.log.as_deref().unwrap_or(&[])
    }

    /// Each direction's messages per kind, `{prefix}link{a}_{b}.messages.{kind}` (they add up to the link's
    /// `messages`), when reported.
    pub fn stats(&self, prefix: &str, out: &mut StatSink) {
        if !self.report {
            return;
        }
        for (a, b) in (0..self.sockets).flat_map(|a| (0..self.sockets).map(move |b| (a, b))).filter(|(a, b)| a != b) {
            let p = prefix.to_owned() + &kvsim_params::paths::socket_link(a, b);
            for kind in KINDS {
                let what = "messages of this kind that crossed in this direction (schedule = 'partitioned')";
                out.add(&p, &format!("messages.{}", kind.name()), self.count(a, b, kind) as f64, what);
            }
        }
    }

    /// Start the counts and the log afresh (with the memory system's statistics).
    pub fn reset(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        if let Some(log) = &mut self.log {
            log.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_messages_between_two_sockets_are_posted_per_direction_and_kind() {
        // Endpoints 0, 1 on socket 0; 2 on socket 1; 3 on socket 2.
        let mut o = SocketOutboxes::new(3, vec![0, 0, 1, 2]);
        o.keep_log();
        o.post(MsgKind::Request, 0, 1, 8, 10, 20);
        o.post(MsgKind::Request, 1, 2, 8, 10, 30_000);
        o.post(MsgKind::Data, 2, 0, 72, 30_000, 55_000);
        o.post(MsgKind::Invalidate, 3, 2, 8, 5, 21_000);
        assert_eq!((o.count(0, 1, MsgKind::Request), o.count(1, 0, MsgKind::Data)), (1, 1));
        assert_eq!((o.count(2, 1, MsgKind::Invalidate), o.total(0, 2), o.total(0, 0)), (1, 0, 0));
        let kinds: Vec<MsgKind> = o.log().iter().map(|m| m.kind).collect();
        assert_eq!(kinds, [MsgKind::Request, MsgKind::Data, MsgKind::Invalidate]);
        assert_eq!(
            o.log()[1],
            SocketMessage { kind: MsgKind::Data, from: 1, to: 0, bytes: 72, sent: 30_000, arrives: 55_000 }
        );
        o.reset();
        assert_eq!((o.total(0, 1), o.log().len()), (0, 0));
    }
}
