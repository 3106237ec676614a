//! What the multi-socket cache tests share (`remote_lines.rs`, `socket_messages.rs`): sockets on ideal on-chip
//! networks, each socket's memory a fixed latency, the link `models/link.py`'s QPI-like default (a control message
//! 1 flit of 0.5 ns, a line 9, 20 ns one way), and socket k's memory one region of the address space.

use kvsim_params::{CacheHierarchy, SocketLink};
use kvsim_timing::interconnect::SocketNet;
use kvsim_timing::network::{IdealNetwork, Placement};
use kvsim_timing::numa::NumaMap;
use kvsim_timing::socket_memory::SocketPort;
use kvsim_timing::synth::core_params;
use kvsim_timing::system::{SocketParts, TimingSystem};
use kvsim_timing::{FixedLatency, Tick};

/// Every socket's memory latency.
pub const MEM: Tick = 60_000;
pub const LINK_LAT: Tick = 20_000;
pub const CTRL_HOLD: Tick = 500;
pub const DATA_HOLD: Tick = 9 * 500;
/// Socket k's memory is [k x REGION, (k + 1) x REGION).
pub const REGION: u64 = 0x100_0000;

/// `sockets` sockets of `cores` cores (clusters of `per_cluster`), `h.llc_slices` LLC slices each (slice i in
/// cluster i), on ideal networks of `hop` ps per message; `h` the caches of every socket. Check mode on.
pub fn system(sockets: u16, cores: u16, per_cluster: u16, h: &CacheHierarchy, hop: Tick) -> TimingSystem {
    let slices = h.llc_slices as u16;
    let parts = (0..sockets)
        .map(|_| {
            let n = cores;
            let placement = Placement {
                core: (0..n).collect(),
                llc_slice: (n..n + slices).collect(),
                mem_ctrl: vec![n + slices],
                io: vec![n + slices + 1],
            };
            let mut net = IdealNetwork::new(hop);
            net.clusters = (0..n).map(|c| c / per_cluster).chain(0..slices).chain([u16::MAX; 3]).collect();
            SocketParts {
                cores: vec![core_params(); n as usize],
                memory: SocketPort::other(FixedLatency::new(MEM)),
                net: SocketNet { net: Box::new(net), placement, port: n + slices + 2 },
            }
        })
        .collect();
    let mut sys = TimingSystem::multi_socket(parts, h, &SocketLink::default()).unwrap();
    let mut map = NumaMap::new(sockets);
    for k in 1..sockets {
        map.place(k as u64 * REGION, REGION, k).unwrap();
    }
    sys.set_numa(map).unwrap();
    sys.mem.enable_check();
    sys
}
