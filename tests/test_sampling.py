"""Sampling of the detailed phase (System.sampling, models/sampling.py): a sampled run's interval covers the full
run's value, a sampled run is deterministic given its seed and says it was sampled, and bad settings are refused."""

from __future__ import annotations

import pytest

from configs import detailed_default
from models import stats_paths as paths
from models.params import ParamError
from models.sim import simulate
from models.system import System


def _kvmix(rounds: int = 2, sampled: bool = False, seed: int = 1) -> System:
    system = detailed_default.system(rounds=rounds)
    system.seed = seed
    if sampled:
        system.sampling.enabled = True
    return system


def _full_ipc(stats: dict) -> float:
    """Instructions per cycle per core over the measured interval: all cores' instructions over all their cycles
    (the quantity the sampled windows estimate)."""
    insts = sum(paths.CORE.values(stats, "committed_insts"))
    cycles = sum(paths.CORE.values(stats, "cycles"))
    return insts / cycles


@pytest.fixture(scope="module")
def runs(engine):
    return {"full": simulate(_kvmix()).stats, "sampled": simulate(_kvmix(sampled=True)).stats,
            "again": simulate(_kvmix(sampled=True)).stats, "seed2": simulate(_kvmix(sampled=True, seed=2)).stats}


def test_the_sampled_interval_covers_the_full_runs_ipc(runs):
    full, sampled = runs["full"], runs["sampled"]
    stat = lambda name: sampled[paths.SAMPLING.stat(name)]  # noqa: E731
    truth = _full_ipc(full)
    assert stat("windows") >= 30, "too few windows for an interval"
    assert stat("ipc_low") <= truth <= stat("ipc_high"), (
        f"full run IPC {truth:.4f} outside the sampled interval [{stat('ipc_low'):.4f}, {stat('ipc_high'):.4f}]")
    # The interval is informative: narrower than 10% of the value.
    assert stat("ipc_high") - stat("ipc_low") < 0.1 * truth
    # Most instructions were warmed, not timed: that is the point.
    assert stat("warmed_insts") > 3 * stat("timed_insts")


def test_a_sampled_run_says_so_and_counts_only_its_windows(runs):
    full, sampled = runs["full"], runs["sampled"]
    assert sampled[paths.SAMPLING.stat("enabled")] == 1
    assert not any(k.startswith("sampling.") for k in full), "an unsampled run writes no sampling statistics"
    timed = sampled[paths.SAMPLING.stat("timed_insts")]
    assert sum(paths.CORE.values(sampled, "committed_insts")) == timed
    # The L1D's accesses are those of the timed instructions: warming's were put back.
    l1d = sum(paths.PRIVATE_CACHE.values(sampled, "accesses", cache="l1d"))
    l1d_full = sum(paths.PRIVATE_CACHE.values(full, "accesses", cache="l1d"))
    insts_full = sum(paths.CORE.values(full, "committed_insts"))
    assert l1d < l1d_full * timed / insts_full * 1.5


def test_sampling_is_deterministic_given_the_seed(runs):
    assert runs["sampled"] == runs["again"]
    cpi = paths.SAMPLING.stat("cpi")
    assert runs["sampled"][cpi] != runs["seed2"][cpi], "another seed draws other windows"


def test_bad_sampling_settings_are_refused_before_the_run():
    system = _kvmix(sampled=True)
    system.sampling.window_insts_per_hart = system.sampling.period_insts_per_hart
    with pytest.raises(ParamError, match="period_insts_per_hart"):
        system.validate()
    system = System(workload=_kvmix().workload)
    system.sampling.enabled = True
    with pytest.raises(ParamError, match="mode = 'detailed'"):
        system.validate()


