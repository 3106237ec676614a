//! Detailed timing of real binaries: the hooks that feed the executor's instructions to the timing models
//! (`kvsim_timing::system::TimingSystem`), and the driver that runs a configuration through its modes:
//!
//! * fast-forward: functional only (`NoHook`, full speed);
//! * cache warming (optional, `System.warm_caches`): every memory access updates the caches' contents and
//!   replacement state, no time is accounted (`WarmHook`);
//! * detailed timing (`TimingHook`): every instruction is timed; each hart's simulated time is its core's, and
//!   the scheduler gives each turn to the hart furthest behind in time.
//!
//! Detailed timing starts at the first instruction, at the first ROI_BEGIN or after a number of instructions
//! (`System.detailed_start`). Functional mode (`System.mode = "functional"`) never leaves fast-forward, so it runs
//! the plain executor. Mode switches and progress reports pause the scheduler only between turns, so neither
//! changes how harts interleave.

use std::fs::File;
use std::io::{BufWriter, Write};

use kvsim_params::System;
use kvsim_timing::inst::InstInfo;
use kvsim_timing::system::TimingSystem;
use kvsim_timing::StatSink;

use crate::sampling::Sampler;
use crate::sim::{EngineConfig, Machine};
use kvsim_base::error::{SimError, SimResult};
use kvsim_base::output::{RunOutput, Stat, StopReason};
use kvsim_isa::elf;
use kvsim_isa::exec::{ExecHook, NoHook, Tracer};

/// Detailed timing: every executed instruction goes to its hart's core model.
pub struct TimingHook {
    pub sys: TimingSystem,
    /// The socket a one-socket timing system models (its statistics go under `kvsim_params::paths::socket`); a
    /// system of several sockets writes each under its own path.
    pub socket: usize,
    /// Simulated time (ps) when detailed timing started; the cores count from 0 there.
    pub offset: u64,
    /// The memory system's I/O agent (its index in `Placement.io`, which holds each socket's NICs in socket order)
    /// of each engine DMA agent id from `first_io_agent` on (NIC k is agent harts + k).
    pub io_agents: Vec<u16>,
    pub first_io_agent: usize,
    /// Sampling of the detailed phase (System.sampling; None: every instruction is timed).
    pub sampler: Option<Box<Sampler>>,
}

impl TimingHook {
    /// The hook of socket `socket` of `system` over `sys`, from `offset` on: the NICs attached to the socket are
    /// its I/O agents, in System.nics order. When `sys` models every socket, every NIC is an I/O agent: socket 0's
    /// first (in System.nics order), then socket 1's, as the system network numbers them.
    pub fn new(system: &System, socket: usize, sys: TimingSystem, offset: u64) -> Self {
        let nics = crate::sim::system_nics(system);
        let sockets: Vec<usize> = if sys.sockets() > 1 { (0..sys.sockets()).collect() } else { vec![socket] };
        let mut io_agents = vec![NOT_ON_SOCKET; nics.len()];
        let mut next = 0u16;
        for &s in &sockets {
            for (k, nic) in nics.iter().enumerate() {
                if nic.socket as usize == s {
                    io_agents[k] = next;
                    next += 1;
                }
            }
        }
        TimingHook { sys, socket, offset, io_agents, first_io_agent: system.harts as usize, sampler: None }
    }

    /// The memory system's requester id for engine agent `agent`'s DMA.
    fn io_requester(&self, agent: usize) -> u16 {
        agent.checked_sub(self.first_io_agent).and_then(|k| self.io_agents.get(k)).copied().unwrap_or(NOT_ON_SOCKET)
    }
}

/// The requester id of a DMA agent this socket does not place: the memory system lets it enter at the line's home.
const NOT_ON_SOCKET: u16 = u16::MAX;

