//! The system's memory as the memory system sees it: one memory per socket (each socket's controllers and
//! channels, any [`MemPort`]), and the NUMA map that says which socket's memory holds each address. A request goes
//! to its address's socket; [`MemPort::home_socket`] tells the memory system the same socket, so a line's home LLC
//! slice and its memory controller are on the socket that holds it.
//!
//! A one-socket system has one memory and no map lookups.

use kvsim_params::MemoryController;

use crate::dram::Dram;
use crate::numa::NumaMap;
use crate::{MemPort, MemReq, StatSink, Tick};

/// The memory of one socket, built from its parameters (`MemoryController.kind`): its DDR channels, called
/// directly, or the 3D-stacked DRAM or 3D NAND flash ([`crate::stacked::backing`]) as a [`SocketPort::Other`]. The
/// one place a socket's memory is made.
pub fn socket_memory(p: &MemoryController) -> SocketPort {
    match p.kind {
        kvsim_params::MemoryControllerKind::Ddr => SocketPort::Dram(Box::new(Dram::new(p))),
        _ => SocketPort::Other(crate::stacked::backing(p)),
    }
}

/// One socket's memory: the DRAM model, called directly (every DRAM access of a run goes through here, so the
/// common case takes no virtual call), or any other [`MemPort`].
pub enum SocketPort {
    Dram(Box<Dram>),
    Other(Box<dyn MemPort>),
}

impl SocketPort {
    /// Any memory model.
    pub fn other(port: impl MemPort + 'static) -> Self {
        SocketPort::Other(Box::new(port))
    }
}

impl MemPort for SocketPort {
    #[inline]
    fn access(&mut self, req: &MemReq) -> Tick {
        match self {
            SocketPort::Dram(d) => d.access(req),
            SocketPort::Other(o) => o.access(req),
        }
    }
    fn stats(&self, prefix: &str, now: Tick, out: &mut StatSink) {
        match self {
            SocketPort::Dram(d) => d.stats(prefix, now, out),
            SocketPort::Other(o) => o.stats(prefix, now, out),
        }
    }
    #[inline]
    fn channel_of(&self, addr: u64) -> (usize, usize) {
        match self {
            SocketPort::Dram(d) => d.channel_of(addr),
            SocketPort::Other(o) => o.channel_of(addr),
        }
    }
    fn flush_posted(&mut self, now: Tick) {
        match self {
            SocketPort::Dram(d) => d.flush_posted(now),
            SocketPort::Other(o) => o.flush_posted(now),
        }
    }
    fn reset_port_stats(&mut self, now: Tick) {
        match self {
            SocketPort::Dram(d) => d.reset_port_stats(now),
            SocketPort::Other(o) => o.reset_port_stats(now),
        }
    }
    fn routes_by_owner(&self) -> bool {
        match self {
            SocketPort::Dram(d) => d.routes_by_owner(),
            SocketPort::Other(o) => o.routes_by_owner(),
        }
    }
}

/// Every socket's memory, and the NUMA map routing addresses to them.
pub struct SocketMemories {
    ports: Vec<SocketPort>,
    map: NumaMap,
}

impl SocketMemories {
    /// One memory per socket, socket k's at `ports[k]`, every address on socket 0 until a map is set.
    pub fn new(ports: Vec<SocketPort>) -> Self {
        assert!(!ports.is_empty(), "a system has at least one socket's memory");
        let map = NumaMap::new(ports.len() as u16);
        SocketMemories { ports, map }
    }

    pub fn sockets(&self) -> usize {
        self.ports.len()
    }

    pub fn map(&self) -> &NumaMap {
        &self.map
    }

    /// Take the engine's map (when timing or warming starts). An error names a socket the memory does not have.
    pub fn set_map(&mut self, map: NumaMap) -> Result<(), String> {
        if map.sockets() as usize > self.ports.len() {
            return Err(format!(
                "the NUMA map has {} sockets but the timing model has memory for {}",
                map.sockets(),
                self.ports.len()
            ));
        }
        self.map = map;
        Ok(())
    }

