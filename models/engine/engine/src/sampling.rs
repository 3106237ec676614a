//! Sampling of the detailed phase (System.sampling; models/sampling.py has the method and its sources): the timing
//! hook alternates between detailed windows and functional warming, counted in instructions over all harts.
//!
//! A period is: detailed warm-up (timed, not measured), the measured window (timed; its cycles per instruction are
//! one sample), then functional warming (caches, TLBs and branch predictors learn from every instruction; each core's
//! clock advances so that the NICs, the client and the scheduler keep a consistent time). The first period's warm-up
//! is longer by a share of the period drawn from the seed. The counters functional warming touches are put back when
//! it ends, so the run's counters describe the detailed windows.
//!
//! The clock between windows: a server that marks its polls (the poll-end hint, workloads/ABI.md) advances by the
//! cycles per instruction of each class of poll, idle (no frame found) and busy (frames received, processed,
//! answered), each measured over all the windows so far. One CPI for all instructions would depend on the windows'
//! mix of idle polls and work, and that mix on the clock: an idle poll's instructions run at a far higher IPC than a
//! request's, so a window with more idle polling gives a lower CPI, work between windows then goes faster than it
//! does in detail, the cores find their queues empty more often, and the next windows hold more idle polling again
//! (the bias of results/speed/sampling_table_s17.md). Counting time by the work done rather than by all the
//! instructions, the spinning excluded, is the measure Alameldeen and Wood (IEEE Micro 2006, "IPC considered harmful
//! for multiprocessor workloads") and SimFlex's sampling of commercial servers (Wenisch et al., IEEE Micro 2006) use.
//! A poll's class is known at its end: its instructions advance the clock at the lower of the two CPIs as they run,
//! and by the rest of their class's at the poll end (time never goes back). Until both classes have been measured, and
//! for code without the hints, the clock advances by the CPI of the core's last measured window.

use kvsim_base::output::Stat;
use kvsim_params::Sampling as SamplingParams;
use kvsim_timing::inst::InstInfo;
use kvsim_timing::sampling::WarmedStats;
use kvsim_timing::system::TimingSystem;

/// Cycles per instruction are kept in fixed point: 1/1024 cycle.
const CPI_ONE: u64 = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Timed, not measured: the pipeline and queues fill again after warming.
    Warmup,
    /// Timed and measured: one sample.
    Window,
    /// Untimed: functional warming.
    Warming,
}

pub struct Sampler {
    warmup: u64,
    window: u64,
    warming: u64,
    confidence: f64,
    phase: Phase,
    /// Instructions (all harts) left in this phase.
    left: u64,
    /// Per core: the cycles per instruction of its last measured window (fixed point), and the fraction of a cycle
    /// warming has not yet moved its clock by.
    cpi: Vec<u64>,
    carry: Vec<u64>,
    /// Per core at the start of the current window: committed instructions and cycles.
    start: Vec<(u64, u64)>,
    /// Per core: its polls' classes and the cycles per instruction of each.
    polls: Vec<Polls>,
    /// The counters as they were when functional warming started.
    saved: Option<WarmedStats>,
    /// Each measured window's cycles per instruction (all cores' cycles over all cores' instructions).
    pub samples: Vec<f64>,
    pub timed_insts: u64,
    pub warmed_insts: u64,
}

impl Sampler {
    /// The sampler of `p` for a run of `harts` harts, its first window placed by `seed`; None when sampling is off.
    pub fn new(p: &SamplingParams, harts: u64, seed: u64) -> Option<Box<Sampler>> {
        if !p.enabled {
            return None;
        }
        let (period, warmup, window) =
            (p.period_insts_per_hart * harts, p.warmup_insts_per_hart * harts, p.window_insts_per_hart * harts);
        let warming = period.saturating_sub(warmup + window).max(1);
        let mut state = seed ^ 0x5341_4d50_4c45_0000;
        let offset = kvsim_base::random::splitmix64(&mut state) % warming;
        Some(Box::new(Sampler {
            warmup,
            window,
            warming,
            confidence: p.confidence,
            phase: Phase::Warmup,
            left: warmup + offset,
            cpi: vec![CPI_ONE; harts as usize],
            carry: vec![0; harts as usize],
            start: vec![(0, 0); harts as usize],
            polls: vec![Polls::default(); harts as usize],
            saved: None,
            samples: Vec::new(),
            timed_insts: 0,
            warmed_insts: 0,
        }))
    }

