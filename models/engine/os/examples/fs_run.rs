//! Run a full-system machine from the command line (until the engine's run driver takes FS mode):
//!
//!   fs_run --kernel Image [--initramfs FILE] | --bare-m ELF | --bare-s ELF
//!          [--harts N] [--mem-mib M] [--max-insts N] [--bootargs "..."] [--dtb-out FILE]
//!
//! The console (UART) goes to stdout as the guest writes it; a summary (how it ended, instructions, simulated
//! time, host time) to stderr.

use kvsim_os::full_system::{Boot, FsConfig, Machine};

fn main() {
    if let Err(e) = run() {
        eprintln!("fs_run: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cfg = FsConfig::default();
    let (mut kernel, mut initramfs, mut bare_m, mut bare_s, mut dtb_out) = (None, None, None, None, None);
    let mut max_insts = u64::MAX;
    let mut i = 0;
    while i < args.len() {
        let val = || args.get(i + 1).cloned().ok_or(format!("{} needs a value", args[i]));
        let num = |v: String| v.parse::<u64>().map_err(|e| format!("{}: {e}", args[i]));
        match args[i].as_str() {
            "--kernel" => kernel = Some(val()?),
            "--initramfs" => initramfs = Some(val()?),
            "--bare-m" => bare_m = Some(val()?),
            "--bare-s" => bare_s = Some(val()?),
            "--dtb-out" => dtb_out = Some(val()?),
            "--harts" => cfg.harts = num(val()?)? as usize,
            "--mem-mib" => cfg.dram_bytes = num(val()?)? << 20,
            "--max-insts" => max_insts = num(val()?)?,
            "--bootargs" => cfg.bootargs = val()?,
            other => return Err(format!("unknown argument {other}")),
        }
        i += 2;
    }
    let read = |p: &str| std::fs::read(p).map_err(|e| format!("{p}: {e}"));
    let files: Vec<Vec<u8>> = [&kernel, &initramfs, &bare_m, &bare_s]
        .iter()
        .map(|p| p.as_deref().map(read).transpose().map(|v| v.unwrap_or_default()))
        .collect::<Result<_, _>>()?;
    let boot = if kernel.is_some() {
        Boot::Linux { kernel: &files[0], initramfs: initramfs.as_ref().map(|_| &files[1][..]) }
    } else if bare_m.is_some() {
        Boot::BareMachine { elf: &files[2] }
    } else if bare_s.is_some() {
        Boot::BareSupervisor { elf: &files[3] }
    } else {
        return Err("say what to boot: --kernel, --bare-m or --bare-s".into());
    };
    let start = std::time::Instant::now();
    let cpu_start = cpu_seconds();
    let mut m = Machine::new(cfg, boot)?;
    if let Some(p) = dtb_out {
        std::fs::write(&p, &m.dtb).map_err(|e| format!("{p}: {e}"))?;
    }
    let mut shown = 0;
    let chunk = 20_000_000;
    let result = loop {
        let limit = m.total_insts().saturating_add(chunk).min(max_insts);
        let r = m.run(limit);
        let out = m.platform().uart.output.clone();
        use std::io::Write;
        std::io::stdout().write_all(&out[shown..]).ok();
        std::io::stdout().flush().ok();
        shown = out.len();
        match r {
            Ok(kvsim_os::full_system::End::InstLimit) if limit < max_insts => continue,
            r => break r,
        }
    };
    let host = start.elapsed().as_secs_f64();
    let insts = m.total_insts();
    eprintln!(
        "fs_run: {} after {insts} instructions, {:.6} s simulated, {host:.2} s host ({:.2} s CPU, {:.1} MIPS), \
         {} SBI calls, {} system instructions, translation {:?}",
        match &result {
            Ok(end) => format!("{end:?}"),
            Err(e) => format!("error: {e}"),
        },
        m.time_ps() as f64 * 1e-12,
        cpu_seconds() - cpu_start,
        insts as f64 / host / 1e6,
        m.sbi_calls,
        m.system_insts,
        m.mem.xlate_stats(),
    );
    if let Some(net) = m.platform().net.as_ref() {
        eprintln!(
            "fs_run: virtio-net: status {:#x}, features {:#x}, rx ready {} posted {}, {:?}",
            net.status,
            net.driver_features,
            net.queues[0].ready,
            net.rx_posted(),
            net.counts
        );
    }
    for (h, p) in m.prv.iter().enumerate() {
        eprintln!(
            "fs_run: hart {h}: pc {:#x}, {} mode, traps to S {}, to M {}, interrupts {}",
            m.harts[h].pc,
            kvsim_os::full_system::privilege_name(p.prv),
            p.traps_to_s,
            p.traps_to_m,
            p.interrupts
        );
    }
    result.map(|_| ())
}

/// CPU time of this process (user + system), seconds.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let f: Vec<&str> = s.rsplit(')').next()?.split_whitespace().collect();
            Some((f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?) / 100.0)
        })
        .unwrap_or(0.0)
}
