//! Full-system (FS) mode: the harts run a real kernel (or a bare-metal program) in M, S and U mode over physical
//! memory and platform devices, and the simulator plays the firmware (SBI). SE mode (`crate::linux`) is untouched.
//!
//! The machine (`Machine`) owns the harts, their privileged state (`kvsim_isa::privileged`), guest memory in FS
//! mode (`kvsim_isa::memory`'s Sv39 view) and the platform devices (`devices`). Its run loop picks the hart
//! furthest behind in simulated time, brings its interrupt lines up to date, takes a pending interrupt, and runs it
//! with the ordinary executor until the next timer event or the quantum; it then finishes what the executor
//! stopped on: system instructions (CSR accesses, mret/sret, wfi, sfence.vma), ecalls (SBI from S mode, traps from
//! U and M mode) and faults (exceptions with delegation). Functional time is instructions at the hart's clock plus
//! time asleep in wfi, so a timer interrupt is taken at the first instruction boundary at or after its tick.

pub mod devices;
pub mod fdt;
mod sbi;
pub mod snapshot;
pub mod virtio_net;

use std::any::Any;
use std::collections::VecDeque;

use kvsim_isa::exec::{self, ExecHook, NoHook, Stop};
use kvsim_isa::hart::{insts_to_ps, Hart};
use kvsim_isa::memory::Memory;
use kvsim_isa::privileged::{cause, decode_sys, exception_of, irq, Effect, Privileged, SysInst, PRV_M, PRV_S, PRV_U};
use kvsim_isa::trap::Trap;
use kvsim_timing::inst::{InstClass, InstInfo};

use devices::{map, Platform, PowerRequest};
use virtio_net::VirtioNet;

/// How a machine is configured.
#[derive(Debug, Clone)]
pub struct FsConfig {
    pub harts: usize,
    /// Clock of every hart (Hz): functional time is one instruction per cycle.
    pub clock_hz: u64,
    pub dram_bytes: u64,
    /// Most instructions a hart runs before the scheduler looks at the others (assumed 10,000: short against a
    /// timer tick of 100 ns * 10^4, long against the cost of a switch).
    pub quantum: u64,
    /// The kernel's command line (the device tree's /chosen/bootargs).
    pub bootargs: String,
    /// The network device's MAC address (None: the machine has no network device).
    pub net_mac: Option<[u8; 6]>,
}

/// The MAC address of the machine's network device: the one the ghost client sends its frames to (the client's
/// wire format, kvsim_client's wire.rs).
pub const SERVER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];

impl Default for FsConfig {
    fn default() -> Self {
        FsConfig {
            harts: 1,
            clock_hz: 1_000_000_000,
            dram_bytes: 256 << 20,
            quantum: 10_000,
            bootargs: "earlycon console=ttyS0 panic=-1 initramfs_async=0".into(),
            net_mac: Some(SERVER_MAC),
        }
    }
}

/// A hart's run state (HSM).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum HartRun {
    Running,
    /// In wfi (or an SBI retentive suspend): wakes when an enabled interrupt is pending.
    Asleep,
    /// Not started (HSM), or stopped by hart_stop.
    Stopped,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    PowerOff {
        code: u32,
    },
    Reset,
    /// The instruction limit of the run was reached.
    InstLimit,
    /// The network device sent frames (`Machine::net_out`) and the machine was asked to stop for them
    /// (`Machine::stop_on_tx`).
    Transmitted,
}

