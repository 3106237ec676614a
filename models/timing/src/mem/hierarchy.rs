//! A socket's memory system: private L1I/L1D (and an optional L2) per core, a shared LLC in slices with static line
//! interleaving (inclusive of the private levels by back-invalidation when configured), the two-level MOESI
//! directory, and the on-chip network that carries every coherence message, over any backing [`MemPort`].
//!
//! ONE walk serves every access: a core's timed access, cache warming (the same walk in [`Mode::Warm`]: contents
//! and replacement state change, no time, no MSHRs, no network bookings, no memory timing but sampling's, `warm.rs`)
//! and an I/O agent's DMA (it enters at the home directory, having no private caches).
//!
//! Timing: a lookup costs the level's hit latency; a miss leaves for the next level after it. A line is installed
//! when its miss is sent, with the tick its data arrives; later accesses before then merge with the miss (MSHR
//! hit). A miss holds one of the level's MSHRs until its fill. Below the private caches every step is a message
//! over the network (`Network::send`): request to the cluster directory and on to the home slice, forwards to the
//! owner, invalidations and their acknowledgements, data back. A transaction completes when the requester has the
//! data (or the grant) and every acknowledgement.

use super::array::CacheArray;
use super::check::CoherenceCheck;
use super::directory::{DirEntry, Directory};
use super::dma_lines::DmaLines;
use super::io_stats::IoStats;
use super::prefetch::Prefetchers;
use super::socket_messages::{MsgKind, SocketOutboxes};
use super::{Agent, CohType, CoreAccess, LineState, MemResp, Mode, Origin};
use crate::network::{Endpoint, IdealNetwork, Network, Placement, CONTROL_BYTES, DATA_BYTES};
use crate::{AccessKind, Clock, MemPort, MemReq, ReqClass, Tick, NO_OWNER};
use kvsim_params::CacheHierarchy;

/// One core's private caches (one coherence agent: the directory tracks the core, not each array).
#[derive(Debug, Clone)]
pub struct PrivateCaches {
    pub l1i: CacheArray,
    pub l1d: CacheArray,
    pub l2: Option<CacheArray>,
    /// The hardware prefetchers of the L1D and of the L2 (None: all off).
    pub l1d_pf: Option<Box<Prefetchers>>,
    pub l2_pf: Option<Box<Prefetchers>>,
    /// The PC of the core's latest load (for the IP-based stride prefetcher; `MemPort::set_pc`).
    pub pc: u64,
    /// The core's page walker is reading a page-table entry (`MemPort::page_walk`): its misses are counted apart.
    pub walking: bool,
}

impl PrivateCaches {
    /// The core's permission for `line`: the strongest state among its copies.
    pub fn state_of(&self, line: u64) -> LineState {
        let mut s = self.l1d.state_of(line).max(self.l1i.state_of(line));
        if let Some(l2) = &self.l2 {
            s = s.max(l2.state_of(line));
        }
        s
    }
}

/// A socket's cache hierarchy over a backing memory `M`. Core `i`'s requests carry `requester = i`.
pub struct MemSystem<M: MemPort> {
    pub cores: Vec<PrivateCaches>,
    pub llc: Vec<CacheArray>,
    pub(crate) llc_inclusive: bool,
    pub(super) line_shift: u32,
    pub mem: M,
    pub net: Box<dyn Network>,
    pub placement: Placement,
    pub dir: Directory,
    /// The cluster of each core, and each cluster's directory endpoint (its LLC slice) when it has two or more
    /// cores (a one-core cluster has no sibling to resolve anything with, so its requests go straight home).
    core_cluster: Vec<u16>,
    cluster_dir: Vec<Option<Endpoint>>,
    /// DDIO: I/O writes allocate or update LLC lines (within the I/O class's ways); off: they go to memory and
    /// invalidate cached copies.
    pub ddio: bool,
    /// The lines I/O agents wrote (`dma.rs`), for the DDIO counters.
    pub(super) dma: DmaLines,
    pub io: IoStats,
    /// Addresses [start, end) of device registers: core accesses there bypass the caches and take
    /// `uncached_ticks` one way (none by default).
    pub uncached: (u64, u64),
    pub uncached_ticks: Tick,
    /// Debug check mode (tests): single writer or many readers, exact sharers and data versions after every access.
    pub check: Option<CoherenceCheck>,
    /// Several sockets: where each socket's LLC slices and memory controllers are (None: one socket).
    pub(crate) homes: Option<Box<SocketHomes>>,
    /// Several sockets: each socket's LLC also caches other sockets' lines ([`super::remote`]).
    pub(crate) remote_lines: bool,
    /// Several sockets: what each socket's memory parts sent the others' ([`super::socket_messages`]).
    pub(crate) outboxes: Option<Box<SocketOutboxes>>,
    /// What started the walk now running (the LLC counts its misses by it).
    pub(super) origin: Origin,
    /// Sampling's functional warming (`TimingSystem::warm_at`): the warming hart's time, at which the memory
    /// reads and write-backs its warm walk causes reach the memory controllers (None: other warming, untimed).
    pub warm_clock: Option<Tick>,
}

