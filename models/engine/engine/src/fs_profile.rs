//! Where a full-system run's measured phase spends its instructions and time, by program counter
//! (FullSystem.profile): the hook the machine runs with counts every instruction at its PC, kernel and user alike,
//! and in detailed mode the simulated time its hart's clock advanced at it. sim-scripts/fs_get_breakdown.py maps
//! the PCs to the kernel's and the server's symbols.
//!
//! A core model's clock advances at some instructions and not at others (an out-of-order core overlaps them), so
//! the time attributed to a PC is where the hart's time moved, the usual way of profiling by sampled cycles; the
//! time a hart sleeps in wfi is attributed to no PC (it is idle, not work).

use std::collections::HashMap;
use std::io::Write;

use kvsim_isa::exec::ExecHook;
use kvsim_timing::inst::InstInfo;

/// `inner` (the timing model, or none), counting by PC while `on`.
pub struct Profiler<H: ExecHook> {
    pub inner: H,
    on: bool,
    /// Each hart's time at its last counted instruction (ps).
    last: Vec<u64>,
    /// PC -> (instructions, ps).
    by_pc: HashMap<u64, (u64, u64)>,
}

impl<H: ExecHook> Profiler<H> {
    pub fn new(inner: H, harts: usize) -> Self {
        Profiler { inner, on: false, last: vec![0; harts], by_pc: HashMap::new() }
    }

    /// Start counting (the measured phase starts): what came before is forgotten.
    pub fn start(&mut self) {
        self.on = true;
        self.by_pc.clear();
        for (h, last) in self.last.iter_mut().enumerate() {
            *last = self.inner.time_ps(h).unwrap_or(0);
        }
    }

    pub fn stop(&mut self) {
        self.on = false;
    }

    /// (instructions, ps) counted in all.
    pub fn totals(&self) -> (u64, u64) {
        self.by_pc.values().fold((0, 0), |(i, t), &(a, b)| (i + a, t + b))
    }

    /// Write the counts to `path`: a header line, then `pc insts ps` per PC in PC order.
    pub fn write(&self, path: &str) -> std::io::Result<()> {
        let mut pcs: Vec<(&u64, &(u64, u64))> = self.by_pc.iter().collect();
        pcs.sort_unstable();
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(out, "# pc insts ps (the measured phase, all harts; ps 0 in a functional run)")?;
        for (pc, (n, ps)) in pcs {
            writeln!(out, "{pc:x} {n} {ps}")?;
        }
        out.flush()
    }
}

impl<H: ExecHook> ExecHook for Profiler<H> {
    const ACTIVE: bool = true;
    #[inline]
    fn on_inst(&mut self, hart: usize, info: &InstInfo) {
        if H::ACTIVE {
            self.inner.on_inst(hart, info);
        }
        self.count(hart, info);
    }
    #[inline]
    fn on_inst_fs(&mut self, hart: usize, info: &InstInfo, tables: &mut kvsim_isa::memory::Memory) {
        if H::ACTIVE {
            self.inner.on_inst_fs(hart, info, tables);
        }
        self.count(hart, info);
    }
    fn flush_translations(&mut self, hart: usize) {
        self.inner.flush_translations(hart);
    }
    #[inline]
    fn time_ps(&self, hart: usize) -> Option<u64> {
        self.inner.time_ps(hart)
    }
    fn sleep_until(&mut self, hart: usize, t: u64) {
        self.inner.sleep_until(hart, t);
        // The sleep is idle time, attributed to no instruction.
        self.last[hart] = self.inner.time_ps(hart).unwrap_or(self.last[hart]);
    }
    fn reset_stats(&mut self) {
        self.inner.reset_stats();
    }
    fn append_stats(&self, out: &mut Vec<kvsim_base::output::Stat>) {
        self.inner.append_stats(out);
    }
    fn io_access(&mut self, agent: usize, owner: Option<usize>, addr: u64, write: bool, t: u64) -> u64 {
        self.inner.io_access(agent, owner, addr, write, t)
    }
    fn numa_placed(&mut self, start: u64, len: u64, socket: u16) -> Result<(), String> {
        self.inner.numa_placed(start, len, socket)
    }
    fn huge_mapped(&mut self, start: u64, len: u64) {
        self.inner.huge_mapped(start, len);
    }
}

impl<H: ExecHook> Profiler<H> {
    /// Count `info`'s instruction and the time since the hart's last one against its PC.
    #[inline]
    fn count(&mut self, hart: usize, info: &InstInfo) {
        if self.on {
            let t = self.inner.time_ps(hart).unwrap_or(0);
            let d = t.saturating_sub(self.last[hart]);
            self.last[hart] = t;
            let e = self.by_pc.entry(info.pc).or_default();
            e.0 += 1;
            e.1 += d;
        }
    }
}
