"""The per-core DVFS policy (drivers/dvfs.py): its choices on a synthetic load, the voltage of each point, the
per-core configuration it writes, the V-f table check, and the power budget check and turbo back-off."""

from __future__ import annotations

import numpy as np
import pytest

import power
from configs import brps_target_socket
from drivers import dvfs
from models.core import Core
from models.params import ParamError
from models.socket import Socket
from models.system import System
from power.from_config import platform_from_config

from power_helpers import synthetic_stats

# mean 100: 300 and 125 are at or above 1.25x the mean (turbo), 10, 20 and 60 at or below 0.6x (low)
LOAD = [300, 10, 60, 61, 100, 124, 125, 20]
EXPECTED = ["turbo", "low", "low", "normal", "normal", "normal", "turbo", "low"]


def test_policy_choices_on_a_synthetic_load():
    assert dvfs.choose(LOAD) == EXPECTED
    assert dvfs.choose([7, 7, 7, 7]) == ["normal"] * 4            # uniform load: nothing to change
    assert dvfs.choose([0, 0, 0]) == ["normal"] * 3               # no load at all: no basis to move a core
    # the thresholds are relative: scaling the load changes nothing
    assert dvfs.choose(np.array(LOAD) * 1e6) == EXPECTED
    strict = dvfs.DvfsPolicy(low_below=0.1, turbo_above=2.0)
    assert dvfs.choose(LOAD, strict) == ["turbo", "low"] + ["normal"] * 6
    for bad in ([], [1, -1], [1, float("nan")]):
        with pytest.raises(ValueError, match="load must be"):
            dvfs.choose(bad)
    with pytest.raises(ParamError, match="turbo_above"):
        dvfs.choose(LOAD, dvfs.DvfsPolicy(turbo_above=0.9))


def test_voltage_at_each_point_on_the_target_node():
    system = brps_target_socket.system(cores=8)
    a = dvfs.assign(system, LOAD)
    assert a.points == EXPECTED
    assert list(a.MHz) == [3500, 1500, 1500, 2500, 2500, 2500, 3500, 1500]
    # 22 nm hp (Vnom 0.8 V, 2.7 GHz at Vnom): the alpha-power law f ~ (V - 0.3)^1.5 / V gives these supplies
    volts = {p: v for p, v in zip(a.points, a.vdd, strict=True)}
    assert volts["low"] == pytest.approx(0.5693, abs=5e-4)
    assert volts["normal"] == pytest.approx(0.7584, abs=5e-4)
    assert volts["turbo"] == pytest.approx(0.9810, abs=5e-4)

    def law(v):                      # the law written out here, independent of power.dvfs
        return (v - 0.375 * 0.8) ** 1.5 / v
    for p, f in (("low", 1500), ("normal", 2500), ("turbo", 3500)):
        assert 2700 * law(volts[p]) / law(0.8) == pytest.approx(f, rel=1e-6)
    assert a.counts() == {"low": 3, "normal": 3, "turbo": 2}
    assert list(a.table().point) == EXPECTED


def test_per_core_configuration_one_socket_and_several():
    system = brps_target_socket.system(cores=8)
    nxt = dvfs.apply(system, dvfs.assign(system, LOAD))
    assert [c.clock for c in nxt.cores] == [int(f * 1e6) for f in (3500, 1500, 1500, 2500, 2500, 2500, 3500, 1500)]
    # every other core parameter is the socket's core, and the original system is untouched
    assert all({**c.to_dict(), "clock": 0} == {**system.core.to_dict(), "clock": 0} for c in nxt.cores)
    assert system.cores == []
    assert platform_from_config(nxt.to_dict()).core_clocks_MHz == (3500, 1500, 1500, 2500, 2500, 2500, 3500, 1500)

    two = System(harts=6, sockets=[Socket(cores=2, core=Core(rob_entries=64)), Socket(cores=4, core=Core())],
                 workload=system.workload, technology=system.technology)
    nxt2 = dvfs.apply(two, dvfs.assign(two, [100, 100, 300, 10, 100, 100]))
    assert [c.clock / 1e9 for c in nxt2.sockets[0].core_models] == [2.5, 2.5]
    assert [c.clock / 1e9 for c in nxt2.sockets[1].core_models] == [3.5, 1.5, 2.5, 2.5]
    with pytest.raises(ValueError, match="6 cores"):
        dvfs.assign(two, [1, 2, 3])


