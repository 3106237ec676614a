//! The timing side of the machine, ready to sit behind the engine's per-instruction hook: one [`Core`] per hart
//! over a shared [`MemSystem`] (private L1I/L1D/L2, sliced LLC, MOESI directory, on-chip network) and each
//! socket's memory (a [`Dram`] controller). Several sockets share one memory system: their networks are joined by
//! the inter-socket links ([`SystemNetwork`]) and each line's home slice and memory are on its NUMA socket.
//!
//! ```ignore
//! impl ExecHook for TimingHook {              // in the engine
//!     const ACTIVE: bool = true;
//!     fn on_inst(&mut self, hart: usize, info: &InstInfo) { self.0.on_inst(hart, info) }
//! }
//! ```

use crate::core::{Core, InstTiming, L1Latencies};
#[cfg(doc)]
use crate::dram::Dram;
use crate::inst::InstInfo;
use crate::interconnect::{SocketNet, SystemNetwork};
use crate::mem::socket_messages::SocketOutboxes;
use crate::mem::{MemSystem, SocketHomes};
use crate::network::{Network, Placement};
use crate::numa::NumaMap;
use crate::socket_memory::{socket_memory, SocketMemories, SocketPort};
use crate::tlb::Side;
use crate::{AccessKind, MemPort, StatSink, Tick};
use kvsim_params::{CacheHierarchy, Core as CoreParams, MemoryController, SocketLink};

/// One socket's parts, for [`TimingSystem::multi_socket`].
pub struct SocketParts {
    /// The core model of each of its cores.
    pub cores: Vec<CoreParams>,
    /// Its memory (built by [`socket_memory`] from its controller's parameters, or any other).
    pub memory: SocketPort,
    /// Its on-chip network, where its agents sit and its link port.
    pub net: SocketNet,
}

pub struct TimingSystem {
    pub cores: Vec<Core>,
    pub mem: MemSystem<SocketMemories>,
    /// Cores of each socket (socket 0's first); one entry on a one-socket system.
    socket_cores: Vec<usize>,
    /// Time of the last stats reset.
    stats_base: Tick,
    /// Per hart: the instruction line warming last fetched, its address (so warming touches the L1I once per line).
    warm_fetch_line: Vec<u64>,
    /// log2 of the L1I's line size: warming touches the L1I once per line of 2^this bytes an instruction stream
    /// fetches from, as the timed core's fetch does (`Core::line_shift`). One for every hart: the system has one
    /// cache hierarchy, and its levels one line size.
    warm_fetch_shift: u32,
    /// The partitioned schedule: each hart's instruction parked until the window's end (`crate::parked`; None:
    /// nothing is parked, the global schedule and one socket).
    pub(crate) parked: Option<Box<Parked>>,
    /// Instructions timed in a partition's turn (`on_inst_in_turn`) that sent another socket a message, since the
    /// start, never reset: the release builds' check that the park probe missed none (`unparked_crossings`).
    pub(crate) unparked_crossings: u64,
    /// The mask of a line's address out of a PC for that line (an `and` takes it from memory in one instruction
    /// where a shift by a variable needs two more: this is on warming's hottest path).
    warm_fetch_mask: u64,
}

impl TimingSystem {
    /// One core per entry of `cores` (hart i runs on core i), sharing `caches` and `dram`, on an ideal network
    /// with every agent on its own endpoint (the LLC's hit latency includes the trip to it).
    pub fn new(cores: &[CoreParams], caches: &CacheHierarchy, dram: &MemoryController) -> Self {
        let clocks: Vec<u64> = cores.iter().map(|c| c.clock).collect();
        Self::from_mem(cores, caches, MemSystem::new(caches, &clocks, Self::one_memory(dram)))
    }

    fn one_memory(dram: &MemoryController) -> SocketMemories {
        SocketMemories::new(vec![socket_memory(dram)])
    }

    /// As `new`, the memory system's messages carried by `net` between the agents at `placement`.
    pub fn with_network(
        cores: &[CoreParams],
        caches: &CacheHierarchy,
        dram: &MemoryController,
        net: Box<dyn Network>,
        placement: Placement,
    ) -> Self {
        let clocks: Vec<u64> = cores.iter().map(|c| c.clock).collect();
        let mem = MemSystem::with_network(caches, &clocks, Self::one_memory(dram), net, placement);
        Self::from_mem(cores, caches, mem)
    }