/// The sockets of a memory system that spans several: a line's home slice and memory controller are on the socket
/// whose memory holds it (the backing memory's [`MemPort::home_socket`], the NUMA map). Every socket has the same
/// number of LLC slices; socket k's are `k x slices_per_socket ..`, and a line is interleaved over its home
/// socket's slices (and, as a remote line, over each other socket's: [`super::remote`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketHomes {
    pub slices_per_socket: u64,
    /// The socket of each core.
    pub core_socket: Vec<u16>,
    /// Socket k's memory-controller endpoints are `placement.mem_ctrl[ctrl[k].0 .. ctrl[k].1]`.
    pub ctrl: Vec<(usize, usize)>,
}

/// The placement of `cores` cores and `slices` LLC slices when the configuration gives none: every agent on its
/// own endpoint (cores first, then slices, one memory controller, one I/O agent), each core its own cluster.
pub fn default_placement(cores: usize, slices: usize) -> (Placement, Vec<u16>) {
    let n = cores + slices;
    let placement = Placement {
        core: (0..cores as u16).collect(),
        llc_slice: (cores as u16..n as u16).collect(),
        mem_ctrl: vec![n as u16],
        io: vec![n as u16 + 1],
    };
    // Clusters: core i is cluster i; slices, controller and I/O agent sit outside every core's cluster.
    let clusters = (0..n as u16 + 2).map(|e| if (e as usize) < cores { e } else { u16::MAX }).collect();
    (placement, clusters)
}

impl<M: MemPort> MemSystem<M> {
    /// `core_clocks[i]` is core i's clock in Hz (its private caches run at it). An ideal, zero-latency network and
    /// the default placement: the LLC's `hit_latency` includes the trip to it, as before the network existed.
    pub fn new(p: &CacheHierarchy, core_clocks: &[u64], mem: M) -> Self {
        let (placement, clusters) = default_placement(core_clocks.len(), p.llc_slices.max(1) as usize);
        let mut net = IdealNetwork::new(0);
        net.clusters = clusters;
        Self::with_network(p, core_clocks, mem, Box::new(net), placement)
    }

    /// As `new`, over `net` with the agents at `placement` (one endpoint per core and per LLC slice).
    pub fn with_network(
        p: &CacheHierarchy,
        core_clocks: &[u64],
        mem: M,
        net: Box<dyn Network>,
        placement: Placement,
    ) -> Self {
        Self::with_sockets(p, core_clocks, mem, net, placement, None)
    }