def test_a_point_outside_the_vf_table_is_refused_before_the_run():
    system = brps_target_socket.system(cores=4)
    with pytest.raises(ParamError, match=r"core 0: DVFS point turbo = 4200 MHz is outside the V-f table of the 22 nm "
                                         r"hp node: allowed 1446 to 3897 MHz"):
        dvfs.assign(system, [9, 1, 1, 1], dvfs.DvfsPolicy(turbo_MHz=4200))
    with pytest.raises(ParamError, match=r"core 1: DVFS point low = 1000 MHz .* allowed 1446 to 3897 MHz"):
        dvfs.assign(system, [9, 1, 4, 4], dvfs.DvfsPolicy(low_MHz=1000))
    # any configuration: a core model's clock outside the table names the core and its parameter
    bad = brps_target_socket.system(cores=4)
    bad.cores = [Core(clock="2.5GHz"), Core(clock="2.5GHz"), Core(clock="4GHz"), Core(clock="2.5GHz")]
    with pytest.raises(ParamError, match=r"core 2 \(System\.cores\[2\]\.clock\) = 4000 MHz .* allowed 1446 to 3897"):
        dvfs.check_clocks(bad)
    fixed = brps_target_socket.system(cores=4)
    fixed.technology.vdd = 0.9
    with pytest.raises(ParamError, match="Technology.vdd|technology.vdd"):
        dvfs.assign(fixed, [1, 1, 1, 1])


def _measured(cores: int, load) -> tuple[System, dict]:
    system = brps_target_socket.system(cores=cores)
    stats = synthetic_stats(platform_from_config(system.to_dict()))
    stats.update({f"client.core{c}.requests": float(x) for c, x in enumerate(load)})
    return system, stats


def test_budget_check_pass_and_fail():
    system, stats = _measured(8, LOAD)
    priced = power.price_run(stats, system.to_dict())
    p = priced.runtime_power_W
    ok = dvfs.check_budget(priced, system.to_dict(), budget_W=p * 1.01)
    assert ok.ok and ok.sockets[0].margin_W == pytest.approx(p * 0.01) and "WITHIN" in str(ok)
    over = dvfs.check_budget(priced, system.to_dict(), budget_W=p * 0.99)
    assert not over.ok and over.sockets[0].margin_W == pytest.approx(-p * 0.01) and "OVER budget" in str(over)
    # the configuration's own budget (Technology.tdp = 200 W for the whole target socket) by default
    default = dvfs.check_budget(priced, system.to_dict())
    assert default.sockets[0].budget_W == 200.0 and default.ok
    # a server budget on the total with DRAM and NICs
    total = priced.socket.runtime_power_W
    server = dvfs.check_budget(priced, system.to_dict(), budget_W=1e3, server_budget_W=total * 0.99)
    assert not server.ok and server.sockets[0].ok and server.server.power_W == pytest.approx(total)
    cfg = system.to_dict()
    cfg["technology"]["tdp"] = 0.0
    with pytest.raises(ParamError, match="budget"):
        dvfs.check_budget(priced, cfg)


def test_plan_backs_off_turbo_least_loaded_first_to_fit_the_budget():
    system, stats = _measured(8, LOAD)
    free = dvfs.plan(system, stats, budget_W=1e3)
    assert free.assignment.points == EXPECTED and free.assignment.backed_off == [] and free.budget.ok
    # the prediction scales each core's activity with its clock: turbo cores cost more than at 2.5 GHz
    base = power.price_run(stats, system.to_dict()).runtime_power_W
    one_turbo = dvfs.plan(system, stats, budget_W=1e3, load=[300, 10, 60, 61, 101, 124, 124, 20])  # same mean
    p2, p1 = free.predicted.runtime_power_W, one_turbo.predicted.runtime_power_W
    assert p2 > p1
    # a budget between them: exactly one core backs off, the cooler turbo core (125 < 300), and the plan fits
    fit = dvfs.plan(system, stats, budget_W=(p1 + p2) / 2)
    assert fit.assignment.backed_off == [6] and fit.assignment.points[6] == "normal"
    assert fit.assignment.points[0] == "turbo" and fit.budget.ok
    assert fit.system.cores[6].clock == 2_500_000_000 and fit.system.cores[0].clock == 3_500_000_000
    assert fit.predicted.runtime_power_W == pytest.approx(p1, rel=1e-9)
    # a budget nothing fits: every turbo core backs off and the verdict says over budget
    tight = dvfs.plan(system, stats, budget_W=base * 0.5)
    assert sorted(tight.assignment.backed_off) == [0, 6] and "turbo" not in tight.assignment.points
    assert not tight.budget.ok and "OVER budget" in str(tight.budget)


