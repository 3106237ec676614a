//! The SE-mode machine and its scheduler: loads the ELF, builds every hart's Linux initial stack, then runs the
//! harts in turn, `quantum` instructions each, in hart order, on one host thread (deterministic), performing
//! their system calls, until every hart has exited or a limit is reached.

use std::fs::File;
use std::io::{BufWriter, Write};

use kvsim_params::System;

use crate::abi::{self, auxv, DEVICE_END, MMAP_TOP, PAGE_SHIFT, PAGE_SIZE};
use crate::elf::{self, Image};
use crate::error::{SimError, SimResult};
use crate::hart::{Counters, Hart};
use crate::isa::exec::{self, ExecHook, NoHook, Stop, Tracer};
use crate::mem::{page_up, Memory};
use crate::output::{HartSummary, RunOutput, Stat, StopReason};
use crate::trap::Trap;

pub struct Machine {
    pub mem: Memory,
    pub harts: Vec<Hart>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// exit_group's status, once called.
    pub group_exit: Option<i64>,
    /// Lowest address handed out by the mmap allocator so far (it grows down from MMAP_TOP).
    pub mmap_low: u64,
    /// getrandom's generator state (from System.seed).
    pub rng: u64,
    pub stack_size: u64,
    /// Total instructions (all harts) at the first ROI_BEGIN and at the last ROI_END.
    pub roi_begin: Option<u64>,
    pub roi_end: Option<u64>,
    pub stats_dumps: u64,
    /// The snapshots STATS_DUMP took (sim_ticks, stats).
    pub stat_dumps: Vec<(u64, Vec<Stat>)>,
    pub stats_resets: u64,
    quantum: u64,
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
    /// Threads of a Linux process (clone, futex, thread exit).
    pub threads: crate::thread::Threads,
    /// Where to write a checkpoint when the client's measured phase starts ("" = none; emptied once written),
    /// the configuration it records, the binary, and what was written (directory, bytes).
    pub checkpoint_to: String,
    checkpoint_config: serde_json::Value,
    binary: String,
    pub checkpoint_written: Option<(String, u64)>,
    /// The guest called CHECKPOINT: its hart's turn ends and the checkpoint is written after it.
    pub(crate) checkpoint_pending: bool,
    /// System.checkpoint_at_insts (0: off).
    checkpoint_at: u64,
    /// The background check of a restored checkpoint's page file (checkpoint.rs).
    pub(crate) page_check: Option<std::thread::JoinHandle<Result<(), String>>>,
}

/// The part of `System` the functional engine uses (decoupled so tests need not build a whole `System`).
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    pub harts: u64,
    pub clock: u64,
    pub mem_limit: u64,
    pub stack_size: u64,
    pub quantum: u64,
    pub max_insts: u64,
    pub max_time: u64,
    pub seed: u64,
    pub misaligned: kvsim_params::SystemMisaligned,
    pub trace_file: String,
    pub binary: String,
    pub argv: Vec<String>,
    pub env: Vec<String>,
    /// The NICs (System.nics, or System.nic when the list is empty and it is enabled) and the ghost client.
    pub nics: Vec<kvsim_params::Nic>,
    pub client: Option<kvsim_params::Client>,
    /// System.checkpoint_to, System.restore_from, and the resolved configuration (JSON) a checkpoint records.
    pub checkpoint_to: String,
    pub checkpoint_at_insts: u64,
    pub restore_from: String,
    pub resolved: serde_json::Value,
}

impl EngineConfig {
    pub fn from_system(s: &System) -> EngineConfig {
        EngineConfig {
            harts: s.harts,
            clock: s.clock,
            mem_limit: s.mem_limit,
            stack_size: s.stack_size,
            quantum: s.quantum,
            max_insts: s.max_insts,
            max_time: s.max_time,
            seed: s.seed,
            misaligned: s.misaligned,
            trace_file: s.trace_file.clone(),
            binary: s.workload.binary.clone(),
            argv: s.workload.argv.clone(),
            env: s.workload.env.clone(),
            nics: system_nics(s),
            client: s.client.enabled.then(|| s.client.clone()),
            checkpoint_to: s.checkpoint_to.clone(),
            checkpoint_at_insts: s.checkpoint_at_insts,
            restore_from: s.restore_from.clone(),
            resolved: serde_json::to_value(s).unwrap_or_default(),
        }
    }

    /// The defaults of models/system.py (the generated `System::default()`), running `binary`.
    pub fn with_binary(binary: &str) -> EngineConfig {
        EngineConfig { binary: binary.into(), ..EngineConfig::from_system(&System::default()) }
    }
}

/// The system's NICs: `System.nics` (its enabled entries), or the one `System.nic` shorthand when the list is empty.
pub fn system_nics(s: &System) -> Vec<kvsim_params::Nic> {
    if s.nics.is_empty() {
        s.nic.enabled.then(|| s.nic.clone()).into_iter().collect()
    } else {
        s.nics.iter().filter(|n| n.enabled).cloned().collect()
    }
}

