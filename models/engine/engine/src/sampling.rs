//! Sampling of the detailed phase (System.sampling; models/sampling.py has the method and its sources): the timing
//! hook alternates between detailed windows and functional warming, counted in instructions over all harts.
//!
//! A period is: detailed warm-up (timed, not measured), the measured window (timed; its cycles per instruction are
//! one sample), then functional warming (caches, TLBs and branch predictors learn from every instruction, and the
//! memory reads and write-backs warming causes reach the memory controllers on the cores' common timeline, so their
//! queues carry the load they would; each core's clock advances at its estimated CPI, so the NICs, the
//! client and the scheduler keep a consistent time). The first window comes after a whole period timed in full
//! detail and a share of the next drawn from the seed (`Sampler::first_timed`). The counters functional warming
//! touches are put back when it ends, so the run's counters describe the detailed windows.
//!
//! The clock between windows (`CoreRate`). A server's poll-mode core runs two kinds of instruction at very
//! different rates: idle polls (a tight loop that finds no frame, about 2.4 instructions a cycle on the paper's
//! core) and the work of busy polls (about 1.3). One rate for both ties the clock to the mix: a core that idles
//! more gets a lower CPI, so its work runs faster between windows and it idles more still, and a rate taken from
//! one window of about 1,000 instructions a core is a sample whose noise (a standard deviation of about half the
//! mean) then holds for the whole stretch of warming: a core that drew a slow window runs slowly until the next
//! and, in a closed loop that waits on its fullest queue, stalls the client for every core. Measured on the
//! validation table's design point (results/speed/sampling_table_s18.md): idle polling 4x the full run's. So
//! each core keeps two rates, idle polls and the rest (work), each the ratio of exponentially weighted sums of
//! its windows' cycles and instructions (the newest window weighs `1 / RATE_WINDOWS`), which follows a run
//! whose CPI drifts and averages the noise of some 30 windows; which instructions were idle polls is known at
//! each poll's end (the server's poll-end hint, `poll_end`).
//!
//! A busy poll's time is not its instructions times one rate: it has a fixed part. The server prefetches each
//! frame's packet and item a few frames ahead within a poll's burst, so a poll's first frames have no earlier
//! frame to overlap their misses with; measured in a full run of the table's design point (results/speed/README.md
//! "Session 19"), a one-frame poll took 0.51 ns an instruction, an eight-frame one 0.30: about 600 cycles a poll
//! plus 0.69 an instruction. With one rate, the windows' mean, a poll of few frames passed too fast and a long one
//! too slow, so a core that fell behind (a long queue, long polls) caught up more slowly than it does and one with
//! a short queue emptied it and idled; the client, which stops at the first full queue, then waited longer on the
//! unequal queues (idle polls 2.2x the full run's a request, throughput -7.4%). So the busy polls the windows see
//! are fitted as a fixed part and a part an instruction (`BusyFit`, over every core's polls together), and between
//! windows every instruction advances the clock at the busy part an instruction as it runs; at a poll's end, an idle
//! poll gives back the difference to the idle rate for its warmed instructions (the next instructions take no time
//! until it is used up) and a busy poll adds its warmed instructions' share of the fixed part (before its doorbell's
//! time is taken, at the hart's time after its turn). Without a fit (no busy polls, all of one length) busy polls take
//! the work rate and no fixed part; code without hints is all work.

use kvsim_base::output::Stat;
use kvsim_params::Sampling as SamplingParams;
use kvsim_timing::inst::InstInfo;
use kvsim_timing::sampling::WarmedStats;
use kvsim_timing::system::TimingSystem;

/// Cycles per instruction are kept in fixed point: 1/1024 cycle.
const CPI_ONE: u64 = 1024;

/// The weight of the newest window in a core's rates is 1 / RATE_WINDOWS (assumed: the rates then average about
/// 2 x RATE_WINDOWS windows, a standard error of about a tenth of one window's spread, and follow a drift within
/// some RATE_WINDOWS periods).
const RATE_WINDOWS: u64 = 16;