def test_load_comes_from_the_clients_per_core_counts():
    assert list(dvfs.load_from_stats({"client.core0.requests": 5.0, "client.core1.requests": 7.0}, 2)) == [5, 7]
    with pytest.raises(ValueError, match=r"client\.core1\.requests"):
        dvfs.load_from_stats({"client.core0.requests": 5.0}, 2)


def test_the_loop_on_a_real_skewed_run(engine):
    """Measure a Zipf 0.99 run on 4 cores, plan, run the plan: the engine runs each core at its planned clock, the
    power model prices each core at its planned V and f, and the per-core load does not depend on the clocks."""
    import configs
    from models.sim import simulate

    system = configs.load("kvs_default").system(harts=4, requests=3000, popularity="zipf")
    system.client.items = 4096
    system.client.warmup_requests = 2000
    first = simulate(system)
    load = dvfs.load_from_stats(first.stats, 4)
    plan = dvfs.plan(system, first.stats, budget_W=1e3)
    assert plan.assignment.points[int(np.argmax(load))] == "turbo"
    second = simulate(plan.system)
    for i in range(4):
        assert second.stats[f"system.socket0.core{i}.clock"] == plan.assignment.MHz[i] * 1e6
    priced = power.price_run(second.stats, plan.system.to_dict())
    assert list(priced.core_MHz) == list(plan.assignment.MHz)
    assert list(priced.core_vdd) == pytest.approx(list(plan.assignment.vdd), rel=1e-12)
    assert dvfs.check_budget(priced, plan.system.to_dict(), budget_W=1e3).ok
    # the client offers the same requests to each core whatever the clocks (same seed): a load measure the
    # previous run's clocks do not bias
    assert list(dvfs.load_from_stats(second.stats, 4)) == list(load)


def test_study_runs_the_baseline_then_the_plan_and_prices_both():
    """The study's bookkeeping with a stand-in for the simulator: the baseline runs every core at 2.5 GHz, the
    second run is the plan's configuration, each row priced from its own run at its own clocks."""
    system, stats = _measured(8, LOAD)
    seen = []

    def run(s, label):
        seen.append((label, [c.clock for c in s.cores]))
        out = dict(stats)
        out["client.throughput_mrps"] = 10.0 if label == "baseline" else 12.0
        return out

    table, plan, runs = dvfs.study(system, budget_W=1e3, run=run, report=lambda _: None)
    assert seen[0] == ("baseline", [2_500_000_000] * 8)
    assert seen[1] == ("dvfs", [int(f * 1e6) for f in plan.assignment.MHz]) and plan.assignment.points == EXPECTED
    assert list(table.index) == ["baseline", "dvfs"] and list(table.throughput_mrps) == [10.0, 12.0]
    assert table.loc["dvfs", "cores_turbo"] == 2 and table.loc["dvfs", "cores_low"] == 3
    assert table.loc["baseline", "cores_normal"] == 8
    assert table.loc["dvfs", "die_power_W"] == pytest.approx(
        power.price_run(runs["dvfs"], plan.system.to_dict()).runtime_power_W)
    assert table.within_budget.tolist() == [1.0, 1.0]


