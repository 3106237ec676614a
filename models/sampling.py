"""Statistical sampling of the detailed phase (read by the engine's `sampling.rs`), in the manner of SMARTS
(Wunderlich, Wenisch, Falsafi and Hoe, ISCA 2003): the detailed phase alternates between short detailed windows and
long stretches of functional warming, and the measured windows estimate the cycles per instruction with a
confidence interval.

Each period of `period_insts_per_hart x harts` instructions (all harts) starts with a detailed window: first
`warmup_insts_per_hart x harts` instructions timed but not measured (the pipeline, the MSHRs and the queues fill
again: SMARTS's detailed warming), then `window_insts_per_hart x harts` instructions timed and measured. The rest of
the period is functional warming: every instruction updates the caches, the TLBs and the branch predictor (their
contents and replacement state), and each core's clock advances by the cycles per instruction its last measured
window took, so the NICs, the client and the scheduler keep a consistent simulated time. SMARTS's figures (1,000
measured and 2,000 warming instructions per sample) are the per-hart defaults; the period is assumed (20,000 per
hart: 556 windows in the kvmix test's 11 M instructions on one core, 21 in a 20,000-request target-socket run of
23 M instructions on 60 cores). The first window starts after a random share of the first
period drawn from System.seed, so a run is deterministic given its seed and different seeds draw different samples.

A sampled run's statistics say so (`sampling.enabled`); the cores', caches', TLBs' and directory's counters cover
the detailed windows only (the warming in between is put back), and `sampling.cpi`, `sampling.cpi_ci`,
`sampling.ipc` and the interval give the estimate. The client's throughput and latency, the NICs' and the DRAM's
figures cover the whole phase, whose time between windows is the estimate (not a measurement). Off by default: the
validation table on the KVS server (results/speed/sampling_table_s17.md, sim-scripts/sampling_table.py; reduced, 8
cores) covers the full run's IPC in 6 of 12 of the studies' configurations; the misses are biased high because the
sampled run's poll-mode cores spin more between requests (the time model between windows changes their idle share),
and throughput and p95 err by up to 45% and 28%. On the 60-core target socket the interval is also wide (about +-12%
from 21 windows) and the warming costs most of what timing does.
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