    /// As `with_network`, spanning several sockets when `homes` says where their slices and controllers are:
    /// `p` describes each socket's caches (every socket alike), `core_clocks` every socket's cores in order, and
    /// the placement has `p.llc_slices` slices per socket.
    pub fn with_sockets(
        p: &CacheHierarchy,
        core_clocks: &[u64],
        mem: M,
        net: Box<dyn Network>,
        placement: Placement,
        homes: Option<SocketHomes>,
    ) -> Self {
        let per_socket = p.llc_slices.max(1);
        let slices = per_socket * homes.as_ref().map_or(1, |h| h.ctrl.len() as u64);
        assert_eq!(placement.core.len(), core_clocks.len(), "the placement needs one endpoint per core");
        assert_eq!(placement.llc_slice.len() as u64, slices, "the placement needs one endpoint per LLC slice");
        if let Some(h) = &homes {
            assert_eq!(h.slices_per_socket, per_socket, "every socket has the hierarchy's LLC slices");
            assert_eq!(h.core_socket.len(), core_clocks.len(), "every core has a socket");
            assert!(h.ctrl.len() <= 64, "the directory keeps a bit per socket");
        }
        let remote_lines = p.directory.remote_lines && homes.as_ref().is_some_and(|h| h.ctrl.len() > 1);
        let cores = core_clocks
            .iter()
            .enumerate()
            .map(|(i, &hz)| {
                let mut l1d = CacheArray::new(&p.l1d, p.l1d.size, 1, hz, 0x2222 + i as u64);
                let mut l2 = p.l2_enabled.then(|| CacheArray::new(&p.l2, p.l2.size, 1, hz, 0x3333 + i as u64));
                let l1d_pf = Prefetchers::new(&p.l1d.prefetch, p.l1d.line_size).map(Box::new);
                let l2_pf = l2.as_ref().and_then(|_| Prefetchers::new(&p.l2.prefetch, p.l2.line_size)).map(Box::new);
                if l1d_pf.is_some() {
                    l1d.track_prefetches();
                }
                if let (Some(l2), Some(_)) = (l2.as_mut(), &l2_pf) {
                    l2.track_prefetches();
                }
                PrivateCaches {
                    l1i: CacheArray::new(&p.l1i, p.l1i.size, 1, hz, 0x1111 + i as u64),
                    l1d,
                    l2,
                    l1d_pf,
                    l2_pf,
                    pc: 0,
                    walking: false,
                }
            })
            .collect();
        let mut llc: Vec<CacheArray> = (0..slices)
            .map(|s| CacheArray::new(&p.llc, p.llc.size / per_socket, per_socket, p.uncore_clock, 0x4444 + s))
            .collect();
        // A memory that gives each core its own port must see an LLC eviction as the core whose data it is: the
        // LLC then keeps each line's owning core (no other memory needs it, so DDR keeps no such state).
        if mem.routes_by_owner() {
            llc.iter_mut().for_each(CacheArray::track_owners);
        }
        // The two levels of the directory: which cluster each core is in, and where each cluster keeps its level.
        let core_cluster: Vec<u16> = placement.core.iter().map(|&e| net.cluster_of(e)).collect();
        let clusters = core_cluster.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
        let mut cluster_dir = vec![None; clusters];
        for (k, slot) in cluster_dir.iter_mut().enumerate() {
            let members = core_cluster.iter().filter(|&&c| c as usize == k).count();
            if members >= 2 {
                *slot = placement.llc_slice.iter().copied().find(|&e| net.cluster_of(e) as usize == k);
            }
        }
        let uncore = Clock::new(p.uncore_clock);
        let dir = Directory::new(uncore.ticks(p.directory.latency), uncore.ticks(p.directory.cluster_latency));
        MemSystem {
            cores,
            llc,
            llc_inclusive: p.llc.inclusive,
            line_shift: p.l1d.line_size.trailing_zeros(),
            mem,
            net,
            placement,
            dir,
            core_cluster,
            cluster_dir,
            ddio: true,
            dma: DmaLines::default(),
            io: IoStats::default(),
            uncached: (0, 0),
            uncached_ticks: 0,
            check: None,
            homes: homes.map(Box::new),
            remote_lines,
            outboxes: None,
            origin: Origin::Demand,
            warm_clock: None,
        }
    }

    pub fn line_size(&self) -> u64 {
        1 << self.line_shift
    }

    /// Turn on the debug check mode: every access is followed by the coherence invariants (panics on a breach).
    pub fn enable_check(&mut self) {
        self.check = Some(CoherenceCheck::new(self.cores.len()));
    }

    /// Core `core` changed its clock: its private caches follow.
    pub fn set_core_clock(&mut self, core: usize, hz: u64) {
        let p = &mut self.cores[core];
        p.l1i.set_clock(hz);
        p.l1d.set_clock(hz);
        if let Some(l2) = &mut p.l2 {
            l2.set_clock(hz);
        }
    }

    /// Confine `class`'s LLC allocations to `mask`'s ways in every slice (e.g. DDIO: the NIC's 10%).
    pub fn set_llc_way_mask(&mut self, class: ReqClass, mask: u64) {
        for s in &mut self.llc {
            s.set_way_mask(class, mask);
        }
    }

    /// The LLC slice that is `line`'s home (and holds its directory entry's home).
    #[inline]
    pub fn slice_of(&self, line: u64) -> usize {
        match &self.homes {
            None => (line % self.llc.len() as u64) as usize,
            Some(h) => {
                let socket = self.mem.home_socket(line << self.line_shift) as u64;
                (socket * h.slices_per_socket + line % h.slices_per_socket) as usize
            }
        }
    }

    /// The socket of LLC slice `slice` (0 on a one-socket system).
    pub fn socket_of_slice(&self, slice: usize) -> usize {
        self.homes.as_ref().map_or(0, |h| slice / h.slices_per_socket as usize)
    }

    /// Load-to-use ticks of a hit at each level for `core` on an unloaded network: (L1D, L2 if any, LLC in
    /// slice 0).
    pub fn hit_latencies(&self, core: usize) -> (Tick, Option<Tick>, Tick) {
        let p = &self.cores[core];
        let l1 = p.l1d.hit_ticks;
        let l2 = p.l2.as_ref().map(|c| l1 + c.hit_ticks);
        let (ep, h) = (self.placement.core[core], self.placement.llc_slice[0]);
        let trip = self.net.latency(ep, h, CONTROL_BYTES) + self.net.latency(h, ep, DATA_BYTES);
        (l1, l2, l2.unwrap_or(l1) + trip + self.llc[0].hit_ticks.max(self.dir.home_ticks))
    }

    #[inline]
    fn l1(&mut self, core: usize, ifetch: bool) -> &mut CacheArray {
        let p = &mut self.cores[core];
        if ifetch {
            &mut p.l1i
        } else {
            &mut p.l1d
        }
    }