/// One core's clock between windows: its rates and what measures them (see the module doc).
#[derive(Clone, Default)]
struct CoreRate {
    /// Exponentially weighted sums over its windows (x CPI_ONE): all cycles and instructions, and those of idle
    /// polls.
    all: (u64, u64),
    idle: (u64, u64),
    /// Exponentially weighted sums of the busy polls the windows saw, for the fit of a busy poll's cycles as a
    /// fixed part and a part per instruction (`BusyFit`); the busy polls seen in the window in progress.
    busy: BusyFit,
    window_busy: BusyFit,
    /// The window's part of the poll in progress (cycles, instructions), classed when the poll ends; the idle polls
    /// classed inside the window in progress (added to `idle` with its window).
    open: (u64, u64),
    window_idle: (u64, u64),
    /// (committed instructions, measured cycles) at the window's start or its last poll end.
    mark: (u64, u64),
    /// Instructions of the poll in progress: all of them (timed and warmed), and those warmed.
    poll_insts: u64,
    warmed_in_poll: u64,
    /// Cycles per instruction (fixed point) of work (the mean, what a busy poll's instructions take when there is
    /// no fit), of idle polls, and of a busy poll's instructions beside its fixed part; the fixed part (cycles, fixed
    /// point) of a busy poll.
    work: u64,
    idle_cpi: u64,
    busy_cpi: u64,
    busy_fixed: u64,
    /// Clock not yet moved (fixed point); below zero: time given back that the next instructions use up.
    carry: i64,
}

/// The busy polls' fit: a busy poll of `n` instructions takes `fixed + n x per_inst` cycles. A window sees a part
/// of a poll (its `w` instructions took `c` cycles) and the poll's length `n` is known when it ends; the part's
/// cycles an instruction is a sample of `per_inst + fixed / n` (a window starts anywhere in a poll), so the fit is the
/// least-squares line of `c / w` on `1 / n`, each part weighing its `w`. Sums: w, w x, w x^2, c, c x (x = 1 / n).
#[derive(Clone, Copy, Default)]
struct BusyFit([f64; 5]);

impl BusyFit {
    fn add(&mut self, cycles: u64, insts: u64, poll: u64) {
        let (w, c, x) = (insts as f64, cycles as f64, 1.0 / poll.max(1) as f64);
        for (s, v) in self.0.iter_mut().zip([w, w * x, w * x * x, c, c * x]) {
            *s += v;
        }
    }

    fn decayed_plus(&self, newer: &BusyFit) -> BusyFit {
        let mut out = *self;
        for (s, n) in out.0.iter_mut().zip(newer.0) {
            *s = *s - *s / RATE_WINDOWS as f64 + n;
        }
        out
    }

    /// (cycles an instruction, fixed cycles a poll), or None when the polls seen do not determine a fit with both
    /// parts positive (too few, all of one length).
    fn fit(&self) -> Option<(f64, f64)> {
        let [w, x, xx, c, cx] = self.0;
        let det = w * xx - x * x;
        if w <= 0.0 || det <= 1e-12 * w * xx {
            return None;
        }
        let (per_inst, fixed) = ((c * xx - x * cx) / det, (w * cx - x * c) / det);
        (per_inst > 0.0 && fixed >= 0.0).then_some((per_inst, fixed))
    }
}

impl CoreRate {
    fn new() -> Self {
        CoreRate { work: CPI_ONE, idle_cpi: CPI_ONE, busy_cpi: CPI_ONE, ..Default::default() }
    }

    /// The window ended with the core at (instructions, cycles) `now`: the open poll's part so far, the window's
    /// totals into the sums (older windows weigh less), the rates from them.
    fn end_window(&mut self, start: (u64, u64), now: (u64, u64)) {
        self.open = (self.open.0 + now.1 - self.mark.1, self.open.1 + now.0 - self.mark.0);
        let decay = |x: u64| x - x / RATE_WINDOWS;
        self.all = (decay(self.all.0) + (now.1 - start.1) * CPI_ONE, decay(self.all.1) + (now.0 - start.0) * CPI_ONE);
        self.idle = (decay(self.idle.0) + self.window_idle.0, decay(self.idle.1) + self.window_idle.1);
        self.window_idle = (0, 0);
        self.busy = self.busy.decayed_plus(&std::mem::take(&mut self.window_busy));
        self.update_rates();
        // Until the sampler fits the busy polls of all cores (`Sampler::fit_busy_polls`): the work rate.
        self.set_busy(None);
    }

