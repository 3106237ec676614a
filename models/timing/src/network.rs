//! The on-chip network as the memory system sees it. The memory system sends coherence messages (requests,
//! forwards, invalidations, acknowledgements, data) between agents; the network answers when each arrives. Any
//! topology (a cluster crossbar, a 2D mesh of clusters, a ring as a 1-D mesh, an ideal network for tests) stands
//! in behind this trait, so the memory system never knows which one it talks to.

use crate::{StatSink, Tick};

/// An agent's endpoint on the network: an index into the placement's table of endpoints (cores, LLC slices,
/// directory homes, memory controllers, I/O agents). The network maps each endpoint to its router.
pub type Endpoint = u16;

/// Bytes of a control message (request, forward, invalidation, acknowledgement): header only.
pub const CONTROL_BYTES: u32 = 8;
/// Bytes of a data message: header plus one 64-byte line.
pub const DATA_BYTES: u32 = 72;

/// A network that carries messages between endpoints and books its links as it does.
pub trait Network {
    /// A message of `bytes` leaves `src` at `t` for `dst`; returns the tick its last flit arrives. Books the links it
    /// crosses (so messages that share a link serialise) and counts flits and hops. `src == dst` returns `t`.
    fn send(&mut self, src: Endpoint, dst: Endpoint, bytes: u32, t: Tick) -> Tick;
    /// The unloaded latency of the same message, booking nothing (for warming, which keeps no time).
    fn latency(&self, src: Endpoint, dst: Endpoint, bytes: u32) -> Tick;
    /// The cluster of an endpoint (the first level of the two-level directory).
    fn cluster_of(&self, e: Endpoint) -> u16;
    /// Append statistics (flits and hops per router and link, utilisation), names prefixed with `prefix`.
    fn stats(&self, _prefix: &str, _now: Tick, _out: &mut StatSink) {}
    fn reset_stats(&mut self) {}
}

/// Where every agent of one socket sits: endpoint ids, assigned by the platform's configuration (never by models).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// Endpoint of each core (its private caches share it).
    pub core: Vec<Endpoint>,
    /// Endpoint of each LLC slice (the directory home of the lines interleaved onto it is the same endpoint).
    pub llc_slice: Vec<Endpoint>,
    /// Endpoint of each memory controller.
    pub mem_ctrl: Vec<Endpoint>,
    /// Endpoint of each I/O agent (a NIC's DMA port).
    pub io: Vec<Endpoint>,
}

/// Every message takes the same latency and nothing contends: for unit tests and idealised studies.
#[derive(Debug, Clone)]
pub struct IdealNetwork {
    pub latency: Tick,
    /// Cluster of each endpoint (all in cluster 0 when empty).
    pub clusters: Vec<u16>,
    pub messages: u64,
}

impl IdealNetwork {
    pub fn new(latency: Tick) -> Self {
        IdealNetwork { latency, clusters: Vec::new(), messages: 0 }
    }
}

impl Network for IdealNetwork {
    fn send(&mut self, src: Endpoint, dst: Endpoint, bytes: u32, t: Tick) -> Tick {
        if src == dst {
            return t;
        }
        self.messages += 1;
        t + self.latency(src, dst, bytes)
    }
    fn latency(&self, src: Endpoint, dst: Endpoint, _bytes: u32) -> Tick {
        if src == dst {
            0
        } else {
            self.latency
        }
    }
    fn cluster_of(&self, e: Endpoint) -> u16 {
        self.clusters.get(e as usize).copied().unwrap_or(0)
    }
    fn stats(&self, prefix: &str, _now: Tick, out: &mut StatSink) {
        out.add(prefix, "messages", self.messages as f64, "messages carried");
    }
    fn reset_stats(&mut self) {
        self.messages = 0;
    }
}
