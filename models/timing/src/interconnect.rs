//! The network of a multi-socket system: every socket's on-chip network, joined by the inter-socket links
//! ([`crate::link`]), behind the one [`Network`] trait the memory system talks to.
//!
//! Endpoints are global: socket 0's endpoints first, then socket 1's (each offset by the endpoints before it), so
//! one memory system spans every socket's cores, LLC slices, memory controllers and I/O agents. A message between
//! two endpoints of one socket is that socket's network's business alone. A message from socket a to socket b
//! crosses a's network from its source to a's link port, the link a -> b, and b's network from b's port to its
//! destination; the ports store and forward (the whole message reaches a port before it starts on the next
//! segment), so its time is the sum of the three segments' times. Clusters are made global the same way (socket
//! k's clusters numbered after the clusters of the sockets before it), so the cluster level of the directory never
//! joins cores of two sockets.

use kvsim_params::SocketLink;

use crate::link::{LinkDirection, LinkTiming};
use crate::network::{Endpoint, Network, Placement};
use crate::{StatSink, Tick};

/// One socket's part of the system network: its network, where its agents sit, and its link port's endpoint.
pub struct SocketNet {
    pub net: Box<dyn Network>,
    pub placement: Placement,
    /// The endpoint (on `net`) where the socket's inter-socket links attach.
    pub port: Endpoint,
}

/// Every socket's network joined by fully connected inter-socket links. Implements [`Network`].
pub struct SystemNetwork {
    nets: Vec<Box<dyn Network>>,
    /// Socket and local endpoint of each global endpoint.
    at: Vec<(u16, Endpoint)>,
    /// Each socket's first global endpoint.
    base: Vec<Endpoint>,
    port: Vec<Endpoint>,
    cluster_base: Vec<u16>,
    /// The direction a -> b of the links between sockets a and b, at `a * sockets + b` (None on the diagonal).
    links: Vec<Option<LinkDirection>>,
    timing: LinkTiming,
}

impl SystemNetwork {
    /// Join `sockets` by links of `link` (every pair, `link.links_per_pair` links each way). Returns the network
    /// and the global placement (each socket's agents in socket order: cores, LLC slices, controllers, I/O).
    pub fn new(sockets: Vec<SocketNet>, link: &SocketLink) -> Result<(Self, Placement), String> {
        let timing = LinkTiming::from_params(link)?;
        let n = sockets.len();
        for &[a, b] in &link.pairs {
            if a as usize >= n || b as usize >= n || a == b {
                return Err(format!("SocketLink.pairs names ({a}, {b}): the system has sockets 0..{}", n.max(1) - 1));
            }
        }
        let mut nets = Vec::with_capacity(n);
        let (mut at, mut base, mut port, mut cluster_base) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut placement = Placement::default();
        let mut clusters: u32 = 0;
        for (k, s) in sockets.into_iter().enumerate() {
            let p = &s.placement;
            let count = [&p.core, &p.llc_slice, &p.mem_ctrl, &p.io]
                .iter()
                .flat_map(|v| v.iter())
                .chain(std::iter::once(&s.port))
                .map(|&e| e as usize + 1)
                .max()
                .unwrap_or(0);
            let b = at.len();
            if b + count > u16::MAX as usize {
                return Err(format!("the system network has more than {} endpoints", u16::MAX));
            }
            let g = |e: &Endpoint| (b + *e as usize) as Endpoint;
            placement.core.extend(p.core.iter().map(g));
            placement.llc_slice.extend(p.llc_slice.iter().map(g));
            placement.mem_ctrl.extend(p.mem_ctrl.iter().map(g));
            placement.io.extend(p.io.iter().map(g));
            at.extend((0..count).map(|e| (k as u16, e as Endpoint)));
            base.push(b as Endpoint);
            port.push(s.port);
            let local = (0..count as Endpoint).map(|e| s.net.cluster_of(e)).filter(|&c| c != u16::MAX).max();
            if clusters + local.map_or(0, |c| c as u32 + 1) >= u16::MAX as u32 {
                return Err("the system network has too many clusters".into());
            }
            cluster_base.push(clusters as u16);
            clusters += local.map_or(0, |c| c as u32 + 1);
            nets.push(s.net);
        }
        let links = (0..n * n)
            .map(|i| (i / n != i % n).then(|| LinkDirection::new(timing, link.links_per_pair as usize)))
            .collect();
        Ok((SystemNetwork { nets, at, base, port, cluster_base, links, timing }, placement))
    }

