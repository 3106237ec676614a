//! FS mode from a configuration (System.os_level = 'fs'): build the os crate's full-system machine from
//! System.full_system, run it functionally or with the timing models (System.mode), and report the run as SE
//! mode's runs are reported: the console as the guest's stdout, the harts' counters, the statistics split by
//! privilege level, and in detailed mode the timing models' own.
//!
//! With System.client.enabled the ghost client talks to the guest's virtio-net device over a wire (`fs_net`): the
//! run ends when every measured request has been answered and checked. A guest that never brings its network
//! device up within FullSystem.net_up_within, or that powers off first, is an error quoting the console.
//!
//! A guest that resets (a Linux kernel that panics reboots with the default `panic=-1`) or that the machine cannot
//! go on with is an error that quotes the console's last lines, so the kernel's own reason is in the message.

use kvsim_base::error::{SimError, SimResult};
use kvsim_base::output::{HartSummary, RunOutput, Stat, StopReason};
use kvsim_isa::exec::{ExecHook, NoHook};
use kvsim_os::full_system::{Boot, End, FsConfig, Machine, LEVELS};
use kvsim_params::{paths, FullSystemEntry, System, SystemMode};

use crate::driver::{timing_system, Progress, TimingHook};
use crate::fs_checkpoint;
use crate::fs_net::FsNet;
use crate::fs_profile::Profiler;

/// Console lines an error quotes.
const LAST_LINES: usize = 12;

/// Run `system` (os_level = 'fs') to its end, calling `progress` about every `every` instructions. A failure after
/// the machine was built also returns what the run had so far.
#[allow(clippy::result_large_err)] // once per run, at its end (as driver::run_system_keeping_output)
pub fn run(
    system: &System,
    every: u64,
    progress: &mut dyn FnMut(&Progress) -> SimResult<()>,
) -> Result<RunOutput, (SimError, Option<RunOutput>)> {
    let fs = &system.full_system;
    let read = |what: &str, path: &str| {
        std::fs::read(path).map_err(|e| {
            let hint = if path.contains("workloads/fs/build") { " (make fs-image builds it)" } else { "" };
            (SimError::Config(format!("System.full_system.{what} = {path:?}: {e}{hint}")), None)
        })
    };
    let kernel = read("kernel", &fs.kernel)?;
    let initramfs = if fs.initramfs.is_empty() { None } else { Some(read("initramfs", &fs.initramfs)?) };
    let boot = match fs.entry {
        FullSystemEntry::Linux => Boot::Linux { kernel: &kernel, initramfs: initramfs.as_deref() },
        FullSystemEntry::Machine => Boot::BareMachine { elf: &kernel },
        FullSystemEntry::Supervisor => Boot::BareSupervisor { elf: &kernel },
    };
    let cfg = FsConfig {
        harts: system.harts as usize,
        clock_hz: system.clock,
        dram_bytes: fs.memory,
        quantum: fs.quantum,
        bootargs: fs.bootargs.clone(),
        net_mac: Some(kvsim_os::full_system::SERVER_MAC),
    };
    let mut m = Machine::new(cfg, boot)
        .map_err(|e| (SimError::Config(format!("System.full_system.kernel {:?}: {e}", fs.kernel)), None))?;
    let mut net = match system.client.enabled {
        true => {
            let argv = server_argv(&fs.bootargs);
            Some(FsNet::new(system, &argv).map_err(|e| (SimError::Config(format!("System.client: {e}")), None))?)
        }
        false => None,
    };
    m.stop_on_tx = net.is_some();
    let config = serde_json::to_value(system).map_err(|e| (SimError::Bug(format!("the configuration: {e}")), None))?;
    if !system.restore_from.is_empty() {
        let dir = std::path::Path::new(&system.restore_from);
        fs_checkpoint::restore(&mut m, net.as_mut(), &config, &fs.kernel, &fs.initramfs, dir)
            .map_err(|e| (SimError::Config(e), None))?;
    }
    let checkpoint = (!system.checkpoint_to.is_empty()).then(|| fs_checkpoint::Target {
        dir: system.checkpoint_to.clone().into(),
        config,
        kernel: fs.kernel.clone(),
        initramfs: fs.initramfs.clone(),
    });
    let max_insts = if system.max_insts == 0 { u64::MAX } else { system.max_insts };
    let mut run = Run { net: net.as_mut(), up_within: fs.net_up_within, max_insts, every, checkpoint, written: None };
    // Detailed timing starts where the machine is: at boot, or at a restored checkpoint's time.
    let timing_start = m.time_ps();
    let profile = &fs.profile;
    let harts = m.harts.len();
    let result = match (system.mode, profile.is_empty()) {
        (SystemMode::Functional, true) => {
            drive(&mut m, &mut NoHook, &mut run, progress, "functional").map(|e| (e, None))
        }
        (SystemMode::Functional, false) => {
            let mut hook = Profiler::new(NoHook, harts);
            let end = drive(&mut m, &mut hook, &mut run, progress, "functional");
            end.and_then(|e| write_profile(&hook, profile).map(|_| (e, None)))
        }
        (SystemMode::Detailed, no_profile) => {
            let ts = timing_system(system).map_err(|e| (e, None))?;
            let mut hook = TimingHook::new(system, 0, ts, timing_start);
            hook.sys.reset_stats();
            m.start_timing_at(timing_start);
            if no_profile {
                drive(&mut m, &mut hook, &mut run, progress, "detailed").map(|e| (e, Some(hook)))
            } else {
                let mut hook = Profiler::new(hook, harts);
                let end = drive(&mut m, &mut hook, &mut run, progress, "detailed");
                end.and_then(|e| write_profile(&hook, profile).map(|_| (e, Some(hook.inner))))
            }
        }
    };
    let written = run.written;
    let (end, hook) = match result {
        Ok(r) => r,
        Err(e) => {
            let out = output(&mut m, StopReason::Exit, None, net.as_ref());
            return Err((e, Some(out)));
        }
    };
    let stop = match end {
        End::PowerOff { .. } => StopReason::Exit,
        End::InstLimit => StopReason::MaxInsts,
        // The client answered every measured request (the server runs on).
        End::Transmitted => StopReason::ClientDone,
        End::Reset => {
            let why = format!(
                "the guest reset the machine after {} instructions (a Linux kernel reboots so on a panic, with \
                 panic=-1 on its command line); the console's last lines:\n{}",
                m.total_insts(),
                last_lines(&m.console())
            );
            let out = output(&mut m, StopReason::Exit, None, net.as_ref());
            return Err((guest_error(&m, why), Some(out)));
        }
    };
    let mut out = output(&mut m, stop, hook.map(|h| (h, timing_start)), net.as_ref());
    if let Some(bytes) = written {
        out.stats.push(Stat {
            name: paths::checkpoint() + "bytes",
            value: bytes as f64,
            desc: "bytes of the checkpoint this run wrote (System.checkpoint_to)".into(),
        });
    }
    if let End::PowerOff { code } = end {
        out.exit_code = Some(code as i64);
    }
    Ok(out)
}