impl ExecHook for TimingHook {
    const ACTIVE: bool = true;
    const BATCHES: bool = true;
    #[inline(always)]
    fn on_inst(&mut self, hart: usize, info: &InstInfo) {
        match self.sampler.as_deref_mut() {
            None if self.sys.parks() => {
                // The partitioned schedule: a remote miss waits for the window's end (`kvsim_timing::parked`).
                self.sys.on_inst_or_park(hart, info);
            }
            None => {
                self.sys.on_inst(hart, info);
            }
            Some(s) => s.on_inst(&mut self.sys, hart, info),
        }
    }
    /// A block's records: the core times them in one loop (no call per instruction).
    #[inline]
    fn on_insts(&mut self, hart: usize, infos: &[InstInfo]) {
        match self.sampler.as_deref_mut() {
            // The partitioned schedule's turns have deadlines, so blocks are not batched there; should one be, each
            // record still takes the parking path (merge of speed-s25 and threads-s25).
            None if self.sys.parks() => {
                for info in infos {
                    self.sys.on_inst_or_park(hart, info);
                }
            }
            None => self.sys.on_insts(hart, infos),
            Some(s) => {
                for info in infos {
                    s.on_inst(&mut self.sys, hart, info);
                }
            }
        }
    }
    #[inline]
    fn on_inst_fs(&mut self, hart: usize, info: &InstInfo, tables: &mut kvsim_isa::memory::Memory) {
        match self.sampler.as_deref_mut() {
            None => {
                self.sys.on_inst_over(hart, info, tables);
            }
            // FS mode refuses sampling (models/system.py); a sampler translates as SE mode does.
            Some(s) => s.on_inst(&mut self.sys, hart, info),
        }
    }
    fn flush_translations(&mut self, hart: usize) {
        self.sys.flush_translations(hart);
    }
    fn window_end(&mut self) {
        // The parked instructions first (in hart order), then the posted notices (theirs with the others').
        self.sys.resume_parked();
        self.sys.mem.deliver_posted();
    }
    #[inline]
    fn time_ps(&self, hart: usize) -> Option<u64> {
        if self.sys.is_parked(hart) {
            // Past every window's end: the executor's deadline ends the turn, and the schedule gives the hart no
            // other turn in the window (`run_partitioned`).
            return Some(crate::sim::PARKED_PS);
        }
        Some(self.offset + self.sys.hart_time(hart))
    }
    fn sleep_until(&mut self, hart: usize, t: u64) {
        self.sys.sleep_until(hart, t.saturating_sub(self.offset));
    }
    fn poll_end(&mut self, hart: usize, idle: bool) {
        self.sys.poll_end(hart, idle);
        if let Some(s) = self.sampler.as_deref_mut() {
            s.poll_end(&mut self.sys, hart, idle);
        }
    }
    fn reset_stats(&mut self) {
        self.sys.reset_stats();
        if let Some(s) = self.sampler.as_deref_mut() {
            s.reset(&mut self.sys);
        }
    }
    fn io_access(&mut self, agent: usize, owner: Option<usize>, addr: u64, write: bool, t: u64) -> u64 {
        use kvsim_timing::{AccessKind, MemPort, MemReq, ReqClass, NO_OWNER};
        let kind = if write { AccessKind::Write } else { AccessKind::Read };
        let time = t.saturating_sub(self.offset);
        // An agent below the first I/O agent is a core: a device working in that core's own caches (the zero-copy
        // NIC) enters the memory system as the core.
        let (requester, class) = match agent < self.first_io_agent {
            true => (agent as u16, ReqClass::Core),
            false => (self.io_requester(agent), ReqClass::Io),
        };
        // The hart owning the queue is its core in the memory system (core i is hart i); a core is its own owner.
        let owner = match (owner, class) {
            (Some(h), _) => h as u16,
            (None, ReqClass::Core) => requester,
            (None, _) => NO_OWNER,
        };
        let req = MemReq { addr, kind, non_temporal: false, requester, owner, class, time };
        self.sys.mem.access(&req) + self.offset
    }
    fn numa_placed(&mut self, start: u64, len: u64, socket: u16) -> Result<(), String> {
        // The engine's map checked the socket first; a refusal here means the timing side's map disagrees with it.
        self.sys.numa_placed(start, len, socket)
    }
    fn huge_mapped(&mut self, start: u64, len: u64) {
        self.sys.map_huge(start, len);
    }
    fn append_stats(&self, out: &mut Vec<Stat>) {
        let mut sink = StatSink::new();
        self.sys.stats(&kvsim_params::paths::socket(self.socket), &mut sink);
        out.extend(sink.entries.into_iter().map(|(name, value, desc)| Stat { name, value, desc }));
        out.push(Stat {
            name: "sim_seconds".into(),
            value: self.sys.measured_ticks() as f64 * 1e-12,
            desc: "simulated seconds of the measured interval (detailed timing, since the last stats reset)".into(),
        });
        if let Some(s) = &self.sampler {
            s.stats(out);
        }
    }
}

/// Cache warming: memory accesses update the caches, no time passes.
pub struct WarmHook<'a>(&'a mut TimingSystem);

impl<'a> WarmHook<'a> {
    /// Warming `sys` from code in `mem`: its blocks' skip bits are made for `sys`'s L1I line first (the hook is not
    /// called for the instructions they mark, `Block::warm_quiet`).
    pub fn new(sys: &'a mut TimingSystem, mem: &mut kvsim_isa::memory::Memory) -> Self {
        mem.set_warm_fetch_shift(sys.warm_fetch_shift());
        WarmHook(sys)
    }
}

impl ExecHook for WarmHook<'_> {
    const ACTIVE: bool = true;
    const SKIPS_WARM_QUIET: bool = true;
    #[inline(always)]
    fn on_inst(&mut self, hart: usize, info: &InstInfo) {
        self.0.warm(hart, info);
    }
    fn numa_placed(&mut self, start: u64, len: u64, socket: u16) -> Result<(), String> {
        self.0.numa_placed(start, len, socket)
    }
    fn huge_mapped(&mut self, start: u64, len: u64) {
        self.0.map_huge(start, len);
    }
}

/// What a progress report carries.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Instructions executed by all harts so far.
    pub insts: u64,
    /// Simulated time so far (ps): the latest hart's.
    pub sim_ticks: u64,
    /// "fast-forward", "warming" or "detailed".
    pub phase: &'static str,
    /// Instructions executed by all harts when this phase started: a caller that reports every N instructions
    /// counts them from here, so the measured phase's reports do not depend on the phases before it (a run forked
    /// where detailed timing starts reports where a run from the start does).
    pub phase_insts: u64,
    /// Measured requests the ghost client has had answered so far (None: the run has no client).
    pub answered: Option<u64>,
}

/// Where a phase ends (besides the end of the run).
#[derive(Clone, Copy)]
struct Until {
    insts: u64,
    roi: bool,
}

const FOREVER: Until = Until { insts: u64::MAX, roi: false };

