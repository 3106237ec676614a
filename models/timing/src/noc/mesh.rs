//! A 2D mesh of routers (or a ring: one row whose ends are joined), one cluster per router, carrying the
//! memory system's messages between endpoints with dimension-order routing and flit-level link bandwidth.
//!
//! Timing of one message of `f` flits from an endpoint on router A to one on router B, k hops apart:
//! * A == B (the two agents share a cluster): the cluster crossbar, `crossbar + (f - 1) x cycle`.
//! * otherwise the head crosses k routers (A and every router on the way, not B, whose ejection port is the
//!   cluster crossbar it ends in) and k links: `k x (router + link)`, and the tail follows `(f - 1)` cycles behind
//!   (cut-through). Each link moves one flit per cycle: the message holds it for `f` cycles from when its head
//!   leaves the router, so a second message on the same link at the same time leaves `f` cycles later.
//!
//! Routing is XY (along the row to the destination's column, then along the column); on a ring, the shorter way
//! round (east on a tie). Counters: flits and messages per directed link, flits per router (every router a
//! message passes, its destination included, so a cluster-local message counts once, in its crossbar); in all,
//! flits injected, flit-hops (`hops`: router traversals of flits, what the power model prices) and links crossed
//! by messages (`message_hops`).

use super::calendar::LinkCalendar;
use crate::network::{Endpoint, Network};
use crate::{StatSink, Tick};

/// A link direction out of a router.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Dir {
    East = 0,
    West = 1,
    North = 2,
    South = 3,
}

const DIRS: usize = 4;
/// Largest mesh whose routes are tabled (1024 routers: a 4 MB table).
const ROUTE_TABLE_MAX: usize = 1024;

/// The shape and timing of a mesh, all times in ticks.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshShape {
    pub cols: u16,
    pub rows: u16,
    /// A ring: `rows` is 1 and the row's two ends are neighbours.
    pub ring: bool,
    /// One network clock cycle.
    pub cycle: Tick,
    /// Per hop: a router's pipeline and one link.
    pub router: Tick,
    pub link: Tick,
    /// Two agents of one cluster.
    pub crossbar: Tick,
    /// Bytes per flit (the link width).
    pub flit_bytes: u32,
}

#[derive(Debug, Clone)]
struct Link {
    calendar: LinkCalendar,
    flits: u64,
    messages: u64,
    busy: Tick,
}

/// A mesh (or ring) network with its endpoints attached to routers. Implements [`Network`].
#[derive(Debug, Clone)]
pub struct Mesh {
    shape: MeshShape,
    /// Router of each endpoint.
    endpoint_router: Vec<u16>,
    /// Outgoing link of each router in each direction (`None` at the mesh's edge).
    links: Vec<Option<Link>>,
    /// The next hop from each router towards each other one (`from * routers + to`): (router, direction), kept for
    /// meshes of up to ROUTE_TABLE_MAX routers (a lookup per hop instead of the routing arithmetic).
    next_hop: Vec<(u16, Dir)>,
    router_flits: Vec<u64>,
    messages: u64,
    local_messages: u64,
    flits: u64,
    hops: u64,
}

impl Mesh {
    /// A network of `shape` whose endpoint e sits on router `endpoint_router[e]` (routers numbered row by row).
    pub fn new(shape: MeshShape, endpoint_router: Vec<u16>) -> Self {
        let routers = shape.cols as usize * shape.rows as usize;
        assert!(shape.cycle > 0 && shape.flit_bytes > 0, "a network needs a clock and a link width");
        assert!(endpoint_router.iter().all(|&r| (r as usize) < routers), "every endpoint sits on a router");
        // A slot of 16 cycles: fine enough that a link's gaps are found, coarse enough to stay small.
        let slot = 16 * shape.cycle;
        let mut mesh = Mesh {
            links: Vec::with_capacity(routers * DIRS),
            next_hop: Vec::new(),
            router_flits: vec![0; routers],
            endpoint_router,
            messages: 0,
            local_messages: 0,
            flits: 0,
            hops: 0,
            shape,
        };
        for r in 0..routers as u16 {
            for d in [Dir::East, Dir::West, Dir::North, Dir::South] {
                let link = mesh.neighbour(r, d).map(|_| Link {
                    calendar: LinkCalendar::new(slot),
                    flits: 0,
                    messages: 0,
                    busy: 0,
                });
                mesh.links.push(link);
            }
        }
        if routers <= ROUTE_TABLE_MAX {
            let mut table = Vec::with_capacity(routers * routers);
            for from in 0..routers as u16 {
                for to in 0..routers as u16 {
                    table.push(if from == to { (from, Dir::East) } else { mesh.step(from, to) });
                }
            }
            mesh.next_hop = table;
        }
        mesh
    }