fn write_profile<H: ExecHook>(p: &Profiler<H>, path: &str) -> SimResult<()> {
    if p.totals().0 == 0 {
        return Err(SimError::Config(format!(
            "System.full_system.profile = {path:?}: the measured phase counted no instructions (did the client's \
             measured phase start?)"
        )));
    }
    p.write(path).map_err(|e| SimError::Config(format!("System.full_system.profile = {path:?}: {e}")))
}

/// A hook the run loop tells when the client's measured phase starts (a profile counts from there).
trait PhaseHook: ExecHook {
    fn measure_start(&mut self) {}
}

impl PhaseHook for NoHook {}
impl PhaseHook for TimingHook {}
impl<H: ExecHook> PhaseHook for Profiler<H> {
    fn measure_start(&mut self) {
        self.start();
    }
}

/// The server's arguments on a command line: the words after `-- mcd` (the kernel hands the words after `--` to
/// /init, which serves memcached when the first is `mcd`; models/full_system.py's `server_argv` reads it so too).
pub fn server_argv(bootargs: &str) -> Vec<String> {
    let words: Vec<&str> = bootargs.split_whitespace().collect();
    match words.iter().position(|&w| w == "--") {
        Some(i) if words.get(i + 1) == Some(&"mcd") => words[i + 2..].iter().map(|w| w.to_string()).collect(),
        _ => Vec::new(),
    }
}

/// What a run is driven by besides the machine: the client (if any) and the limits.
struct Run<'a> {
    net: Option<&'a mut FsNet>,
    up_within: u64,
    max_insts: u64,
    every: u64,
    /// Where to write a checkpoint when the client's bulk load is over, and its bytes once written.
    checkpoint: Option<fs_checkpoint::Target>,
    written: Option<u64>,
}

