//! The on-chip network of a socket (see `models/noc.py` for its parameters): the cores of a cluster and its LLC
//! slice share a crossbar; clusters sit one per router on a 2D mesh (or a ring, a mesh of one row with its ends
//! joined); memory controllers and NICs attach to routers at the mesh's edge. [`mesh::Mesh`] carries the messages;
//! [`build`] makes it and the socket's [`Placement`] from the socket's parameters, which is all the memory system
//! needs to know of it.

pub mod calendar;
pub mod mesh;

use kvsim_params::{NocTopology, Socket};

use crate::network::{Endpoint, Placement};
use crate::{Clock, Tick};
pub use mesh::{Dir, Mesh, MeshShape};

/// (columns, rows) of a socket's mesh: the configured ones, a 0 chosen as `Noc.dimensions` in models/noc.py
/// chooses it (a near-square grid that holds every cluster; a ring: one router per cluster).
pub fn dimensions(socket: &Socket) -> (u64, u64) {
    let noc = &socket.noc;
    let clusters = socket.cores / socket.cores_per_cluster.max(1);
    if noc.topology == NocTopology::Ring {
        return (if noc.mesh_x > 0 { noc.mesh_x } else { clusters }, noc.mesh_y.max(1));
    }
    let (mut x, mut y) = (noc.mesh_x, noc.mesh_y);
    if x == 0 && y == 0 {
        x = (clusters as f64).sqrt().ceil() as u64;
        while x * x < clusters {
            x += 1; // guard against rounding of the square root
        }
    }
    if x == 0 {
        x = clusters.div_ceil(y);
    }
    if y == 0 {
        y = clusters.div_ceil(x.max(1));
    }
    (x.max(1), y.max(1))
}

/// The network of `socket` and where its agents sit: endpoints are numbered cores first, then LLC slices, memory
/// controllers and I/O agents (`nics` of them: the NICs attached to this socket). Core c is on cluster c /
/// cores_per_cluster's router; the LLC slices spread evenly over the routers, slice i of n on router
/// i x routers / n (one per router when n = routers, as on the target; with one slice per core, each core's own
/// slice shares its router when the cores fill the mesh); controllers and NICs on their configured
/// routers (router (0, 0) when none are configured). Errors name the parameter, as the Python checks do (they
/// run first; these guard direct Rust users).
pub fn build(socket: &Socket, nics: usize) -> Result<(Mesh, Placement), String> {
    let noc = &socket.noc;
    if socket.cores_per_cluster == 0 || !socket.cores.is_multiple_of(socket.cores_per_cluster) {
        return Err(format!(
            "Socket.cores = {} is not a multiple of Socket.cores_per_cluster = {}",
            socket.cores, socket.cores_per_cluster
        ));
    }
    let clusters = socket.cores / socket.cores_per_cluster;
    let (cols, rows) = dimensions(socket);
    if noc.topology == NocTopology::Ring && rows != 1 {
        return Err(format!("Noc.mesh_y = {rows}: a ring is one row of routers"));
    }
    if cols * rows < clusters || cols * rows > u16::MAX as u64 {
        return Err(format!("Noc: a {cols} x {rows} mesh cannot hold {clusters} clusters (one per router)"));
    }
    let router_at = |name: &str, (i, &[x, y]): (usize, &[u64; 2])| -> Result<u16, String> {
        let edge = x == 0 || y == 0 || x + 1 == cols || y + 1 == rows;
        if x >= cols || y >= rows || !edge {
            return Err(format!("Noc.{name}[{i}] = ({x}, {y}) is not at the edge of the {cols} x {rows} mesh"));
        }
        Ok((y * cols + x) as u16)
    };
    let mut router_of: Vec<u16> = Vec::new();
    let place = |routers: &mut Vec<u16>, r: u16| -> Endpoint {
        routers.push(r);
        (routers.len() - 1) as Endpoint
    };
    let mut placement = Placement::default();
    for c in 0..socket.cores {
        placement.core.push(place(&mut router_of, (c / socket.cores_per_cluster) as u16));
    }
    let routers = cols * rows;
    let slices = socket.caches.llc_slices.max(1);
    for i in 0..socket.caches.llc_slices {
        placement.llc_slice.push(place(&mut router_of, (i * routers / slices) as u16));
    }
    let mem: Vec<u16> = if noc.mem_ctrl_routers.is_empty() {
        vec![0]
    } else {
        noc.mem_ctrl_routers.iter().enumerate().map(|p| router_at("mem_ctrl_routers", p)).collect::<Result<_, _>>()?
    };
    for r in mem {
        placement.mem_ctrl.push(place(&mut router_of, r));
    }
    if !noc.nic_routers.is_empty() && noc.nic_routers.len() != nics {
        return Err(format!("Noc.nic_routers places {} NICs but {nics} are attached", noc.nic_routers.len()));
    }
    for i in 0..nics {
        let r = match noc.nic_routers.get(i) {
            Some(p) => router_at("nic_routers", (i, p))?,
            None => 0,
        };
        placement.io.push(place(&mut router_of, r));
    }
    let clock = Clock::new(noc.clock);
    let cycles = |n: u64| -> Tick { clock.ticks(n) };
    let shape = MeshShape {
        cols: cols as u16,
        rows: rows as u16,
        ring: noc.topology == NocTopology::Ring,
        cycle: cycles(1),
        router: cycles(noc.router_latency),
        link: cycles(noc.link_latency),
        crossbar: cycles(noc.crossbar_latency),
        flit_bytes: noc.link_bytes as u32,
    };
    Ok((Mesh::new(shape, router_of), placement))
}

/// The same network behind the trait object the memory system holds.
pub fn build_boxed(socket: &Socket, nics: usize) -> Result<(Box<dyn crate::network::Network>, Placement), String> {
    build(socket, nics).map(|(mesh, placement)| (Box::new(mesh) as Box<dyn crate::network::Network>, placement))
}

/// The router of each socket's inter-socket link port: router 0, the mesh's corner (0, 0) (assumed; see
/// `models/link.py`).
pub const LINK_PORT_ROUTER: u16 = 0;

/// The network of `socket` as one socket of several: `build`, plus an endpoint for its link port at
/// [`LINK_PORT_ROUTER`] (numbered after the I/O agents).
pub fn build_socket(socket: &Socket, nics: usize) -> Result<crate::interconnect::SocketNet, String> {
    let (mut mesh, placement) = build(socket, nics)?;
    let port = mesh.attach(LINK_PORT_ROUTER);
    Ok(crate::interconnect::SocketNet { net: Box::new(mesh), placement, port })
}