    /// The walk for a core's access (timed or warming), then what the L1D's prefetchers make of a load. Returns
    /// when the access completes.
    #[inline]
    fn core_walk(&mut self, req: &MemReq, mode: Mode) -> Tick {
        self.origin = if req.kind == AccessKind::Prefetch { Origin::SwPrefetch } else { Origin::Demand };
        if req.kind != AccessKind::Read || self.cores[req.requester as usize].l1d_pf.is_none() {
            // A timed store to a core with L1D prefetchers counts toward their store-stream condition.
            if req.kind == AccessKind::Write
                && mode == Mode::Timed
                && self.cores[req.requester as usize].l1d_pf.is_some()
            {
                self.l1d_saw_store(req.requester as usize);
            }
            return self.core_walk_demand(req, mode);
        }
        self.core_walk_prefetching(req, mode)
    }

    /// What a core's access is, as its walk needs it.
    #[inline(always)]
    fn core_access(&self, req: &MemReq, mode: Mode) -> CoreAccess {
        CoreAccess {
            timed: mode == Mode::Timed,
            line: req.addr >> self.line_shift,
            t: req.time,
            core: req.requester as usize,
            ifetch: req.kind == AccessKind::IFetch,
            write: req.kind == AccessKind::Write,
            origin: self.origin,
        }
    }

    #[inline(never)]
    pub(super) fn core_walk_demand(&mut self, req: &MemReq, mode: Mode) -> Tick {
        self.core_walk_l1(req, mode, None)
    }

    /// `core_walk_demand`; on an L1 miss, before it is fetched, `grant` (if given) takes the tick its L1's MSHRs
    /// would send it at (`CacheArray::mshr_grant` at the request's time: `sw_prefetch`).
    #[inline(always)]
    pub(super) fn core_walk_l1(&mut self, req: &MemReq, mode: Mode, grant: Option<&mut Tick>) -> Tick {
        let CoreAccess { timed, line, t, core, ifetch, write, origin } = self.core_access(req, mode);
        let l1 = self.l1(core, ifetch);
        l1.stats.count_access(origin);
        match req.kind {
            AccessKind::Prefetch => l1.stats.prefetches += 1,
            AccessKind::Write => l1.stats.writes += 1,
            _ => {}
        }
        let lat = l1.hit_ticks;
        if let Some(slot) = l1.find_hinted(line) {
            l1.touch(slot);
            let (state, ready) = (l1.state(slot), l1.ready(slot));
            l1.demand_use(slot, timed && ready > t);
            let done = if ready <= t || !timed {
                l1.stats.hits += 1;
                t + lat
            } else {
                l1.stats.mshr_merges += 1;
                ready.max(t + lat)
            };
            if !write || state.writable() {
                if write {
                    l1.set_state(slot, LineState::Modified);
                }
                self.checked(core, line, write, false);
                return done;
            }
            return self.l1_upgrade(core, line, done, mode);
        }
        if let Some(g) = grant {
            *g = l1.mshr_grant(t);
        }
        self.l1_miss(req, mode, lat)
    }

    /// A store to a shared or owned copy in `core`'s L1D, its hit done at `done`: ask for write permission; no
    /// data moves. Out of line, as `l1_miss`: the walk's hit path then needs no stack frame of its own.
    #[inline(never)]
    fn l1_upgrade(&mut self, core: usize, line: u64, done: Tick, mode: Mode) -> Tick {
        self.cores[core].l1d.stats.upgrades += 1;
        self.checked(core, line, false, false);
        let resp = self.request(core, line, CohType::Upgrade, done, mode);
        self.grant_exclusive(core, line);
        self.checked(core, line, true, false);
        resp.done
    }

    /// `req` missed in its L1 (hit latency `lat`): fetch the line from below, install it, evict a victim.
    #[inline(never)]
    fn l1_miss(&mut self, req: &MemReq, mode: Mode, lat: Tick) -> Tick {
        let CoreAccess { timed, line, t, core, ifetch, write, origin } = self.core_access(req, mode);
        let walking = self.cores[core].walking;
        let l1 = self.l1(core, ifetch);
        l1.stats.count_miss(origin);
        if write {
            l1.stats.write_misses += 1;
        }
        // The page walker's own read (its prefetches' misses are the prefetcher's, counted by their origin).
        l1.stats.page_walk_misses += (walking && origin == Origin::Demand) as u64;
        let (mshr, start) = if timed { l1.mshr_acquire(t) } else { (0, t) };
        let (resp, fresh) = self.below_l1(core, line, req.kind, req.non_temporal, start + lat, mode);
        let l1 = self.l1(core, ifetch);
        if timed {
            l1.mshr_hold_from(mshr, start, resp.done);
        }
        // The instruction cache only ever reads: its copy is shared whatever the core's permission.
        let state = if write {
            LineState::Modified
        } else if ifetch {
            LineState::Shared
        } else {
            resp.state
        };
        let (_, victim) = l1.insert_state(line, resp.done, state, req.class);
        if let Some((v, vs)) = victim {
            self.private_evict(core, v, vs, Level::L1, start, mode);
        }
        self.checked(core, line, write, fresh);
        resp.done
    }