/// Where execution starts.
pub enum Boot<'a> {
    /// A RISC-V Linux kernel Image (riscv64 boot image header) and an optional initramfs: hart 0 enters the
    /// kernel in S mode with a0 = 0 and a1 = the device tree's address; the other harts wait for HSM hart_start.
    Linux { kernel: &'a [u8], initramfs: Option<&'a [u8]> },
    /// A bare-metal ELF linked in DRAM: every hart starts at its entry in M mode (a0 = hart id, a1 = the device
    /// tree), with no firmware (as qemu's `-bios none`).
    BareMachine { elf: &'a [u8] },
    /// A bare-metal ELF entered in S mode under the SBI firmware (as qemu's default firmware runs `-kernel`).
    BareSupervisor { elf: &'a [u8] },
}

pub struct Machine {
    pub cfg: FsConfig,
    pub harts: Vec<Hart>,
    pub prv: Vec<Privileged>,
    pub mem: Memory,
    pub run_state: Vec<HartRun>,
    /// The SBI firmware owns hart h's timer (set_timer was called): reaching mtimecmp raises STIP, not MTIP.
    pub(crate) firmware_timer: Vec<bool>,
    /// The simulator provides SBI (S-mode ecalls are firmware calls).
    pub firmware: bool,
    pub dtb: Vec<u8>,
    pub dtb_addr: u64,
    pub end: Option<End>,
    pub sbi_calls: u64,
    /// System instructions finished outside the executor (CSR accesses, xret, wfi, sfence.vma).
    pub system_insts: u64,
    /// What each hart did at each privilege level (indexed by hart, then by level: U, S, M).
    pub by_level: Vec<[LevelCounts; 3]>,
    /// Detailed mode: the time (ps) a woken hart's core sleeps until before it runs again.
    pub(crate) sleep_until: Vec<Option<u64>>,
    /// Frames on their way to the network device, with the time (ps) each arrives (its last bit), in order.
    pub net_in: VecDeque<(u64, Vec<u8>)>,
    /// Frames the network device sent, with the time (ps) each left (the notify that queued it).
    pub net_out: Vec<(u64, Vec<u8>)>,
    /// Stop the run (`End::Transmitted`) as soon as the network device has sent frames, so the other end answers
    /// at their time.
    pub stop_on_tx: bool,
    /// When the device last wrote a received frame into the guest's memory (ps): the first instruction boundary
    /// (of the hart furthest behind) at or after the frame's arrival, or the moment a sleeping hart wakes to it.
    pub last_rx_ps: Option<u64>,
    /// Harts a remote fence (SBI RFENCE) asked to flush their translations: the timing model's TLBs are flushed
    /// before the hart runs again.
    pub(crate) tlb_flush_pending: Vec<bool>,
}

/// One hart's work at one privilege level: its instructions (of which loads and stores) and the simulated time
/// they took (in detailed mode the core model's; functional time otherwise; time asleep in wfi counts at the
/// level that slept).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LevelCounts {
    pub insts: u64,
    pub loads: u64,
    pub stores: u64,
    pub ps: u64,
}

/// The privilege levels in the order `Machine::by_level` holds them, with their statistics names.
pub const LEVELS: [(u8, &str); 3] = [(PRV_U, "user"), (PRV_S, "supervisor"), (PRV_M, "machine")];

fn level_index(prv: u8) -> usize {
    match prv {
        PRV_U => 0,
        PRV_S => 1,
        _ => 2,
    }
}

/// The riscv64 Linux boot image header's fields we check and use.
fn kernel_header(kernel: &[u8]) -> Result<(u64, u64), String> {
    if kernel.len() < 64 {
        return Err(format!("the kernel is {} bytes, too short for a RISC-V Linux Image header", kernel.len()));
    }
    if kernel.starts_with(b"\x7fELF") {
        return Err("the kernel is an ELF file (vmlinux?): FS mode boots the flat arch/riscv/boot/Image".into());
    }
    let u64_at = |o: usize| u64::from_le_bytes(kernel[o..o + 8].try_into().unwrap());
    if &kernel[0x30..0x38] != b"RISCV\0\0\0" || &kernel[0x38..0x3c] != b"RSC\x05" {
        return Err("the kernel is not a RISC-V Linux Image (no \"RISCV\"/\"RSC\\x05\" magic at offset 0x30)".into());
    }
    Ok((u64_at(8), u64_at(16).max(kernel.len() as u64)))
}

