//! How a device reaches memory: the `DmaPort` trait, and its implementation for a plain function (address, write,
//! time) -> completion, which unit tests use as a memory model. The memory system's ports (the engine's timing
//! hook, `bus::AgentPort`) implement it elsewhere; this file holds only the trait and that implementation.

/// How a device reaches memory: a DMA access (address, write or read, the time it reaches the host) in, the time
/// the memory system has done it out, on behalf of the device's agent id. The memory system's I/O path is coherent:
/// the access enters as that agent at the agent's place on the on-chip network (`AgentPort` names the agent).
/// An access for one of the device's queues also names the hart that owns the queue (a memory with a port per
/// core serves it on that hart's port).
pub trait DmaPort {
    /// The agent the accesses come from (cores are agents 0..harts, NIC k is agent harts + k).
    fn agent(&self) -> usize;
    fn access(&mut self, addr: u64, write: bool, t: u64) -> u64 {
        let agent = self.agent();
        self.access_as(agent, None, addr, write, t)
    }
    /// An access for the device's queue `queue` (its index in the device): on behalf of the hart owning it when
    /// the port knows the owners (`AgentPort`), else as `access`.
    fn queue_access(&mut self, _queue: usize, addr: u64, write: bool, t: u64) -> u64 {
        self.access(addr, write, t)
    }
    /// The access on behalf of `agent` (a port that forwards other devices' accesses keeps their id), for the hart
    /// `owner` when a hart owns it.
    fn access_as(&mut self, agent: usize, owner: Option<usize>, addr: u64, write: bool, t: u64) -> u64;
}

/// A memory model as a function (address, write, time) -> completion that ignores the agent (unit tests use
/// bare functions; the agent is 0 unless wrapped in an `AgentPort`).
impl<F: FnMut(u64, bool, u64) -> u64> DmaPort for F {
    fn agent(&self) -> usize {
        0
    }

    fn access_as(&mut self, _agent: usize, _owner: Option<usize>, addr: u64, write: bool, t: u64) -> u64 {
        self(addr, write, t)
    }
}