    /// Hart `hart` executed `info`: time it or warm with it, then move to the next phase when this one is over.
    #[inline]
    pub fn on_inst(&mut self, sys: &mut TimingSystem, hart: usize, info: &InstInfo) {
        let ended = self.polls[hart].ended.take();
        if self.phase == Phase::Warming {
            sys.warm(hart, info);
            let core = &mut sys.cores[hart];
            core.warm_branch(info);
            let p = &mut self.polls[hart];
            let carry = self.carry[hart]
                + match p.rates() {
                    // This instruction at the lower class rate; at the poll's end, its class's rest for all of them.
                    Some((idle, busy)) => {
                        p.pending += 1;
                        let extra = match ended {
                            Some(true) => (idle - idle.min(busy)) * p.pending,
                            Some(false) => (busy - idle.min(busy)) * p.pending,
                            None => 0,
                        };
                        if ended.is_some() {
                            p.pending = 0;
                        }
                        idle.min(busy) + extra
                    }
                    None => self.cpi[hart],
                };
            if carry >= CPI_ONE {
                core.skip(carry / CPI_ONE);
            }
            self.carry[hart] = carry % CPI_ONE;
            self.warmed_insts += 1;
        } else {
            sys.on_inst(hart, info);
            self.timed_insts += 1;
            if let (Some(idle), Phase::Window) = (ended, self.phase) {
                self.polls[hart].measured(idle, &sys.cores[hart]);
            }
        }
        self.left = self.left.saturating_sub(1);
        while self.left == 0 {
            self.next_phase(sys);
        }
    }

    fn next_phase(&mut self, sys: &mut TimingSystem) {
        match self.phase {
            Phase::Warmup => {
                for ((s, c), p) in self.start.iter_mut().zip(&sys.cores).zip(self.polls.iter_mut()) {
                    *s = (c.stats.insts, c.measured_cycles());
                    p.mark = *s;
                }
                (self.phase, self.left) = (Phase::Window, self.window);
            }
            Phase::Window => {
                let (mut insts, mut cycles) = (0, 0);
                for ((s, c), cpi) in self.start.iter().zip(&sys.cores).zip(self.cpi.iter_mut()) {
                    let (i, k) = (c.stats.insts - s.0, c.measured_cycles() - s.1);
                    if i > 0 {
                        *cpi = (k * CPI_ONE).div_ceil(i).max(1);
                    }
                    (insts, cycles) = (insts + i, cycles + k);
                }
                if insts > 0 {
                    self.samples.push(cycles as f64 / insts as f64);
                }
                self.saved = Some(WarmedStats::take(sys));
                for p in &mut self.polls {
                    p.pending = 0;
                }
                (self.phase, self.left) = (Phase::Warming, self.warming);
            }
            Phase::Warming => {
                self.end_warming(sys);
                (self.phase, self.left) = (Phase::Warmup, self.warmup);
            }
        }
    }

    /// Hart `hart`'s poll ends with its next instruction (the hint): `idle` when it found no frame.
    pub fn poll_end(&mut self, hart: usize, idle: bool) {
        self.polls[hart].ended = Some(idle);
    }

    fn end_warming(&mut self, sys: &mut TimingSystem) {
        if let Some(saved) = self.saved.take() {
            saved.restore(sys);
        }
    }

    /// The statistics were reset (the guest's ROI_BEGIN or STATS_RESET, the client's measured phase): samples start
    /// afresh, and warming in progress will put back the fresh counters.
    pub fn reset(&mut self, sys: &mut TimingSystem) {
        self.samples.clear();
        (self.timed_insts, self.warmed_insts) = (0, 0);
        if self.saved.is_some() {
            self.saved = Some(WarmedStats::take(sys));
        }
        // A window in progress measures from the reset.
        for (s, c) in self.start.iter_mut().zip(&sys.cores) {
            *s = (c.stats.insts, c.measured_cycles());
        }
    }

    /// The end of the run: the counters of warming in progress are dropped.
    pub fn finish(&mut self, sys: &mut TimingSystem) {
        self.end_warming(sys);
    }