impl Machine {
    pub fn new(cfg: FsConfig, boot: Boot) -> Result<Machine, String> {
        if cfg.harts == 0 || cfg.harts > 8 {
            return Err(format!("FS mode supports 1 to 8 harts, not {}", cfg.harts));
        }
        if cfg.dram_bytes < (16 << 20) || !cfg.dram_bytes.is_multiple_of(1 << 21) {
            return Err(format!("FS memory must be a multiple of 2 MiB and at least 16 MiB, not {}", cfg.dram_bytes));
        }
        let dram_end = map::DRAM + cfg.dram_bytes;
        let mut mem = Memory::new(cfg.dram_bytes, true, cfg.harts);
        mem.enable_full_system(map::DRAM, dram_end, 0, map::DEVICES_END);
        mem.devices = Some(Box::new(Platform::new(cfg.harts, cfg.net_mac)));
        // The device tree sits at the top of memory, 2 MiB aligned (where qemu puts it).
        let dtb_addr = (dram_end - (1 << 21)) & !((1 << 21) - 1);
        let (entry, firmware, initrd, supervisor_start) = match boot {
            Boot::Linux { kernel, initramfs } => {
                let (text_offset, image_size) = kernel_header(kernel)?;
                let load = map::DRAM + text_offset.max(1 << 21);
                if load + image_size > dtb_addr {
                    return Err(format!(
                        "the kernel ({image_size} bytes) does not fit in {} bytes of memory",
                        cfg.dram_bytes
                    ));
                }
                mem.write_bytes(0, load, kernel).map_err(|t| t.reason())?;
                let initrd = match initramfs {
                    Some(rd) => {
                        // qemu's placement: half of memory above the kernel, at most 128 MiB up.
                        let start = (load + (cfg.dram_bytes / 2).min(128 << 20)) & !0xfff;
                        let end = start + rd.len() as u64;
                        if end > dtb_addr {
                            return Err(format!(
                                "the initramfs ({} bytes) does not fit in memory: it would end at {end:#x}, past the \
                                 device tree at {dtb_addr:#x} ({} bytes of memory)",
                                rd.len(),
                                cfg.dram_bytes
                            ));
                        }
                        mem.write_bytes(0, start, rd).map_err(|t| t.reason())?;
                        Some((start, end))
                    }
                    None => None,
                };
                (load, true, initrd, true)
            }
            Boot::BareMachine { elf } | Boot::BareSupervisor { elf } => {
                let image = kvsim_isa::elf::parse(elf)?;
                for seg in &image.segments {
                    if seg.vaddr < map::DRAM || seg.vaddr + seg.memsz > dtb_addr {
                        return Err(format!("a segment at {:#x} lies outside memory", seg.vaddr));
                    }
                    mem.write_bytes(0, seg.vaddr, &seg.data).map_err(|t| t.reason())?;
                }
                let s = matches!(boot, Boot::BareSupervisor { .. });
                (image.entry, s, None, s)
            }
        };
        let dtb = fdt::machine_tree(&cfg, initrd);
        mem.write_bytes(0, dtb_addr, &dtb).map_err(|t| t.reason())?;
        let mut harts = Vec::new();
        let mut prv = Vec::new();
        let mut run_state = Vec::new();
        for h in 0..cfg.harts {
            let mut hart = Hart::new(h, entry, 0, cfg.clock_hz);
            hart.x[10] = h as u64;
            hart.x[11] = dtb_addr;
            let mut p = Privileged::new(h as u64);
            if supervisor_start {
                // What the firmware leaves behind: S mode, exceptions and S-level interrupts delegated (but an
                // ecall from S mode, which is the firmware's), the counters readable.
                p.prv = PRV_S;
                p.medeleg = cause::DELEGABLE & !(1 << cause::ECALL_S);
                p.mideleg = irq::S_MASK;
                p.mcounteren = 7;
            }
            let state = if supervisor_start && h != 0 { HartRun::Stopped } else { HartRun::Running };
            harts.push(hart);
            prv.push(p);
            run_state.push(state);
        }
        let n_harts = cfg.harts;
        Ok(Machine {
            firmware_timer: vec![false; cfg.harts],
            cfg,
            harts,
            prv,
            mem,
            run_state,
            firmware,
            dtb,
            dtb_addr,
            end: None,
            sbi_calls: 0,
            system_insts: 0,
            by_level: vec![[LevelCounts::default(); 3]; n_harts],
            sleep_until: vec![None; n_harts],
            net_in: VecDeque::new(),
            net_out: Vec::new(),
            stop_on_tx: false,
            last_rx_ps: None,
            tlb_flush_pending: vec![false; n_harts],
        })
    }

