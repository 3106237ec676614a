//! The SE-mode machine and its scheduler: loads the ELF, builds every hart's Linux initial stack, then runs the
//! harts in turn, `quantum` instructions each, in hart order, on one host thread (deterministic), performing
//! their system calls, until every hart has exited or a limit is reached.

mod checkpoint_hooks;
mod hart_times;
mod net_step;
mod partitioned;
pub(crate) use partitioned::PARKED_PS;

pub use crate::config::{system_nics, EngineConfig};
pub use checkpoint_hooks::CheckpointWriter;

use kvsim_base::abi::{self, auxv, DEVICE_END, MMAP_TOP, PAGE_SHIFT, PAGE_SIZE};
use kvsim_base::error::{SimError, SimResult};
use kvsim_base::output::{HartSummary, RunOutput, Stat, StopReason};
use kvsim_devices::bus::DeviceBus;
use kvsim_isa::elf::Image;
use kvsim_isa::exec::{self, ExecHook, Stop, Tracer};
use kvsim_isa::hart::{Counters, Hart};
use kvsim_isa::memory::{page_up, Memory};
use kvsim_isa::trap::Trap;

/// How a hart's turn ended.
pub(crate) enum Turn {
    /// It had no instructions to run (a limit reached): it did not run.
    NoBudget,
    Ran,
    /// The run stops (or pauses) here.
    Stop(StopReason),
}

/// What follows a system call (`Machine::perform_ecall`).
pub(crate) enum AfterEcall {
    /// The hart's turn goes on.
    Continue,
    /// The hart's turn ends (it exited or waits, or a checkpoint is due).
    EndTurn,
    /// The run pauses (the first ROI_BEGIN with `pause_on_roi`).
    Pause,
}

pub struct Machine {
    pub mem: Memory,
    pub harts: Vec<Hart>,
    /// The guest's Linux process (output, exit status, mmap allocator, NUMA placements, threads): the os crate.
    pub process: kvsim_os::process::Process,
    /// Workload.scratch_save: the host folder the scratch tree is written to at the end ("" = discarded).
    pub scratch_save: String,
    /// Total instructions (all harts) at the first ROI_BEGIN and at the last ROI_END.
    pub roi_begin: Option<u64>,
    pub roi_end: Option<u64>,
    pub stats_dumps: u64,
    /// The snapshots STATS_DUMP took (sim_ticks, stats).
    pub stat_dumps: Vec<(u64, Vec<Stat>)>,
    pub stats_resets: u64,
    quantum: u64,
    /// The partitioned schedule (sim/partitioned.rs): its window (ps), each partition's harts, and where a paused
    /// run resumes (the current window's end and the partition whose turn it is).
    partition_window: Option<u64>,
    partitions: Vec<Vec<usize>>,
    window_end: Option<u64>,
    window_partition: usize,
    /// The partitioned schedule: the harts whose `ecall` waits for the window's end (`perform_waiting_ecalls`).
    ecall_waiting: Vec<bool>,
    /// System.partition_order = 'reversed': each window's partitions run from the last socket to the first.
    partition_reversed: bool,
    /// The time each timed step of the NICs and the client advanced them to (tests of when the schedule steps them).
    #[cfg(test)]
    pub(crate) net_step_times: Vec<u64>,
    max_insts: u64,
    /// Per-hart instruction cap derived from System.max_time (u64::MAX = none).
    time_cap: u64,
    /// System.max_time (ps; 0 = none), for harts whose time comes from a timing hook.
    max_time: u64,
    /// `run` returns `StopReason::Pause` at the first turn that starts with this many instructions or more done
    /// (u64::MAX = never): mode switches and progress reports, always between turns, so pausing never changes
    /// the interleaving.
    pub pause_at: u64,
    /// `run` returns `StopReason::Pause` right after the first ROI_BEGIN (the switch to detailed timing).
    pub pause_on_roi: bool,
    /// The hart whose turn comes next when `run` resumes after a pause (round-robin order).
    pub(crate) next_turn: usize,
    /// The NIC and the ghost client (System.nic, System.client), stepped after every turn.
    pub net: Option<Box<crate::net::Net>>,
    /// What writes a checkpoint when the client's measured phase starts (System.checkpoint_to; None: no
    /// checkpoint; taken once written), and what was written (directory, bytes).
    pub checkpoint_writer: Option<Box<dyn CheckpointWriter>>,
    pub checkpoint_written: Option<(String, u64)>,
    /// The guest called CHECKPOINT: its hart's turn ends and the checkpoint is written after it.
    pub(crate) checkpoint_pending: bool,
    /// System.checkpoint_at_insts (0: off).
    checkpoint_at: u64,
    /// The background check of a restored checkpoint's page file (checkpoint.rs).
    pub(crate) page_check: Option<std::thread::JoinHandle<Result<(), String>>>,
    /// The harts' times for the timed scheduler and the network step, kept turn by turn (sim/hart_times.rs).
    hart_times: hart_times::HartTimes,
}