    /// An L1 miss for `line` leaves the L1 at `t`: returns when its data reaches the L1, the state granted, and
    /// whether the data came from outside the core.
    pub(super) fn below_l1(
        &mut self,
        core: usize,
        line: u64,
        kind: AccessKind,
        non_temporal: bool,
        t: Tick,
        mode: Mode,
    ) -> (MemResp, bool) {
        let out = self.l2_walk(core, line, kind, non_temporal, t, mode);
        if self.cores[core].l2_pf.as_ref().is_some_and(|pf| pf.watches(non_temporal)) {
            // The L2's prefetchers watch the L1s' requests (a non-temporal one only if they are trained by it);
            // `fresh` (from outside the core) is an L2 miss.
            let origin = std::mem::replace(&mut self.origin, Origin::HwPrefetch);
            self.l2_prefetch(core, line, out.1, t, mode);
            self.origin = origin;
        }
        out
    }

    fn l2_walk(
        &mut self,
        core: usize,
        line: u64,
        kind: AccessKind,
        non_temporal: bool,
        t: Tick,
        mode: Mode,
    ) -> (MemResp, bool) {
        let write = kind == AccessKind::Write;
        let typ = if write { CohType::GetX } else { CohType::GetS };
        let exclusive_ok = kind != AccessKind::IFetch;
        let timed = mode == Mode::Timed;
        let origin = self.origin;
        // The page walker's own read (not a prefetch the read set off).
        let walk_read = origin == Origin::Demand && self.cores[core].walking;
        let Some(l2) = self.cores[core].l2.as_mut() else {
            return (self.request_ex(core, line, typ, t, mode, exclusive_ok), true);
        };
        l2.stats.count_access(origin);
        let lat = l2.hit_ticks;
        if let Some(slot) = l2.find(line) {
            l2.touch(slot);
            let (state, ready) = (l2.state(slot), l2.ready(slot));
            l2.demand_use(slot, timed && ready > t);
            let done = if ready <= t || !timed {
                l2.stats.hits += 1;
                t + lat
            } else {
                l2.stats.mshr_merges += 1;
                ready.max(t + lat)
            };
            if !write || state.writable() {
                return (MemResp { done, state }, false);
            }
            l2.stats.upgrades += 1;
            self.checked(core, line, false, false);
            let resp = self.request(core, line, CohType::Upgrade, done, mode);
            self.grant_exclusive(core, line);
            return (MemResp { done: resp.done, state: LineState::Modified }, false);
        }
        l2.stats.count_miss(origin);
        l2.stats.page_walk_misses += walk_read as u64;
        if non_temporal {
            // Non-temporal: the fill skips the mid-level cache.
            return (self.request_ex(core, line, typ, t + lat, mode, exclusive_ok), true);
        }
        let (mshr, start) = if timed { l2.mshr_acquire(t) } else { (0, t) };
        let resp = self.request_ex(core, line, typ, start + lat, mode, exclusive_ok);
        let l2 = self.cores[core].l2.as_mut().expect("l2");
        if timed {
            l2.mshr_hold_from(mshr, start, resp.done);
        }
        // A store's line: the L1 copy will be M; the L2 copy holds the core's exclusive permission, clean.
        let state = if write { LineState::Exclusive } else { resp.state };
        let (_, victim) = l2.insert_state(line, resp.done, state, ReqClass::Core);
        if let Some((v, vs)) = victim {
            self.private_evict(core, v, vs, Level::L2, start, mode);
        }
        (resp, true)
    }

    /// The core now holds write permission (after an upgrade): its data copies follow.
    fn grant_exclusive(&mut self, core: usize, line: u64) {
        let p = &mut self.cores[core];
        if let Some(s) = p.l1d.find(line) {
            p.l1d.set_state(s, LineState::Modified);
        }
        if let Some(l2) = &mut p.l2 {
            if let Some(s) = l2.find(line) {
                // The L1D holds (or is about to hold) the newer data, M; a later L1 eviction writes it back here.
                l2.set_state(s, LineState::Exclusive);
            }
        }
    }

    fn request(&mut self, core: usize, line: u64, typ: CohType, t: Tick, mode: Mode) -> MemResp {
        self.request_ex(core, line, typ, t, mode, true)
    }