fn config(msg: impl Into<String>) -> SimError {
    SimError::Config(msg.into())
}

impl Machine {
    /// Check the configuration, load the image and set up every hart.
    pub fn new(system: &EngineConfig, image: &Image) -> SimResult<Machine> {
        let harts = system.harts as usize;
        if harts == 0 {
            return Err(config("System.harts must be at least 1"));
        }
        if system.quantum == 0 {
            return Err(config("System.quantum must be at least 1"));
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
            let prot = (if seg.flags & 4 != 0 { crate::mem::PROT_READ } else { 0 })
                | (if seg.flags & 2 != 0 { crate::mem::PROT_WRITE } else { 0 })
                | (if seg.flags & 1 != 0 { crate::mem::PROT_EXEC } else { 0 });
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
            stdout: Vec::new(),
            stderr: Vec::new(),
            group_exit: None,
            mmap_low: MMAP_TOP,
            rng: system.seed ^ 0x6b76_7369_6d00_0000,
            stack_size,
            roi_begin: None,
            roi_end: None,
            stats_dumps: 0,
            stat_dumps: Vec::new(),
            stats_resets: 0,
            quantum: system.quantum,
            max_insts: system.max_insts,
            time_cap,
            max_time: system.max_time,
            pause_at: u64::MAX,
            pause_on_roi: false,
            next_turn: 0,
            net: None,
            threads: crate::thread::Threads::new(harts, image.tls),
            checkpoint_to: String::new(),
            checkpoint_config: serde_json::Value::Null,
            binary: String::new(),
            checkpoint_written: None,
            checkpoint_pending: false,
            checkpoint_at: 0,
            page_check: None,
        };
        if !system.nics.is_empty() {
            let (net, bus) = crate::net::Net::new(&system.nics, system.client.as_ref(), harts, &system.argv)?;
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
        if !system.restore_from.is_empty() {
            let dir = std::path::Path::new(&system.restore_from);
            crate::checkpoint::restore(&mut m, &system.resolved, &system.binary, dir).map_err(config)?;
        }
        m.checkpoint_to = system.checkpoint_to.clone();
        m.checkpoint_at = system.checkpoint_at_insts;
        m.checkpoint_config = system.resolved.clone();
        m.binary = system.binary.clone();
        Ok(m)
    }

    /// Write hart `i`'s Linux initial stack (argc, argv, envp, auxv, strings, AT_RANDOM bytes); returns sp.
    fn build_stack(&mut self, i: usize, system: &EngineConfig, image: &Image) -> SimResult<u64> {
        let top = abi::stack_top(i as u64, self.stack_size);
        let bottom = top - self.stack_size;
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
        let mut strings = vec![system.binary.clone()];
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
        let mut seed = self.rng ^ (i as u64).wrapping_mul(0x1234_5678_9abc_def1);
        random[..8].copy_from_slice(&crate::syscall::splitmix64(&mut seed).to_le_bytes());
        random[8..].copy_from_slice(&crate::syscall::splitmix64(&mut seed).to_le_bytes());
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

    fn run_turns<H: ExecHook>(&mut self, hook: &mut H, mut tracer: Option<&mut Tracer>) -> SimResult<StopReason> {
        let mut total = self.total_insts();
        let timed = H::ACTIVE && hook.time_ps(0).is_some();
        let mut first = std::mem::take(&mut self.next_turn);
        loop {
            let mut progressed = false;
            let n = self.harts.len();
            for turn in 0..n {
                // After a pause, the interrupted round resumes where it stopped.
                if !timed && turn < first {
                    continue;
                }
                let hid = if timed { self.furthest_behind().unwrap_or(0) } else { turn };
                if !self.harts[hid].runnable() {
                    continue;
                }
                if total >= self.pause_at {
                    self.next_turn = hid;
                    return Ok(StopReason::Pause);
                }
                let mut budget = self.quantum;
                if self.max_insts > 0 {
                    if total >= self.max_insts {
                        return Ok(StopReason::MaxInsts);
                    }
                    budget = budget.min(self.max_insts - total);
                }
                if timed {
                    if self.max_time > 0 && self.harts[hid].time_ps() >= self.max_time {
                        budget = 0;
                    }
                } else {
                    budget = budget.min(self.time_cap.saturating_sub(self.harts[hid].cnt.insts));
                }
                if budget == 0 {
                    continue;
                }
                progressed = true;
                while budget > 0 {
                    let before = self.harts[hid].cnt.insts;
                    let hart = &mut self.harts[hid];
                    let stop = match (hid, tracer.as_deref_mut()) {
                        (0, Some(t)) => exec::run::<H, true>(hart, &mut self.mem, budget, hook, Some(t)),
                        _ => exec::run::<H, false>(hart, &mut self.mem, budget, hook, None),
                    };
                    let done = self.harts[hid].cnt.insts - before;
                    budget -= done;
                    total += done;
                    if timed {
                        self.harts[hid].timed_ps = hook.time_ps(hid);
                    }
                    match stop {
                        Stop::Budget => break,
                        Stop::Ecall => {
                            let (resets, dumps) = (self.stats_resets, self.stat_dumps.len());
                            if let Err(t) = self.syscall(hid) {
                                let pc = self.harts[hid].pc.wrapping_sub(4);
                                return Err(self.guest_error(hid, pc, 0x73, &t));
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
                                return Ok(StopReason::Pause);
                            }
                            if !self.harts[hid].runnable() || self.checkpoint_pending {
                                break;
                            }
                        }
                        Stop::Fault(t) => {
                            let pc = self.harts[hid].pc;
                            let insn = match t {
                                Trap::Unmapped { access: crate::trap::Access::Fetch, .. }
                                | Trap::Misaligned { access: crate::trap::Access::Fetch, .. } => 0,
                                // (A fetch that hit mem_limit finds no page here either, so gives 0.)
                                _ => self.mem.insn_word(pc),
                            };
                            return Err(self.guest_error(hid, pc, insn, &t));
                        }
                    }
                }
                if self.group_exit.is_some() || self.harts.iter().all(|h| h.exited()) {
                    return Ok(StopReason::Exit);
                }
                if self.max_insts > 0 && total >= self.max_insts {
                    return Ok(StopReason::MaxInsts);
                }
                if self.net.is_some() {
                    if let Some(stop) = self.net_step(hook, total, hid)? {
                        return Ok(stop);
                    }
                }
                let at_insts = self.checkpoint_at > 0 && total >= self.checkpoint_at;
                if std::mem::take(&mut self.checkpoint_pending) || at_insts {
                    self.write_checkpoint(hid)?;
                }
            }
            if !self.harts.iter().any(|h| h.runnable()) && self.harts.iter().any(|h| h.futex.is_some()) {
                if let Err(msg) = self.resolve_all_waiting() {
                    let h = self.harts.iter().find(|h| h.futex.is_some()).map_or(0, |h| h.id);
                    return Err(SimError::Guest {
                        kind: crate::error::FaultKind::Deadlock,
                        hart: h,
                        pc: self.harts[h].pc.wrapping_sub(4),
                        insn: 0x73,
                        reason: msg,
                    });
                }
                first = 0;
                continue;
            }
            if !progressed && first == 0 {
                return Ok(StopReason::MaxTime);
            }
            first = 0;
        }
    }

    /// Step the NIC and the client after hart `hid`'s turn: a finished client stops the run; its measured phase
    /// is the region of interest (ROI begin resets the stats and, when the scheduler waits for it, pauses the run
    /// so detailed timing can start).
    fn net_step<H: ExecHook>(&mut self, hook: &mut H, total: u64, hid: usize) -> SimResult<Option<StopReason>> {
        let Some(net) = self.net.as_mut() else { return Ok(None) };
        // In detailed timing the NIC and the client run in simulated time: up to the least time of the live harts;
        // each queue's doorbells are taken at its hart's time.
        let timed = H::ACTIVE && hook.time_ps(0).is_some() && net.timed();
        let step = if timed {
            let live = self.harts.iter().filter(|h| !h.exited()).map(|h| h.time_ps()).min();
            let now = live.unwrap_or_else(|| self.harts.iter().map(|h| h.time_ps()).max().unwrap_or(0));
            let queue_time: Vec<u64> = (0..net.queue_port.len())
                .map(|q| {
                    net.hart_queue.iter().position(|&x| x == Some(q)).map_or(now, |h| self.harts[h].time_ps().max(now))
                })
                .collect();
            let mut io = crate::bus::HookPort { hook: &mut *hook };
            net.step(&mut self.mem, total, Some(crate::net::TimedStep { now, queue_time: &queue_time, io: &mut io }))
        } else {
            net.step(&mut self.mem, total, None)
        };
        match step {
            Ok(crate::net::NetEvent::Nothing) => Ok(None),
            Ok(crate::net::NetEvent::Loaded) => {
                self.write_checkpoint(hid)?;
                Ok(None)
            }
            Ok(crate::net::NetEvent::MeasureStart) => {
                if self.roi_begin.is_none() {
                    self.roi_begin = Some(total);
                }
                self.reset_stats();
                if H::ACTIVE {
                    hook.reset_stats();
                }
                if self.pause_on_roi {
                    self.next_turn = (hid + 1) % self.harts.len();
                    return Ok(Some(StopReason::Pause));
                }
                Ok(None)
            }
            Ok(crate::net::NetEvent::ClientDone) => {
                self.roi_end = Some(total);
                Ok(Some(StopReason::ClientDone))
            }
            Err(crate::net::StepError::Client(msg)) => Err(SimError::Client(msg)),
            Err(crate::net::StepError::Dma(f)) => {
                let hart = net.hart_queue.iter().position(|&q| q == Some(f.queue)).unwrap_or(0);
                Err(SimError::Guest {
                    kind: f.trap.kind(),
                    hart,
                    pc: self.harts[hart].pc,
                    insn: 0,
                    reason: format!("NIC queue {} DMA {}: {}", f.queue, f.what, f.trap.reason()),
                })
            }
        }
    }

    /// At the end of hart `hid`'s turn: write the checkpoint System.checkpoint_to asks for, if not yet written.
    fn write_checkpoint(&mut self, hid: usize) -> SimResult<()> {
        if self.checkpoint_to.is_empty() {
            return Ok(());
        }
        if self.threads.linux {
            // The thread table (clone, futex waits, exit words) is not part of the checkpoint format yet.
            return Err(SimError::Config(
                "System.checkpoint_to: checkpoints of Linux-process programs (static glibc, threads) are not \
                 supported yet; checkpoint a kvsim-runtime program"
                    .into(),
            ));
        }
        // A restored run resumes with the next hart, as this one does (a turn is never split).
        self.next_turn = (hid + 1) % self.harts.len();
        let dir = std::mem::take(&mut self.checkpoint_to);
        let written = crate::checkpoint::write(self, &self.checkpoint_config, &self.binary, dir.as_ref(), None);
        self.next_turn = 0;
        let w = written.map_err(config)?;
        self.checkpoint_written = Some((w.dir.display().to_string(), w.bytes));
        Ok(())
    }

    /// The live hart with the least simulated time (the lowest id among equals).
    fn furthest_behind(&self) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for (i, h) in self.harts.iter().enumerate() {
            if !h.runnable() || (self.max_time > 0 && h.time_ps() >= self.max_time) {
                continue;
            }
            if best.is_none_or(|(t, _)| h.time_ps() < t) {
                best = Some((h.time_ps(), i));
            }
        }
        best.map(|(_, i)| i)
    }

    /// The statistics, in a stable order, each with a one-line description.
    pub fn stats(&self, sim_ticks: u64) -> Vec<Stat> {
        let mut out = Vec::new();
        let mut push =
            |name: String, value: u64, desc: &str| out.push(Stat { name, value: value as f64, desc: desc.to_string() });
        let mut sum = Counters::default();
        for h in &self.harts {
            let c = h.cnt.minus(&h.base);
            for (name, value, desc) in c.named() {
                push(format!("system.hart{}.{name}", h.id), value, desc);
            }
            push(format!("system.hart{}.sim_ticks", h.id), h.time_ps(), "simulated time of this hart (ps)");
            sum.insts += c.insts;
        }
        push("system.insts".into(), sum.insts, "instructions executed by all harts");
        push("system.sim_ticks".into(), sim_ticks, "simulated time: the latest hart's time (ps)");
        push("system.mem.pages_touched".into(), self.mem.pages_touched, "guest pages allocated on first touch");
        push("system.mem.resident_pages".into(), self.mem.resident_pages(), "guest pages resident at the end");
        let (b, e) = (self.roi_begin, self.roi_end);
        push("system.roi.begin_insts".into(), b.unwrap_or(0), "total instructions at the first ROI_BEGIN");
        push("system.roi.end_insts".into(), e.unwrap_or(0), "total instructions at the last ROI_END");
        let roi = match (b, e) {
            (Some(b), Some(e)) if e >= b => e - b,
            _ => 0,
        };
        push("system.roi.insts".into(), roi, "instructions (all harts) between ROI_BEGIN and ROI_END");
        push("system.stats_dumps".into(), self.stats_dumps, "STATS_DUMP simulator calls");
        push("system.stats_resets".into(), self.stats_resets, "stats resets (STATS_RESET and the first ROI_BEGIN)");
        if let Some((_, bytes)) = &self.checkpoint_written {
            push(
                "system.checkpoint.bytes".into(),
                *bytes,
                "bytes of the checkpoint this run wrote (System.checkpoint_to)",
            );
        }
        if let (Some(net), Some(bus)) = (self.net.as_deref(), self.mem.devices.as_deref()) {
            let measured = net.measure_insts.map_or(0, |b| self.total_insts() - b);
            for (name, value, desc) in net.stats(bus, measured) {
                out.push(Stat { name, value, desc: desc.to_string() });
            }
        }
        out
    }

    /// Simulated time: the latest hart's.
    pub fn sim_ticks(&self) -> u64 {
        self.harts.iter().map(|h| h.time_ps()).max().unwrap_or(0)
    }

    pub fn output(&self, stop: StopReason) -> RunOutput {
        let sim_ticks = self.sim_ticks();
        let all_exited = self.harts.iter().all(|h| h.exited());
        let exit_code = self.group_exit.or(if all_exited { self.harts[0].exit_code } else { None });
        RunOutput {
            stop,
            exit_code,
            stdout: self.stdout.clone(),
            stderr: self.stderr.clone(),
            harts: self.harts.iter().map(|h| HartSummary { insts: h.cnt.insts, exit_code: h.exit_code }).collect(),
            sim_ticks,
            stats: self.stats(sim_ticks),
            stat_dumps: self.stat_dumps.clone(),
        }
    }
}

/// Run the configured workload functionally.
pub fn run(system: &System) -> SimResult<RunOutput> {
    run_config(&EngineConfig::from_system(system), &mut NoHook)
}

/// Run the configured workload, telling `hook` about every instruction (a timing model).
pub fn run_with_hook<H: ExecHook>(system: &System, hook: &mut H) -> SimResult<RunOutput> {
    run_config(&EngineConfig::from_system(system), hook)
}

pub fn run_config<H: ExecHook>(system: &EngineConfig, hook: &mut H) -> SimResult<RunOutput> {
    let image = elf::load(&system.binary).map_err(SimError::Elf)?;
    let mut machine = Machine::new(system, &image)?;
    let mut tracer = if system.trace_file.is_empty() {
        None
    } else {
        let f = File::create(&system.trace_file)
            .map_err(|e| config(format!("cannot create trace_file {}: {e}", system.trace_file)))?;
        Some(Tracer::new(Box::new(BufWriter::with_capacity(1 << 20, f))))
    };
    let result = machine.run(hook, tracer.as_mut());
    if let Some(t) = tracer.as_mut() {
        if t.error.is_none() {
            if let Err(e) = t.out.flush() {
                t.error = Some(e);
            }
        }
        if let Some(e) = &t.error {
            return Err(config(format!("writing trace_file {}: {e}", system.trace_file)));
        }
    }
    let stop = result?;
    Ok(machine.output(stop))
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::error::FaultKind;
    use crate::isa::asm::*;

    /// Where `tiny_elf` puts the first instruction.
    pub const ENTRY: u64 = 0x10078;

    pub fn machine_with(code: &[u8], cfg: &EngineConfig) -> Machine {
        let image = elf::parse(&elf::tiny_elf(0x10000, code)).unwrap();
        Machine::new(cfg, &image).unwrap()
    }

    /// Run straight-line 32-bit code for exactly its length, with some registers preset.
    pub fn run_words(words: &[u32], init: &[(usize, u64)]) -> Machine {
        run_words_n(words, init, words.len() as u64)
    }

    /// Run 32-bit code for `n` instructions, with some registers preset.
    pub fn run_words_n(words: &[u32], init: &[(usize, u64)], n: u64) -> Machine {
        let mut cfg = EngineConfig::with_binary("/test/prog");
        cfg.max_insts = n;
        let mut m = machine_with(&bytes(words), &cfg);
        for &(r, v) in init {
            m.harts[0].x[r] = v;
        }
        assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::MaxInsts);
        m
    }