fn config(msg: impl Into<String>) -> SimError {
    SimError::Config(msg.into())
}

/// The timing hook refused a NUMA placement the engine's map accepted: the two maps disagree (the configuration's
/// sockets, say), and a run that went on would time those lines at their old homes.
fn placement_refused(start: u64, len: u64, socket: u16, why: &str) -> SimError {
    let end = start.saturating_add(len);
    config(format!(
        "the timing model refused the NUMA placement of [{start:#x}, {end:#x}) on socket {socket}, which the \
         engine's map accepted: {why}"
    ))
}

impl Machine {
    /// Check the configuration, load the image and set up every hart. The machine neither restores nor writes a
    /// checkpoint: `checkpoint::machine` builds one that does (System.restore_from, System.checkpoint_to).
    pub fn new(system: &EngineConfig, image: &Image) -> SimResult<Machine> {
        let harts = system.harts as usize;
        if harts == 0 {
            return Err(config("System.harts must be at least 1"));
        }
        if system.quantum == 0 {
            return Err(config("System.quantum must be at least 1"));
        }
        if system.host_threads != 1 {
            return Err(config(format!(
                "System.host_threads = {}: only 1 is built (the sockets share one memory system and one guest memory)",
                system.host_threads
            )));
        }
        if system.partition_window == Some(0) {
            return Err(config("System.schedule = 'partitioned' needs System.socket_link.latency > 0"));
        }
        if system.clock == 0 {
            return Err(config("System.clock must be positive"));
        }
        let allow = system.misaligned == kvsim_params::SystemMisaligned::Allow;
        if system.stack_size > 1 << 40 {
            return Err(config(format!("System.stack_size of {} bytes is too large", system.stack_size)));
        }
        let stack_size = page_up(system.stack_size.max(PAGE_SIZE));
        let lowest_stack = (harts as u64)
            .checked_mul(stack_size + abi::STACK_GUARD)
            .and_then(|span| abi::STACK_TOP.checked_sub(span))
            .filter(|&low| low > DEVICE_END);
        if lowest_stack.is_none() {
            return Err(config(format!(
                "{harts} stacks of {stack_size} bytes do not fit between the device range and STACK_TOP"
            )));
        }
        let mut mem = Memory::new(system.mem_limit, allow, harts);
        for seg in &image.segments {
            mem.regions.elf.push((seg.vaddr & !(PAGE_SIZE - 1), page_up(seg.vaddr + seg.memsz)));
        }
        mem.regions.heap_start = page_up(image.end);
        mem.regions.brk = mem.regions.heap_start;
        for i in 0..harts as u64 {
            let top = abi::stack_top(i, stack_size);
            mem.regions.stacks.push((top - stack_size, top));
        }
        let load_fault = |t: Trap| SimError::Guest {
            kind: t.kind(),
            hart: 0,
            pc: image.entry,
            insn: 0,
            reason: format!("loading the ELF: {}", t.reason()),
        };
        for seg in &image.segments {
            mem.write_bytes(0, seg.vaddr, &seg.data).map_err(load_fault)?;
        }
        // The segments' pages get their flags (a page two segments share gets both), as Linux maps them.
        let mut seg_prot: std::collections::BTreeMap<u64, u8> = std::collections::BTreeMap::new();
        for seg in &image.segments {
            let prot = (if seg.flags & 4 != 0 { kvsim_isa::memory::PROT_READ } else { 0 })
                | (if seg.flags & 2 != 0 { kvsim_isa::memory::PROT_WRITE } else { 0 })
                | (if seg.flags & 1 != 0 { kvsim_isa::memory::PROT_EXEC } else { 0 });
            for vpn in seg.vaddr >> PAGE_SHIFT..page_up(seg.vaddr + seg.memsz) >> PAGE_SHIFT {
                *seg_prot.entry(vpn).or_insert(0) |= prot;
            }
        }
        for (vpn, prot) in seg_prot {
            mem.set_prot(vpn << PAGE_SHIFT, (vpn + 1) << PAGE_SHIFT, prot);
        }
        let time_cap = if system.max_time == 0 {
            u64::MAX
        } else {
            ((system.max_time as u128 * system.clock as u128) / 1_000_000_000_000u128).min(u64::MAX as u128) as u64
        };
        let mut m = Machine {
            mem,
            harts: Vec::with_capacity(harts),
            process: kvsim_os::process::Process {
                stdout: Vec::new(),
                stderr: Vec::new(),
                group_exit: None,
                mmap_low: MMAP_TOP,
                numa: kvsim_timing::numa::NumaMap::new(system.hart_socket.iter().copied().max().unwrap_or(0) + 1),
                hart_socket: system.hart_socket.clone(),
                huge: Vec::new(),
                huge_pending: Vec::new(),
                huge_heap: Vec::new(),
                numa_pending: Vec::new(),
                rng: system.seed ^ 0x6b76_7369_6d00_0000,
                stack_size,
                threads: kvsim_os::thread::Threads::new(harts, image.tls),
                fs: kvsim_os::fs::FileSystem::new(&system.fs).map_err(|e| config(format!("Workload.files: {e}")))?,
            },
            scratch_save: system.scratch_save.clone(),
            roi_begin: None,
            roi_end: None,
            stats_dumps: 0,
            stat_dumps: Vec::new(),
            stats_resets: 0,
            quantum: system.quantum,
            partition_window: system.partition_window,
            partitions: partitioned::partitions(&system.hart_socket, harts),
            window_end: None,
            window_partition: 0,
            ecall_waiting: vec![false; harts],
            partition_reversed: system.partition_reversed,
            #[cfg(test)]
            net_step_times: Vec::new(),
            max_insts: system.max_insts,
            time_cap,
            max_time: system.max_time,
            pause_at: u64::MAX,
            pause_on_roi: false,
            next_turn: 0,
            net: None,
            checkpoint_writer: None,
            checkpoint_written: None,
            checkpoint_pending: false,
            checkpoint_at: system.checkpoint_at_insts,
            page_check: None,
            hart_times: hart_times::HartTimes::new(),
        };
        if !system.nics.is_empty() {
            let (net, bus) = crate::net::Net::new(&system.nics, system.client.as_ref(), harts, &system.argv)?;
            // The MACs' buffer SRAMs are guest memory the driver may use (kvsim_devices::mac_sram).
            for (k, &size) in net.sram.iter().enumerate().filter(|(_, &s)| s > 0) {
                let (start, end) = kvsim_devices::mac_sram::window(k, size);
                m.mem.regions.mmaps.insert(start, end);
            }
            m.mem.devices = Some(Box::new(bus));
            m.net = Some(Box::new(net));
        } else if system.client.is_some() {
            return Err(config("System.client.enabled needs System.nic.enabled"));
        }
        for i in 0..harts {
            let sp = m.build_stack(i, system, image)?;
            let mut hart = Hart::new(i, image.entry, sp, system.clock);
            // A Linux process starts on hart 0; the others wait for clone.
            hart.idle = image.tls && i > 0;
            m.harts.push(hart);
        }
        m.os().place_stacks();
        Ok(m)
    }