    /// The estimate: mean cycles per instruction of the windows and the half-width of its interval at the
    /// configured confidence (normal, as SMARTS: its windows are many and independent).
    pub fn estimate(&self) -> (f64, f64) {
        let n = self.samples.len() as f64;
        if n == 0.0 {
            return (f64::NAN, f64::NAN);
        }
        let mean = self.samples.iter().sum::<f64>() / n;
        if n < 2.0 {
            return (mean, f64::INFINITY);
        }
        let var = self.samples.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / (n - 1.0);
        (mean, normal_quantile(0.5 + self.confidence / 2.0) * (var / n).sqrt())
    }

    /// `sampling.*` statistics: that the run was sampled, how, and the estimate.
    pub fn stats(&self, out: &mut Vec<Stat>) {
        let (cpi, ci) = self.estimate();
        let mut push = |name: &str, value: f64, desc: &str| {
            out.push(Stat { name: kvsim_params::paths::sampling() + name, value, desc: desc.to_string() })
        };
        push(
            "enabled",
            1.0,
            "1: the detailed phase was SAMPLED (System.sampling): core, cache, TLB and directory counters cover its \
             windows; between them time advanced at each core's estimated CPI, which the client's, NIC and memory \
             figures include",
        );
        push("windows", self.samples.len() as f64, "measured windows (samples)");
        push("window_insts", self.window as f64, "instructions (all harts) measured per window");
        push("warmup_insts", self.warmup as f64, "instructions (all harts) timed, not measured, before each window");
        push("warming_insts", self.warming as f64, "instructions (all harts) functionally warmed between windows");
        push("timed_insts", self.timed_insts as f64, "instructions timed (warm-ups and windows)");
        push("warmed_insts", self.warmed_insts as f64, "instructions functionally warmed (untimed)");
        push("confidence", self.confidence, "confidence of the intervals");
        push("cpi", cpi, "estimated cycles per instruction (per core, all cores): the windows' mean");
        push("cpi_ci", ci, "half-width of the interval of sampling.cpi");
        push("ipc", 1.0 / cpi, "estimated instructions per cycle per core (1 / sampling.cpi)");
        push("ipc_low", 1.0 / (cpi + ci), "low end of the interval of sampling.ipc");
        push("ipc_high", if ci < cpi { 1.0 / (cpi - ci) } else { f64::INFINITY }, "high end of the interval");
    }
}

/// A core's polls (when its code marks them): what the windows measured of each class, and warming's poll in
/// progress.
#[derive(Debug, Clone, Copy, Default)]
struct Polls {
    /// Committed instructions and measured cycles at the latest poll end in this window (or at its start).
    mark: (u64, u64),
    /// Over every measured window: instructions and cycles of the polls that found no frame, and of the others.
    idle: (u64, u64),
    busy: (u64, u64),
    /// Warming: instructions of the poll in progress, so far charged at the lower class rate.
    pending: u64,
    /// The hint that ends a poll came (`Sampler::poll_end`): found no frame (true) or frames.
    ended: Option<bool>,
}

impl Polls {
    /// A poll ended in a window, at core `c`'s present count: its instructions and cycles since the mark.
    fn measured(&mut self, idle: bool, c: &kvsim_timing::core::Core) {
        let now = (c.stats.insts, c.measured_cycles());
        let class = if idle { &mut self.idle } else { &mut self.busy };
        (class.0, class.1) = (class.0 + now.0 - self.mark.0, class.1 + now.1 - self.mark.1);
        self.mark = now;
    }

    /// Cycles per instruction (fixed point) of idle and of busy polls, once the windows have measured both.
    fn rates(&self) -> Option<(u64, u64)> {
        let cpi = |(insts, cycles): (u64, u64)| (insts > 0).then(|| (cycles * CPI_ONE).div_ceil(insts).max(1));
        Some((cpi(self.idle)?, cpi(self.busy)?))
    }
}

