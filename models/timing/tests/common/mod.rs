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
use kvsim_timing::{AccessKind, FixedLatency, MemReq, ReqClass, Tick};

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

/// The random traffic the multi-socket tests draw: a xorshift step of `x` picks the core, a line (one of 20 in a
/// random socket's region, a random word), the time step after `t` and the kind (half reads; writes, fetches,
/// prefetches, and DMA from I/O agent `io_agent(core)`).
pub fn random_request(x: &mut u64, t: &mut Tick, sockets: u16, cores: u16, io_agent: impl Fn(u16) -> u16) -> MemReq {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    let x = *x;
    let core = (x % (sockets * cores) as u64) as u16;
    let home = (x >> 44) % sockets as u64;
    let addr = home * REGION + ((x >> 8) % 20) * 64 + (x >> 40) % 8 * 8;
    *t += (x >> 20) % 3000;
    match (x >> 32) % 10 {
        0..=4 => MemReq::new(addr, AccessKind::Read, core, *t),
        5..=6 => MemReq::new(addr, AccessKind::Write, core, *t),
        7 => MemReq::new(addr, AccessKind::IFetch, core, *t),
        8 => MemReq::new(addr, AccessKind::Prefetch, core, *t),
        _ => MemReq {
            class: ReqClass::Io,
            ..MemReq::new(
                addr,
                if (x >> 36) & 1 == 1 { AccessKind::Write } else { AccessKind::Read },
                io_agent(core),
                *t,
            )
        },
    }
}