    /// Write hart `i`'s Linux initial stack (argc, argv, envp, auxv, strings, AT_RANDOM bytes); returns sp.
    fn build_stack(&mut self, i: usize, system: &EngineConfig, image: &Image) -> SimResult<u64> {
        let top = abi::stack_top(i as u64, self.process.stack_size);
        let bottom = top - self.process.stack_size;
        let mut pos = top;
        let too_big = || config(format!("argv and env do not fit in a stack of {} bytes", system.stack_size));
        let fault = |t: Trap| SimError::Guest {
            kind: t.kind(),
            hart: i,
            pc: image.entry,
            insn: 0,
            reason: format!("building the initial stack: {}", t.reason()),
        };
        let mut push_bytes = |mem: &mut Memory, bytes: &[u8]| -> SimResult<u64> {
            pos = pos.saturating_sub(bytes.len() as u64);
            if pos < bottom + PAGE_SIZE {
                return Err(too_big());
            }
            mem.write_bytes(i, pos, bytes).map_err(fault)?;
            Ok(pos)
        };
        let mut strings = vec![crate::config::guest_program_name(&system.binary)];
        strings.extend(system.argv.iter().cloned());
        let argc = strings.len();
        strings.extend(system.env.iter().cloned());
        let mut addrs = Vec::with_capacity(strings.len());
        for s in &strings {
            let mut b = s.as_bytes().to_vec();
            b.push(0);
            addrs.push(push_bytes(&mut self.mem, &b)?);
        }
        let mut random = [0u8; 16];
        let mut seed = self.process.rng ^ (i as u64).wrapping_mul(0x1234_5678_9abc_def1);
        random[..8].copy_from_slice(&kvsim_base::random::splitmix64(&mut seed).to_le_bytes());
        random[8..].copy_from_slice(&kvsim_base::random::splitmix64(&mut seed).to_le_bytes());
        let at_random = push_bytes(&mut self.mem, &random)?;
        let aux = [
            (auxv::AT_PHDR, image.phdr),
            (auxv::AT_PHNUM, image.phnum),
            (auxv::AT_PAGESZ, PAGE_SIZE),
            (auxv::AT_ENTRY, image.entry),
            (auxv::AT_RANDOM, at_random),
            (auxv::AT_NULL, 0),
        ];
        let mut words: Vec<u64> = vec![argc as u64];
        words.extend_from_slice(&addrs[..argc]);
        words.push(0);
        words.extend_from_slice(&addrs[argc..]);
        words.push(0);
        for (k, v) in aux {
            words.push(k);
            words.push(v);
        }
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let sp = pos.saturating_sub(bytes.len() as u64) & !15;
        if sp < bottom + PAGE_SIZE {
            return Err(too_big());
        }
        self.mem.write_bytes(i, sp, &bytes).map_err(fault)?;
        Ok(sp)
    }