    /// Several sockets, each with `caches` (every socket alike), joined by fully connected links of `link`: one
    /// memory system over every socket's cores (hart i on the i-th core, socket 0's first), LLC slices and
    /// memories; each line's home is on the socket the NUMA map (see `set_numa`) puts it on.
    pub fn multi_socket(sockets: Vec<SocketParts>, caches: &CacheHierarchy, link: &SocketLink) -> Result<Self, String> {
        let mut cores = Vec::new();
        let mut socket_cores = Vec::new();
        let mut memories = Vec::new();
        let mut nets = Vec::new();
        let mut ctrl = Vec::new();
        for (k, s) in sockets.into_iter().enumerate() {
            if s.net.placement.core.len() != s.cores.len() {
                return Err(format!(
                    "socket {k}: the network places {} cores for {} core models",
                    s.net.placement.core.len(),
                    s.cores.len()
                ));
            }
            if s.net.placement.llc_slice.len() as u64 != caches.llc_slices.max(1) {
                return Err(format!(
                    "socket {k}: the network places {} LLC slices, the caches have {}",
                    s.net.placement.llc_slice.len(),
                    caches.llc_slices
                ));
            }
            let first = ctrl.last().map_or(0, |&(_, b)| b);
            ctrl.push((first, first + s.net.placement.mem_ctrl.len()));
            socket_cores.push(s.cores.len());
            cores.extend(s.cores);
            memories.push(s.memory);
            nets.push(s.net);
        }
        if nets.is_empty() {
            return Err("a system needs at least one socket".into());
        }
        let (net, placement) = SystemNetwork::new(nets, link)?;
        let outboxes = SocketOutboxes::new(net.sockets(), net.endpoint_sockets());
        let clocks: Vec<u64> = cores.iter().map(|c| c.clock).collect();
        let core_socket =
            socket_cores.iter().enumerate().flat_map(|(k, &n)| std::iter::repeat_n(k as u16, n)).collect();
        let homes = SocketHomes { slices_per_socket: caches.llc_slices.max(1), core_socket, ctrl };
        let memory = SocketMemories::new(memories);
        let mut mem = MemSystem::with_sockets(caches, &clocks, memory, Box::new(net), placement, Some(homes));
        mem.outboxes = Some(Box::new(outboxes));
        let mut sys = Self::from_mem(&cores, caches, mem);
        sys.socket_cores = socket_cores;
        Ok(sys)
    }

    pub fn sockets(&self) -> usize {
        self.socket_cores.len()
    }

    /// The socket of each core (hart), in order.
    pub fn core_sockets(&self) -> Vec<u16> {
        self.socket_cores.iter().enumerate().flat_map(|(k, &n)| std::iter::repeat_n(k as u16, n)).collect()
    }

    /// Take the engine's NUMA map (when warming or detailed timing starts): every line's home from now on.
    pub fn set_numa(&mut self, map: NumaMap) -> Result<(), String> {
        let placed: Vec<(u64, u64, u16)> = map.ranges().to_vec();
        let mut next = map;
        for (start, end, socket) in placed {
            self.place_tables(&mut next, start, end - start, socket)?;
        }
        self.take_homes(next)
    }

    /// The engine placed [start, start + len) on `socket`'s memory (a NUMA allocation).
    pub fn numa_placed(&mut self, start: u64, len: u64, socket: u16) -> Result<(), String> {
        let mut next = self.mem.mem.map().clone();
        next.place(start, len, socket)?;
        self.place_tables(&mut next, start, len, socket)?;
        self.take_homes(next)
    }

    /// The homes of `next` from now on. The lines whose home socket it changes and that some cache holds leave
    /// the caches first, through their old homes (`MemSystem::rehome`): the new home's directory knows no copy
    /// of them, so none may remain. (A replayed map, a checkpoint's restore or the start of timing, changes no
    /// home a cached line has unless the replay itself moves it: the caches are empty when warming starts.)
    fn take_homes(&mut self, next: NumaMap) -> Result<(), String> {
        if next.sockets() as usize > self.mem.mem.sockets() {
            return self.mem.mem.set_map(next); // its error
        }
        let changed = self.mem.mem.map().changed_ranges(&next);
        self.mem.rehome(changed.as_deref(), |addr| next.socket_of(addr));
        self.mem.mem.set_map(next)
    }

