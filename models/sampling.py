"""Statistical sampling of the detailed phase (read by the engine's `sampling.rs`), in the manner of SMARTS
(Wunderlich, Wenisch, Falsafi and Hoe, ISCA 2003): the detailed phase alternates between short detailed windows and
long stretches of functional warming, and the measured windows estimate the cycles per instruction with a
confidence interval.

Each period of `period_insts_per_hart x harts` instructions (all harts) starts with a detailed window: first
`warmup_insts_per_hart x harts` instructions timed but not measured (the pipeline, the MSHRs and the queues fill
again: SMARTS's detailed warming), then `window_insts_per_hart x harts` instructions timed and measured. The rest of
the period is functional warming: every instruction updates the caches, the TLBs and the branch predictor (their
contents and replacement state), the memory reads and write-backs it causes reach the memory controllers at the
least time any core has reached (the common timeline: the DRAM model needs its requests in time order; their
queues, banks and bus carry the load they would in a timed run, so the next window does not start on idle memory),
and each core's clock advances by its estimated cycles per instruction, so the NICs, the client and
the scheduler keep a consistent simulated time. The estimate is per class of instruction: a server's idle polls
(known at each poll's end from its poll-end hint), per core, the ratio of exponentially weighted sums of the core's
windows' cycles and instructions (the newest window weighs 1/16, assumed); and its busy polls, a fixed part a poll
and a part an instruction, fitted to the busy polls the windows of all cores saw (a poll's first frames have no
earlier frame to overlap their misses with, so a poll of one frame takes longer an instruction than a long one:
results/speed/README.md "Session 19"); code without hints is all of one class, at each core's mean rate. Why (engine
sampling.rs, measured in results/speed/sampling_table_s18.md): one rate from the last window alone let a window's
noise set a core's speed for the whole stretch, and one rate for both classes let a core's idling speed up its work.
SMARTS's figures (1,000 measured and 2,000 warming instructions per sample) are the per-hart defaults; the period is
assumed (20,000 per hart: 556 windows in the kvmix test's 11 M instructions on one core, 21 in a 20,000-request
target-socket run of 23 M instructions on 60 cores). The first window starts after a whole period timed in full
detail and a random share of the next drawn from System.seed, so a run is deterministic given its seed and different
seeds draw different samples. The whole period: the detailed phase starts cold (the fast-forward before it warms the
caches, not the branch predictors; the pipeline and queues start empty), a transient that warming never leaves
behind; a window in it lent its rate to the clock of the stretches after it (engine sampling.rs `first_timed`;
results/speed/s27_sampling/README.md: a placement whose first windows measured it ran its clock 13% slow).

A sampled run's statistics say so (`sampling.enabled`); the cores', caches', TLBs' and directory's counters cover
the detailed windows only (the warming in between is put back), and `sampling.cpi`, `sampling.cpi_ci`,
`sampling.ipc` and the interval give the estimate, `sampling.llc_mpki` and `llc_mpki_ci` the LLC's misses per 1,000
instructions. The intervals are SMARTS's: the sampling units are the windows (`sampling.windows` of them), each
one sample of the CPI (all cores' cycles over all cores' instructions in it) and of the misses; a half-width is
the normal quantile at `confidence` times the standard error of the windows' mean (their spread across windows
over the square root of their number). The client's throughput and latency, the NICs' and the DRAM's figures
cover the whole phase, whose time between windows is the estimate (not a measurement): `sampling.warming_cpi` is
the CPI that clock ran at, to set beside the windows' `sampling.cpi`. The validation table
(drivers/cli/sampling_table.py) gives throughput and p95 an interval of their own: the run's batch means and the
windows' sampling error carried to them (the windows' CPI half-width over their CPI, times the figure), in
quadrature. Off by default: on the validation table on the KVS server
(sim-scripts/sampling_table.py; reduced, 8 cores, two seeds; results/speed/sampling_table_s23_steady_seed1.md and
_steady_seed2_client2.md, results/speed/README.md "Session 23"), measured in steady state, the throughput's
interval covers the full run in 11 of 11 configurations with a meaningful interval on both seeds (mean error -0.5
and -0.8%; batch32's, -26 and -20%, is too wide to count: the table's rule for throughput and p95, a half-width at
most 25% of the value, drivers/cli/sampling_table.py TOO_WIDE_SHARE), but all four metrics in only 7 and 8: the
windows' IPC and the p95 miss in some rows. The clock between
windows follows the windows with a memory (some 16 windows), so it lags a phase whose CPI drifts (a measured
phase right after the load: 7.7% above its windows on one seed). The windows' IPC misses (2.6-5.0% high) are
their mix, not their warming: after each switch from warming to timing the server's cores poll empty queues for
about twice the full run's time (a transient of the closed loop, not of the predictors or caches, which warming
keeps), so the windows hold more of the fast idle polls; a detailed warm-up of 8,000 instructions a hart covers
4 of the 6 misses (not zipf-crew's) and times 45% of the instructions (results/speed/README.md "Session 25"). On the 60-core target socket
(reduced data set, 121-505 windows) sampling saves only 15-30% of the measured phase's host time: warming costs
64-83% of what timing does an instruction.
"""

from __future__ import annotations

from .params import Param, ParamError, SimObject


class Sampling(SimObject):
    """SMARTS-style sampling of the detailed phase: periodic detailed windows, functional warming between them."""

    enabled = Param.Bool(False, "sample the detailed phase (periodic detailed windows with functional warming of "
                         "caches, TLBs and branch predictors between them) instead of timing every instruction")
    period_insts_per_hart = Param.Count(20_000, "instructions per hart from the start of one detailed window to the "
                                        "next (assumed; see the module doc)",
                                        min=1, max=10**12)
    warmup_insts_per_hart = Param.Count(2_000, "instructions per hart timed but not measured at the start of each "
                                        "window (SMARTS: 2,000)", max=10**12)
    window_insts_per_hart = Param.Count(1_000, "instructions per hart timed and measured in each window "
                                        "(SMARTS: 1,000)", min=1, max=10**12)
    confidence = Param.Float(0.997, "confidence of the reported interval (SMARTS: 99.7%, three standard errors)",
                             min=0.5, max=0.9999)

    def validate(self) -> None:
        super().validate()
        if self.enabled and self.warmup_insts_per_hart + self.window_insts_per_hart >= self.period_insts_per_hart:
            raise ParamError(f"Sampling: warmup_insts_per_hart + window_insts_per_hart = "
                             f"{self.warmup_insts_per_hart + self.window_insts_per_hart} must be below "
                             f"period_insts_per_hart = {self.period_insts_per_hart} (else nothing is sampled)")