    pub fn total_insts(&self) -> u64 {
        self.harts.iter().map(|h| h.cnt.insts).sum()
    }

    pub fn reset_stats(&mut self) {
        for h in &mut self.harts {
            h.base = h.cnt;
        }
        self.stats_resets += 1;
    }

    fn guest_error(&self, hid: usize, pc: u64, insn: u32, t: &Trap) -> SimError {
        SimError::Guest { kind: t.kind(), hart: hid, pc, insn, reason: t.reason() }
    }

    /// Run until every hart has exited or a limit is reached.
    /// With a hook that keeps time (`ExecHook::time_ps`), every turn goes to the live hart furthest behind in
    /// simulated time (the lowest id among equals), for `quantum` instructions; otherwise harts take turns in
    /// hart order.
    pub fn run<H: ExecHook>(&mut self, hook: &mut H, tracer: Option<&mut Tracer>) -> SimResult<StopReason> {
        let stop = self.run_turns(hook, tracer);
        // A restored checkpoint's page file is checked in the background: the run reports nothing until it passes.
        if let Some(check) = self.page_check.take() {
            if check.is_finished() || !matches!(stop, Ok(StopReason::Pause)) {
                check.join().map_err(|_| SimError::Bug("the page file check panicked".into()))?.map_err(config)?;
            } else {
                self.page_check = Some(check);
            }
        }
        stop
    }

    /// Wait for a restored page file's check (when one runs) and return its verdict.
    pub(crate) fn finish_page_check(&mut self) -> SimResult<()> {
        match self.page_check.take() {
            Some(check) => {
                check.join().map_err(|_| SimError::Bug("the page file check panicked".into()))?.map_err(config)
            }
            None => Ok(()),
        }
    }