/// Run `m` with `hook` until the run ends (Some(stop)) or the phase ends (None), reporting progress every
/// `every` instructions (0 = never).
fn phase<H: ExecHook>(
    m: &mut Machine,
    hook: &mut H,
    until: Until,
    name: &'static str,
    every: u64,
    progress: &mut dyn FnMut(&Progress) -> SimResult<()>,
    mut tracer: Option<&mut Tracer>,
) -> SimResult<Option<StopReason>> {
    if until.roi && m.roi_begin.is_some() {
        return Ok(None);
    }
    let phase_insts = m.total_insts();
    loop {
        let total = m.total_insts();
        if total >= until.insts {
            return Ok(None);
        }
        let report_at = if every > 0 { total.saturating_add(every) } else { u64::MAX };
        m.pause_at = until.insts.min(report_at);
        m.pause_on_roi = until.roi;
        let stop = m.run(hook, tracer.as_deref_mut());
        m.pause_at = u64::MAX;
        m.pause_on_roi = false;
        match stop? {
            StopReason::Pause => {}
            other => return Ok(Some(other)),
        }
        if (until.roi && m.roi_begin.is_some()) || m.total_insts() >= until.insts {
            return Ok(None);
        }
        let answered = m.net.as_ref().and_then(|net| net.client.as_ref()).map(|client| client.stats.requests);
        let report = Progress { insts: m.total_insts(), sim_ticks: m.sim_ticks(), phase: name, phase_insts, answered };
        match progress(&report) {
            Err(SimError::Interrupted) => return Ok(Some(StopReason::Interrupted)),
            other => other?,
        }
    }
}

fn open_tracer(cfg: &EngineConfig) -> SimResult<Option<Tracer>> {
    if cfg.trace_file.is_empty() {
        return Ok(None);
    }
    let f = File::create(&cfg.trace_file)
        .map_err(|e| SimError::Config(format!("cannot create trace_file {}: {e}", cfg.trace_file)))?;
    Ok(Some(Tracer::new(Box::new(BufWriter::with_capacity(1 << 20, f)))))
}

fn close_tracer(cfg: &EngineConfig, tracer: Option<Tracer>) -> SimResult<()> {
    if let Some(mut t) = tracer {
        if t.error.is_none() {
            if let Err(e) = t.out.flush() {
                t.error = Some(e);
            }
        }
        if let Some(e) = &t.error {
            return Err(SimError::Config(format!("writing trace_file {}: {e}", cfg.trace_file)));
        }
    }
    Ok(())
}

/// Build the timing side of `system` from its socket tree: one core per hart, socket by socket. One socket: its
/// network and memory; several: one memory system over every socket, their networks joined by the links.
pub fn timing_system(system: &System) -> SimResult<TimingSystem> {
    let sockets = system.socket_list();
    let cores: usize = sockets.iter().map(|s| s.cores as usize).sum();
    if cores != system.harts as usize {
        return Err(SimError::Config(format!("the sockets have {cores} cores for {} harts", system.harts)));
    }
    let caches = &sockets[0].caches;
    if caches.l1d.line_size != kvsim_timing::dram::DRAM_LINE {
        return Err(SimError::Config("System.caches must use 64-byte lines".into()));
    }
    let mut sys = if let [socket] = sockets.as_slice() {
        // The socket's on-chip network carries the memory system's messages (cores, LLC slices, memory
        // controllers and the NICs as I/O agents, each at its router).
        let (net, placement) = socket_network(system, 0)?;
        TimingSystem::with_network(&socket.core_of_each(), caches, &socket.memory, net, placement)
    } else {
        multi_socket_system(system)?
    };
    if caches.directory.check {
        sys.mem.enable_check();
    }
    if crate::config::partition_window(system).is_some() {
        // The partitioned schedule's runs list what their partitions exchange (per link, per kind of message).
        sys.mem.report_socket_messages();
    }
    // DDIO: the NICs' writes allocate in `ddio_ways` of the LLC's ways (at least one), or go to memory. The NICs
    // of a socket share its LLC, so they agree on these (models/system.py checks it): the first NIC's apply.
    if let Some(nic) = crate::sim::system_nics(system).first() {
        sys.mem.ddio = nic.ddio;
        let assoc = caches.llc.assoc.clamp(1, 64);
        let ways = ((assoc as f64 * nic.ddio_ways).round() as u64).clamp(1, assoc);
        let mask = if ways >= 64 { u64::MAX } else { (1u64 << ways) - 1 };
        sys.mem.set_llc_way_mask(kvsim_timing::ReqClass::Io, mask);
        // Doorbells and register reads: uncached accesses to the device range, `mmio_latency` one way (on an
        // on-die MAC, `on_die_mmio_latency`).
        sys.mem.uncached = (kvsim_base::abi::DEVICE_BASE, kvsim_base::abi::DEVICE_END + 1);
        sys.mem.uncached_ticks = kvsim_devices::nic::timing::register_latency(nic);
    }
    kvsim_devices::mac_sram::attach(&mut sys.mem.mem, &crate::sim::system_nics(system));
    Ok(sys)
}