    /// Put [start, start + len) on `socket`'s memory from now on.
    pub fn place(&mut self, start: u64, len: u64, socket: u16) -> Result<(), String> {
        if socket as usize >= self.ports.len() {
            return Err(format!(
                "NUMA socket {socket} does not exist: the system has sockets 0..{}",
                self.ports.len() - 1
            ));
        }
        self.map.place(start, len, socket)
    }

    /// Put a model in front of socket `s`'s memory (an address window another memory serves, say): `wrap` takes
    /// the socket's memory and returns what answers for it from now on.
    pub fn wrap_port(&mut self, s: usize, wrap: impl FnOnce(SocketPort) -> SocketPort) {
        let old = std::mem::replace(&mut self.ports[s], SocketPort::other(crate::FixedLatency::default()));
        self.ports[s] = wrap(old);
    }

    /// Socket `s`'s memory.
    pub fn port(&self, s: usize) -> &SocketPort {
        &self.ports[s]
    }

    /// Statistics of socket `s`'s memory under `prefix` (its socket's path and `mem.`).
    pub fn socket_stats(&self, s: usize, prefix: &str, now: Tick, out: &mut StatSink) {
        self.ports[s].stats(prefix, now, out);
    }

    #[inline]
    fn port_of(&self, addr: u64) -> usize {
        if self.ports.len() == 1 {
            0
        } else {
            self.map.socket_of(addr) as usize
        }
    }
}

impl MemPort for SocketMemories {
    #[inline]
    fn access(&mut self, req: &MemReq) -> Tick {
        let s = self.port_of(req.addr);
        self.ports[s].access(req)
    }

    /// One socket: its memory's statistics under `prefix`; several: each socket's at its place in the tree
    /// (`system.socket{k}.mem.`; a whole system reports them through `socket_stats`).
    fn stats(&self, prefix: &str, now: Tick, out: &mut StatSink) {
        if self.ports.len() == 1 {
            return self.ports[0].stats(prefix, now, out);
        }
        for (k, p) in self.ports.iter().enumerate() {
            p.stats(&(kvsim_params::paths::socket(k) + &kvsim_params::paths::memory()), now, out);
        }
    }

    fn channel_of(&self, addr: u64) -> (usize, usize) {
        self.ports[self.port_of(addr)].channel_of(addr)
    }

    #[inline]
    fn home_socket(&self, addr: u64) -> u16 {
        self.port_of(addr) as u16
    }

    fn flush_posted(&mut self, now: Tick) {
        for p in &mut self.ports {
            p.flush_posted(now);
        }
    }

    fn reset_port_stats(&mut self, now: Tick) {
        for p in &mut self.ports {
            p.reset_port_stats(now);
        }
    }

    fn routes_by_owner(&self) -> bool {
        self.ports.iter().any(|p| p.routes_by_owner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AccessKind, FixedLatency};

    #[test]
    fn each_address_goes_to_the_memory_of_its_numa_socket() {
        let mut m = SocketMemories::new(vec![
            SocketPort::other(FixedLatency::new(100)),
            SocketPort::other(FixedLatency::new(300)),
        ]);
        assert_eq!(m.access(&MemReq::new(0x5000, AccessKind::Read, 0, 10)), 110);
        m.place(0x4000, 0x2000, 1).unwrap();
        assert_eq!(m.access(&MemReq::new(0x5000, AccessKind::Read, 0, 10)), 310);
        assert_eq!((m.home_socket(0x3fff), m.home_socket(0x4000)), (0, 1));
        assert!(m.place(0, 1, 2).unwrap_err().contains("socket 2 does not exist"));
        assert!(m.set_map(NumaMap::new(3)).unwrap_err().contains("3 sockets"));
    }
}