    /// The next router and the direction from `at` towards `to` (`at != to`), by XY routing.
    fn step(&self, at: u16, to: u16) -> (u16, Dir) {
        let dir = self.next_dir(at, to);
        (self.neighbour(at, dir).expect("XY routing stays on the mesh"), dir)
    }

    #[inline]
    fn hop(&self, at: u16, to: u16) -> (u16, Dir) {
        match self.next_hop.get(at as usize * self.router_flits.len() + to as usize) {
            Some(&h) => h,
            None => self.step(at, to),
        }
    }

    pub fn shape(&self) -> &MeshShape {
        &self.shape
    }

    pub fn routers(&self) -> usize {
        self.router_flits.len()
    }

    /// Attach one more endpoint to router `r` (e.g. a socket's link port); returns its id.
    pub fn attach(&mut self, r: u16) -> Endpoint {
        assert!((r as usize) < self.routers(), "router {r} is not on the mesh");
        self.endpoint_router.push(r);
        (self.endpoint_router.len() - 1) as Endpoint
    }

    pub fn router_of(&self, e: Endpoint) -> u16 {
        self.endpoint_router[e as usize]
    }

    fn xy(&self, r: u16) -> (u16, u16) {
        (r % self.shape.cols, r / self.shape.cols)
    }

    /// The router next to `r` in direction `d`, if there is one.
    pub fn neighbour(&self, r: u16, d: Dir) -> Option<u16> {
        let (x, y) = self.xy(r);
        let (cols, rows) = (self.shape.cols, self.shape.rows);
        let ring = self.wraps();
        let (nx, ny) = match d {
            Dir::East if x + 1 < cols => (x + 1, y),
            Dir::East if ring => (0, y),
            Dir::West if x > 0 => (x - 1, y),
            Dir::West if ring => (cols - 1, y),
            Dir::North if y + 1 < rows => (x, y + 1),
            Dir::South if y > 0 => (x, y - 1),
            _ => return None,
        };
        Some(ny * cols + nx)
    }

    /// A ring of more than two routers has wrap-around links (with two, the plain links already join both ends).
    fn wraps(&self) -> bool {
        self.shape.ring && self.shape.cols > 2
    }

    /// The direction a message at router `at` takes towards router `to` (`at != to`).
    pub fn next_dir(&self, at: u16, to: u16) -> Dir {
        let ((x, y), (tx, ty)) = (self.xy(at), self.xy(to));
        if x != tx {
            if self.wraps() {
                let cols = self.shape.cols;
                let east = (tx + cols - x) % cols;
                return if east <= cols - east { Dir::East } else { Dir::West };
            }
            return if tx > x { Dir::East } else { Dir::West };
        }
        if ty > y {
            Dir::North
        } else {
            Dir::South
        }
    }

    /// The routers a message visits from `from` to `to`, both included, in order.
    pub fn route(&self, from: u16, to: u16) -> Vec<u16> {
        let mut path = vec![from];
        let mut at = from;
        while at != to {
            at = self.hop(at, to).0;
            path.push(at);
        }
        path
    }

    /// Hops (links crossed) between two routers.
    pub fn hops_between(&self, from: u16, to: u16) -> u64 {
        let ((x, y), (tx, ty)) = (self.xy(from), self.xy(to));
        let dx = x.abs_diff(tx) as u64;
        let dx = if self.wraps() { dx.min(self.shape.cols as u64 - dx) } else { dx };
        dx + y.abs_diff(ty) as u64
    }

    fn flits_of(&self, bytes: u32) -> u64 {
        bytes.div_ceil(self.shape.flit_bytes).max(1) as u64
    }
}