/// Every socket of `system` in one timing system (their caches alike: one memory system spans them).
fn multi_socket_system(system: &System) -> SimResult<TimingSystem> {
    use kvsim_timing::system::SocketParts;
    let sockets = system.socket_list();
    let nics = crate::sim::system_nics(system);
    let mut parts = Vec::with_capacity(sockets.len());
    for (k, s) in sockets.iter().enumerate() {
        if s.caches != sockets[0].caches {
            return Err(SimError::Config(format!(
                "System.sockets[{k}].caches differs from System.sockets[0].caches: the detailed multi-socket model \
                 needs every socket's caches alike"
            )));
        }
        let on_socket = nics.iter().filter(|n| n.socket as usize == k).count();
        let net = kvsim_timing::noc::build_socket(s, on_socket)
            .map_err(|e| SimError::Config(format!("System.sockets[{k}]: {e}")))?;
        let memory = kvsim_timing::socket_memory::socket_memory(&s.memory);
        parts.push(SocketParts { cores: s.core_of_each(), memory, net });
    }
    if let Some(n) = nics.iter().find(|n| n.socket as usize >= sockets.len()) {
        return Err(SimError::Config(format!(
            "a NIC is attached to socket {}, which does not exist: the system has sockets 0..{}",
            n.socket,
            sockets.len() - 1
        )));
    }
    TimingSystem::multi_socket(parts, &sockets[0].caches, &system.socket_link).map_err(SimError::Config)
}

/// The on-chip network of socket `socket` and where its agents sit (endpoints: cores, LLC slices, memory
/// controllers, then the NICs attached to the socket), built from the socket tree, for the memory system to send
/// its messages through.
pub fn socket_network(
    system: &System,
    socket: usize,
) -> SimResult<(Box<dyn kvsim_timing::network::Network>, kvsim_timing::network::Placement)> {
    let sockets = system.socket_list();
    let params = sockets
        .get(socket)
        .ok_or_else(|| SimError::Config(format!("there is no socket {socket}: System has {}", sockets.len())))?;
    // The NICs attached to this socket, in System.nics order.
    let nics = crate::sim::system_nics(system).iter().filter(|n| n.socket as usize == socket).count();
    kvsim_timing::noc::build_boxed(params, nics).map_err(SimError::Config)
}

/// Run the configured workload functionally.
pub fn run(system: &System) -> SimResult<RunOutput> {
    run_config(&EngineConfig::from_system(system), &mut NoHook)
}

/// Run the configured workload, telling `hook` about every instruction (a timing model).
pub fn run_with_hook<H: ExecHook>(system: &System, hook: &mut H) -> SimResult<RunOutput> {
    run_config(&EngineConfig::from_system(system), hook)
}

/// Run the workload of `system` in one phase with `hook` (restoring and writing checkpoints as configured).
pub fn run_config<H: ExecHook>(system: &EngineConfig, hook: &mut H) -> SimResult<RunOutput> {
    let image = elf::load(&system.binary).map_err(SimError::Elf)?;
    let mut machine = crate::checkpoint::machine(system, &image)?;
    let mut tracer = open_tracer(system)?;
    let result = machine.run(hook, tracer.as_mut());
    close_tracer(system, tracer)?;
    Ok(machine.output(result?))
}

/// Run `system` (SE mode; FS mode runs in `full_system`) through its modes (module docs). `progress` is called
/// every `every` instructions (0 = never); an error it returns stops the run with that error.
pub fn run_system(
    system: &System,
    every: u64,
    progress: &mut dyn FnMut(&Progress) -> SimResult<()>,
) -> SimResult<RunOutput> {
    run_system_keeping_output(system, every, progress).map_err(|(e, _)| e)
}

/// `run_system`, but a failure after the machine was built also returns what the run had so far (the guest's
/// output, the statistics), so the caller can keep it beside the error.
// The large error (it carries the run's output) is returned once per run, at its end: its size costs nothing.
#[allow(clippy::result_large_err)]
pub fn run_system_keeping_output(
    system: &System,
    every: u64,
    progress: &mut dyn FnMut(&Progress) -> SimResult<()>,
) -> Result<RunOutput, (SimError, Option<RunOutput>)> {
    run_system_with_measure(system, every, progress, None)
}

/// What `at_measure` may answer where detailed timing is about to start (the default: run as configured).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measure {
    /// The measured phase's offered load (M frames/s a port) and request count (`Client::set_measure`).
    pub load: Option<(f64, u64)>,
    /// Progress reports every this many instructions in the measured phase, counted from its start (a run forked
    /// there samples its measured phase as a run with this interval from the start does).
    pub every: Option<u64>,
}

/// `x` as a run configured with it reads it: a configuration reaches the engine as JSON text, whose parser
/// (serde_json without its float_roundtrip feature) may land one unit in the last place off for 17 significant
/// digits, as a capacity search's rates have. A rate set where a forked run starts goes through the same text, so
/// the forked run offers the very load a fresh run of its configuration does.
fn as_configured(x: f64) -> SimResult<f64> {
    if !x.is_finite() {
        return Ok(x); // refused by `Client::set_measure`, with the reason
    }
    let text = serde_json::to_string(&x).map_err(|e| SimError::Config(format!("the measured load {x}: {e}")))?;
    serde_json::from_str(&text).map_err(|e| SimError::Config(format!("the measured load {x}: {e}")))
}

/// Called once where detailed timing is about to start (`run_system_with_measure`).
pub type AtMeasure<'a> = &'a mut dyn FnMut() -> SimResult<Measure>;