/// The standard normal distribution's quantile at `p` (0 < p < 1): Acklam's rational approximation (relative
/// error below 1.2e-9), enough for an interval's width.
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] =
        [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvsim_params::System;
    use kvsim_timing::synth::{alu, load};

    /// A poll: `n` instructions, the last its poll-end hint. A busy poll's loads walk fresh lines (misses), so its
    /// instructions take many more cycles than an idle poll's ALU instructions.
    fn poll(s: &mut Sampler, sys: &mut TimingSystem, n: u64, idle: bool, next: &mut u64) {
        for k in 0..n {
            let info = if idle || k % 2 == 1 {
                alu(0x1000 + 4 * k, 5, 5, 0)
            } else {
                *next += 64;
                load(0x2000 + 4 * k, 6, 7, 0x1000_0000 + *next)
            };
            if k + 1 == n {
                s.poll_end(0, idle);
            }
            s.on_inst(sys, 0, &info);
        }
    }

    #[test]
    fn between_windows_each_poll_class_advances_the_clock_by_its_own_cpi_whatever_the_last_windows_mix() {
        let system = System { harts: 1, ..System::default() };
        let mut sys = crate::driver::timing_system(&system).unwrap();
        let mut fresh = crate::driver::timing_system(&system).unwrap();
        fresh.cores[0].skip(1000);
        let ps = fresh.hart_time(0) / 1000;
        assert_eq!(ps * 1000, fresh.hart_time(0), "a whole number of ps a cycle");
        let p = SamplingParams {
            enabled: true,
            period_insts_per_hart: 100_000,
            warmup_insts_per_hart: 0,
            window_insts_per_hart: 20_000,
            confidence: 0.997,
        };
        let mut s = Sampler::new(&p, 1, 1).unwrap();
        let mut next = 0;
        while s.phase != Phase::Window {
            poll(&mut s, &mut sys, 1, true, &mut next);
        }
        // The window: mostly idle polls (8 instructions) with a busy one (40) every 10; the cycles of each class are
        // measured here, from the core, poll by poll.
        let (mut idle, mut busy) = ((0u64, 0u64), (0u64, 0u64));
        let mut mark = (sys.cores[0].stats.insts, sys.cores[0].measured_cycles());
        let mut k = 0;
        while s.left > 40 {
            let is_idle = k % 10 != 9;
            poll(&mut s, &mut sys, if is_idle { 8 } else { 40 }, is_idle, &mut next);
            let now = (sys.cores[0].stats.insts, sys.cores[0].measured_cycles());
            let class = if is_idle { &mut idle } else { &mut busy };
            (class.0, class.1) = (class.0 + now.0 - mark.0, class.1 + now.1 - mark.1);
            mark = now;
            k += 1;
        }
        // The rest of the window: idle polls of one instruction, unmeasured by the test, and they must not count
        // either way but as idle polls (they are).
        while s.phase == Phase::Window {
            poll(&mut s, &mut sys, 1, true, &mut next);
            let now = (sys.cores[0].stats.insts, sys.cores[0].measured_cycles());
            (idle.0, idle.1) = (idle.0 + now.0 - mark.0, idle.1 + now.1 - mark.1);
            mark = now;
        }
        assert_eq!(s.phase, Phase::Warming);
        let rate = |(insts, cycles): (u64, u64)| (cycles * CPI_ONE).div_ceil(insts);
        let (r_idle, r_busy) = (rate(idle), rate(busy));
        assert!(r_busy > 2 * r_idle, "the busy polls are the slow ones: {r_idle} {r_busy}");
        // Warming with another mix (idle polls alone, then busy polls alone): the clock moves by each class's CPI
        // (fixed point: the whole cycles of the running sum), not by the window's CPI of both.
        let t0 = sys.hart_time(0);
        for _ in 0..100 {
            poll(&mut s, &mut sys, 8, true, &mut next);
        }
        assert_eq!(sys.hart_time(0) - t0, 800 * r_idle / CPI_ONE * ps);
        for _ in 0..10 {
            poll(&mut s, &mut sys, 40, false, &mut next);
        }
        assert_eq!(sys.hart_time(0) - t0, (800 * r_idle + 400 * r_busy) / CPI_ONE * ps);
        assert_eq!(s.phase, Phase::Warming);
    }

    #[test]
    fn the_normal_quantile_gives_the_known_points() {
        assert!((normal_quantile(0.975) - 1.959964).abs() < 1e-5);
        assert!((normal_quantile(0.9985) - 2.967738).abs() < 1e-5);
        assert!((normal_quantile(0.5)).abs() < 1e-12);
        assert!((normal_quantile(0.01) + 2.326348).abs() < 1e-5);
    }
}