    /// The page-table pages of the two lowest levels that map [start, start + len) live on the socket of the data
    /// (the kernel allocates them on the node of the first touch, which NUMA-local data gets from its own socket):
    /// placed so in `map`.
    fn place_tables(&self, map: &mut NumaMap, start: u64, len: u64, socket: u16) -> Result<(), String> {
        let Some(mmu) = self.cores.first().and_then(Core::mmu) else { return Ok(()) };
        let spans = [mmu.table_span(1, start, len), mmu.table_span(2, start, len)];
        for (a, b) in spans {
            map.place(a, b - a, socket)?;
        }
        Ok(())
    }

    /// The engine mapped [start, start + len) with 2 MB pages (a hugepage allocation): every core's MMU translates
    /// it with 2 MB pages from now on (and flushes its TLBs, as a kernel changing a mapping would).
    pub fn map_huge(&mut self, start: u64, len: u64) {
        for c in &mut self.cores {
            if let Some(m) = c.mmu_mut() {
                m.map_huge(start, len);
            }
        }
    }

    fn from_mem(cores: &[CoreParams], caches: &CacheHierarchy, mem: MemSystem<SocketMemories>) -> Self {
        let l1 = L1Latencies { l1i: caches.l1i.hit_latency, l1d: caches.l1d.hit_latency };
        TimingSystem {
            cores: cores.iter().enumerate().map(|(i, p)| Core::new(i as u16, p, l1, caches.l1d.line_size)).collect(),
            socket_cores: vec![cores.len()],
            mem,
            stats_base: 0,
            warm_fetch_line: vec![u64::MAX; cores.len()],
            warm_fetch_shift: caches.l1i.line_size.trailing_zeros(),
            parked: None,
            unparked_crossings: 0,
            warm_fetch_mask: !((1u64 << caches.l1i.line_size.trailing_zeros()) - 1),
        }
    }

    /// log2 of the L1I line warming fetches by. An executor that skips the instructions warming does nothing for
    /// (`warm_quiet`) must judge them by this shift, or by a smaller one (a shorter line is conservative: it only
    /// skips less).
    pub fn warm_fetch_shift(&self) -> u32 {
        self.warm_fetch_shift
    }

    /// The per-instruction hook: time `info`, just executed by `hart`.
    #[inline]
    pub fn on_inst(&mut self, hart: usize, info: &InstInfo) -> InstTiming {
        self.cores[hart].step(info, &mut self.mem)
    }

    /// `on_inst` of each of `infos`, instructions that retired one after another on `hart`, oldest first: one
    /// loop over them with the core's pipeline inlined in it (no call per instruction).
    #[inline]
    pub fn on_insts(&mut self, hart: usize, infos: &[InstInfo]) {
        self.cores[hart].step_block(infos, &mut self.mem);
    }

    /// `on_inst` in FS mode: the core translates over the guest's page tables (`tlb_guest`).
    #[inline]
    pub fn on_inst_over<T: crate::tlb_guest::PageTables>(
        &mut self,
        hart: usize,
        info: &InstInfo,
        tables: &mut T,
    ) -> InstTiming {
        self.cores[hart].step_over(info, &mut self.mem, tables)
    }

    /// The guest flushed `hart`'s translations (sfence.vma, a remote fence): its TLBs and PSCs forget them.
    pub fn flush_translations(&mut self, hart: usize) {
        if let Some(m) = self.cores[hart].mmu_mut() {
            m.flush_all();
        }
    }

    /// Simulated time `hart` has reached (ps): the engine can advance the hart that is furthest behind.
    pub fn hart_time(&self, hart: usize) -> Tick {
        self.cores[hart].now()
    }

    /// The server's poll-end hint on `hart` (`Core::poll_end`).
    pub fn poll_end(&mut self, hart: usize, idle: bool) {
        if let Some(c) = self.cores.get_mut(hart) {
            c.poll_end(idle);
        }
    }

    /// FS mode's wfi: `hart` sleeps until `tick` (ps), its core idle; the sleep is measured time.
    pub fn sleep_until(&mut self, hart: usize, tick: Tick) {
        self.cores[hart].sleep_until(tick);
    }

    /// The latest time any hart reached.
    pub fn now(&self) -> Tick {
        self.cores.iter().map(|c| c.now()).max().unwrap_or(0)
    }

    /// DVFS: change `hart`'s clock (its core and private caches) from now on.
    pub fn set_clock(&mut self, hart: usize, hz: u64) {
        self.cores[hart].set_clock(hz);
        self.mem.set_core_clock(hart, hz);
    }