/// `run_system_keeping_output`, calling `at_measure` (when given) once where detailed timing is about to start,
/// after the functional and warming phases, with no thread of the engine's running (the page file's check has
/// passed): a caller may fork the process there, each child running the measured phase at its own load.
#[allow(clippy::result_large_err)]
pub fn run_system_with_measure(
    system: &System,
    every: u64,
    progress: &mut dyn FnMut(&Progress) -> SimResult<()>,
    at_measure: Option<AtMeasure>,
) -> Result<RunOutput, (SimError, Option<RunOutput>)> {
    let cfg = EngineConfig::from_system(system);
    let image = elf::load(&cfg.binary).map_err(|e| (SimError::Elf(e), None))?;
    let mut m = crate::checkpoint::machine(&cfg, &image).map_err(|e| (e, None))?;
    let mut tracer = open_tracer(&cfg).map_err(|e| (e, None))?;
    let result = drive(&mut m, system, every, progress, tracer.as_mut(), at_measure);
    let closed = close_tracer(&cfg, tracer);
    let (stop, hook) = match result.and_then(|r| closed.map(|()| r)) {
        Ok(r) => r,
        Err(e) => return Err((e, Some(m.output(StopReason::Exit)))),
    };
    let mut out = m.output(stop);
    if !m.scratch_save.is_empty() {
        if let Err(e) = m.process.fs.save_scratch(std::path::Path::new(&m.scratch_save)) {
            let msg = format!("Workload.scratch_save: cannot write the scratch tree to {}: {e}", m.scratch_save);
            return Err((SimError::Config(msg), Some(out)));
        }
    }
    if let Some(mut hook) = hook {
        if let Some(s) = hook.sampler.as_deref_mut() {
            s.finish(&mut hook.sys);
        }
        hook.sys.finish();
        hook.append_stats(&mut out.stats);
        out.stats.push(Stat {
            name: kvsim_params::paths::timing() + "start_ticks",
            value: hook.offset as f64,
            desc: "simulated time when detailed timing started (ps)".into(),
        });
    }
    Ok(out)
}

fn drive(
    m: &mut Machine,
    system: &System,
    every: u64,
    progress: &mut dyn FnMut(&Progress) -> SimResult<()>,
    mut tracer: Option<&mut Tracer>,
    at_measure: Option<AtMeasure>,
) -> SimResult<(StopReason, Option<TimingHook>)> {
    use kvsim_params::{SystemDetailedStart, SystemMode};
    let start = match system.detailed_start {
        SystemDetailedStart::Start => Until { insts: 0, roi: false },
        SystemDetailedStart::Roi => Until { insts: u64::MAX, roi: true },
        SystemDetailedStart::Insts => Until { insts: system.detailed_start_insts, roi: false },
    };
    if system.mode != SystemMode::Detailed {
        let stop = phase(m, &mut NoHook, FOREVER, "functional", every, progress, tracer.as_deref_mut())?;
        return Ok((stop.expect("a run without a phase end ends"), None));
    }
    let mut sys = timing_system(system)?;
    // Lines placed before timing or warming starts (the harts' stacks, NUMA allocations): their homes.
    // And the hugepage allocations made before it (all of them: the functional phases tell no timing model).
    let take_numa = |sys: &mut TimingSystem, m: &Machine| {
        for &(start, end) in &m.process.huge {
            sys.map_huge(start, end - start);
        }
        sys.set_numa(m.process.numa.clone()).map_err(SimError::Config)
    };
    // Fast-forward (purely functional) up to the start of warming, or of detailed timing.
    let warm_from = if system.warm_caches { system.warm_start_insts } else { u64::MAX };
    let ff = Until { insts: start.insts.min(warm_from), roi: start.roi };
    if let Some(stop) = phase(m, &mut NoHook, ff, "fast-forward", every, progress, tracer.as_deref_mut())? {
        return Ok((stop, None));
    }
    if system.warm_caches && !(start.roi && m.roi_begin.is_some()) && m.total_insts() < start.insts {
        take_numa(&mut sys, m)?;
        let mut warm = WarmHook::new(&mut sys, &mut m.mem);
        if let Some(stop) = phase(m, &mut warm, start, "warming", every, progress, tracer.as_deref_mut())? {
            return Ok((stop, None));
        }
    }
    let mut every = every;
    if let Some(ask) = at_measure {
        // No engine thread may run across a fork: the page file's check finishes here (its verdict is the same).
        m.finish_page_check()?;
        let measure = ask()?;
        every = measure.every.unwrap_or(every);
        if let Some((mpps, requests)) = measure.load {
            let client = m.net.as_mut().and_then(|net| net.client.as_mut());
            let client = client.ok_or_else(|| SimError::Config("a measured load to set, but no client".into()))?;
            client.set_measure(as_configured(mpps)? * 1e6, requests).map_err(SimError::Config)?;
        }
    }
    // Detailed timing: the cores count from 0 at the current simulated time.
    let offset = m.sim_ticks();
    take_numa(&mut sys, m)?;
    sys.reset_stats();
    for h in &mut m.harts {
        h.timed_ps = Some(offset);
    }
    if crate::config::partition_window(system).is_some() {
        // The partitioned schedule (`run_partitioned` calls `window_end`): what one socket posts another takes
        // effect at the window's end.
        sys.mem.post_puts_at_window_ends();
        sys.park_remote_misses();
    }
    let mut hook = TimingHook::new(system, 0, sys, offset);
    hook.sampler = Sampler::new(&system.sampling, system.harts, system.seed);
    let stop = detailed_phase(m, &mut hook, every, progress, tracer)?;
    Ok((stop.expect("a run without a phase end ends"), Some(hook)))
}

