//! Sampling of the detailed phase (System.sampling; models/sampling.py has the method and its sources): the timing
//! hook alternates between detailed windows and functional warming, counted in instructions over all harts.
//!
//! A period is: detailed warm-up (timed, not measured), the measured window (timed; its cycles per instruction are
//! one sample), then functional warming (caches, TLBs and branch predictors learn from every instruction; each core's
//! clock advances by the cycles per instruction of its last measured window, so the NICs, the client and the
//! scheduler keep a consistent time). The first period's warm-up is longer by a share of the period drawn from the
//! seed. The counters functional warming touches are put back when it ends, so the run's counters describe the
//! detailed windows.

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
            saved: None,
            samples: Vec::new(),
            timed_insts: 0,
            warmed_insts: 0,
        }))
    }

    /// Hart `hart` executed `info`: time it or warm with it, then move to the next phase when this one is over.
    #[inline]
    pub fn on_inst(&mut self, sys: &mut TimingSystem, hart: usize, info: &InstInfo) {
        if self.phase == Phase::Warming {
            sys.warm(hart, info);
            let core = &mut sys.cores[hart];
            core.warm_branch(info);
            let carry = self.carry[hart] + self.cpi[hart];
            if carry >= CPI_ONE {
                core.skip(carry / CPI_ONE);
            }
            self.carry[hart] = carry % CPI_ONE;
            self.warmed_insts += 1;
        } else {
            sys.on_inst(hart, info);
            self.timed_insts += 1;
        }
        self.left = self.left.saturating_sub(1);
        while self.left == 0 {
            self.next_phase(sys);
        }
    }

    fn next_phase(&mut self, sys: &mut TimingSystem) {
        match self.phase {
            Phase::Warmup => {
                for (s, c) in self.start.iter_mut().zip(&sys.cores) {
                    *s = (c.stats.insts, c.measured_cycles());
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
                (self.phase, self.left) = (Phase::Warming, self.warming);
            }
            Phase::Warming => {
                self.end_warming(sys);
                (self.phase, self.left) = (Phase::Warmup, self.warmup);
            }
        }
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

    #[test]
    fn the_normal_quantile_gives_the_known_points() {
        assert!((normal_quantile(0.975) - 1.959964).abs() < 1e-5);
        assert!((normal_quantile(0.9985) - 2.967738).abs() < 1e-5);
        assert!((normal_quantile(0.5)).abs() < 1e-12);
        assert!((normal_quantile(0.01) + 2.326348).abs() < 1e-5);
    }
}