def test_prediction_scales_each_cores_counters_with_its_clock():
    system, stats = _measured(4, [1, 1, 1, 1])
    fast = dvfs.at_clock(system, 3500)
    scaled = {k: v * 1.4 if k.startswith("system.socket0.core") else v for k, v in stats.items()}
    expected = power.price_run(scaled, fast.to_dict())
    got = dvfs.predict(stats, system, fast)
    assert got.runtime_power_W == pytest.approx(expected.runtime_power_W, rel=1e-12)
    # the uncore's counters are not scaled: only the cores' activity follows their clocks
    assert got.by_class().loc["caches", "runtime_dynamic_W"] == pytest.approx(
        power.price_run(stats, fast.to_dict()).by_class().loc["caches", "runtime_dynamic_W"], rel=1e-12)
    assert got.by_class().loc["cores", "runtime_dynamic_W"] > power.price_run(
        stats, fast.to_dict()).by_class().loc["cores", "runtime_dynamic_W"]


def test_the_papers_experiment_moves_the_20_coldest_and_6_hottest_cores_of_each_socket():
    rng = np.random.default_rng(3)
    load = rng.permutation(60).astype(float)            # distinct loads 0..59 on one 60-core socket
    points = dvfs.choose_ranked(load, [60])
    assert [points[c] for c in np.argsort(load)[:20]] == ["low"] * 20
    assert [points[c] for c in np.argsort(load)[-6:]] == ["turbo"] * 6
    assert points.count("normal") == 34
    # Two sockets: the rank is per socket, so a socket whose loads are all below the other's still gets 6 turbo.
    two = np.concatenate([load, load + 1000])
    p2 = dvfs.choose_ranked(two, [60, 60])
    assert p2[:60] == points and p2[60:] == points
    # Among equal loads a lower core number counts as colder (a uniform load still moves 26 cores: only rank counts).
    flat = dvfs.choose_ranked([5.0] * 30, [30])
    assert flat == ["low"] * 20 + ["normal"] * 4 + ["turbo"] * 6
    with pytest.raises(ParamError, match="at least 26"):
        dvfs.choose_ranked([1.0] * 8, [8])
    with pytest.raises(ValueError, match="one finite"):
        dvfs.choose_ranked([1.0] * 59, [60])


def test_the_papers_experiment_sets_the_clocks_and_voltages():
    system = brps_target_socket.system(cores=26)
    load = np.arange(26, dtype=float)
    a = dvfs.assign_paper(system, load)
    assert list(a.MHz) == [1500] * 20 + [3500] * 6
    assert a.vdd[0] == pytest.approx(0.5693, abs=5e-4) and a.vdd[-1] == pytest.approx(0.9810, abs=5e-4)
    configured = dvfs.apply(system, a)
    assert [c.clock for c in configured.cores] == [1_500_000_000] * 20 + [3_500_000_000] * 6


def test_study_with_the_papers_experiment_runs_it_beside_the_policy():
    load = [300, 10, 60, 61, 100, 124, 125, 20] * 4 - np.arange(32) * 0.01   # 32 cores, distinct loads
    system, stats = _measured(32, list(load))
    seen = {}

    def run(s, label):
        seen[label] = [c.clock // 1_000_000 for c in s.cores]
        return dict(stats)

    table, plan, runs = dvfs.study(system, budget_W=1e3, run=run, report=lambda _: None, paper=dvfs.PaperPolicy())
    assert list(table.index) == ["baseline", "dvfs", "paper"]
    assert sorted(seen["paper"]).count(1500) == 20 and sorted(seen["paper"]).count(3500) == 6
    hottest = int(np.argmax(load))
    assert seen["paper"][hottest] == 3500 and seen["paper"][int(np.argmin(load))] == 1500
    assert (table.loc["paper", "cores_low"], table.loc["paper", "cores_turbo"]) == (20, 6)
    # Each row is priced at its own clocks: the paper's has 20 cores at 1.5 GHz and 6 at 3.5 GHz of the same activity.
    assert table.loc["paper", "die_power_W"] == pytest.approx(
        power.price_run(runs["paper"], dvfs.apply(dvfs.at_clock(system, 2500),
                                                  dvfs.assign_paper(system, load)).to_dict()).runtime_power_W)
    assert table.loc["paper", "die_power_W"] != pytest.approx(table.loc["baseline", "die_power_W"])