/// The detailed phase, kept out of line so that a profiler can count its instructions alone (its name is the
/// phase's boundary: everything it calls runs in detailed timing).
#[inline(never)]
fn detailed_phase(
    m: &mut Machine,
    hook: &mut TimingHook,
    every: u64,
    progress: &mut dyn FnMut(&Progress) -> SimResult<()>,
    tracer: Option<&mut Tracer>,
) -> SimResult<Option<StopReason>> {
    phase(m, hook, FOREVER, "detailed", every, progress, tracer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::tests::{machine_with, ENTRY};
    use kvsim_base::abi::simcall as simcall_nr;
    use kvsim_isa::asm::*;

    fn hook() -> TimingHook {
        let sys = TimingSystem::new(
            &[kvsim_timing::synth::core_params()],
            &kvsim_timing::synth::hierarchy_params(),
            &kvsim_timing::synth::dram_params(),
        );
        TimingHook { sys, socket: 0, offset: 0, io_agents: Vec::new(), first_io_agent: 1, sampler: None }
    }

    #[test]
    fn a_dependent_chain_of_adds_takes_one_cycle_each() {
        // li t0, 100; loop: 64 x addi a0, a0, 1; addi t0, t0, -1; bne t0, x0, loop
        let mut words = vec![li(5, 100)];
        words.extend((0..64).map(|_| addi(10, 10, 1)));
        words.extend([addi(5, 5, -1), bne(5, 0, -65 * 4)]);
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.max_insts = 1 + 100 * 66;
        let mut m = machine_with(&bytes(&words), &cfg);
        let mut h = hook();
        for hart in &mut m.harts {
            hart.timed_ps = Some(0);
        }
        assert_eq!(m.run(&mut h, None).unwrap(), StopReason::MaxInsts);
        assert_eq!(m.harts[0].x[10], 6400);
        let cycles = h.sys.cores[0].cycles();
        // One add per cycle (the loop overhead overlaps), plus the first fetch of the loop's 5 lines from DRAM.
        assert!((6400..6400 + 5 * 200).contains(&cycles), "{cycles} cycles");
        assert_eq!(m.harts[0].time_ps(), h.sys.hart_time(0));
        let _ = ENTRY;
    }

    #[test]
    fn each_nics_dma_enters_the_memory_system_at_its_own_router() {
        use kvsim_timing::network::DATA_BYTES;
        // 4 cores in clusters of 2 on a 2 x 1 mesh, one LLC slice (router 0); NIC 0 on router 0, NIC 1 on router 1.
        let mut system = System { harts: 4, cores_per_cluster: 2, ..System::default() };
        system.caches.llc_slices = 1;
        system.noc.nic_routers = vec![[0, 0], [1, 0]];
        system.nics = vec![
            kvsim_params::Nic { enabled: true, ..Default::default() },
            kvsim_params::Nic { enabled: true, ..Default::default() },
        ];
        let (net, place) = socket_network(&system, 0).unwrap();
        let home = place.llc_slice[0];
        let (near, far) = (net.latency(place.io[0], home, DATA_BYTES), net.latency(place.io[1], home, DATA_BYTES));
        assert!(far > near, "NIC 1 is a hop further from the home: {far} vs {near}");
        let mut hook = TimingHook::new(&system, 0, timing_system(&system).unwrap(), 0);
        // Engine agents: the cores are 0..4, NIC k is 4 + k. A DMA line write (DDIO) completes when the slice has
        // it: the trip from the NIC's router, then the slice's write.
        let llc = system.caches.llc.hit_latency * 400;
        let t = 1_000_000;
        assert_eq!(hook.io_access(4, None, 0x10_0000, true, t), t + near + llc);
        assert_eq!(hook.io_access(5, None, 0x20_0000, true, t), t + far + llc);
    }

    #[test]
    fn a_queues_dma_reaches_the_stack_on_the_port_of_the_hart_owning_the_queue() {
        // 4 cores over the 3D DRAM with one port per core (port_map 'requester'); NIC 0 is engine agent 4.
        let mut system = System { harts: 4, ..System::default() };
        system.memory.kind = kvsim_params::MemoryControllerKind::Dram3d;
        assert_eq!(system.memory.dram3d.port_map, kvsim_params::StackedDramPortMap::Requester);
        system.nics = vec![kvsim_params::Nic { enabled: true, ..Default::default() }];
        let mut hook = TimingHook::new(&system, 0, timing_system(&system).unwrap(), 0);
        // DMA reads that miss the LLC, for hart 2's queue and hart 3's, and one for no queue (line 0x20_0040 / 64
        // = 32769: port 1 by address).
        hook.io_access(4, Some(2), 0x10_0000, false, 1_000_000);
        hook.io_access(4, Some(3), 0x20_0000, false, 1_000_000);
        hook.io_access(4, None, 0x20_0040, false, 1_000_000);
        let mut out = Vec::new();
        hook.append_stats(&mut out);
        let reads = |p: usize| {
            use kvsim_params::paths;
            let name = paths::socket(0) + &paths::memory() + &paths::stack_port(p) + "reads";
            out.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no stat {name}")).value
        };
        assert_eq!([reads(0), reads(1), reads(2), reads(3)], [0.0, 1.0, 1.0, 1.0]);
    }

    #[test]
    fn the_network_comes_from_the_socket_tree() {
        use kvsim_timing::network::CONTROL_BYTES;
        let mut system = System { harts: 8, cores_per_cluster: 2, ..System::default() };
        system.caches.llc_slices = 4;
        system.nic.enabled = true;
        let (net, place) = socket_network(&system, 0).unwrap();
        assert_eq!((place.core.len(), place.llc_slice.len(), place.mem_ctrl.len(), place.io.len()), (8, 4, 1, 1));
        // 4 clusters on an automatic 2 x 2 mesh: core 7 (cluster 3, router (1,1)) to slice 0 (router 0): 2 hops of
        // a 1-cycle router and a 1-cycle link at 2.5 GHz.
        assert_eq!(net.latency(place.core[7], place.llc_slice[0], CONTROL_BYTES), 2 * 800);
        assert_eq!(net.cluster_of(place.core[6]), net.cluster_of(place.llc_slice[3]));
        assert!(socket_network(&system, 1).is_err());
    }

    /// Two sockets of one core each (the declared defaults otherwise), detailed.
    fn two_sockets() -> System {
        let socket = kvsim_params::Socket { cores: 1, ..Default::default() };
        System { harts: 2, sockets: vec![socket.clone(), socket], ..System::default() }
    }

    #[test]
    fn several_sockets_make_one_timing_system_and_every_nic_is_an_io_agent() {
        let mut system = two_sockets();
        let nic = |socket| kvsim_params::Nic { enabled: true, socket, ..Default::default() };
        system.nics = vec![nic(1), nic(0)];
        let sys = timing_system(&system).unwrap();
        assert_eq!((sys.sockets(), sys.core_sockets()), (2, vec![0, 1]));
        let hook = TimingHook::new(&system, 0, sys, 0);
        // Socket 0's NIC (engine agent 3) is the first I/O agent, socket 1's (agent 2) the second.
        assert_eq!((hook.io_requester(2), hook.io_requester(3)), (1, 0));
        system.nics = vec![nic(2)];
        let err = timing_system(&system).err().unwrap().to_string();
        assert!(err.contains("socket 2, which does not exist"), "{err}");
    }

    /// Hart 0 follows a chain of `n` lines (4 KiB + 64 B apart, each its own DRAM row and L1 set) once, its memory
    /// on socket `socket` (placed while the run starts, through the hook); hart 1 exits at once. Returns hart 0's
    /// ticks per load.
    fn chase_ticks(socket: u16, n: u64) -> u64 {
        // 0: beq a0, x0, exit; 1-8: ld a0, 0(a0); 9: bne a0, x0, 1; 10: li a7, 93; 11: ecall (exit this hart)
        let ld = |rd, rs1| kvsim_isa::asm::i(0, rs1, 3, rd, 0x03);
        let mut words = vec![kvsim_isa::asm::b(40, 0, 10, 0)];
        words.extend((0..8).map(|_| ld(10, 10)));
        words.extend([bne(10, 0, -32), li(17, 93), ecall()]);
        let mut system = two_sockets();
        system.mode = kvsim_params::SystemMode::Detailed;
        let mut cfg = EngineConfig { binary: "/t".into(), ..EngineConfig::from_system(&system) };
        cfg.max_insts = 1 + n / 8 * 9; // hart 1 exits within its first turn, its instructions not budgeted
        let mut m = machine_with(&bytes(&words), &cfg);
        let stride = 4096 + 64;
        let base = m.os().mmap_alloc(n * stride + 4096, 4096).unwrap();
        for i in 0..n {
            m.mem.store::<8>(0, base + i * stride, base + (i + 1) % n * stride).unwrap();
        }
        m.harts[0].x[10] = base;
        m.harts[1].x[10] = 0;
        let mut hook = TimingHook::new(&system, 0, timing_system(&system).unwrap(), 0);
        hook.sys.set_numa(m.process.numa.clone()).unwrap();
        m.place_numa(base, n * stride + 4096, socket).unwrap();
        for hart in &mut m.harts {
            hart.timed_ps = Some(0);
        }
        assert_eq!(m.run(&mut hook, None).unwrap(), StopReason::MaxInsts);
        assert_eq!(hook.sys.cores[0].stats.loads(), n);
        let t0 = hook.sys.hart_time(0);
        // The first lap's loads dominate: the fetch of the code's lines happens once in both runs alike.
        t0 / n
    }

    #[test]
    fn a_chase_into_the_other_sockets_memory_pays_the_link_each_way() {
        let (local, remote) = (chase_ticks(0, 256), chase_ticks(1, 256));
        // The request: the lookup in socket 0's own slice for a copy of the remote line (the directory's 10 uncore
        // cycles, 4 ns, remote lines being on by default), socket 0's crossbar to its link port, its header flit
        // (0.5 ns) and the link's 20 ns, socket 1's crossbar to the home slice; the line: the crossbar (and its
        // 2-flit tail) to the port, 9 flits (4.5 ns) and 20 ns, the crossbar and tail to the core. A local load's
        // trips are one crossbar each way.
        let link = kvsim_params::SocketLink::default().latency;
        let own_slice_lookup = 10 * 400 + 400;
        let extra = own_slice_lookup + (400 + 500 + link) + (400 + 800 + 4500 + link);
        eprintln!("chase: local {local} ps, remote {remote} ps per load, link adds {extra}");
        // The DRAMs are real: the remote run lasts longer, so refresh and bank timing differ a little; the exact
        // figures on a fixed-latency memory are in kvsim-timing's tests/multisocket.rs.
        let off = (remote - local).abs_diff(extra);
        assert!(off * 50 <= extra, "local {local} ps, remote {remote} ps: the link should add {extra} ps");
    }

    /// A placement the engine's map accepts (socket 1 of two) that the timing side's map refuses (it has one socket)
    /// stops the run with a message naming it, through both hooks and both places the engine tells them: a
    /// placement made before the run and one made by a system call (ALLOC_ON) during it.
    #[test]
    fn a_placement_the_timing_side_refuses_stops_the_run_naming_it() {
        let nr = simcall_nr::ALLOC_ON as u32;
        // a0 = 4096, a1 = 0, a2 = 1, a7 = ALLOC_ON, ecall; then spin.
        let code = [lui(10, 1), li(11, 0), li(12, 1), lui(17, nr >> 12), addi(17, 17, (nr & 0xfff) as i32), ecall()];
        let mut words = code.to_vec();
        words.push(0x0000_006f); // j .
        let mut cfg = EngineConfig::from_system(&two_sockets());
        cfg.binary = "/t".into();
        cfg.max_insts = 1000;
        let one_socket = System { harts: 2, ..System::default() };
        let refused = |e: SimError, what: &str| match e {
            SimError::Config(msg) => assert!(
                msg.contains("the timing model refused the NUMA placement of [0x")
                    && msg.contains("on socket 1, which the engine's map accepted")
                    && msg.contains("NUMA socket 1 does not exist"),
                "{what}: {msg}"
            ),
            e => panic!("{what}: {e:?}"),
        };
        // Placed before the run: the timing hook hears of it as the run starts.
        let mut m = machine_with(&bytes(&words), &cfg);
        let base = m.os().mmap_alloc(4096, 4096).unwrap();
        m.place_numa(base, 4096, 1).unwrap();
        let mut hook = TimingHook::new(&one_socket, 0, timing_system(&one_socket).unwrap(), 0);
        for hart in &mut m.harts {
            hart.timed_ps = Some(0);
        }
        refused(m.run(&mut hook, None).unwrap_err(), "timing hook, placed before the run");
        // Placed by the guest's ALLOC_ON while warming.
        let mut m = machine_with(&bytes(&words), &cfg);
        let mut sys = timing_system(&one_socket).unwrap();
        let mut hook = WarmHook::new(&mut sys, &mut m.mem);
        refused(m.run(&mut hook, None).unwrap_err(), "warming hook, ALLOC_ON");
    }

    #[test]
    fn timed_scheduler_runs_the_hart_furthest_behind() {
        let words = [0x0000_006f]; // j .
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.harts = 2;
        cfg.quantum = 10;
        cfg.max_insts = 6000;
        let mut m = machine_with(&bytes(&words), &cfg);
        let sys = TimingSystem::new(
            &[kvsim_timing::synth::core_params(), kvsim_timing::synth::core_params()],
            &kvsim_timing::synth::hierarchy_params(),
            &kvsim_timing::synth::dram_params(),
        );
        let mut h = TimingHook { sys, socket: 0, offset: 0, io_agents: Vec::new(), first_io_agent: 1, sampler: None };
        h.sys.set_clock(1, 1_250_000_000); // hart 1 at half the clock: it should get about half the instructions
        for hart in &mut m.harts {
            hart.timed_ps = Some(0);
        }
        assert_eq!(m.run(&mut h, None).unwrap(), StopReason::MaxInsts);
        let (a, b) = (m.harts[0].cnt.insts, m.harts[1].cnt.insts);
        assert!(a > b * 18 / 10, "hart 0 (fast clock) ran {a}, hart 1 (slow) ran {b}");
        let (ta, tb) = (m.harts[0].time_ps(), m.harts[1].time_ps());
        assert!(ta.abs_diff(tb) < 20 * 800, "times stay within about a quantum: {ta} vs {tb}");
    }

    // The trace format and the functional benchmark run whole programs through `run_config`.
    #[test]
    fn trace_lines_have_the_documented_format() {
        let path = std::env::temp_dir().join(format!("kvsim-trace-{}.txt", std::process::id()));
        let prog = std::env::temp_dir().join(format!("kvsim-trace-{}.elf", std::process::id()));
        std::fs::write(&prog, elf::tiny_elf(0x10000, &bytes(&[li(5, -1), li(10, 3), li(17, 93), ecall()]))).unwrap();
        let mut cfg = EngineConfig::with_binary(prog.to_str().unwrap());
        cfg.trace_file = path.to_str().unwrap().into();
        let out = run_config(&cfg, &mut NoHook).unwrap();
        assert_eq!(out.exit_code, Some(3));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        for l in &lines {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 64, "pc, x1..x31, f0..f31");
            assert!(f
                .iter()
                .all(|x| x.len() == 16 && x.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())));
        }
        assert!(lines[0].starts_with("0000000000010078 0000000000000000 0000003ffff"));
        assert!(lines[1].starts_with("000000000001007c "));
        assert_eq!(lines[1].split(' ').nth(5).unwrap(), "ffffffffffffffff"); // x5 after li t0, -1
        assert!(lines[3].split(' ').skip(32).all(|f| f == "0000000000000000"), "f0..f31 untouched"); // no FP code
        std::fs::remove_file(&path).ok();
        std::fs::remove_file(&prog).ok();
    }

    /// `KVSIM_BENCH=/path/to/elf cargo test --release -p kvsim-engine bench_functional -- --ignored --nocapture`
    /// prints the functional speed on that program (host time is measured here only, never in stats).
    #[test]
    #[ignore]
    fn bench_functional() {
        let Ok(path) = std::env::var("KVSIM_BENCH") else { return };
        let cfg = EngineConfig::with_binary(&path);
        let started = std::time::Instant::now();
        let out = run_config(&cfg, &mut NoHook).unwrap();
        let secs = started.elapsed().as_secs_f64();
        let insts: u64 = out.harts.iter().map(|h| h.insts).sum();
        println!("{path}: {insts} instructions in {secs:.3} s = {:.1} MIPS", insts as f64 / secs / 1e6);
    }
}