    fn run_turns<H: ExecHook>(&mut self, hook: &mut H, mut tracer: Option<&mut Tracer>) -> SimResult<StopReason> {
        let mut total = self.total_insts();
        let timed = H::ACTIVE && hook.time_ps(0).is_some();
        // The harts may have changed since the last run (a phase's set-up, a checkpoint, the caller).
        self.hart_times.invalidate();
        // NUMA placements made since the last run (between phases, or by the caller) reach this hook first.
        for (start, len, socket) in self.process.numa_pending.drain(..) {
            hook.numa_placed(start, len, socket).map_err(|e| placement_refused(start, len, socket, &e))?;
        }
        for (start, end) in self.process.huge_pending.drain(..) {
            hook.huge_mapped(start, end - start);
        }
        if let (true, Some(window)) = (timed, self.partition_window) {
            return self.run_partitioned(hook, tracer, total, window);
        }
        self.window_end = None;
        let mut first = std::mem::take(&mut self.next_turn);
        loop {
            let mut progressed = false;
            let n = self.harts.len();
            for turn in 0..n {
                // After a pause, the interrupted round resumes where it stopped.
                if !timed && turn < first {
                    continue;
                }
                let hid =
                    if timed { self.hart_times.furthest_behind(&self.harts, self.max_time).unwrap_or(0) } else { turn };
                if !self.harts[hid].runnable() {
                    continue;
                }
                if total >= self.pause_at {
                    self.next_turn = hid;
                    return Ok(StopReason::Pause);
                }
                match self.take_turn(hid, hook, tracer.as_deref_mut(), &mut total, timed)? {
                    Turn::NoBudget => continue,
                    Turn::Ran => progressed = true,
                    Turn::Stop(stop) => return Ok(stop),
                }
            }
            if !self.harts.iter().any(|h| h.runnable()) && self.harts.iter().any(|h| h.futex.is_some()) {
                self.resolve_waiting()?;
                first = 0;
                continue;
            }
            if !progressed && first == 0 {
                return Ok(StopReason::MaxTime);
            }
            first = 0;
        }
    }

    /// Hart `hid`'s turn: up to `quantum` instructions (fewer at a limit), its system calls, then the NIC and
    /// client step and a checkpoint if one is due. `total` is every hart's instructions, kept up to date.
    fn take_turn<H: ExecHook>(
        &mut self,
        hid: usize,
        hook: &mut H,
        mut tracer: Option<&mut Tracer>,
        total: &mut u64,
        timed: bool,
    ) -> SimResult<Turn> {
        let mut budget = self.quantum;
        if self.max_insts > 0 {
            if *total >= self.max_insts {
                return Ok(Turn::Stop(StopReason::MaxInsts));
            }
            budget = budget.min(self.max_insts - *total);
        }
        if timed {
            if self.max_time > 0 && self.harts[hid].time_ps() >= self.max_time {
                budget = 0;
            }
        } else {
            budget = budget.min(self.time_cap.saturating_sub(self.harts[hid].cnt.insts));
        }
        if budget == 0 {
            return Ok(Turn::NoBudget);
        }
        while budget > 0 {
            let before = self.harts[hid].cnt.insts;
            let hart = &mut self.harts[hid];
            // The partitioned schedule: a turn ends after an instruction parked until the window's end.
            let deadline = if timed && self.partition_window.is_some() { PARKED_PS } else { exec::NO_DEADLINE };
            let stop = match (hid, tracer.as_deref_mut()) {
                (0, Some(t)) => exec::run_until::<H, true>(hart, &mut self.mem, budget, deadline, hook, Some(t)),
                _ => exec::run_until::<H, false>(hart, &mut self.mem, budget, deadline, hook, None),
            };
            let done = self.harts[hid].cnt.insts - before;
            budget -= done;
            *total += done;
            if timed {
                self.harts[hid].timed_ps = hook.time_ps(hid);
            }
            match stop {
                Stop::Budget => break,
                Stop::Ecall if timed && self.partition_window.is_some() => {
                    // The partitioned schedule performs it at the window's end (`perform_waiting_ecalls`).
                    self.ecall_waiting[hid] = true;
                    break;
                }
                Stop::Ecall => match self.perform_ecall(hid, hook)? {
                    AfterEcall::Continue => {}
                    AfterEcall::EndTurn => break,
                    AfterEcall::Pause => return Ok(Turn::Stop(StopReason::Pause)),
                },
                Stop::Fault(t) => {
                    let pc = self.harts[hid].pc;
                    let insn = match t {
                        Trap::Unmapped { access: kvsim_isa::trap::Access::Fetch, .. }
                        | Trap::Misaligned { access: kvsim_isa::trap::Access::Fetch, .. } => 0,
                        // (A fetch that hit mem_limit finds no page here either, so gives 0.)
                        _ => self.mem.insn_word(pc),
                    };
                    return Err(self.guest_error(hid, pc, insn, &t));
                }
            }
        }
        if timed {
            self.hart_times.turn_taken(&self.harts, hid, self.max_time);
        } else {
            self.hart_times.invalidate();
        }
        if self.process.group_exit.is_some() || self.harts.iter().all(|h| h.exited()) {
            return Ok(Turn::Stop(StopReason::Exit));
        }
        if self.max_insts > 0 && *total >= self.max_insts {
            return Ok(Turn::Stop(StopReason::MaxInsts));
        }
        // The partitioned schedule steps the NICs and the client at its windows' boundaries instead.
        if self.net.is_some() && !(timed && self.partition_window.is_some()) {
            if let Some(stop) = self.net_step(hook, *total, hid)? {
                return Ok(Turn::Stop(stop));
            }
        }
        // A checkpoint holds no system call waiting for its window's end (it would be lost): it is then written at
        // the window's end, after the calls (`perform_waiting_ecalls`).
        if self.partition_window.is_none() || !self.ecall_waiting.contains(&true) {
            self.checkpoint_after_turn(hid, *total)?;
        }
        Ok(Turn::Ran)
    }

