//! Memories of the dense 3D-stacked servers (Mercury, Iridium, KeyVault): [`dram3d::StackedDram`], ports of
//! closed-page DRAM, and [`flash::NandFlash`], independent NAND controllers. Both are plain [`crate::MemPort`]s,
//! so they stand wherever a DDR controller does (behind a cache hierarchy, or alone in tests).
//!
//! Both split the stack into independent ports (flash: controllers). [`PortMap`] says which one a request uses.
//! Each bank, bus and controller is a [`calendar::BusyCalendar`], booked in time rather than call order.
//! [`backing`] builds a socket's backing memory of whichever kind its parameters name.

pub mod calendar;
pub mod dram3d;
pub mod flash;

use kvsim_params::{MemoryController, MemoryControllerKind};

use crate::dram::Dram;
use crate::{MemPort, MemReq, StatSink, Tick};

/// A socket's backing memory, as its controller's parameters choose it (`MemoryController.kind`): its DDR
/// channels ([`Dram`]), the 3D-stacked DRAM ([`dram3d::StackedDram`]) or the 3D NAND ([`flash::NandFlash`]). The
/// memory system sees only a [`MemPort`], so the caches in front are the same for all three.
pub fn backing(p: &MemoryController) -> Box<dyn MemPort> {
    match p.kind {
        MemoryControllerKind::Ddr => Box::new(Dram::new(p)),
        MemoryControllerKind::Dram3d => Box::new(dram3d::StackedDram::new(&p.dram3d)),
        MemoryControllerKind::Flash => Box::new(flash::NandFlash::new(&p.flash)),
    }
}

/// How a request finds its port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortMap {
    /// Core `i` uses port `i mod ports`: each core owns a slice of the stack (two cores share one beyond
    /// `ports` cores). Mercury runs one memcached instance per core on its own port this way. The core is the
    /// request's owner (`MemReq::owner`), so a writeback or a queue's DMA goes to its core's port; a request no
    /// core owns ([`crate::NO_OWNER`]) goes by its line address over the ports.
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

    /// Whether the port follows the request's owning core.
    pub fn by_owner(&self) -> bool {
        *self == PortMap::Requester
    }

    /// The port serving `req`, and the request's block index within that port (for bank selection).
    pub fn route(&self, req: &MemReq, ports: u64, line: u64) -> (usize, u64) {
        match *self {
            PortMap::Requester if req.owner != crate::NO_OWNER => {
                ((req.owner as u64 % ports) as usize, req.addr / line)
            }
            PortMap::Requester => {
                let b = req.addr / line;
                ((b % ports) as usize, b / ports)
            }
            PortMap::Address { block } => {
                let b = req.addr / block;
                ((b % ports) as usize, (b / ports) * (block / line).max(1) + (req.addr % block) / line)
            }
        }
    }
}

/// The words of one stack kind's statistics: the two kinds count the same things but name their units (port or
/// controller, line or page) differently, and the descriptions say so.
pub(crate) struct StatDocs {
    /// The path of one unit below the memory's: `kvsim_params::paths::stack_port` or `flash_controller`.
    pub unit: fn(usize) -> String,
    pub unit_reads: &'static str,
    pub unit_writes: &'static str,
    pub reads: &'static str,
    pub writes: &'static str,
    pub bytes: &'static str,
    pub bandwidth: &'static str,
    pub queue_delay: &'static str,
}

/// Reports each unit's reads and writes, then their totals, bytes, bandwidth and mean queueing delay. `units`
/// yields each unit's (reads, writes, queue delay); every request moves `line` bytes; `now` is the time the
/// statistics cover (since their last reset).
pub(crate) fn report_stats(
    units: impl Iterator<Item = (u64, u64, Tick)>,
    line: u64,
    docs: &StatDocs,
    prefix: &str,
    now: Tick,
    out: &mut StatSink,
) {
    let (mut reads, mut writes, mut delay) = (0u64, 0u64, 0u64);
    for (i, (unit_reads, unit_writes, unit_delay)) in units.enumerate() {
        let pre = prefix.to_owned() + &(docs.unit)(i);
        out.add(&pre, "reads", unit_reads as f64, docs.unit_reads);
        out.add(&pre, "writes", unit_writes as f64, docs.unit_writes);
        reads += unit_reads;
        writes += unit_writes;
        delay += unit_delay;
    }
    let bytes = (reads + writes) * line;
    out.add(prefix, "reads", reads as f64, docs.reads);
    out.add(prefix, "writes", writes as f64, docs.writes);
    out.add(prefix, "bytes", bytes as f64, docs.bytes);
    let gbps = if now == 0 { 0.0 } else { bytes as f64 / (now as f64 * 1e-12) / 1e9 };
    out.add(prefix, "bandwidth_gbps", gbps, docs.bandwidth);
    out.add(prefix, "avg_queue_delay_ps", crate::ratio(delay as f64, (reads + writes) as f64), docs.queue_delay);
}
