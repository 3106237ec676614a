//! FS mode from a configuration (System.os_level = 'fs'): build the os crate's full-system machine from
//! System.full_system, run it functionally or with the timing models (System.mode), and report the run as SE
//! mode's runs are reported: the console as the guest's stdout, the harts' counters, the statistics split by
//! privilege level, and in detailed mode the timing models' own.
//!
//! A guest that resets (a Linux kernel that panics reboots with the default `panic=-1`) or that the machine cannot
//! go on with is an error that quotes the console's last lines, so the kernel's own reason is in the message.

use kvsim_base::error::{SimError, SimResult};
use kvsim_base::output::{HartSummary, RunOutput, Stat, StopReason};
use kvsim_isa::exec::{ExecHook, NoHook};
use kvsim_os::full_system::{Boot, End, FsConfig, Machine, LEVELS};
use kvsim_params::{paths, FullSystemEntry, System, SystemMode};

use crate::driver::{timing_system, Progress, TimingHook};

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
    };
    let mut m = Machine::new(cfg, boot)
        .map_err(|e| (SimError::Config(format!("System.full_system.kernel {:?}: {e}", fs.kernel)), None))?;
    let max_insts = if system.max_insts == 0 { u64::MAX } else { system.max_insts };
    let result = match system.mode {
        SystemMode::Functional => {
            drive(&mut m, &mut NoHook, max_insts, every, progress, "functional").map(|e| (e, None))
        }
        SystemMode::Detailed => {
            let mut hook = TimingHook::new(system, 0, timing_system(system).map_err(|e| (e, None))?, 0);
            hook.sys.reset_stats();
            for h in &mut m.harts {
                h.timed_ps = Some(0);
            }
            drive(&mut m, &mut hook, max_insts, every, progress, "detailed").map(|e| (e, Some(hook)))
        }
    };
    let (end, hook) = match result {
        Ok(r) => r,
        Err(e) => {
            let out = output(&mut m, StopReason::Exit, None);
            return Err((e, Some(out)));
        }
    };
    let stop = match end {
        End::PowerOff { .. } => StopReason::Exit,
        End::InstLimit => StopReason::MaxInsts,
        End::Reset => {
            let why = format!(
                "the guest reset the machine after {} instructions (a Linux kernel reboots so on a panic, with \
                 panic=-1 on its command line); the console's last lines:\n{}",
                m.total_insts(),
                last_lines(&m.console())
            );
            let out = output(&mut m, StopReason::Exit, None);
            return Err((guest_error(&m, why), Some(out)));
        }
    };
    let mut out = output(&mut m, stop, hook);
    if let End::PowerOff { code } = end {
        out.exit_code = Some(code as i64);
    }
    Ok(out)
}

/// Run `m` with `hook` to its end, reporting progress every `every` instructions.
fn drive<H: ExecHook>(
    m: &mut Machine,
    hook: &mut H,
    max_insts: u64,
    every: u64,
    progress: &mut dyn FnMut(&Progress) -> SimResult<()>,
    phase: &'static str,
) -> SimResult<End> {
    loop {
        let limit = m.total_insts().saturating_add(every.max(1)).min(max_insts);
        let end = m.run_hooked(limit, hook).map_err(|e| {
            let why = format!("{e}; the console's last lines:\n{}", last_lines(&m.console()));
            guest_error(m, why)
        })?;
        progress(&Progress { insts: m.total_insts(), sim_ticks: m.time_ps(), phase, answered: None })?;
        match end {
            End::InstLimit if limit < max_insts => continue,
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

fn output(m: &mut Machine, stop: StopReason, hook: Option<TimingHook>) -> RunOutput {
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
    if let Some(mut hook) = hook {
        hook.sys.finish();
        let mut timing = Vec::new();
        hook.append_stats(&mut timing);
        stats.extend(timing);
        stats.push(Stat {
            name: paths::timing() + "start_ticks",
            value: 0.0,
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