/// Run `m` with `hook` to its end, reporting progress every `run.every` instructions. With a client the machine
/// stops whenever the guest sends, and at least every quantum of every hart, for the client to take the frames
/// and answer; the run ends (`End::Transmitted`) when the client is done.
fn drive<H: PhaseHook>(
    m: &mut Machine,
    hook: &mut H,
    run: &mut Run,
    progress: &mut dyn FnMut(&Progress) -> SimResult<()>,
    phase: &'static str,
) -> SimResult<End> {
    let fail = |m: &mut Machine, e: String| {
        let why = format!("{e}; the console's last lines:\n{}", last_lines(&m.console()));
        guest_error(m, why)
    };
    let step = match run.net {
        Some(_) => m.cfg.quantum.saturating_mul(m.cfg.harts as u64).max(1),
        None => run.every.max(1),
    };
    let phase_insts = m.total_insts();
    let mut next_report = phase_insts.saturating_add(run.every.max(1));
    loop {
        let limit = m.total_insts().saturating_add(step).min(run.max_insts);
        let end = m.run_hooked(limit, hook).map_err(|e| fail(m, e))?;
        if m.total_insts() >= next_report || !matches!(end, End::InstLimit | End::Transmitted) {
            let report =
                Progress { insts: m.total_insts(), sim_ticks: m.time_ps(), phase, phase_insts, answered: None };
            progress(&report)?;
            next_report = m.total_insts().saturating_add(run.every.max(1));
        }
        if let Some(net) = run.net.as_deref_mut() {
            if let End::PowerOff { .. } | End::Reset = end {
                let why = match net.up_at {
                    None => "the guest never brought its network device up (it powered off or reset first)".into(),
                    Some(_) => format!(
                        "the guest powered off or reset before the client was done (client phase {:?})",
                        net.client.phase
                    ),
                };
                return Err(fail(m, why));
            }
            let event = net.exchange(m).map_err(|e| SimError::Client(format!("FS mode: {e}")))?;
            if event == kvsim_client::ClientEvent::Done {
                return Ok(End::Transmitted);
            }
            if event == kvsim_client::ClientEvent::MeasureStart {
                hook.measure_start();
            }
            if event == kvsim_client::ClientEvent::Loaded {
                if let Some(target) = run.checkpoint.take() {
                    run.written = Some(fs_checkpoint::write(m, Some(net), &target).map_err(SimError::Config)?);
                }
            }
            if net.up_at.is_none() && m.time_ps() > run.up_within {
                let state = m.platform().net.as_ref().map_or(String::new(), |n| {
                    format!(
                        "device status {:#x}, receive queue ready {}, receive buffers posted {}",
                        n.status, n.queues[0].ready, n.queues[0].notified
                    )
                });
                return Err(fail(
                    m,
                    format!(
                        "the guest never brought its network device up: {:.3} ms of simulated time passed \
                         (FullSystem.net_up_within = {:.3} ms) and the virtio-net driver has not posted receive \
                         buffers ({state}); the client waits for them",
                        m.time_ps() as f64 * 1e-9,
                        run.up_within as f64 * 1e-9
                    ),
                ));
            }
        }
        match end {
            End::InstLimit if limit < run.max_insts => continue,
            End::Transmitted => continue,
            end => return Ok(end),
        }
    }
}

/// A guest failure at hart 0's PC (the machine's errors name the hart and PC themselves).
fn guest_error(m: &Machine, reason: String) -> SimError {
    SimError::Guest { kind: kvsim_base::error::FaultKind::Halted, hart: 0, pc: m.harts[0].pc, insn: 0, reason }
}

/// The last `LAST_LINES` lines of the console (or a note that it is empty), after the kernel's panic line when
/// it printed one earlier (its stack dump follows the reason).
pub fn last_lines(console: &str) -> String {
    let lines: Vec<&str> = console.lines().collect();
    if lines.is_empty() {
        return "  (the console is empty)".into();
    }
    let tail = lines.len().saturating_sub(LAST_LINES);
    let mut out = Vec::new();
    if let Some(panic) = lines[..tail].iter().rev().find(|l| l.contains("Kernel panic")) {
        out.push(format!("  | {panic}"));
        out.push("  | ...".to_string());
    }
    out.extend(lines[tail..].iter().map(|l| format!("  | {l}")));
    out.join("\n")
}