    pub fn platform(&mut self) -> &mut Platform {
        let bus: &mut dyn Any = self.mem.devices.as_deref_mut().expect("FS machine has its platform");
        bus.downcast_mut().expect("the FS bus is the Platform")
    }

    /// Everything written to the UART (and the SBI legacy console).
    pub fn console(&mut self) -> String {
        String::from_utf8_lossy(&self.platform().uart.output).into_owned()
    }

    /// Timebase ticks (the `time` CSR, CLINT mtime) of hart `h` now: of its functional time, or in detailed mode
    /// of its core's time.
    pub fn ticks(&self, h: usize) -> u64 {
        let hart = &self.harts[h];
        match hart.timed_ps {
            Some(ps) => ((ps as u128 * kvsim_base::abi::TIMEBASE_HZ as u128) / 1_000_000_000_000u128) as u64,
            None => hart.functional_time_ticks(hart.cnt.insts),
        }
    }

    /// The instruction count at which hart `h`'s time reaches `tick` (None: never, or beyond range).
    fn insts_at_tick(&self, h: usize, tick: u64) -> Option<u64> {
        let hart = &self.harts[h];
        let clock = hart.clock.max(1) as u128;
        let tb = kvsim_base::abi::TIMEBASE_HZ as u128;
        let target = (tick as u128).checked_mul(clock)?.checked_mul(1_000_000_000_000)?;
        let asleep = hart.idle_ps as u128 * clock * tb;
        let num = target.saturating_sub(asleep);
        let den = tb * 1_000_000_000_000;
        Some(num.div_ceil(den).min(u64::MAX as u128) as u64)
    }

    /// The instruction count at which hart `h`'s functional time reaches `ps` (None: beyond range).
    fn insts_at_ps(&self, h: usize, ps: u64) -> Option<u64> {
        let hart = &self.harts[h];
        let busy = ps.saturating_sub(hart.idle_ps) as u128;
        let n = (busy * hart.clock.max(1) as u128).div_ceil(1_000_000_000_000);
        u64::try_from(n).ok()
    }

    /// Set hart `h`'s interrupt lines from the devices at its current time, and let the firmware turn its timer
    /// into STIP.
    fn update_lines(&mut self, h: usize) {
        let now = self.ticks(h);
        let firmware_timer = self.firmware_timer[h];
        let plat = self.platform();
        plat.clint.now = now;
        let timer_due = now >= plat.clint.mtimecmp[h];
        let msip = plat.clint.msip[h];
        plat.sync_lines();
        let meip = plat.plic.context_line(2 * h);
        let seip = plat.plic.context_line(2 * h + 1);
        let p = &mut self.prv[h];
        p.set_irq_line(irq::MSI, msip);
        p.set_irq_line(irq::MEI, meip);
        if firmware_timer {
            if timer_due {
                p.set_irq_line(irq::STI, true);
                self.firmware_timer[h] = false;
            }
        } else {
            p.set_irq_line(irq::MTI, timer_due);
        }
        // SEIP is the PLIC's S context line (S mode cannot write it in sip; M mode's writes are not kept apart
        // from the line here).
        self.prv[h].set_irq_line(irq::SEI, seip);
    }

    /// Wake hart `h` (if asleep) at time `t_ps` at the earliest; the sleep counts at the level that slept. In
    /// detailed mode the core's clock moves when the hart next runs (`step`, which has the timing model).
    fn wake(&mut self, h: usize, t_ps: u64) {
        if self.run_state[h] == HartRun::Asleep {
            let level = level_index(self.prv[h].prv);
            let hart = &mut self.harts[h];
            let before = hart.time_ps();
            if before < t_ps {
                match hart.timed_ps {
                    Some(_) => self.sleep_until[h] = Some(t_ps),
                    None => {
                        hart.idle_ps += t_ps - before;
                        self.by_level[h][level].ps += t_ps - before;
                    }
                }
            }
            self.run_state[h] = HartRun::Running;
        }
    }

    /// The time (ps) at which sleeping hart `h`'s timer fires, if it has one.
    fn wake_time(&self, h: usize) -> Option<u64> {
        let plat: &Platform = (self.mem.devices.as_deref()? as &dyn Any).downcast_ref()?;
        let cmp = plat.clint.mtimecmp[h];
        if cmp == u64::MAX {
            return None;
        }
        let ps = (cmp as u128 * 1_000_000_000_000).div_ceil(kvsim_base::abi::TIMEBASE_HZ as u128);
        Some(ps.min(u64::MAX as u128) as u64)
    }