    #[test]
    fn initial_stack_follows_linux_abi() {
        let mut cfg = EngineConfig::with_binary("/bin/prog");
        cfg.argv = vec!["-x".into(), "7".into()];
        cfg.env = vec!["A=1".into()];
        cfg.harts = 2;
        let mut m = machine_with(&bytes(&[nop()]), &cfg);
        for hid in 0..2 {
            let sp = m.harts[hid].x[2];
            assert_eq!(sp % 16, 0);
            let top = abi::stack_top(hid as u64, 1 << 20);
            assert!(sp < top && sp > top - 4096);
            let word = |m: &mut Machine, a: u64| m.mem.load::<8>(a).unwrap();
            let cstr = |m: &mut Machine, a: u64| {
                let mut s = String::new();
                for k in a.. {
                    match m.mem.load::<1>(k).unwrap() {
                        0 => break,
                        c => s.push(c as u8 as char),
                    }
                }
                s
            };
            assert_eq!(word(&mut m, sp), 3);
            let argv: Vec<String> = (0..3)
                .map(|i| {
                    let a = word(&mut m, sp + 8 + 8 * i);
                    cstr(&mut m, a)
                })
                .collect();
            assert_eq!(argv, ["/bin/prog", "-x", "7"]);
            assert_eq!(word(&mut m, sp + 32), 0);
            let env0 = word(&mut m, sp + 40);
            assert_eq!(cstr(&mut m, env0), "A=1");
            assert_eq!(word(&mut m, sp + 48), 0);
            let mut aux = std::collections::HashMap::new();
            let mut a = sp + 56;
            loop {
                let (k, v) = (word(&mut m, a), word(&mut m, a + 8));
                if k == 0 {
                    break;
                }
                aux.insert(k, v);
                a += 16;
            }
            assert_eq!(aux[&auxv::AT_PAGESZ], 4096);
            assert_eq!(aux[&auxv::AT_ENTRY], ENTRY);
            assert_eq!(aux[&auxv::AT_PHDR], 0x10040);
            assert_eq!(aux[&auxv::AT_PHNUM], 1);
            assert!(aux.contains_key(&auxv::AT_RANDOM));
            assert_eq!(m.harts[hid].pc, ENTRY);
            assert!(m.harts[hid].x.iter().enumerate().all(|(i, &v)| i == 2 || v == 0));
        }
    }