    /// End of the run: write out posted DRAM writes so the statistics count them.
    pub fn finish(&mut self) {
        let now = self.now();
        self.mem.mem.flush_posted(now);
    }

    /// Start every statistic afresh (ROI_BEGIN, STATS_RESET, the start of detailed timing); state is kept.
    pub fn reset_stats(&mut self) {
        for c in &mut self.cores {
            c.reset_stats();
        }
        self.mem.reset_stats();
        if let Some(p) = self.parked.as_deref_mut() {
            p.per_hart.iter_mut().chain(p.crossed.iter_mut()).for_each(|n| *n = 0);
        }
        let now = self.now();
        self.mem.mem.reset_port_stats(now);
        self.stats_base = now;
    }

    /// Cache warming: `hart`'s executed instruction updates the caches it would touch, taking no time. Inlined
    /// into the executor's per-instruction hook: most instructions fetch from the line the last one did and touch
    /// no data, and they return here without a call (the call's frame was a sixth of warming's host instructions).
    #[inline(always)]
    pub fn warm(&mut self, hart: usize, info: &InstInfo) {
        if Self::warm_touches_data(info) || self.warm_fetch_line[hart] != info.pc & self.warm_fetch_mask {
            self.warm_accesses(hart, info);
        }
    }

    /// Sampling's functional warming: `warm`, with the memory reads and write-backs it causes reaching the memory
    /// controllers at time `at` (`MemSystem::warm_clock`; the sampler chooses it, engine sampling.rs).
    #[inline(always)]
    pub fn warm_at(&mut self, hart: usize, info: &InstInfo, at: Tick) {
        if Self::warm_touches_data(info) || self.warm_fetch_line[hart] != info.pc & self.warm_fetch_mask {
            self.mem.warm_clock = Some(at);
            self.warm_accesses(hart, info);
            self.mem.warm_clock = None;
        }
    }

    /// Does warming access data for `info` (a load, store, atomic or prefetch)?
    #[inline(always)]
    fn warm_touches_data(info: &InstInfo) -> bool {
        use crate::inst::InstClass;
        matches!(info.class, InstClass::Load | InstClass::Store | InstClass::Atomic | InstClass::Prefetch)
    }

    /// Does `warm` do nothing for `info` when the same hart's instruction just before it was at `prev_pc`? True
    /// when it touches no data and fetches from the line `prev_pc` did, lines of 2^`shift` bytes: that
    /// instruction's `warm` left the hart's fetch line there. An executor that knows which instruction came before
    /// (the one before it in a pre-decoded block) can then skip the call altogether (`ExecHook::SKIPS_WARM_QUIET`).
    /// Sound for a system whose `warm_fetch_shift` is `shift` or more.
    pub fn warm_quiet(prev_pc: u64, info: &InstInfo, shift: u32) -> bool {
        !Self::warm_touches_data(info) && prev_pc >> shift == info.pc >> shift
    }

    /// `warm` for an instruction that fetches from a new line or touches data.
    #[inline(never)]
    fn warm_accesses(&mut self, hart: usize, info: &InstInfo) {
        use crate::inst::{InstClass, PrefetchKind};
        let line = info.pc & self.warm_fetch_mask;
        if self.warm_fetch_line[hart] != line {
            self.warm_fetch_line[hart] = line;
            self.warm_translate(hart, Side::Inst, info.pc);
            self.mem.warm_access(hart, info.pc, AccessKind::IFetch, false);
        }
        let kind = match info.class {
            InstClass::Load => {
                // Its PC goes with it, after its translation, as the timed core sets it (`Core::load`); a
                // page-table read of the translation is not a load (warm_access).
                self.warm_translate(hart, Side::Data, info.mem_addr);
                self.mem.warm_load(hart, info.mem_addr, info.pc, info.non_temporal);
                return;
            }
            InstClass::Store | InstClass::Atomic => AccessKind::Write,
            InstClass::Prefetch => match info.prefetch_kind {
                PrefetchKind::Instruction => AccessKind::IFetch,
                _ => AccessKind::Prefetch,
            },
            _ => return,
        };
        let side = if kind == AccessKind::IFetch { Side::Inst } else { Side::Data };
        self.warm_translate(hart, side, info.mem_addr);
        self.mem.warm_access(hart, info.mem_addr, kind, info.non_temporal);
    }