    fn update_rates(&mut self) {
        let ratio = |(c, i): (u64, u64)| (i > 0).then(|| (c * CPI_ONE).div_ceil(i).max(1));
        let Some(all) = ratio(self.all) else { return };
        let work = (self.all.0.saturating_sub(self.idle.0), self.all.1.saturating_sub(self.idle.1));
        // A core that did almost nothing but idle polls has no measure of its work: the overall rate stands in.
        self.work = if work.1 >= self.all.1 / RATE_WINDOWS { ratio(work).unwrap_or(all) } else { all };
        self.idle_cpi = ratio(self.idle).unwrap_or(self.work);
    }

    /// A busy poll's (cycles an instruction, fixed cycles) from `fit` (None: the work rate, no fixed part).
    fn set_busy(&mut self, fit: Option<(f64, f64)>) {
        (self.busy_cpi, self.busy_fixed) = match fit {
            Some((per_inst, f)) => ((per_inst * CPI_ONE as f64).ceil().max(1.0) as u64, (f * CPI_ONE as f64) as u64),
            None => (self.work, 0),
        };
    }

    /// One instruction warmed: it takes a busy poll's rate an instruction (an idle poll gets the difference back
    /// at its end, a busy poll its fixed part); the whole cycles the clock moves by now.
    #[inline]
    fn warm_one(&mut self) -> u64 {
        self.warmed_in_poll += 1;
        self.poll_insts += 1;
        self.carry += self.busy_cpi as i64;
        if self.carry < CPI_ONE as i64 {
            return 0;
        }
        let cycles = self.carry as u64 / CPI_ONE;
        self.carry %= CPI_ONE as i64;
        cycles
    }

    /// One instruction timed (a warm-up's or a window's): it counts toward its poll's length.
    #[inline]
    fn timed_one(&mut self) {
        self.poll_insts += 1;
    }