    #[test]
    fn oversized_argv_is_a_config_error() {
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.stack_size = 8192;
        cfg.argv = vec!["x".repeat(5000)];
        let image = elf::parse(&elf::tiny_elf(0x10000, &bytes(&[nop()]))).unwrap();
        assert!(matches!(Machine::new(&cfg, &image), Err(SimError::Config(m)) if m.contains("do not fit")));
    }

    #[test]
    fn hello_world_end_to_end() {
        // auipc a1, 0; addi a1, a1, 40; li a0, 1; li a2, 6; li a7, 64; ecall; li a0, 7; c.li a7, 29 ... exit(7)
        let mut words = vec![0x0000_0597, addi(11, 11, 40), li(10, 1), li(12, 6), li(17, 64), ecall(), li(10, 7)];
        let mut code = bytes(&words);
        code.extend_from_slice(&0x48f5u16.to_le_bytes()); // c.li a7, 29
        code.extend_from_slice(&0x08c1u16.to_le_bytes()); // c.addi a7, 16  -> 45
        words = vec![addi(17, 17, 48), ecall()]; // 93 = exit
        code.extend(bytes(&words));
        assert_eq!(code.len(), 40);
        code.extend_from_slice(b"hello\n");
        let cfg = EngineConfig::with_binary("/test/prog");
        let mut m = machine_with(&code, &cfg);
        assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::Exit);
        let out = m.output(StopReason::Exit);
        assert_eq!(out.stdout, b"hello\n");
        assert_eq!(out.exit_code, Some(7));
        assert_eq!(out.harts[0].insts, 11);
        assert_eq!(out.sim_ticks, 11 * 400);
        let stat = |n: &str| out.stats.iter().find(|s| s.name == n).unwrap().value;
        assert_eq!(stat("system.hart0.insts"), 11.0);
        assert_eq!(stat("system.hart0.syscalls"), 2.0);
        assert_eq!(stat("system.hart0.loads"), 0.0);
    }

    #[test]
    fn unknown_calls_stop_the_run() {
        for (nr, expect) in
            [(0x4b5600f0u32, "unsupported simulator call 0x4b5600f0"), (0x123, "unsupported system call 291")]
        {
            let code = vec![lui(17, nr >> 12), addi(17, 17, (nr & 0xfff) as i32), ecall()];
            let mut m = machine_with(&bytes(&code), &EngineConfig::with_binary("/t"));
            match m.run(&mut NoHook, None).unwrap_err() {
                SimError::Guest { kind, hart, pc, reason, .. } => {
                    assert_eq!(kind, FaultKind::UnsupportedSyscall);
                    assert_eq!(hart, 0);
                    assert_eq!(pc, ENTRY + 8);
                    assert_eq!(reason, expect);
                }
                e => panic!("{e:?}"),
            }
        }
    }

    fn fault_of(words: &[u32], cfg: &EngineConfig) -> (FaultKind, u64, u32, String) {
        let mut m = machine_with(&bytes(words), cfg);
        match m.run(&mut NoHook, None).unwrap_err() {
            SimError::Guest { kind, pc, insn, reason, .. } => (kind, pc, insn, reason),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn guest_faults_are_reported() {
        let cfg = EngineConfig::with_binary("/t");
        // load from an unmapped address
        let (k, pc, insn, why) = fault_of(&[lui(5, 0x50), i(0, 5, 3, 6, 0x03)], &cfg);
        assert_eq!((k, pc, insn), (FaultKind::Memory, ENTRY + 4, i(0, 5, 3, 6, 0x03)));
        assert_eq!(why, "load from unmapped address 0x50000");
        // misaligned store
        let (k, _, _, why) = fault_of(&[addi(5, 2, -3), s(0, 0, 5, 3)], &cfg);
        assert_eq!(k, FaultKind::Memory);
        assert!(why.starts_with("store of 8 bytes at 0x3ffffeff") && why.ends_with("is misaligned"), "{why}");
        // ... which 'allow' performs
        let mut allow = cfg.clone();
        allow.misaligned = kvsim_params::SystemMisaligned::Allow;
        allow.max_insts = 2;
        let mut m = machine_with(&bytes(&[addi(5, 2, -3), s(0, 2, 5, 3)]), &allow);
        assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::MaxInsts);
        // the stack guard is unmapped
        let (k, _, _, why) = fault_of(&[lui(5, 0x100), r(0x20, 5, 2, 0, 5, 0x33), s(-8, 0, 5, 3)], &cfg);
        assert_eq!(k, FaultKind::Memory);
        assert!(why.starts_with("store to unmapped address 0x3fffee"), "{why}");
        // illegal and floating-point instructions, ebreak, unsupported CSRs
        let (k, pc, insn, why) = fault_of(&[nop(), 0xffff_ffff], &cfg);
        assert_eq!((k, pc, insn), (FaultKind::IllegalInstruction, ENTRY + 4, 0xffff_ffff));
        assert_eq!(why, "illegal instruction: not an RV64GC instruction");
        assert!(fault_of(&[0x02c5d553], &cfg).3.contains("rounding mode")); // fadd.d with the reserved rm 5
        assert!(fault_of(&[0x00100073], &cfg).3.contains("ebreak"));
        assert!(fault_of(&[0x300026f3], &cfg).3.contains("CSR 0x300"));
        // jumping into unmapped memory faults on the fetch
        let (k, pc, insn, why) = fault_of(&[lui(5, 0x900), i(0, 5, 0, 0, 0x67)], &cfg);
        assert_eq!((k, pc, insn), (FaultKind::Memory, 0x900000, 0));
        assert_eq!(why, "instruction fetch from unmapped address 0x900000");
    }

    #[test]
    fn memory_limit_is_a_guest_fault() {
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.mem_limit = 3 * 4096; // ELF page + stack page + one more
        let words = [
            lui(5, 0x1),
            r(0x20, 5, 2, 0, 5, 0x33),
            s(0, 0, 5, 3),
            lui(6, 0x2),
            r(0x20, 6, 2, 0, 6, 0x33),
            s(0, 0, 6, 3),
        ];
        let (k, pc, insn, why) = fault_of(&words, &cfg);
        assert_eq!((k, pc, insn), (FaultKind::MemoryLimit, ENTRY + 20, s(0, 0, 6, 3)));
        assert!(why.contains("would exceed mem_limit of 12288 bytes"), "{why}");
    }

    /// Both harts: a0 = HART_ID; a1 = shared word; hart 0 does LR, waits, SC and exits with SC's result;
    /// hart 1 stores to a1 + `offset` (quantum 1: right after hart 0's LR) and exits.
    fn lr_sc_program(offset: i32) -> Vec<u32> {
        vec![
            lui(17, 0x4b560),  // 0  a7 = HART_ID
            ecall(),           // 4
            lui(11, 0x11),     // 8  a1 = 0x11000 (inside the ELF segment's bss)
            bne(10, 0, 28),    // 12 hart 1 -> 40
            lr_w(5, 11),       // 16
            nop(),             // 20
            nop(),             // 24
            sc_w(10, 6, 11),   // 28 a0 = 0 on success
            li(17, 93),        // 32
            ecall(),           // 36
            sw(0, 11, offset), // 40
            li(10, 0),         // 44
            li(17, 93),        // 48
            ecall(),           // 52
        ]
    }

    fn lr_sc_result(harts: u64, offset: i32) -> Option<i64> {
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.harts = harts;
        cfg.quantum = 1;
        let mut m = machine_with(&bytes(&lr_sc_program(offset)), &cfg);
        assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::Exit);
        m.harts[0].exit_code
    }

    #[test]
    fn sc_fails_after_another_harts_store() {
        assert_eq!(lr_sc_result(1, 0), Some(0), "alone, the SC succeeds");
        assert_eq!(lr_sc_result(2, 0), Some(1), "hart 1's store to the reserved word breaks the reservation");
        assert_eq!(lr_sc_result(2, 4), Some(1), "same 8-byte granule");
        assert_eq!(lr_sc_result(2, 8), Some(0), "a store to another granule does not");
    }

    #[test]
    fn limits_stop_the_run() {
        // An endless loop: j .
        let code = bytes(&[0x0000_006f]);
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.harts = 3;
        cfg.quantum = 7;
        cfg.max_insts = 100;
        let mut m = machine_with(&code, &cfg);
        assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::MaxInsts);
        assert_eq!(m.total_insts(), 100);
        let insts: Vec<u64> = m.harts.iter().map(|h| h.cnt.insts).collect();
        assert_eq!(insts, [35, 35, 30]);
        let mut cfg = EngineConfig::with_binary("/t");
        cfg.max_time = 1_000_000; // 1 us at 2.5 GHz = 2500 instructions
        cfg.harts = 2;
        let mut m = machine_with(&code, &cfg);
        assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::MaxTime);
        assert!(m.harts.iter().all(|h| h.cnt.insts == 2500));
        assert_eq!(m.output(StopReason::MaxTime).sim_ticks, 1_000_000);
    }

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
            assert_eq!(f.len(), 32);
            assert!(f
                .iter()
                .all(|x| x.len() == 16 && x.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())));
        }
        assert!(lines[0].starts_with("0000000000010078 0000000000000000 0000003ffff"));
        assert!(lines[1].starts_with("000000000001007c "));
        assert_eq!(lines[1].split(' ').nth(5).unwrap(), "ffffffffffffffff"); // x5 after li t0, -1
        std::fs::remove_file(&path).ok();
        std::fs::remove_file(&prog).ok();
    }

    #[test]
    fn random_programs_never_panic() {
        let mut seed = 12345u64;
        let mut faults = 0;
        for round in 0..300 {
            let words: Vec<u32> = (0..64).map(|_| crate::syscall::splitmix64(&mut seed) as u32).collect();
            let mut cfg = EngineConfig::with_binary("/t");
            cfg.max_insts = 2000;
            cfg.harts = 1 + round % 2;
            cfg.quantum = 3;
            use kvsim_params::SystemMisaligned::{Allow, Fault};
            cfg.misaligned = if round % 3 == 0 { Allow } else { Fault };
            let mut m = machine_with(&bytes(&words), &cfg);
            for hart in &mut m.harts {
                for r in 1..32 {
                    let v = crate::syscall::splitmix64(&mut seed);
                    // Some registers point into mapped memory so loads and stores get exercised.
                    hart.x[r] = if r % 3 == 0 {
                        0x10000 + (v & 0x1fff)
                    } else if r == 2 {
                        hart.x[2]
                    } else {
                        v
                    };
                }
            }
            match m.run(&mut NoHook, None) {
                Ok(_) => {}
                Err(SimError::Guest { reason, .. }) => {
                    assert!(!reason.is_empty());
                    faults += 1;
                }
                Err(e) => panic!("{e:?}"),
            }
        }
        assert!(faults > 100);
    }

    #[test]
    fn every_16_bit_word_decodes_without_panicking() {
        for w in 0..=0xffffu32 {
            let d = crate::isa::decode::decode(w);
            if w & 3 != 3 {
                assert_eq!(d.len, 2);
            }
        }
    }

    #[test]
    fn random_syscall_arguments_never_panic() {
        let nrs = [
            64u64,
            66,
            93,
            94,
            96,
            99,
            113,
            160,
            214,
            215,
            222,
            226,
            261,
            278,
            78,
            293,
            0x4b56_0000,
            0x4b56_0001,
            0x4b56_0002,
            0x4b56_0003,
            0x4b56_0004,
            0x4b56_0005,
            0x4b56_0006,
            0x4b56_0007,
        ];
        let mut seed = 777u64;
        let mut rnd = move || crate::syscall::splitmix64(&mut seed);
        for round in 0..3000 {
            let mut cfg = EngineConfig::with_binary("/t");
            cfg.max_insts = 8;
            cfg.mem_limit = 1 << 22;
            let mut m = machine_with(&bytes(&[ecall()]), &cfg);
            let h = &mut m.harts[0];
            h.x[17] = nrs[round % nrs.len()];
            for r in 10..16 {
                let v = rnd();
                h.x[r] = match v % 4 {
                    0 => v >> (v % 64),
                    1 => 0x10000 + (v & 0x1fff),
                    2 => v & 0xff,
                    _ => h.x[2].wrapping_sub(v & 0xfff),
                };
            }
            match m.run(&mut NoHook, None) {
                Ok(_) | Err(SimError::Guest { .. }) => {}
                Err(e) => panic!("{e:?}"),
            }
        }
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

    #[test]
    fn simulator_calls() {
        let words = [
            lui(17, 0x4b560),
            addi(17, 17, 1), // NUM_HARTS
            ecall(),
            addi(9, 10, 0),
            addi(17, 17, 1), // ROI_BEGIN at 6 instructions
            ecall(),
            nop(),
            nop(),
            nop(),
            addi(17, 17, 1), // ROI_END at 11
            ecall(),
            addi(17, 17, 3), // STATS_DUMP
            ecall(),
            addi(17, 17, -1), // ALLOC_LOCAL(100, 64 KiB)
            li(10, 100),
            lui(11, 0x10),
            ecall(),
            addi(18, 10, 0),
            sw(9, 18, 96), // the memory is usable
            li(17, 93),
            ecall(),
        ];
        let mut m = machine_with(&bytes(&words), &EngineConfig::with_binary("/t"));
        assert_eq!(m.run(&mut NoHook, None).unwrap(), StopReason::Exit);
        let h = &m.harts[0];
        assert_eq!(h.x[9], 1);
        assert!(h.x[18] != 0 && h.x[18].is_multiple_of(0x10000) && h.x[18] < MMAP_TOP, "{:#x}", h.x[18]);
        let out = m.output(StopReason::Exit);
        let stat = |n: &str| out.stats.iter().find(|s| s.name == n).unwrap().value;
        assert_eq!(stat("system.roi.begin_insts"), 6.0);
        assert_eq!(stat("system.roi.end_insts"), 11.0);
        assert_eq!(stat("system.roi.insts"), 5.0);
        assert_eq!(stat("system.hart0.insts"), 21.0 - 6.0, "ROI_BEGIN resets the stats");
        assert_eq!(stat("system.hart0.simcalls"), 3.0);
        assert_eq!(out.harts[0].insts, 21);
        assert_eq!(out.stat_dumps.len(), 1);
        let (ticks, snap) = &out.stat_dumps[0];
        assert_eq!(*ticks, 13 * 400);
        assert_eq!(snap.iter().find(|s| s.name == "system.hart0.insts").unwrap().value, 7.0);
        let names: Vec<&str> = out.stats.iter().map(|s| s.name.as_str()).collect();
        let mut sorted = names.clone();
        sorted.dedup();
        assert_eq!(names.len(), sorted.len());
    }
}
