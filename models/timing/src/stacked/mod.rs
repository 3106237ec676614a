//! Memories of the dense 3D-stacked servers (Mercury, Iridium, KeyVault): [`dram3d::StackedDram`], ports of
//! closed-page DRAM, and [`flash::NandFlash`], independent NAND controllers. Both are plain [`crate::MemPort`]s,
//! so they stand wherever a DDR controller does (behind a cache hierarchy, or alone in tests).
//!
//! Both split the stack into independent ports (flash: controllers). [`PortMap`] says which one a request uses.

pub mod dram3d;
pub mod flash;

use crate::MemReq;

/// How a request finds its port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortMap {
    /// Core `i` uses port `i mod ports`: each core owns a slice of the stack (two cores share one beyond
    /// `ports` cores). Mercury runs one memcached instance per core on its own port this way.
    Requester,
    /// Blocks of `block` bytes rotate over the ports.
    Address { block: u64 },
}

impl PortMap {
    /// The configured map: by address (in blocks of `block` bytes), or by requester.
    pub fn new(by_address: bool, block: u64) -> PortMap {
        if by_address {
            PortMap::Address { block }
        } else {
            PortMap::Requester
        }
    }

    /// The port serving `req`, and the request's block index within that port (for bank selection).
    pub fn route(&self, req: &MemReq, ports: u64, line: u64) -> (usize, u64) {
        match *self {
            PortMap::Requester => ((req.requester as u64 % ports) as usize, req.addr / line),
            PortMap::Address { block } => {
                let b = req.addr / block;
                ((b % ports) as usize, (b / ports) * (block / line).max(1) + (req.addr % block) / line)
            }
        }
    }
}