    pub fn sockets(&self) -> usize {
        self.nets.len()
    }

    /// The socket of a global endpoint.
    pub fn socket_of(&self, e: Endpoint) -> usize {
        self.at[e as usize].0 as usize
    }

    /// The socket of every global endpoint, in endpoint order.
    pub fn endpoint_sockets(&self) -> Vec<u16> {
        self.at.iter().map(|&(s, _)| s).collect()
    }

    /// Socket `s`'s global endpoint of its local endpoint `local`.
    pub fn global(&self, s: usize, local: Endpoint) -> Endpoint {
        self.base[s] + local
    }

    /// Socket `s`'s link port, as a global endpoint.
    pub fn port(&self, s: usize) -> Endpoint {
        self.global(s, self.port[s])
    }

    pub fn link_timing(&self) -> &LinkTiming {
        &self.timing
    }

    /// The direction a -> b of the links between sockets a and b.
    pub fn link(&self, a: usize, b: usize) -> &LinkDirection {
        self.links[a * self.nets.len() + b].as_ref().expect("a link joins two different sockets")
    }

    /// Socket `s`'s own network.
    pub fn socket_net(&self, s: usize) -> &dyn Network {
        self.nets[s].as_ref()
    }

    /// Statistics of socket `s`'s network under `prefix` (its path: `kvsim_params::paths::noc`).
    pub fn socket_stats(&self, s: usize, prefix: &str, now: Tick, out: &mut StatSink) {
        self.nets[s].stats(prefix, now, out);
    }

    /// Statistics of every direction of every link under `prefix` ("system." gives `system.link0_1.messages`),
    /// rates over `ticks` of measured time.
    pub fn link_stats(&self, prefix: &str, ticks: Tick, out: &mut StatSink) {
        let n = self.nets.len();
        for (i, l) in self.links.iter().enumerate() {
            if let Some(l) = l {
                l.stats(&(prefix.to_owned() + &kvsim_params::paths::socket_link(i / n, i % n)), ticks, out);
            }
        }
    }
}

impl Network for SystemNetwork {
    fn send(&mut self, src: Endpoint, dst: Endpoint, bytes: u32, t: Tick) -> Tick {
        let ((a, la), (b, lb)) = (self.at[src as usize], self.at[dst as usize]);
        let (a, b) = (a as usize, b as usize);
        if a == b {
            return self.nets[a].send(la, lb, bytes, t);
        }
        let at_port = self.nets[a].send(la, self.port[a], bytes, t);
        let n = self.nets.len();
        let across = self.links[a * n + b].as_mut().expect("a link joins two different sockets").send(bytes, at_port);
        self.nets[b].send(self.port[b], lb, bytes, across)
    }

    fn latency(&self, src: Endpoint, dst: Endpoint, bytes: u32) -> Tick {
        let ((a, la), (b, lb)) = (self.at[src as usize], self.at[dst as usize]);
        let (a, b) = (a as usize, b as usize);
        if a == b {
            return self.nets[a].latency(la, lb, bytes);
        }
        self.nets[a].latency(la, self.port[a], bytes)
            + self.timing.unloaded(bytes)
            + self.nets[b].latency(self.port[b], lb, bytes)
    }

    fn cluster_of(&self, e: Endpoint) -> u16 {
        let (s, l) = self.at[e as usize];
        match self.nets[s as usize].cluster_of(l) {
            u16::MAX => u16::MAX,
            c => self.cluster_base[s as usize] + c,
        }
    }

    /// Each socket's network under its path in the tree (`kvsim_params::paths::noc`) and the links under
    /// `{prefix}link{a}_{b}.` (give the system's root, "system.").
    fn stats(&self, prefix: &str, now: Tick, out: &mut StatSink) {
        for s in 0..self.nets.len() {
            self.socket_stats(s, &(kvsim_params::paths::socket(s) + &kvsim_params::paths::noc()), now, out);
        }
        self.link_stats(prefix, now, out);
    }

    fn reset_stats(&mut self) {
        for n in &mut self.nets {
            n.reset_stats();
        }
        for l in self.links.iter_mut().flatten() {
            l.reset_stats();
        }
    }
}