    /// A core's request leaves its private caches at `t`: first to its cluster's directory (when the cluster
    /// has one), which resolves it if the cluster can; else on to the line's home. `exclusive_ok`: a read may be
    /// granted E when nobody else holds the line (not for instruction fetches).
    pub(super) fn request_ex(
        &mut self,
        core: usize,
        line: u64,
        typ: CohType,
        t: Tick,
        mode: Mode,
        exclusive_ok: bool,
    ) -> MemResp {
        let ep = self.placement.core[core];
        let home = self.placement.llc_slice[self.slice_of(line)];
        let cluster = self.core_cluster[core];
        let Some(cdir) = self.cluster_dir.get(cluster as usize).copied().flatten() else {
            if let Some(p) = self.remote_slice(core, line) {
                return self.remote_request(core, line, typ, p, ep, t, mode, exclusive_ok);
            }
            let arrive = self.msg(mode, MsgKind::Request, ep, home, CONTROL_BYTES, t);
            return self.home_core(core, line, typ, arrive, mode, exclusive_ok);
        };
        let decide = self.msg(mode, MsgKind::Request, ep, cdir, CONTROL_BYTES, t) + self.dir.cluster_ticks;
        if let Some(resp) = self.resolve_in_cluster(core, line, typ, cdir, decide, mode) {
            self.dir.stats.cluster_resolved += 1;
            return resp;
        }
        if let Some(p) = self.remote_slice(core, line) {
            return self.remote_request(core, line, typ, p, cdir, decide, mode, exclusive_ok);
        }
        let arrive = self.msg(mode, MsgKind::Request, cdir, home, CONTROL_BYTES, decide);
        self.home_core(core, line, typ, arrive, mode, exclusive_ok)
    }

    /// The cluster level: a read whose owner is a sibling is forwarded to it; a write (or upgrade) is granted
    /// when the cluster holds the line exclusively (an owner in the cluster and no holder outside it).
    fn resolve_in_cluster(
        &mut self,
        core: usize,
        line: u64,
        typ: CohType,
        cdir: Endpoint,
        decide: Tick,
        mode: Mode,
    ) -> Option<MemResp> {
        let c = core as u16;
        let entry = self.dir.get(line)?;
        let owner = entry.owner?;
        let cluster = self.core_cluster[core];
        let local = |x: u16| self.core_cluster[x as usize] == cluster;
        match typ {
            CohType::GetS if owner != c && local(owner) => {
                let done = self.forward_read(owner, self.placement.core[core], cdir, decide, mode);
                self.downgrade_owner(owner, line);
                self.dir.entry(line).sharers.insert(c);
                self.dir.stats.gets += 1;
                Some(MemResp { done, state: LineState::Shared })
            }
            CohType::GetX | CohType::Upgrade
                if local(owner)
                    && entry.holders().iter().all(|&x| local(x))
                    && !self.remote_copies_elsewhere(line, core) =>
            {
                let entry = entry.clone();
                let done = self.take_exclusive(core, line, typ, &entry, cdir, decide, mode);
                Some(MemResp { done, state: LineState::Modified })
            }
            _ => None,
        }
    }

    /// The owner `owner` answers a forwarded read from `from` (a directory at `decide`): it keeps the line,
    /// downgraded (M to O, E to S), and sends the data to `to`. Returns when the data arrives.
    pub(super) fn forward_read(&mut self, owner: u16, to: Endpoint, from: Endpoint, decide: Tick, mode: Mode) -> Tick {
        let o = owner as usize;
        let oe = self.placement.core[o];
        let arrive = self.msg(mode, MsgKind::Forward, from, oe, CONTROL_BYTES, decide);
        let lookup = self.cores[o].l1d.hit_ticks;
        self.dir.stats.forwards += 1;
        self.msg(mode, MsgKind::Data, oe, to, DATA_BYTES, arrive + lookup)
    }

    /// Downgrade `owner`'s copies of `line` after a forwarded read by another core; updates the entry.
    pub(super) fn downgrade_owner(&mut self, owner: u16, line: u64) {
        let p = &mut self.cores[owner as usize];
        let mut still_owner = false;
        for a in [&mut p.l1i, &mut p.l1d].into_iter().chain(p.l2.as_mut()) {
            if let Some(s) = a.find(line) {
                let next = match a.state(s) {
                    LineState::Modified | LineState::Owned => LineState::Owned,
                    other => other.min(LineState::Shared),
                };
                still_owner |= next == LineState::Owned;
                a.set_state(s, next);
            }
        }
        if !still_owner {
            let e = self.dir.entry(line);
            e.owner = None;
            e.sharers.insert(owner);
        }
    }