    /// Warming: the TLBs and paging-structure caches fill and the walk's page-table reads warm the caches, in no
    /// time.
    #[inline]
    fn warm_translate(&mut self, hart: usize, side: Side, va: u64) {
        let Some(mmu) = self.cores[hart].mmu_mut() else { return };
        let mem = &mut self.mem;
        mmu.translate(side, va, 0, |addr, c| {
            mem.warm_access(hart, addr, AccessKind::Read, false);
            c
        });
    }

    /// Simulated ticks since the last stats reset (the measured interval).
    pub fn measured_ticks(&self) -> Tick {
        self.now().saturating_sub(self.stats_base)
    }

    /// Every statistic under `prefix` (e.g. "system."): `core{i}.ipc`, `core{i}.l1d.mpki`, `llc.misses`,
    /// `dram.channel0.read_bw`, ...
    pub fn stats(&self, prefix: &str, out: &mut StatSink) {
        use kvsim_params::paths;
        if self.socket_cores.len() > 1 {
            return self.system_stats(out);
        }
        let now = self.now();
        let ticks = Some(self.measured_ticks());
        let mut insts = 0;
        for (i, c) in self.cores.iter().enumerate() {
            let p = prefix.to_owned() + &paths::core(i);
            c.stats(&p, out);
            self.mem.core_stats_over(i, &p, Some(c.stats.insts), ticks, out);
            insts += c.stats.insts;
        }
        self.mem.llc_stats_over(prefix, Some(insts), ticks, out);
        self.mem.net.stats(&(prefix.to_owned() + &paths::noc()), now, out);
        self.mem.mem.stats(&(prefix.to_owned() + &paths::memory()), now, out);
    }

    /// Several sockets: socket k's cores (numbered within the socket), LLC, network and memory under
    /// `system.socket{k}.` as one socket's are, the links under `system.link{a}_{b}.` and the directory's and
    /// DDIO's counters (one directory spans the sockets) under `system.`.
    fn system_stats(&self, out: &mut StatSink) {
        use kvsim_params::paths;
        let now = self.now();
        let ticks = self.measured_ticks();
        let mut first = 0;
        for (k, &n) in self.socket_cores.iter().enumerate() {
            let prefix = paths::socket(k);
            let mut insts = 0;
            for (i, c) in self.cores[first..first + n].iter().enumerate() {
                let p = prefix.clone() + &paths::core(i);
                c.stats(&p, out);
                if let Some(parked) = self.parked.as_deref() {
                    // Written only where instructions are parked (the partitioned schedule): a reader asking for it
                    // of another run gets a missing counter, not a zero.
                    let n = parked.per_hart[first + i] as f64;
                    out.add(&p, "parked_insts", n, "instructions parked until their window's end (remote misses)");
                    let missed = parked.crossed[first + i] as f64;
                    let what = "instructions timed in their turn that sent a message to another socket (missed by the \
                                park probe: nonzero lets the partitions' order move statistics)";
                    out.add(&p, "unparked_crossings", missed, what);
                }
                self.mem.core_stats_over(first + i, &p, Some(c.stats.insts), Some(ticks), out);
                insts += c.stats.insts;
            }
            self.mem.llc_socket_stats(k, &prefix, Some(insts), Some(ticks), out);
            self.mem.mem.socket_stats(k, &(prefix + &paths::memory()), now, out);
            first += n;
        }
        self.mem.coherence_stats(&paths::system_directory(), &paths::system_ddio(), out);
        // The system network writes each socket's on-chip network under system.socket{k}.noc. and the links.
        self.mem.net.stats(&paths::system(), ticks, out);
        if let Some(o) = self.mem.socket_messages() {
            o.stats(&paths::system(), out);
        }
    }
}

/// The partitioned schedule's parked instructions, one slot a hart, and how many were parked (`crate::parked`
/// times them at the window's end; the slots live here so that the system does not depend on that module).
#[derive(Debug, Clone, Default)]
pub struct Parked {
    pub(crate) insts: Vec<Option<InstInfo>>,
    /// Instructions parked so far.
    pub count: u64,
    /// Instructions each hart's core parked since the last stats reset (its `parked_insts` statistic).
    pub(crate) per_hart: Vec<u64>,
    /// Instructions of each hart timed in their turn that sent a message to another socket since the last stats
    /// reset (`unparked_crossings`: the probe missed them).
    pub(crate) crossed: Vec<u64>,
}