    /// A poll ended; `timed_now` is the core's (instructions, cycles) when it ended inside a window. Its window
    /// part is classed; its warmed instructions get their class's time: an idle poll's the idle rate (the clock
    /// gives back or takes the difference), a busy poll's its share of the fixed part.
    fn poll_end(&mut self, idle: bool, timed_now: Option<(u64, u64)>, warming: bool) {
        if let Some(now) = timed_now {
            self.open = (self.open.0 + now.1 - self.mark.1, self.open.1 + now.0 - self.mark.0);
            self.mark = now;
        }
        if idle {
            // Inside its window the poll joins the window's idle polls; after it (the window's part of a poll that
            // ended later), the sums the window went into.
            let sums = if timed_now.is_some() { &mut self.window_idle } else { &mut self.idle };
            *sums = (sums.0 + self.open.0 * CPI_ONE, sums.1 + self.open.1 * CPI_ONE);
            if warming {
                self.carry += self.warmed_in_poll as i64 * (self.idle_cpi as i64 - self.busy_cpi as i64);
            }
        } else {
            if self.open.1 > 0 {
                let fit = if timed_now.is_some() { &mut self.window_busy } else { &mut self.busy };
                fit.add(self.open.0, self.open.1, self.poll_insts);
            }
            if warming && self.poll_insts > 0 {
                self.carry += (self.busy_fixed as u128 * self.warmed_in_poll as u128 / self.poll_insts as u128) as i64;
            }
        }
        self.open = (0, 0);
        self.warmed_in_poll = 0;
        self.poll_insts = 0;
    }
}

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
    /// Per core: its clock between windows (see the module doc).
    rate: Vec<CoreRate>,
    /// Per core at the start of the current window: committed instructions and cycles.
    start: Vec<(u64, u64)>,
    /// The counters as they were when functional warming started.
    saved: Option<WarmedStats>,
    /// Each measured window's cycles per instruction (all cores' cycles over all cores' instructions), and its
    /// LLC misses per 1,000 instructions (every slice's misses over all cores' instructions).
    pub samples: Vec<f64>,
    pub mpki_samples: Vec<f64>,
    /// The LLC's misses at the start of the current window.
    llc_misses: u64,
    pub timed_insts: u64,
    pub warmed_insts: u64,
    /// Cycles the cores' clocks moved while warming (`CoreRate::warm_one`): with `warmed_insts`, the clock's CPI
    /// between windows, to set beside the windows' (`sampling.warming_cpi` against `sampling.cpi`).
    warmed_cycles: u64,
    /// The common timeline of warming's memory traffic (`warm_time`): the hart whose turn it is, and the least time
    /// the other cores have reached (they do not move while it runs); `usize::MAX`: to be taken again.
    floor_hart: usize,
    floor: u64,
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
        let first = Self::first_timed(warmup, warming, offset);
        Some(Box::new(Sampler {
            warmup,
            window,
            warming,
            confidence: p.confidence,
            phase: Phase::Warmup,
            left: first,
            rate: vec![CoreRate::new(); harts as usize],
            start: vec![(0, 0); harts as usize],
            saved: None,
            samples: Vec::new(),
            mpki_samples: Vec::new(),
            llc_misses: 0,
            timed_insts: 0,
            warmed_insts: 0,
            warmed_cycles: 0,
            floor_hart: usize::MAX,
            floor: 0,
        }))
    }

    /// Instructions (all harts) timed before the first window: a whole period but its window, then the seed's
    /// share of a warming stretch (`offset`) and the warm-up. Why a whole period: the detailed phase starts cold
    /// (the fast-forward before it warms the caches but not the branch predictors, and its pipeline and queues
    /// start empty), a transient that warming between windows never leaves behind, so a window placed in it measures
    /// a state no later stretch is in; its rate then drove the whole next stretch and, through each core's memory
    /// of its windows (`RATE_WINDOWS`), the clock of some 30 more. Measured on the KVS server at 4 cores (reduced,
    /// results/speed/s27_sampling/README.md): the full run's first 5,000 instructions a core ran at 1.9 cycles
    /// each, the next 5,000 at 0.9, then about 0.65; placement 2's first windows (right after the warm-up of
    /// 2,000) measured 2.5, 1.7 and 1.3, its clock between windows ran at 0.713 against its windows' 0.629, and its
    /// throughput came out 10.6% low and its p95 39% high. The transient is assumed shorter than a period (20,000
    /// instructions a hart by default; about 10,000 measured); the full run times it, and so does the sampled run.
    fn first_timed(warmup: u64, warming: u64, offset: u64) -> u64 {
        warming + warmup + offset
    }

    /// Hart `hart` executed `info`: time it or warm with it, then move to the next phase when this one is over.
    #[inline]
    pub fn on_inst(&mut self, sys: &mut TimingSystem, hart: usize, info: &InstInfo) {
        if self.phase == Phase::Warming {
            let at = self.warm_time(sys, hart);
            sys.warm_at(hart, info, at);
            let core = &mut sys.cores[hart];
            core.warm_branch(info);
            let cycles = self.rate[hart].warm_one();
            if cycles > 0 {
                core.skip(cycles);
                self.warmed_cycles += cycles;
            }
            self.warmed_insts += 1;
        } else {
            sys.on_inst(hart, info);
            self.rate[hart].timed_one();
            self.timed_insts += 1;
        }
        self.left = self.left.saturating_sub(1);
        while self.left == 0 {
            self.next_phase(sys);
        }
    }

    /// The time at which warming's memory reads and write-backs of hart `hart` reach the memory controllers: the
    /// least time any core has reached (the common timeline), not the hart's own. The DRAM model keeps each bank's
    /// and the bus's next free times as maxima, so it needs its requests in about time order: the scheduler gives
    /// each turn to the hart furthest behind, and a timed core's requests come in that order give or take a turn. A
    /// warming hart's clock runs on estimates and in steps (an idle poll's time given back, a busy poll's fixed
    /// part); stamped at its own time, its reads booked the banks ahead of the other cores, whose reads, and the
    /// windows' timed loads after them, then waited behind bookings not yet due. Measured on the validation table's
    /// design point (results/speed/README.md "Session 21"): the windows ran at a CPI 3.9% above the full run's at
    /// the same positions, the clock between windows (whose rates come from the windows) with them, and the
    /// throughput was 4.2% low; stamped on the common timeline the windows' CPI is the full run's (+0.05%). The
    /// other cores do not move during the hart's turn, so their least time is taken once a turn.
    #[inline]
    fn warm_time(&mut self, sys: &TimingSystem, hart: usize) -> u64 {
        if self.floor_hart != hart {
            self.floor_hart = hart;
            let others = sys.cores.iter().enumerate().filter(|&(k, _)| k != hart);
            self.floor = others.map(|(_, c)| c.now()).min().unwrap_or(u64::MAX);
        }
        sys.cores[hart].now().min(self.floor)
    }

    /// Hart `hart`'s poll ended (the server's poll-end hint), idle or not: its core's rates learn the window's part
    /// of the poll, and an idle poll's warmed instructions take the idle rate.
    pub fn poll_end(&mut self, sys: &mut TimingSystem, hart: usize, idle: bool) {
        let Some(core) = sys.cores.get(hart) else { return };
        let timed_now = (self.phase == Phase::Window).then(|| (core.stats.insts, core.measured_cycles()));
        self.rate[hart].poll_end(idle, timed_now, self.phase == Phase::Warming);
    }

    /// After a window: a busy poll's fixed part and rate an instruction, fitted to every core's busy polls together
    /// (one core's windows see too few polls, of too few lengths, for a fit: fitted per core, the two parts
    /// varied 2-19x between the cores of one run, results/speed/README.md "Session 19"); without a fit, each core's
    /// work rate and no fixed part.
    fn fit_busy_polls(rate: &mut [CoreRate]) {
        let mut all = BusyFit::default();
        for r in rate.iter() {
            for (a, b) in all.0.iter_mut().zip(r.busy.0) {
                *a += b;
            }
        }
        let fit = all.fit();
        for r in rate.iter_mut() {
            r.set_busy(fit);
        }
    }

    fn llc_misses(sys: &TimingSystem) -> u64 {
        sys.mem.llc.iter().map(|s| s.stats.misses).sum()
    }

    fn next_phase(&mut self, sys: &mut TimingSystem) {
        // Timed instructions move the cores: the common timeline is taken again in the next warming.
        self.floor_hart = usize::MAX;
        match self.phase {
            Phase::Warmup => {
                for ((s, c), r) in self.start.iter_mut().zip(&sys.cores).zip(self.rate.iter_mut()) {
                    *s = (c.stats.insts, c.measured_cycles());
                    r.mark = *s;
                }
                self.llc_misses = Self::llc_misses(sys);
                (self.phase, self.left) = (Phase::Window, self.window);
            }
            Phase::Window => {
                let (mut insts, mut cycles) = (0, 0);
                for ((s, c), r) in self.start.iter().zip(&sys.cores).zip(self.rate.iter_mut()) {
                    let now = (c.stats.insts, c.measured_cycles());
                    r.end_window(*s, now);
                    (insts, cycles) = (insts + now.0 - s.0, cycles + now.1 - s.1);
                }
                Self::fit_busy_polls(&mut self.rate);
                if insts > 0 {
                    self.samples.push(cycles as f64 / insts as f64);
                    let misses = Self::llc_misses(sys) - self.llc_misses;
                    self.mpki_samples.push(1000.0 * misses as f64 / insts as f64);
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
        self.mpki_samples.clear();
        self.llc_misses = Self::llc_misses(sys);
        (self.timed_insts, self.warmed_insts, self.warmed_cycles) = (0, 0, 0);
        if self.saved.is_some() {
            self.saved = Some(WarmedStats::take(sys));
        }
        // A window in progress measures from the reset.
        for ((s, c), r) in self.start.iter_mut().zip(&sys.cores).zip(self.rate.iter_mut()) {
            *s = (c.stats.insts, c.measured_cycles());
            r.mark = *s;
            (r.open, r.window_idle) = ((0, 0), (0, 0));
        }
    }

    /// The end of the run: the counters of warming in progress are dropped.
    pub fn finish(&mut self, sys: &mut TimingSystem) {
        self.end_warming(sys);
    }

    /// The estimate: mean cycles per instruction of the windows and the half-width of its interval at the
    /// configured confidence (normal, as SMARTS: its windows are many and independent).
    pub fn estimate(&self) -> (f64, f64) {
        self.interval(&self.samples)
    }

    /// The mean of `samples` (one a window) and the half-width of its interval at the configured confidence.
    fn interval(&self, samples: &[f64]) -> (f64, f64) {
        let n = samples.len() as f64;
        if n == 0.0 {
            return (f64::NAN, f64::NAN);
        }
        let mean = samples.iter().sum::<f64>() / n;
        if n < 2.0 {
            return (mean, f64::INFINITY);
        }
        let var = samples.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / (n - 1.0);
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
             windows; between them time advanced at each core's estimated CPI (of idle polls and of other work), \
             which the client's, NIC and memory figures include",
        );
        push("windows", self.samples.len() as f64, "measured windows (samples)");
        push("window_insts", self.window as f64, "instructions (all harts) measured per window");
        push(
            "warmup_insts",
            self.warmup as f64,
            "instructions (all harts) timed, not measured, before each window after the first (before the first: a \
             whole period less its window, also timed)",
        );
        push("warming_insts", self.warming as f64, "instructions (all harts) functionally warmed between windows");
        push("timed_insts", self.timed_insts as f64, "instructions timed (warm-ups and windows)");
        push("warmed_insts", self.warmed_insts as f64, "instructions functionally warmed (untimed)");
        push(
            "warming_cpi",
            if self.warmed_insts == 0 { f64::NAN } else { self.warmed_cycles as f64 / self.warmed_insts as f64 },
            "cycles per instruction the clock ran at between windows (all cores' cycles moved while warming over \
             sampling.warmed_insts; NaN when nothing was warmed): an estimate from the windows' rates, not a \
             measurement; compare sampling.cpi",
        );
        push("confidence", self.confidence, "confidence of the intervals");
        push("cpi", cpi, "estimated cycles per instruction (per core, all cores): the windows' mean");
        push("cpi_ci", ci, "half-width of the interval of sampling.cpi");
        push("ipc", 1.0 / cpi, "estimated instructions per cycle per core (1 / sampling.cpi)");
        push("ipc_low", 1.0 / (cpi + ci), "low end of the interval of sampling.ipc");
        push("ipc_high", if ci < cpi { 1.0 / (cpi - ci) } else { f64::INFINITY }, "high end of the interval");
        let (mpki, mpki_ci) = self.interval(&self.mpki_samples);
        push(
            "llc_mpki",
            mpki,
            "estimated LLC misses (every slice's, all causes) per 1,000 instructions: the windows' mean",
        );
        push("llc_mpki_ci", mpki_ci, "half-width of the interval of sampling.llc_mpki");
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

    /// A window of 1,200 instructions in 900 cycles whose first poll (100 instructions, 40 cycles) found nothing
    /// and whose second (1,000 instructions) found frames; a third is in progress at its end.
    fn one_window() -> CoreRate {
        let mut r = CoreRate::new();
        r.poll_end(true, Some((100, 40)), false);
        r.poll_end(false, Some((1100, 840)), false);
        r.end_window((0, 0), (1200, 900));
        r
    }

    #[test]
    fn a_windows_idle_polls_and_work_give_two_rates() {
        let r = one_window();
        assert_eq!(r.idle_cpi, (40 * CPI_ONE).div_ceil(100), "idle polls: 40 cycles for 100 instructions");
        assert_eq!(r.work, (860 * CPI_ONE).div_ceil(1100), "the rest: 860 cycles for 1,100 instructions");
        assert_eq!(r.open, (60, 100), "the poll in progress waits for its class");
    }

    #[test]
    fn between_windows_idle_polls_pass_at_the_idle_rate_and_work_at_the_work_rate() {
        let mut r = one_window();
        let (work, idle) = (r.work as f64 / CPI_ONE as f64, r.idle_cpi as f64 / CPI_ONE as f64);
        let mut cycles = 0;
        for _ in 0..1000 {
            cycles += r.warm_one();
        }
        r.poll_end(false, None, true);
        for _ in 0..2 {
            for _ in 0..74 {
                cycles += r.warm_one();
            }
            r.poll_end(true, None, true);
        }
        for _ in 0..1000 {
            cycles += r.warm_one();
        }
        r.poll_end(false, None, true);
        // One rate for all (the core's last window, 0.75) would give 1,611 cycles.
        let want = 2000.0 * work + 148.0 * idle;
        assert!((cycles as f64 - want).abs() < 2.0, "{cycles} cycles, want {want:.1}");
    }

    #[test]
    fn a_cores_rate_averages_its_windows_not_the_last_one() {
        let mut r = CoreRate::new();
        let (mut at, mut now) = ((0, 0), (0, 0));
        for k in 0..40u64 {
            now = (now.0 + 1000, now.1 + if k % 2 == 0 { 500 } else { 1500 });
            r.mark = at;
            r.end_window(at, now);
            at = now;
        }
        let work = r.work as f64 / CPI_ONE as f64;
        assert!((work - 1.0).abs() < 0.05, "the windows' mean is 1.0, the last 1.5: {work}");
    }

    /// Busy polls of 500 and 4,000 instructions that take 600 cycles plus 0.6 an instruction (the shape measured on
    /// the KVS server, results/speed/README.md "Session 19"), seen whole inside windows by two cores.
    fn cores_that_saw_short_and_long_busy_polls() -> Vec<CoreRate> {
        let mut rates = vec![CoreRate::new(); 2];
        for r in rates.iter_mut() {
            let mut at = (0, 0);
            for k in 0..40u64 {
                let n = if k % 2 == 0 { 500 } else { 4000 };
                let now = (at.0 + n, at.1 + 600 + 6 * n / 10);
                r.mark = at;
                for _ in 0..n {
                    r.timed_one();
                }
                r.poll_end(false, Some(now), false);
                r.end_window(at, now);
                at = now;
            }
        }
        Sampler::fit_busy_polls(&mut rates);
        rates
    }

    /// Cycles (fixed point) a busy poll of `n` instructions moves the clock by between windows.
    fn warmed_busy_poll(r: &mut CoreRate, n: u64) -> i64 {
        let carry = r.carry;
        let mut cycles = 0;
        for _ in 0..n {
            cycles += r.warm_one();
        }
        r.poll_end(false, None, true);
        (cycles * CPI_ONE) as i64 + r.carry - carry
    }

    #[test]
    fn between_windows_a_busy_poll_takes_its_fixed_part_and_its_instructions() {
        let mut rates = cores_that_saw_short_and_long_busy_polls();
        let r = &mut rates[1];
        assert!((r.busy_fixed as f64 / CPI_ONE as f64 - 600.0).abs() < 2.0, "fixed part {}", r.busy_fixed);
        // One rate for all instructions (the windows' mean, 0.867 a cycle) would give 433 and 3,467 cycles: a
        // one-frame poll too fast, a long one too slow.
        for (n, want) in [(500, 900.0), (4000, 3000.0), (500, 900.0)] {
            let got = warmed_busy_poll(r, n) as f64 / CPI_ONE as f64;
            // (The rate an instruction is kept to 1/1,024 cycle, rounded up: 2.3 cycles over 4,000.)
            assert!(
                (got - want).abs() < 1.0 + n as f64 / 1024.0,
                "a poll of {n} instructions took {got:.1} cycles, want {want}"
            );
        }
    }

    /// Two cores' warming loads that miss to memory, core 1's clock `ahead` cycles ahead of core 0's and warming
    /// first, then one timed load of core 0 that misses to memory too: the cycles that timed load took.
    fn timed_miss_after_warming_with_a_core_ahead(ahead: u64) -> u64 {
        use kvsim_timing::synth::{core_params, dram_params, hierarchy_params, load};
        let mut sys = TimingSystem::new(&[core_params(), core_params()], &hierarchy_params(), &dram_params());
        let params = SamplingParams { enabled: true, ..Default::default() };
        let mut sampler = Sampler::new(&params, 2, 1).unwrap();
        (sampler.phase, sampler.left) = (Phase::Warming, u64::MAX);
        sys.cores[1].skip(ahead);
        // Lines 4 KiB apart: one DRAM bank's rows in turn, each read a row miss.
        for hart in [1, 0] {
            for k in 0..64u64 {
                let addr = 0x100_0000 + (hart as u64) * 0x80_0000 + 4096 * k;
                sampler.on_inst(&mut sys, hart, &load(0x1000 + 4 * k, 5, 6, addr));
            }
        }
        (sampler.phase, sampler.left) = (Phase::Window, u64::MAX);
        let before = sys.cores[0].cycles();
        sampler.on_inst(&mut sys, 0, &load(0x2000, 7, 6, 0x300_0000));
        sys.cores[0].cycles() - before
    }

    #[test]
    fn warming_reads_of_a_core_ahead_do_not_hold_up_the_timed_loads_behind_it() {
        // Core 1 is 1,000,000 cycles (400 us) ahead. Its warming reads stamped at its own time booked the DRAM's
        // banks and bus that far ahead, and a later timed load of core 0 waited behind them (10a5972: about
        // 1,000,000 cycles). On the common timeline they are stamped at core 0's time, so the timed load waits
        // for at most the two cores' 128 warming reads ahead of it in the queue, as it would behind timed ones.
        let alone = timed_miss_after_warming_with_a_core_ahead(0);
        let behind = timed_miss_after_warming_with_a_core_ahead(1_000_000);
        assert!(behind < 100_000, "the timed load took {behind} cycles (with the cores together: {alone})");
        assert!(behind <= 2 * alone + 1000, "the timed load took {behind} cycles, {alone} with the cores together");
    }

    #[test]
    fn the_clocks_cpi_between_windows_is_the_cycles_warming_moved_the_cores_by() {
        use kvsim_timing::synth::{alu, core_params, dram_params, hierarchy_params};
        let mut sys = TimingSystem::new(&[core_params(), core_params()], &hierarchy_params(), &dram_params());
        let params = SamplingParams { enabled: true, ..Default::default() };
        let mut sampler = Sampler::new(&params, 2, 1).unwrap();
        (sampler.phase, sampler.left) = (Phase::Warming, u64::MAX);
        // Core 0 works at 1.5 cycles an instruction, core 1 at 0.5 (no fit: each core's work rate).
        (sampler.rate[0].busy_cpi, sampler.rate[1].busy_cpi) = (3 * CPI_ONE / 2, CPI_ONE / 2);
        let before = [sys.cores[0].cycles(), sys.cores[1].cycles()];
        for k in 0..1000u64 {
            for hart in 0..2 {
                sampler.on_inst(&mut sys, hart, &alu(0x1000 + 4 * (k % 16), 5, 6, 7));
            }
        }
        let moved = sys.cores[0].cycles() - before[0] + sys.cores[1].cycles() - before[1];
        assert_eq!(moved, 2000, "1,500 and 500 cycles for 1,000 instructions each");
        let mut stats = Vec::new();
        sampler.stats(&mut stats);
        let stat = |name: &str| stats.iter().find(|s| s.name == format!("sampling.{name}")).unwrap().value;
        assert_eq!(stat("warmed_insts"), 2000.0);
        assert_eq!(stat("warming_cpi"), 1.0, "2,000 cycles over 2,000 warmed instructions");
    }

    #[test]
    fn every_sampling_statistic_says_in_plain_words_what_it_is() {
        // A description is one sentence of words: a line continuation without its `\` once left a run of spaces
        // in sampling.warming_cpi's.
        let params = SamplingParams { enabled: true, ..Default::default() };
        let mut stats = Vec::new();
        Sampler::new(&params, 2, 1).unwrap().stats(&mut stats);
        for s in &stats {
            assert!(!s.desc.is_empty() && !s.desc.contains("  ") && !s.desc.contains('\n'), "{}: {:?}", s.name, s.desc);
        }
        // Nothing warmed yet: no clock rate between windows to report, as sampling.cpi has none without windows
        // (it once read 0 cycles an instruction).
        let warming_cpi = stats.iter().find(|s| s.name == "sampling.warming_cpi").unwrap().value;
        assert!(warming_cpi.is_nan(), "{warming_cpi}");
    }

    #[test]
    fn the_first_window_comes_after_a_whole_period_timed_and_the_seeds_share() {
        // 2 harts, the defaults: a period of 40,000 instructions (all harts), a warm-up of 4,000, a window of
        // 2,000, warming 34,000. Timed before the first window: 34,000 + 4,000 + the seed's share of 34,000 (before
        // session 27, 4,000 + the share: a first window could fall in the detailed phase's cold start).
        use kvsim_timing::synth::{alu, core_params, dram_params, hierarchy_params};
        let mut sys = TimingSystem::new(&[core_params(), core_params()], &hierarchy_params(), &dram_params());
        let params = SamplingParams { enabled: true, ..Default::default() };
        for seed in [1, 2, 3] {
            let mut sampler = Sampler::new(&params, 2, seed).unwrap();
            let mut state = seed ^ 0x5341_4d50_4c45_0000;
            let share = kvsim_base::random::splitmix64(&mut state) % 34_000;
            let mut timed = 0u64;
            while sampler.phase != Phase::Window {
                sampler.on_inst(&mut sys, (timed % 2) as usize, &alu(0x1000 + 4 * (timed % 16), 5, 6, 7));
                timed += 1;
            }
            assert_eq!(timed, 34_000 + 4_000 + share, "seed {seed}");
            assert_eq!((sampler.timed_insts, sampler.warmed_insts), (timed, 0), "seed {seed}: all of it timed");
        }
    }

    #[test]
    fn the_normal_quantile_gives_the_known_points() {
        assert!((normal_quantile(0.975) - 1.959964).abs() < 1e-5);
        assert!((normal_quantile(0.9985) - 2.967738).abs() < 1e-5);
        assert!((normal_quantile(0.5)).abs() < 1e-12);
        assert!((normal_quantile(0.01) + 2.326348).abs() < 1e-5);
    }
}