    /// Perform the system call hart `hid` stopped at (`Stop::Ecall`, its PC past the `ecall`), then tell `hook`
    /// what it changed: NUMA placements, hugepage mappings, a statistics dump or reset.
    fn perform_ecall<H: ExecHook>(&mut self, hid: usize, hook: &mut H) -> SimResult<AfterEcall> {
        // A system call may change any hart (futexes, exits, clones).
        self.hart_times.invalidate();
        let (resets, dumps) = (self.stats_resets, self.stat_dumps.len());
        if let Err(t) = self.syscall(hid) {
            let pc = self.harts[hid].pc.wrapping_sub(4);
            return Err(self.guest_error(hid, pc, 0x73, &t));
        }
        for (start, len, socket) in self.process.numa_pending.drain(..) {
            hook.numa_placed(start, len, socket).map_err(|e| placement_refused(start, len, socket, &e))?;
        }
        for (start, end) in self.process.huge_pending.drain(..) {
            hook.huge_mapped(start, end - start);
        }
        if H::ACTIVE {
            if self.stat_dumps.len() > dumps {
                if let Some((_, snapshot)) = self.stat_dumps.last_mut() {
                    hook.append_stats(snapshot);
                }
            }
            if self.stats_resets > resets {
                hook.reset_stats();
            }
        }
        if self.pause_on_roi && self.roi_begin.is_some() {
            self.next_turn = hid;
            return Ok(AfterEcall::Pause);
        }
        if !self.harts[hid].runnable() || self.checkpoint_pending {
            return Ok(AfterEcall::EndTurn);
        }
        Ok(AfterEcall::Continue)
    }