fn output(m: &mut Machine, stop: StopReason, hook: Option<(TimingHook, u64)>, net: Option<&FsNet>) -> RunOutput {
    let sim_ticks = m.time_ps();
    let mut stats = Vec::new();
    let mut push =
        |name: String, value: u64, desc: &str| stats.push(Stat { name, value: value as f64, desc: desc.into() });
    let total = m.total_insts();
    for (h, hart) in m.harts.iter().enumerate() {
        for (name, value, desc) in hart.cnt.named() {
            push(paths::hart(h) + name, value, desc);
        }
        push(paths::hart(h) + "sim_ticks", hart.time_ps(), "simulated time of this hart (ps)");
        for (i, (_, level)) in LEVELS.iter().enumerate() {
            let c = m.by_level[h][i];
            let at = paths::hart_level(h, level);
            push(at.clone() + "insts", c.insts, "instructions executed at this privilege level");
            push(at.clone() + "loads", c.loads, "loads executed at this privilege level");
            push(at.clone() + "stores", c.stores, "stores executed at this privilege level");
            push(at + "ticks", c.ps, "simulated time spent at this privilege level (ps), wfi sleep included");
        }
        let p = &m.prv[h];
        let traps = paths::hart_traps(h);
        push(traps.clone() + "to_machine", p.traps_to_m, "traps (exceptions and interrupts) taken in M mode");
        push(traps.clone() + "to_supervisor", p.traps_to_s, "traps (exceptions and interrupts) taken in S mode");
        push(traps + "interrupts", p.interrupts, "interrupts taken");
    }
    push(paths::system() + "insts", total, "instructions executed by all harts");
    push(paths::system() + "sim_ticks", sim_ticks, "simulated time: the latest hart's time (ps)");
    let fs = paths::full_system();
    let console = m.platform().uart.output.clone();
    push(fs.clone() + "console_bytes", console.len() as u64, "bytes the guest wrote to the console");
    push(fs.clone() + "sbi_calls", m.sbi_calls, "firmware (SBI) calls the simulator answered");
    push(fs + "system_insts", m.system_insts, "system instructions the machine finished itself");
    if let Some(n) = m.platform().net.as_ref().map(|n| n.counts) {
        let at = paths::fs_net();
        push(at.clone() + "rx_frames", n.rx_frames, "frames the device wrote into the guest's receive buffers");
        push(at.clone() + "rx_bytes", n.rx_bytes, "bytes of those frames (without the virtio-net header)");
        push(at.clone() + "rx_dropped", n.rx_dropped, "frames dropped while no receive buffer was posted");
        push(at.clone() + "tx_frames", n.tx_frames, "frames the guest sent");
        push(at.clone() + "tx_bytes", n.tx_bytes, "bytes of those frames (without the virtio-net header)");
        push(at.clone() + "notifications", n.notifications, "queue notifications from the driver");
        push(at + "interrupts", n.interrupts, "interrupts the device raised");
    }
    if let Some(net) = net {
        let at = paths::fs_net();
        push(at.clone() + "arp_replies", net.arp_replies, "ARP requests the client's host answered");
        push(at.clone() + "other_frames", net.other_frames, "guest frames neither ARP nor IPv4 to the client");
        push(at + "up_ticks", net.up_at.unwrap_or(0), "when the guest brought its network device up (ps)");
        for (name, value, desc) in net.client.stats() {
            stats.push(Stat { name, value, desc: desc.into() });
        }
        let req = net.client.stats.requests;
        let measured = total - net.measure_start.map_or(0, |(_, insts)| insts);
        stats.push(Stat {
            name: paths::client() + "insts_per_request",
            value: if req > 0 { measured as f64 / req as f64 } else { 0.0 },
            desc: "instructions of all harts (kernel and user) in the measured phase per measured request".into(),
        });
    }
    if let Some((mut hook, start)) = hook {
        hook.sys.finish();
        let mut timing = Vec::new();
        hook.append_stats(&mut timing);
        stats.extend(timing);
        stats.push(Stat {
            name: paths::timing() + "start_ticks",
            value: start as f64,
            desc: "simulated time when detailed timing started (ps)".into(),
        });
    }
    RunOutput {
        stop,
        exit_code: None,
        stdout: console,
        stderr: Vec::new(),
        harts: m.harts.iter().map(|h| HartSummary { insts: h.cnt.insts, exit_code: None }).collect(),
        sim_ticks,
        stats,
        stat_dumps: Vec::new(),
        numa_ranges: Vec::new(),
        scratch_files: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::last_lines;

    #[test]
    fn an_error_quotes_the_consoles_last_lines_after_the_panic_line_it_scrolled_past() {
        let mut console = String::from("Linux version 6.1\nKernel panic - not syncing: No working init found.\n");
        for i in 0..20 {
            console += &format!("[<{i:x}>] frame {i}\n");
        }
        let quoted = last_lines(&console);
        let lines: Vec<&str> = quoted.lines().collect();
        assert_eq!(lines[0], "  | Kernel panic - not syncing: No working init found.");
        assert_eq!(lines[1], "  | ...");
        assert_eq!(lines.len(), 2 + 12, "the panic line, an ellipsis, the last 12 lines");
        assert_eq!(*lines.last().unwrap(), "  | [<13>] frame 19");
        assert_eq!(last_lines(""), "  (the console is empty)");
        assert_eq!(last_lines("a\nb\n"), "  | a\n  | b", "a short console whole, no panic line repeated");
    }
}