    /// Write permission for `core`: invalidate every other holder (each acknowledges to the requester), take
    /// the data from the owner (a GETX whose owner is elsewhere) or the LLC, and make `core` the owner.
    #[allow(clippy::too_many_arguments)]
    fn take_exclusive(
        &mut self,
        core: usize,
        line: u64,
        typ: CohType,
        entry: &DirEntry,
        from: Endpoint,
        decide: Tick,
        mode: Mode,
    ) -> Tick {
        let c = core as u16;
        let ep = self.placement.core[core];
        let has_copy = entry.holds(c) && self.cores[core].state_of(line) != LineState::Invalid;
        let upgrade = typ == CohType::Upgrade && has_copy;
        if upgrade {
            self.dir.stats.upgrades += 1;
        } else {
            self.dir.stats.getx += 1;
        }
        let mut done = decide;
        let data_owner = entry.owner.filter(|&o| o != c && !upgrade);
        for x in entry.holders() {
            if x == c || Some(x) == data_owner {
                continue;
            }
            let xe = self.placement.core[x as usize];
            let inv = self.msg(mode, MsgKind::Invalidate, from, xe, CONTROL_BYTES, decide);
            let ack = self.msg(mode, MsgKind::Ack, xe, ep, CONTROL_BYTES, inv);
            done = done.max(ack);
            self.dir.stats.invalidations += 1;
            self.drop_core_copies(x as usize, line, false);
        }
        if self.remote_lines {
            // Other sockets' LLC copies go too; the writer's socket keeps its own (reads there reach the owner).
            let keep = Some(self.socket_of_core(core));
            done = done.max(self.invalidate_remote(line, keep, from, ep, decide, mode));
        }
        if let Some(o) = data_owner {
            // The forward doubles as the invalidation: the owner sends its data and drops its copy.
            let data = self.forward_read(o, ep, from, decide, mode);
            done = done.max(data);
            self.drop_core_copies(o as usize, line, false);
        } else if upgrade {
            let grant = self.msg(mode, MsgKind::Grant, from, ep, CONTROL_BYTES, decide);
            done = done.max(grant);
        } else {
            let home = self.placement.llc_slice[self.slice_of(line)];
            let ready = self.llc_data(Some(core), line, decide, ReqClass::Core, mode);
            let data = self.msg(mode, MsgKind::Data, home, ep, DATA_BYTES, ready);
            done = done.max(data);
        }
        let e = self.dir.entry(line);
        e.owner = Some(c);
        e.sharers.clear();
        done
    }

    /// A core's request reaches the line's home at `arrive`.
    pub(super) fn home_core(
        &mut self,
        core: usize,
        line: u64,
        typ: CohType,
        arrive: Tick,
        mode: Mode,
        exclusive_ok: bool,
    ) -> MemResp {
        let c = core as u16;
        let home = self.placement.llc_slice[self.slice_of(line)];
        let ep = self.placement.core[core];
        let decide = arrive + self.dir.home_ticks;
        if typ != CohType::GetS {
            self.settle_shares(line);
        }
        let entry = self.dir.get(line).cloned().unwrap_or_default();
        match typ {
            CohType::GetS => {
                self.dir.stats.gets += 1;
                if let Some(o) = entry.owner.filter(|&o| o != c) {
                    // 3-hop: the owner supplies the data; the LLC's tags were looked up on the way.
                    self.llc_tag_lookup(line);
                    let done = self.forward_read(o, ep, home, decide, mode);
                    self.downgrade_owner(o, line);
                    self.dir.entry(line).sharers.insert(c);
                    return MemResp { done, state: LineState::Shared };
                }
                let ready = self.llc_data(Some(core), line, arrive, ReqClass::Core, mode).max(decide);
                let done = self.msg(mode, MsgKind::Data, home, ep, DATA_BYTES, ready);
                // No exclusive grant while other sockets' LLCs hold copies: the core could write without asking.
                let exclusive_ok = exclusive_ok && !self.remote_copies_elsewhere(line, core);
                let e = self.dir.entry(line);
                let state = if e.owner == Some(c) {
                    LineState::Shared // the core already owns it (a fetch of a line it holds in its data caches)
                } else if e.is_empty() && exclusive_ok {
                    e.owner = Some(c);
                    LineState::Exclusive
                } else {
                    e.sharers.insert(c);
                    LineState::Shared
                };
                MemResp { done, state }
            }
            CohType::GetX | CohType::Upgrade => {
                let done = self.take_exclusive(core, line, typ, &entry, home, decide, mode);
                MemResp { done, state: LineState::Modified }
            }
            CohType::PutS | CohType::PutX => unreachable!("write-backs go through `put`"),
        }
    }

    /// Count a tag lookup at the home slice (the data came from elsewhere).
    pub(super) fn llc_tag_lookup(&mut self, line: u64) {
        let s = self.slice_of(line);
        let origin = self.origin;
        let c = &mut self.llc[s];
        c.stats.count_access(origin);
        if let Some(slot) = c.find(line) {
            c.touch(slot);
            c.stats.hits += 1;
        }
    }