def test_a_sampled_kvs_server_idles_as_the_full_run_does(engine):
    """Between windows a busy poll takes a fixed part and a part an instruction (engine sampling.rs): with one
    rate, a poll of few frames passed too fast, the cores' queues grew unequal behind the closed-loop client and the
    cores idled more (the validation table's design point: 2.2x the full run's idle-poll instructions a request).
    And warming's memory traffic is on the cores' common timeline: stamped at each warming hart's own time, it held
    up the windows' loads and the throughput came out low. Three window placements (System.seed): at this small
    point one placement alone swings the throughput by up to 13% (results/speed/README.md "Session 21"), so the
    throughput is judged on their mean; each placement's idling on its own. And each placement's intervals (the
    validation table's, drivers/cli/sampling_table.py: every one carries the spread across the windows) cover the
    full run's throughput, p95, IPC and LLC misses a kilo-instruction: the issue's test that a sampled run's
    interval covers the full run's value on a fixed configuration, with an interval the table counts (not wider
    than its rule, sampling_table.TOO_WIDE_SHARE). 012f089's throughput and p95 intervals were the run's batch means
    alone, without the windows' sampling error: placement 1's throughput (-6.3%) fell outside. And the first window
    comes after a whole period timed (engine sampling.rs, `Sampler::first_timed`): on 30406ac's engine, with the
    first window right after a warm-up of 2,000 instructions a hart, placement 2's first windows measured the
    detailed phase's cold start (2.5, 1.7, 1.3 cycles an instruction against about 0.65), its clock between windows
    ran 13% slow and its p95 interval [11.10, 15.62] us missed the full run's 9.59; placement 1 idled 1.78x the full
    run (57.3 against 32.2 instructions a request) (results/speed/s27_sampling/README.md)."""
    from drivers.cli import sampling_table as table

    scale = {"cores": 4, "items": 1 << 16, "requests_per_core": 2000}
    full = table.run("base", False, **scale)[0]
    sampled = [table.run("base", True, seed=seed, **scale)[0] for seed in (1, 2, 3)]
    truth = table.figures(full)
    for seed, s in zip((1, 2, 3), sampled):
        assert s[paths.SAMPLING.stat("windows")] >= 90, "the intervals need their windows"
        verdicts = table.row("base", full, s, (0.0, 0.0))[1]   # covered, not missed nor too wide to count
        for metric, (low, high) in table.intervals(s).items():
            assert verdicts[metric] == "covered", \
                f"seed {seed}: {metric} {truth[metric]:.4f} {verdicts[metric]} by [{low:.4f}, {high:.4f}]"
    for seed, s in zip((1, 2, 3), sampled):
        idle = full[table.IDLE], s[table.IDLE]
        assert idle[1] < 1.4 * idle[0], f"seed {seed}: idle-poll instructions a request: full {idle[0]:.1f}, " \
                                        f"sampled {idle[1]:.1f}"
    mrps = full["client.throughput_mrps"], [s["client.throughput_mrps"] for s in sampled]
    mean = sum(mrps[1]) / len(mrps[1])
    assert abs(mean / mrps[0] - 1) < 0.05, f"throughput: full {mrps[0]:.3f}, sampled {mrps[1]} M req/s"


def test_a_sampled_kvs_server_run_is_deterministic_given_its_seed(engine):
    """A sampled run of the KVS server (the validation table's workload: poll-end hints, the clock between windows,
    warming's memory traffic on the common timeline, the NIC and the closed-loop client) repeated with the same seed
    gives the same statistics, every one; another seed places the windows elsewhere (issue 24: "identical statistics
    ... for sampled runs given the same seed"). The kvmix test above has no server, client nor NIC."""
    from drivers.cli import sampling_table as table

    scale = {"cores": 2, "items": 1 << 14, "requests_per_core": 1000}
    first, again, other = (dict(simulate(table.system("base", True, seed=seed, **scale)).stats) for seed in (1, 1, 2))
    assert first[paths.SAMPLING.stat("windows")] >= 10, "too few windows to exercise the clock between them"
    assert first == again
    assert first[paths.SAMPLING.stat("cpi")] != other[paths.SAMPLING.stat("cpi")], "another seed draws other windows"