    /// The statistics, in a stable order, each with a one-line description.
    pub fn stats(&self, sim_ticks: u64) -> Vec<Stat> {
        use kvsim_params::paths;
        let mut out = Vec::new();
        let mut push =
            |name: String, value: u64, desc: &str| out.push(Stat { name, value: value as f64, desc: desc.to_string() });
        let mut sum = Counters::default();
        for h in &self.harts {
            let c = h.cnt.minus(&h.base);
            for (name, value, desc) in c.named() {
                push(paths::hart(h.id) + name, value, desc);
            }
            // Never `PARKED_PS`: the partitioned schedule takes a dump at a window's end, when no instruction is
            // parked (`perform_waiting_ecalls`), and so does the end of a run (`resume_times`).
            debug_assert_ne!(h.timed_ps, Some(PARKED_PS), "hart {} is parked: its time is not known yet", h.id);
            push(paths::hart(h.id) + "sim_ticks", h.time_ps(), "simulated time of this hart (ps)");
            sum.insts += c.insts;
            sum.idle_poll_insts += c.idle_poll_insts;
            sum.busy_poll_insts += c.busy_poll_insts;
            sum.polls_idle += c.polls_idle;
            sum.polls_busy += c.polls_busy;
        }
        let (system, guest_memory, roi) = (paths::system(), paths::guest_memory(), paths::roi());
        push(system.clone() + "insts", sum.insts, "instructions executed by all harts");
        push(system.clone() + "sim_ticks", sim_ticks, "simulated time: the latest hart's time (ps)");
        push(guest_memory.clone() + "pages_touched", self.mem.pages_touched, "guest pages allocated on first touch");
        push(guest_memory + "resident_pages", self.mem.resident_pages(), "guest pages resident at the end");
        let (b, e) = (self.roi_begin, self.roi_end);
        push(roi.clone() + "begin_insts", b.unwrap_or(0), "total instructions at the first ROI_BEGIN");
        push(roi.clone() + "end_insts", e.unwrap_or(0), "total instructions at the last ROI_END");
        let roi_insts = match (b, e) {
            (Some(b), Some(e)) if e >= b => e - b,
            _ => 0,
        };
        push(roi + "insts", roi_insts, "instructions (all harts) between ROI_BEGIN and ROI_END");
        push(system.clone() + "stats_dumps", self.stats_dumps, "STATS_DUMP simulator calls");
        push(system + "stats_resets", self.stats_resets, "stats resets (STATS_RESET and the first ROI_BEGIN)");
        for (name, value, desc) in self.process.numa_stats() {
            push(name, value, desc);
        }
        for (name, value, desc) in self.process.fs.stats.named() {
            push(paths::guest_files() + name, value, desc);
        }
        if let Some((_, bytes)) = &self.checkpoint_written {
            push(
                paths::checkpoint() + "bytes",
                *bytes,
                "bytes of the checkpoint this run wrote (System.checkpoint_to)",
            );
        }
        if let (Some(net), Some(bus)) = (self.net.as_deref(), DeviceBus::of(&self.mem)) {
            let measured = net.measure_insts.map_or(0, |b| self.total_insts() - b);
            // The harts' counters run from the last stats reset, which the client's measurement start makes.
            let polls = (sum.polls_idle + sum.polls_busy > 0).then_some((sum.busy_poll_insts, sum.idle_poll_insts));
            for (name, value, desc) in net.stats(bus, measured, polls) {
                out.push(Stat { name, value, desc: desc.to_string() });
            }
        }
        out
    }

    /// Simulated time: the latest hart's.
    pub fn sim_ticks(&self) -> u64 {
        kvsim_isa::hart::sim_ticks(&self.harts)
    }

    pub fn output(&self, stop: StopReason) -> RunOutput {
        let sim_ticks = self.sim_ticks();
        let all_exited = self.harts.iter().all(|h| h.exited());
        let exit_code = self.process.group_exit.or(if all_exited { self.harts[0].exit_code } else { None });
        RunOutput {
            stop,
            exit_code,
            stdout: self.process.stdout.clone(),
            stderr: self.process.stderr.clone(),
            harts: self.harts.iter().map(|h| HartSummary { insts: h.cnt.insts, exit_code: h.exit_code }).collect(),
            sim_ticks,
            stats: self.stats(sim_ticks),
            stat_dumps: self.stat_dumps.clone(),
            numa_ranges: self.process.numa.ranges().to_vec(),
            scratch_files: self.process.fs.scratch_files(),
        }
    }
}

impl Machine {
    /// Put guest addresses [start, start + len) on `socket`'s memory (a NUMA allocation from a system call): the
    /// engine's map changes at once and the running hook (a timing model) is told after the call. An error names a
    /// socket that does not exist.
    pub fn place_numa(&mut self, start: u64, len: u64, socket: u16) -> Result<(), String> {
        self.process.place_numa(start, len, socket)
    }
}

#[cfg(test)]
mod exec_tests;
#[cfg(test)]
pub mod tests;