    /// The LLC slice of `line` supplies its data for a request arriving at `t`: a hit after the slice's
    /// latency, a miss through an MSHR to memory (and installed, evicting a victim). Returns when the data is
    /// ready at the slice.
    fn llc_data(&mut self, core: Option<usize>, line: u64, t: Tick, class: ReqClass, mode: Mode) -> Tick {
        let timed = mode == Mode::Timed;
        let s = self.slice_of(line);
        if core.is_some() {
            self.count_core_read_of_io_line(s, line);
        }
        let origin = self.origin;
        let c = &mut self.llc[s];
        c.stats.count_access(origin);
        let lat = c.hit_ticks;
        if let Some(slot) = c.find(line) {
            c.touch(slot);
            let ready = c.ready(slot);
            if ready <= t || !timed {
                c.stats.hits += 1;
                return t + lat;
            }
            c.stats.mshr_merges += 1;
            return ready.max(t + lat);
        }
        c.stats.count_miss(origin);
        let (mshr, start) = if timed { c.mshr_acquire(t) } else { (0, t) };
        let go = start + lat;
        let owner = core.map_or(NO_OWNER, |c| c as u16);
        let fill = if timed {
            self.memory_read(s, line, owner, go)
        } else {
            self.warm_memory(line, owner, AccessKind::Read);
            0
        };
        let c = &mut self.llc[s];
        if timed {
            c.mshr_hold_from(mshr, start, fill);
        }
        let (slot, victim) = c.insert_state(line, fill, LineState::Shared, class);
        let victim_owner = c.owner(slot);
        c.set_owner(slot, owner);
        if let Some((v, vs)) = victim {
            self.evict_llc_line(s, v, vs.dirty(), victim_owner, go, mode);
        }
        fill
    }

    /// The memory controller endpoint of `line`: the one serving its DRAM channel.
    pub(super) fn mem_ctrl_of(&self, line: u64, slice: usize) -> Endpoint {
        // The controller endpoint that serves the line's DRAM channel (the DRAM model's own address map decides
        // the channel): with as many endpoints as channels, channel c is endpoint c; with fewer endpoints,
        // consecutive channels share one; with more endpoints than channels, the extra endpoints serve none.
        let m = match &self.homes {
            None => &self.placement.mem_ctrl[..],
            Some(h) => {
                let (a, b) = h.ctrl[slice / h.slices_per_socket as usize];
                &self.placement.mem_ctrl[a..b]
            }
        };
        if m.is_empty() {
            return self.placement.llc_slice[slice];
        }
        let (channel, channels) = self.mem.channel_of(line << self.line_shift);
        m[(channel * m.len() / channels.max(1)).min(m.len() - 1)]
    }

    /// A read of `line` from memory for core `owner` (the requester, or the core owning a device queue), asked by
    /// slice `s` at `t`: the request to its controller, the DRAM, the data back. Returns when the data is at the
    /// slice.
    pub(super) fn memory_read(&mut self, s: usize, line: u64, owner: u16, t: Tick) -> Tick {
        let (home, mc) = (self.placement.llc_slice[s], self.mem_ctrl_of(line, s));
        let at_mc = self.net.send(home, mc, CONTROL_BYTES, t);
        let data = self.mem.access(&MemReq::new(line << self.line_shift, AccessKind::Read, owner, at_mc));
        self.net.send(mc, home, DATA_BYTES, data)
    }

    /// `owner`'s dirty line goes from slice `s` to memory at `t` (posted).
    pub(super) fn memory_write(&mut self, s: usize, line: u64, owner: u16, t: Tick, mode: Mode) {
        if mode == Mode::Warm {
            return self.warm_memory(line, owner, AccessKind::Write);
        }
        let (home, mc) = (self.placement.llc_slice[s], self.mem_ctrl_of(line, s));
        let at_mc = self.net.send(home, mc, DATA_BYTES, t);
        self.mem.access(&MemReq::new(line << self.line_shift, AccessKind::Write, owner, at_mc));
    }

    /// One access of any agent and mode (the single entry point). Inlined, its rarer paths out of line: a core's
    /// access goes straight to its walk, without the stack frame of an I/O agent's (a tenth of the host
    /// instructions of an L1 hit went to that frame).
    #[inline]
    pub fn access_mode(&mut self, req: &MemReq, mode: Mode) -> Tick {
        if req.class == ReqClass::Io {
            return self.io_access(req, mode);
        }
        if self.in_uncached_range(req.addr) {
            return self.uncached_access(req);
        }
        self.core_walk(req, mode)
    }

    /// Agents and helpers for tests: the endpoint of core `core`.
    pub fn core_endpoint(&self, core: usize) -> Endpoint {
        self.placement.core[core]
    }

    /// Which agent issued `req`.
    pub fn agent_of(req: &MemReq) -> Agent {
        match req.class {
            ReqClass::Core => Agent::Core(req.requester),
            ReqClass::Io => Agent::Io(req.requester),
        }
    }
}

/// Which private level a copy left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Level {
    L1,
    L2,
}
