//! The memory system's side of the messages between sockets ([`super::socket_messages`]): a message of the walk
//! sent on the network and, when it crosses sockets, posted to its sending socket's outbox; the outboxes' accessors.
//! Apart from the message types so that the walk (`hierarchy.rs`) and this `impl` use them without using each other.

use super::hierarchy::MemSystem;
use super::socket_messages::{MsgKind, SocketOutboxes};
use super::Mode;
use crate::network::Endpoint;
use crate::{MemPort, Tick};

impl<M: MemPort> MemSystem<M> {
    /// A message of `kind` over the network (posted to its socket's outbox when it crosses sockets); warming
    /// books nothing and keeps no time.
    #[inline]
    pub(super) fn msg(&mut self, mode: Mode, kind: MsgKind, src: Endpoint, dst: Endpoint, bytes: u32, t: Tick) -> Tick {
        match mode {
            Mode::Timed => {
                let arrives = self.net.send(src, dst, bytes, t);
                if let Some(o) = self.outboxes.as_deref_mut() {
                    o.post(kind, src, dst, bytes, t, arrives);
                }
                arrives
            }
            Mode::Warm => t,
        }
    }

    /// The sockets' outboxes (None on one socket).
    pub fn socket_messages(&self) -> Option<&SocketOutboxes> {
        self.outboxes.as_deref()
    }

    /// List the counts per kind in the statistics (`SocketOutboxes::stats`); nothing on one socket.
    pub fn report_socket_messages(&mut self) {
        if let Some(o) = self.outboxes.as_deref_mut() {
            o.report = true;
        }
    }

    /// Keep every message between sockets from now on (`SocketOutboxes::log`); nothing on one socket.
    pub fn keep_socket_message_log(&mut self) {
        if let Some(o) = self.outboxes.as_deref_mut() {
            o.keep_log();
        }
    }
}