impl Network for Mesh {
    fn send(&mut self, src: Endpoint, dst: Endpoint, bytes: u32, t: Tick) -> Tick {
        if src == dst {
            return t;
        }
        let flits = self.flits_of(bytes);
        let tail = (flits - 1) * self.shape.cycle;
        let (from, to) = (self.router_of(src), self.router_of(dst));
        self.messages += 1;
        self.flits += flits;
        self.router_flits[to as usize] += flits;
        if from == to {
            self.local_messages += 1;
            return t + self.shape.crossbar + tail;
        }
        let hold = flits * self.shape.cycle;
        let (router, wire) = (self.shape.router, self.shape.link);
        let mut head = t;
        let mut at = from;
        while at != to {
            let (next, dir) = self.hop(at, to);
            self.router_flits[at as usize] += flits;
            let link = self.links[at as usize * DIRS + dir as usize].as_mut().expect("a link to every neighbour");
            let end = link.calendar.reserve(head + router, hold);
            link.flits += flits;
            link.messages += 1;
            link.busy += hold;
            self.hops += 1;
            head = end - hold + wire;
            at = next;
        }
        head + tail
    }

    fn latency(&self, src: Endpoint, dst: Endpoint, bytes: u32) -> Tick {
        if src == dst {
            return 0;
        }
        let tail = (self.flits_of(bytes) - 1) * self.shape.cycle;
        let (from, to) = (self.router_of(src), self.router_of(dst));
        if from == to {
            return self.shape.crossbar + tail;
        }
        self.hops_between(from, to) * (self.shape.router + self.shape.link) + tail
    }

    /// A cluster is a router's tile: its cores, its LLC slice and whatever controller or NIC is attached there.
    fn cluster_of(&self, e: Endpoint) -> u16 {
        self.router_of(e)
    }

    fn stats(&self, prefix: &str, now: Tick, out: &mut StatSink) {
        use kvsim_params::paths;
        let m = self.messages as f64;
        out.add(prefix, "messages", m, "messages carried (both endpoints' clusters alike or not)");
        out.add(prefix, "local_messages", self.local_messages as f64, "messages that stayed in a cluster crossbar");
        out.add(prefix, "flits", self.flits as f64, "flits injected");
        let traversals: u64 = self.router_flits.iter().sum();
        out.add(prefix, "hops", traversals as f64, "flit-hops: flits through a router (a cluster's own crossbar too)");
        out.add(prefix, "message_hops", self.hops as f64, "links crossed by messages, in all");
        out.add(prefix, "avg_hops", crate::ratio(self.hops as f64, m), "mean links crossed per message");
        let mut busiest = 0.0f64;
        let mut total_busy = 0u64;
        let mut count = 0u64;
        for r in 0..self.routers() {
            let p = format!("{prefix}{}", paths::router(r));
            out.add(&p, "flits", self.router_flits[r] as f64, "flits through this router (ejected ones included)");
        }
        for r in 0..self.routers() {
            for d in [Dir::East, Dir::West, Dir::North, Dir::South] {
                let (Some(link), Some(to)) = (&self.links[r * DIRS + d as usize], self.neighbour(r as u16, d)) else {
                    continue;
                };
                let p = format!("{prefix}{}", paths::link(r, to as usize));
                let util = crate::ratio(link.busy as f64, now as f64);
                out.add(&p, "flits", link.flits as f64, "flits over this directed link");
                out.add(&p, "messages", link.messages as f64, "messages over this directed link");
                out.add(&p, "utilization", util, "fraction of the interval the link was moving flits");
                busiest = busiest.max(util);
                total_busy += link.busy;
                count += 1;
            }
        }
        let mean = crate::ratio(total_busy as f64, now as f64 * count as f64);
        out.add(prefix, "link_utilization_avg", mean, "mean over the directed links of their utilization");
        out.add(prefix, "link_utilization_max", busiest, "utilization of the busiest directed link");
    }

    fn reset_stats(&mut self) {
        self.messages = 0;
        self.local_messages = 0;
        self.flits = 0;
        self.hops = 0;
        self.router_flits.iter_mut().for_each(|f| *f = 0);
        for link in self.links.iter_mut().flatten() {
            link.flits = 0;
            link.messages = 0;
            link.busy = 0;
        }
    }
}