    /// The next hart to run: the one furthest behind (a sleeping hart counts at its wake-up time).
    fn pick(&mut self) -> Result<usize, String> {
        let mut best: Option<(u64, usize)> = None;
        for h in 0..self.harts.len() {
            let t = match self.run_state[h] {
                HartRun::Running => Some(self.harts[h].time_ps()),
                HartRun::Asleep => {
                    // A frame arriving may raise an interrupt that wakes it (wfi wakes on any pending interrupt).
                    let frame = self.net_in.front().map(|f| f.0);
                    let w = match (self.wake_time(h), frame) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    w.map(|w| w.max(self.harts[h].time_ps()))
                }
                HartRun::Stopped => None,
            };
            if let Some(t) = t {
                if best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, h));
                }
            }
        }
        let (t, h) = best.ok_or_else(|| {
            "every hart is stopped or asleep with no timer set: the guest can never run again".to_string()
        })?;
        self.wake(h, t);
        Ok(h)
    }

    /// Every hart that runs at all is asleep in wfi and none has an enabled interrupt pending (one raised by a
    /// device while another hart ran would wake it when it is next picked): the machine does nothing until its
    /// next timer tick or an arrival.
    pub fn idle(&mut self) -> bool {
        let mut asleep = false;
        for h in 0..self.harts.len() {
            match self.run_state[h] {
                HartRun::Running => return false,
                HartRun::Stopped => {}
                HartRun::Asleep => {
                    self.update_lines(h);
                    if self.prv[h].wakeup_pending() {
                        return false;
                    }
                    asleep = true;
                }
            }
        }
        asleep
    }

    pub fn total_insts(&self) -> u64 {
        self.harts.iter().map(|h| h.cnt.insts).sum()
    }

    /// Run until the guest powers off or resets, or `max_insts` instructions have run in all. A fault the
    /// simulator cannot turn into a guest exception stops the run with an error.
    pub fn run(&mut self, max_insts: u64) -> Result<End, String> {
        self.run_hooked(max_insts, &mut NoHook)
    }

    /// `run`, telling `hook` (a timing model) about every instruction: in detailed mode each hart's time is its
    /// core's, kernel and user instructions alike; the system instructions the machine finishes itself reach the
    /// hook as serialising instructions.
    pub fn run_hooked<H: ExecHook>(&mut self, max_insts: u64, hook: &mut H) -> Result<End, String> {
        loop {
            if let Some(end) = self.end {
                return Ok(end);
            }
            if let Some(req) = self.platform().power.take() {
                self.end = Some(match req {
                    PowerRequest::Off { code } => End::PowerOff { code },
                    PowerRequest::Reset => End::Reset,
                });
                continue;
            }
            let total = self.total_insts();
            if total >= max_insts {
                return Ok(End::InstLimit);
            }
            if self.stop_on_tx && !self.net_out.is_empty() {
                return Ok(End::Transmitted);
            }
            let h = self.pick()?;
            self.deliver_frames(self.harts[h].time_ps())?;
            self.step(h, max_insts - total, hook)?;
        }
    }

    /// The network device with the memory it reads and writes (the platform lives inside the memory as its
    /// device bus, so it is taken out for the call).
    fn with_net<R>(&mut self, f: impl FnOnce(&mut VirtioNet, &mut Memory) -> R) -> Option<R> {
        let mut bus = self.mem.devices.take()?;
        let plat: &mut Platform = (bus.as_mut() as &mut dyn Any).downcast_mut().expect("the FS bus is the Platform");
        let r = plat.net.as_mut().map(|net| f(net, &mut self.mem));
        plat.sync_lines();
        self.mem.devices = Some(bus);
        r
    }

    /// Hand the network device every frame that has arrived by `now_ps`.
    fn deliver_frames(&mut self, now_ps: u64) -> Result<(), String> {
        while self.net_in.front().is_some_and(|f| f.0 <= now_ps) {
            let (_, frame) = self.net_in.pop_front().unwrap();
            let before = self.platform().net.as_ref().map_or(0, |n| n.counts.rx_frames);
            match self.with_net(|net, mem| net.arrive(mem, frame)) {
                Some(r) => r?,
                None => return Err("a frame arrived for a machine without a network device".into()),
            }
            if self.platform().net.as_ref().map_or(0, |n| n.counts.rx_frames) > before {
                self.last_rx_ps = Some(now_ps);
            }
        }
        Ok(())
    }

    /// Serve the queues the driver notified (hart `h`'s store just did): receive buffers posted take waiting
    /// frames, frames queued for transmission leave at the hart's time.
    fn serve_net(&mut self, h: usize) -> Result<(), String> {
        let now = self.harts[h].time_ps();
        let rx_before = self.platform().net.as_ref().map_or(0, |n| n.counts.rx_frames);
        let sent = self
            .with_net(|net, mem| {
                let kicked = std::mem::take(&mut net.kicked);
                if kicked & (1 << virtio_net::RX_QUEUE) != 0 {
                    net.queues[virtio_net::RX_QUEUE].notified = true;
                    net.drain_backlog(mem)?;
                }
                if kicked & (1 << virtio_net::TX_QUEUE) != 0 {
                    net.queues[virtio_net::TX_QUEUE].notified = true;
                    return net.transmit(mem);
                }
                Ok(Vec::new())
            })
            .unwrap_or(Ok(Vec::new()))?;
        if self.platform().net.as_ref().map_or(0, |n| n.counts.rx_frames) > rx_before {
            self.last_rx_ps = Some(now);
        }
        self.net_out.extend(sent.into_iter().map(|f| (now, f)));
        Ok(())
    }

    /// Run hart `h` for one slice (at most `limit` instructions).
    fn step<H: ExecHook>(&mut self, h: usize, limit: u64, hook: &mut H) -> Result<(), String> {
        if let Some(t) = self.sleep_until[h].take() {
            // Detailed mode: the core slept (wfi) until its wake-up.
            let before = self.harts[h].time_ps();
            hook.sleep_until(h, t);
            self.harts[h].timed_ps = hook.time_ps(h);
            self.by_level[h][level_index(self.prv[h].prv)].ps += self.harts[h].time_ps().saturating_sub(before);
        }
        if std::mem::take(&mut self.tlb_flush_pending[h]) {
            // A remote fence (SBI) reached this hart: its core's TLBs forget their translations too.
            hook.flush_translations(h);
        }
        self.update_lines(h);
        if let Some(i) = self.prv[h].pending_interrupt() {
            self.trap(h, cause::INTERRUPT | i as u64, 0);
        }
        if self.run_state[h] == HartRun::Asleep {
            return Ok(());
        }
        // Everything this slice does counts at the level it starts at: the executor runs at one level, and the
        // system instruction or ecall that ends it executed there too.
        let level = level_index(self.prv[h].prv);
        let (cnt0, t0) = (self.harts[h].cnt, self.harts[h].time_ps());
        let result = self.slice(h, limit, hook);
        let (cnt, t) = (self.harts[h].cnt, self.harts[h].time_ps());
        let at = &mut self.by_level[h][level];
        at.insts += cnt.insts - cnt0.insts;
        at.loads += cnt.loads - cnt0.loads;
        at.stores += cnt.stores - cnt0.stores;
        at.ps += t.saturating_sub(t0);
        result
    }

    /// Run hart `h` at its current level until the executor stops, and finish what it stopped on.
    fn slice<H: ExecHook>(&mut self, h: usize, limit: u64, hook: &mut H) -> Result<(), String> {
        self.mem.set_context(self.prv[h].xlate_context());
        let mut budget = self.cfg.quantum.min(limit);
        let cmp = self.platform().clint.mtimecmp[h];
        if let Some(at) = self.insts_at_tick(h, cmp) {
            if at > self.harts[h].cnt.insts {
                budget = budget.min(at - self.harts[h].cnt.insts);
            }
        }
        if let Some(&(at, _)) = self.net_in.front() {
            if let Some(n) = self.insts_at_ps(h, at) {
                if n > self.harts[h].cnt.insts {
                    budget = budget.min(n - self.harts[h].cnt.insts);
                }
            }
        }
        let timed = self.harts[h].timed_ps.is_some();
        let mut deadline = exec::NO_DEADLINE;
        if timed {
            // Detailed mode: the instruction count at the timer's tick or a frame's arrival is not known ahead, so
            // the executor stops after the instruction at which the core's time reaches the earlier of them, and
            // the interrupt is taken at that instruction boundary, as in functional mode.
            budget = self.cfg.quantum.min(limit);
            let now = self.harts[h].time_ps();
            let timer = tick_ps(cmp);
            let frame = self.net_in.front().map_or(u64::MAX, |f| f.0);
            deadline = [timer, frame].into_iter().filter(|&t| t > now).min().unwrap_or(exec::NO_DEADLINE);
        }
        let stop = exec::run_until::<H, false>(&mut self.harts[h], &mut self.mem, budget, deadline, hook, None);
        if timed {
            self.harts[h].timed_ps = hook.time_ps(h);
        }
        match stop {
            Stop::Budget => Ok(()),
            Stop::Ecall => {
                let at = self.harts[h].pc.wrapping_sub(4);
                match self.prv[h].prv {
                    PRV_S if self.firmware => {
                        self.sbi_call(h);
                        Ok(())
                    }
                    p => {
                        let c = match p {
                            PRV_U => cause::ECALL_U,
                            PRV_S => cause::ECALL_S,
                            _ => cause::ECALL_M,
                        };
                        self.harts[h].pc = at;
                        self.trap(h, c, 0);
                        Ok(())
                    }
                }
            }
            Stop::Fault(trap) => self.fault(h, trap, hook),
        }
    }

    /// Take trap `cause` on hart `h` at its PC.
    fn trap(&mut self, h: usize, cause: u64, tval: u64) {
        let p = &mut self.prv[h];
        if p.prv == PRV_U {
            p.mark_fp_dirty();
        }
        self.harts[h].pc = p.take_trap(self.harts[h].pc, cause, tval);
        self.run_state[h] = HartRun::Running;
        self.mem.set_context(p.xlate_context());
    }

    /// The executor stopped on a fault at hart `h`'s PC: a system instruction to finish here, or an exception.
    fn fault<H: ExecHook>(&mut self, h: usize, trap: Trap, hook: &mut H) -> Result<(), String> {
        let pc = self.harts[h].pc;
        if let Trap::Mmio { why: why @ (devices::POWER_STOP | devices::NET_KICK), addr, size, .. } = trap {
            // The store that powered the machine off or notified the network device completed: retire it (and
            // time it, in detailed mode).
            let len = if self.mem.fetch_word(pc).unwrap_or(0) & 3 == 3 { 4 } else { 2 };
            let hart = &mut self.harts[h];
            hart.pc = pc + len;
            hart.cnt.insts += 1;
            hart.cnt.stores += 1;
            if H::ACTIVE && hart.timed_ps.is_some() {
                let info = InstInfo {
                    pc,
                    len: len as u8,
                    class: InstClass::Store,
                    mem_addr: addr,
                    mem_size: size,
                    next_pc: pc + len,
                    ..Default::default()
                };
                hook.on_inst(h, &info);
                hart.timed_ps = hook.time_ps(h);
            }
            if why == devices::NET_KICK {
                self.serve_net(h)?;
            }
            return Ok(());
        }
        let mut word = 0;
        let trap = match trap {
            Trap::Csr(_) | Trap::Illegal(_) => match self.mem.fetch_word(pc) {
                Ok(w) => {
                    word = w;
                    match decode_sys(w) {
                        Some(inst) => match self.system(h, inst, hook) {
                            Ok(()) => return Ok(()),
                            Err(t) => t,
                        },
                        None => trap,
                    }
                }
                Err(t) => t,
            },
            t => t,
        };
        let (c, tval) =
            exception_of(&trap, word).ok_or_else(|| format!("hart {h} at pc {pc:#x}: {}", trap.reason()))?;
        let goes_to_m = self.prv[h].prv == PRV_M || (self.prv[h].medeleg >> c) & 1 == 0;
        if self.firmware && goes_to_m {
            return Err(format!(
                "hart {h} at pc {pc:#x}: {} (cause {c}, tval {tval:#x}) trapped to M mode, where the firmware \
                 has no handler",
                trap.reason()
            ));
        }
        self.trap(h, c, tval);
        Ok(())
    }

    /// Execute system instruction `inst` (at hart `h`'s PC) and advance past it.
    fn system<H: ExecHook>(&mut self, h: usize, inst: SysInst, hook: &mut H) -> Result<(), Trap> {
        let time_now = self.ticks(h);
        let hart = &self.harts[h];
        let p = &mut self.prv[h];
        let pc = hart.pc;
        let mut next = pc.wrapping_add(4);
        let mut effect = Effect::None;
        let (mut dst, mut src_reg_of) = (0u8, 0u8);
        match inst {
            SysInst::Csr { csr, op, rd, src_reg, imm } => {
                let insts = hart.cnt.insts;
                let counters = [insts, time_now, insts];
                let old = p.read_csr(csr, counters)?;
                let (src, names_source) = match src_reg {
                    Some(r) => (hart.x[r as usize], r != 0),
                    None => (imm, imm != 0),
                };
                if op == 1 || names_source {
                    let new = match op {
                        1 => src,
                        2 => old | src,
                        _ => old & !src,
                    };
                    effect = p.write_csr(csr, new)?;
                }
                if rd != 0 {
                    self.harts[h].x[rd as usize] = old;
                }
                (dst, src_reg_of) = (rd, src_reg.unwrap_or(0));
            }
            SysInst::Mret => {
                next = p.mret()?;
                effect = Effect::Context;
            }
            SysInst::Sret => {
                next = p.sret()?;
                effect = Effect::Context;
            }
            SysInst::Wfi => {
                p.check_wfi()?;
                effect = Effect::Wait;
            }
            SysInst::SfenceVma => {
                p.check_sfence()?;
                effect = Effect::Fence;
            }
        }
        let hart = &mut self.harts[h];
        hart.pc = next;
        hart.cnt.insts += 1;
        self.system_insts += 1;
        if H::ACTIVE && hart.timed_ps.is_some() {
            // Fetched in the context it ran in (an xret's fetch, before the level changes below).
            // A system instruction serialises the core: it issues once every older instruction has committed.
            let info = InstInfo {
                pc,
                len: 4,
                class: InstClass::System,
                dst,
                src1: src_reg_of,
                next_pc: next,
                ..Default::default()
            };
            hook.on_inst_fs(h, &info, &mut self.mem);
            self.harts[h].timed_ps = hook.time_ps(h);
        }
        match effect {
            Effect::None => {}
            Effect::Context => self.mem.set_context(self.prv[h].xlate_context()),
            Effect::Fence => {
                self.mem.flush_translations();
                hook.flush_translations(h);
            }
            Effect::Wait => {
                if !self.prv[h].wakeup_pending() {
                    self.run_state[h] = HartRun::Asleep;
                }
            }
        }
        Ok(())
    }

    /// The simulated time of the machine (ps): the furthest hart.
    pub fn time_ps(&self) -> u64 {
        self.harts.iter().map(|h| h.time_ps()).max().unwrap_or(0)
    }

    /// Functional time of `insts` instructions at this machine's clock (ps).
    pub fn insts_ps(&self, insts: u64) -> u64 {
        insts_to_ps(insts, self.cfg.clock_hz)
    }

    /// The privilege level hart `h` is at now.
    pub fn privilege(&self, h: usize) -> u8 {
        self.prv[h].prv
    }
}

/// The time (ps) at which the timebase reaches `tick`: the first picosecond whose `Machine::ticks` reads it
/// (u64::MAX beyond range: a timer never set).
fn tick_ps(tick: u64) -> u64 {
    let ps = (tick as u128 * 1_000_000_000_000).div_ceil(kvsim_base::abi::TIMEBASE_HZ as u128);
    u64::try_from(ps).unwrap_or(u64::MAX)
}

/// The levels by name (statistics, messages).
pub fn privilege_name(p: u8) -> &'static str {
    match p {
        PRV_U => "U",
        PRV_S => "S",
        PRV_M => "M",
        _ => "?",
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod virtio_net_tests;
