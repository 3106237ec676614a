"""The power model reads the counters the engine writes: the coherence directory's (`system.socket0.directory.*`)
and the cores' FP classes. On a real small run, each moves the priced power."""

from __future__ import annotations

import pytest

import power
from models.sim import simulate
from power.activity import DIRECTORY_REQUESTS, FP_CLASSES
from power.from_config import platform_from_config

from conftest import BUILD, make_system


def _runtime(result, component: str) -> float:
    df = result.structures
    return float(df.loc[df.component == component, "runtime_dynamic_W"].sum())


def _clock(result, component: str) -> float:
    df = result.structures
    return float(df.loc[df.component == component, "clock_W"].sum())


def test_directory_counters_of_a_kvs_run_move_its_power(engine):
    import configs

    system = configs.load("kvs_default").system(harts=4, requests=2000)
    system.client.items = 4096
    system.client.warmup_requests = 1000
    stats = dict(simulate(system).stats)
    config = system.to_dict()
    platform = platform_from_config(config)
    assert [d.name for d in platform.directories] == ["directory"]
    d = "system.socket0.directory."
    requests = sum(stats[d + k] for k in DIRECTORY_REQUESTS)
    assert requests > 1000 and stats[d + "back_invalidations"] >= 0
    act = power.from_stats(stats, platform)
    assert act.directories["directory"].reads == requests
    assert act.directories["directory"].writes == requests + stats[d + "back_invalidations"]
    assert not [m for m in act.missing if "directory" in m]
    priced = power.price_run(stats, config)
    assert _runtime(priced, "directory") > _clock(priced, "directory") >= 0
    quiet = dict(stats)
    for k in DIRECTORY_REQUESTS + ("back_invalidations",):
        quiet[d + k] = 0.0
    idle = power.price_run(quiet, config)
    assert _runtime(idle, "directory") == pytest.approx(_clock(idle, "directory"), rel=1e-12)
    assert idle.runtime_power_W < priced.runtime_power_W
    # Event power is linear in the directory's traffic, up to the run's own: this small run's directory stays
    # below its peak (a counted access costs at most an access at peak; the directory's law used to charge e^2.54
    # times the peak energy per access at 22 nm, which put this run at its peak cap).
    df = priced.structures
    assert _runtime(priced, "directory") < 0.5 * float(df.loc[df.component == "directory", "peak_dynamic_W"].sum())

    def events_at(scale):
        scaled = dict(stats)
        for k in DIRECTORY_REQUESTS + ("back_invalidations",):
            scaled[d + k] *= scale
        r = power.price_run(scaled, config)
        return _runtime(r, "directory") - _clock(r, "directory")

    assert events_at(0.25) == pytest.approx(2 * events_at(0.125), rel=1e-9)
    assert events_at(1.0) == pytest.approx(2 * events_at(0.5), rel=1e-9)
    assert 0 < events_at(0.125) < events_at(0.25) <= _runtime(priced, "directory") - _clock(priced, "directory")


def test_fp_counters_of_a_linpack_run_move_its_power(engine, workloads_built):
    system = make_system(BUILD / "glibc" / "linpack", ["20"], mode="detailed", max_insts=3_000_000)
    result = simulate(system)
    assert result.exit_code == 0
    stats = dict(result.stats)
    core = "system.socket0.core0."
    classes = {c: stats[core + c] for c in FP_CLASSES}
    assert classes["fp_fma_ops"] > 1000 and classes["fp_div_ops"] > 10
    config = system.to_dict()
    platform = platform_from_config(config)
    act = power.from_stats(stats, platform).cores[0]
    # the FP counters come from the classes (the core's own fp_ops placeholder is not trusted)
    assert act.fp_ops == sum(classes.values())
    assert act.fp_rf_reads == (2 * classes["fp_add_ops"] + 2 * classes["fp_mul_ops"] + 3 * classes["fp_fma_ops"]
                               + classes["fp_cvt_ops"] + 2 * classes["fp_div_ops"])
    assert act.fp_iq_writes == act.fp_rf_writes == act.fp_ops
    priced = power.price_run(stats, config)
    no_fp = dict(stats)
    for c in FP_CLASSES:
        no_fp[core + c] = 0.0
    without = power.price_run(no_fp, config)
    for component in ("core.exu.fpus", "core.exu.regfile", "core.scheduler.iq", "core.rename"):
        assert _runtime(priced, component) > _runtime(without, component), component
    assert priced.runtime_power_W > without.runtime_power_W
