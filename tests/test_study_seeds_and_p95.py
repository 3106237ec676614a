"""Issue 28, item 2's remaining parts: the p95 with its interval (batch means of the batches' p95s), repeated
seeds of one data set (client.measure_seed, steady_state.replicate, the evaluators' `seeds` option), and item 1's
remaining studies on Conditions (partition load, dense, the seed systems), plus `figures --only`."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from drivers import steady_state as ss
from drivers.studies import common
from models.params import ParamError


def _state(throughput: float, half: float, p95: float, length: int = 1000, converged: bool = True) -> ss.SteadyState:
    w = ss.Window(length, np.full(30, throughput), throughput, 0.97, p95, 0.1 * p95, 30)
    return ss.SteadyState([w], half, converged, "converged" if converged else "stopped")


# ---- the p95 and its interval -----------------------------------------------------------------------------------

def test_the_p95_interval_is_t_times_the_batches_spread_over_root_batches():
    stats = {"client.latency.p95": 5000.0, "client.latency.p95_batches": 30.0, "client.latency.p95_batch_sd": 300.0}
    p95, half, batches = ss.p95_interval(stats)
    assert (p95, batches) == (5000.0, 30)
    assert half == pytest.approx(2.0452 * 300.0 / math.sqrt(30), rel=1e-4)         # t(0.975, 29) = 2.0452
    # Too few responses for batches: no interval, said as NaN (never a zero width).
    p95, half, batches = ss.p95_interval({**stats, "client.latency.p95_batches": 0.0})
    assert p95 == 5000.0 and math.isnan(half) and batches == 0
    with pytest.raises(ValueError, match="p95_batch_sd"):
        ss.p95_interval({"client.latency.p95": 1.0, "client.latency.p95_batches": 30.0})


# ---- repeated seeds ---------------------------------------------------------------------------------------------

def test_repeated_seeds_give_the_mean_and_the_t_interval_over_the_seeds():
    rep = ss.replicate(lambda seed: _state([100.0, 104.0, 96.0][seed], 1.0, [10.0, 12.0, 11.0][seed]), 3)
    st = rep.stats()
    assert st["steady.seeds"] == 3 and rep.seeds == [0, 1, 2]
    assert st["steady.throughput"] == pytest.approx(100.0)
    assert st["steady.half_width"] == pytest.approx(4.3027 * 4.0 / math.sqrt(3), rel=1e-4)   # t(0.975, 2) = 4.3027
    assert st["steady.p95_ns"] == pytest.approx(11.0)
    assert st["steady.p95_half_width_ns"] == pytest.approx(4.3027 * 1.0 / math.sqrt(3), rel=1e-4)
    assert (st["steady.seed1.throughput"], st["steady.seed2.p95_ns"]) == (104.0, 11.0)
    # One seed: its own window's intervals, unchanged.
    one = ss.replicate(lambda seed: _state(100.0, 1.5, 10.0), 1).stats()
    assert (one["steady.half_width"], one["steady.p95_half_width_ns"], one["steady.seeds"]) == (1.5, 1.0, 1.0)
    # Converged only if every seed did.
    assert ss.replicate(lambda seed: _state(100.0, 1.0, 10.0, converged=seed == 0), 2).stats()["steady.converged"] == 0
    with pytest.raises(ParamError, match="seeds = 0"):
        ss.replicate(lambda seed: _state(1.0, 1.0, 1.0), 0)


def test_the_measure_seed_gives_its_own_stream_repeatably(engine):
    from models.sim import simulate

    def run(seed: int | None):
        s = common.target(2, items=1 << 12, requests_per_core=1)
        s.client.requests = 1000
        s.client.get_ratio = 0.5
        if seed is not None:
            s.client.measure_seed = seed
        return simulate(s).stats

    plain, zero, again, other = run(None), run(0), run(3), run(4)
    assert plain == zero                                   # 0: the load's stream continues, as before
    assert run(3) == again                                 # determinism: same configuration, same statistics
    assert other["client.gets"] != again["client.gets"]    # another seed: other keys and operations
    assert again["client.gets"] != plain["client.gets"]
    # The checkpoint does not depend on it: every seed restores one load.
    from drivers.sweep.data_set import data_set_key

    configs = []
    for seed in (0, 5):
        s = common.target(2, items=1 << 12, requests_per_core=1)
        s.client.measure_seed = seed
        configs.append(s.to_dict())
    assert data_set_key(configs[0]) == data_set_key(configs[1])


def test_the_steady_window_runs_the_rule_once_per_seed(monkeypatch):
    from drivers.sweep import evaluators

    seen = []

    def fake_window(make, service, runner=None):
        def run(requests):
            s = make(requests)
            seen.append(s.client.measure_seed)
            rate = 100.0 + 2.0 * s.client.measure_seed
            stats = {"client.offered_mpps": 1.0, "client.packets": 10.0, "client.requests": 10.0,
                     "client.throughput_mrps": rate}
            return ss.Window(requests, np.full(30, rate), rate, float("nan"), 9.0, 0.5, 30, stats)
        return run

    monkeypatch.setattr(ss, "simulated_window", fake_window)

    def make(rate):
        return SimpleNamespace(client=SimpleNamespace(requests=50, measure_seed=0, offered_mpps=rate))

    res = SimpleNamespace(probes=[], offered_mpps=1.0, max_loss=0.01)
    stats, windows = evaluators.steady_window(make, res, {"seeds": 3}, lambda text: None)
    assert seen == [0, 1, 2] and stats["steady.seeds"] == 3
    assert stats["steady.throughput"] == pytest.approx(102.0)
    assert stats["steady.half_width"] == pytest.approx(4.3027 * 2.0 / math.sqrt(3), rel=1e-4)
    assert [w["seed"] for w in windows] == [0, 1, 2]


def test_seeds_apply_where_the_clients_randomness_matters():
    from drivers.studies import end_to_end, servers

    opts = {"seeds": 3}
    assert end_to_end.seeds_for(servers.server(1, cores=4, popularity="uniform", mode="erew"), opts) == 1
    assert end_to_end.seeds_for(servers.server(1, cores=4, popularity="zipf", mode="erew"), opts) == 3
    assert end_to_end.seeds_for(servers.server(1, cores=4, popularity="uniform", mode="crew"), opts) == 3
    assert end_to_end.seeds_for(servers.server(1, cores=4, popularity="zipf", mode="crew"), {}) == 1


# ---- the plots draw the intervals and the split MPKI ------------------------------------------------------------

def test_the_llc_plot_draws_the_three_mpki_series_and_the_interval(tmp_path, monkeypatch):
    from analysis import style
    from drivers.studies import llc

    drawn = {}
    monkeypatch.setattr(style, "save", lambda fig, path, caption="": drawn.setdefault("fig", fig))
    df = pd.DataFrame({"llc_per_core_kb": [512, 768, 1024], "throughput_mrps": [90.0, 100.0, 101.0],
                       "throughput_ci_mrps": [1.0, 1.2, 0.9], "llc_mpki": [3.0, 2.5, 2.4],
                       "llc_demand_mpki": [2.0, 1.6, 1.5], "llc_sw_prefetch_mpki": [0.6, 0.5, 0.5],
                       "llc_hw_prefetch_mpki": [0.0, 0.0, 0.0], "llc_dma_mpki": [0.4, 0.4, 0.4]})
    llc.plot(df, tmp_path / "llc.png")
    fig = drawn["fig"]
    labels = {line.get_label() for ax in fig.axes for line in ax.get_lines()}
    assert {name for _, _, _, name in llc.MPKI_SERIES} <= labels
    assert any(c.get_label() == style.STEADY_INTERVAL for ax in fig.axes for c in ax.containers)


def test_the_end_to_end_plot_draws_the_p95_interval(tmp_path, monkeypatch):
    from analysis import style
    from drivers.studies import end_to_end

    drawn = {}
    monkeypatch.setattr(style, "save", lambda fig, path, caption="": drawn.setdefault("fig", fig))
    rows = [{"sockets": 2, "workload": "Uniform", "get_ratio": g, "mode": m, "throughput_mrps": 400.0,
             "throughput_ci_mrps": 4.0, "p95_us": 20.0, "p95_ci_us": 1.0}
            for g in (0.95, 0.5) for m in ("EREW", "CREW")]
    end_to_end.plot(pd.DataFrame(rows), tmp_path / "e2e.png")
    labels = [c.get_label() for ax in drawn["fig"].axes for c in ax.containers]
    assert style.STEADY_INTERVAL in labels and style.P95_INTERVAL in labels


# ---- the remaining studies on Conditions ------------------------------------------------------------------------

def test_partition_load_defaults_to_the_papers_data_set_and_names_it():
    from drivers.studies import partition_load as pl

    paper = pl.sweeps()
    assert [s.name for s in paper] == [f"partition-load-{n}c-192Mi" for n in pl.CORE_COUNTS]
    assert paper[0].base.kwargs["items"] == common.PAPER_ITEMS
    assert paper[0].base.kwargs["requests_per_core"] == pl.FULL_REQUESTS_PER_CORE
    reduced = pl.sweeps(conditions=common.Conditions(reduced=True, items=None))
    assert [s.name for s in reduced] == [s.name for s in pl.sweeps(full=False)] == \
        [f"partition-load-{n}c" for n in pl.CORE_COUNTS]
    assert reduced[0].base.kwargs == {"cores": 24, "items": pl.ITEMS, "requests_per_core": pl.REQUESTS_PER_CORE}


def test_partition_load_and_dense_take_the_conditions():
    # The seed-system studies (issue 30) keep their own scales (drivers/studies/seed_*.py: the paper's conditions as
    # far as this host allows, or --reduced); the billion-RPS studies all take Conditions.
    from drivers import studies

    for name in ("partition_load", "dense"):
        assert studies.takes_conditions(studies.get(name)), name


# ---- figures --only ---------------------------------------------------------------------------------------------

def test_only_runs_the_points_named_and_keeps_their_keys():
    from drivers.cli import figures
    from drivers.studies import llc

    sweep = llc.sweeps(conditions=common.Conditions(items=1 << 22))[0]
    only = figures.only_points(sweep, figures.parse_only([f"caches.llc.size={768 * 1024 * 60}"]))
    (point,) = only.resolve()
    assert point.params["caches.llc.size"] == 768 * 1024 * 60
    assert point.key in {p.key for p in sweep.resolve()}          # the whole sweep finds it stored later
    with pytest.raises(ParamError, match="PATH=VALUE"):
        figures.parse_only(["caches.llc.size"])
    with pytest.raises(ParamError, match="varies caches.llc.size"):
        figures.only_points(sweep, {"core.rob_entries": "64"})
    assert figures.only_points(sweep, {"caches.llc.size": "1"}) is None     # a sweep of a study without it: skipped
    with pytest.raises(ParamError, match="no point"):
        figures.check_only([sweep], {"caches.llc.size": "1"})


def test_only_with_several_values_of_one_path_runs_each_of_them():
    """`--only P=a --only P=b` once kept only b, silently."""
    from drivers.cli import figures
    from drivers.studies import llc

    sweep = llc.sweeps(conditions=common.Conditions(items=1 << 22, all_points=True))[0]
    small, large = 256 * 1024 * 60, 2048 * 1024 * 60
    only = figures.parse_only([f"caches.llc.size={small}", f"caches.llc.size={large}"])
    assert only == {"caches.llc.size": (str(small), str(large))}
    assert sorted(p.params["caches.llc.size"] for p in figures.only_points(sweep, only).resolve()) == [small, large]


def test_a_bad_only_is_refused_before_any_work(tmp_path):
    from drivers.cli import figures

    rc = figures.main(["--study", "llc", "--items", str(1 << 22), "--only", "caches.llc.size=1", "--store",
                       str(tmp_path / "sweeps"), "--outdir", str(tmp_path / "out"), "--no-progress"])
    assert rc == 2 and not (tmp_path / "sweeps").exists() and not (tmp_path / "out").exists()


def test_the_steady_window_command_refuses_bad_input_before_any_run(capsys):
    from drivers.cli import steady_window

    with pytest.raises(SystemExit) as err:
        steady_window.main(["--cores", "0"])
    assert err.value.code == 2 and "at least 1" in capsys.readouterr().err
    assert steady_window.main(["--cores", "2", "--items", "4096", "--seeds", "0"]) == 2
    assert "seeds = 0" in capsys.readouterr().out


def test_the_llc_plot_draws_each_driver_beside_the_other(tmp_path, monkeypatch):
    from analysis import style
    from drivers.studies import llc

    drawn = {}
    monkeypatch.setattr(style, "save", lambda fig, path, caption="": drawn.setdefault("fig", fig))

    def df(mrps):
        return pd.DataFrame({"llc_per_core_kb": [512, 768], "throughput_mrps": mrps, "throughput_ci_mrps": [1.0, 1.0],
                             "llc_mpki": [3.0, 2.5], "llc_demand_mpki": [2.0, 1.6], "llc_sw_prefetch_mpki": [0.6, 0.5],
                             "llc_hw_prefetch_mpki": [0.0, 0.0], "llc_dma_mpki": [0.4, 0.4]})
    llc.plot({"dpdk": df([90.0, 100.0]), "compact": df([95.0, 101.0])}, tmp_path / "llc.png")
    fig = drawn["fig"]
    bars = [c for ax in fig.axes for c in ax.containers if c.get_label().startswith("throughput")]
    assert len(bars) == 2 and {b.get_label() for b in bars} == {f"throughput ({d[1]})" for d in llc.DRIVERS.values()}
    # Side by side at each LLC size, not on top of each other.
    assert bars[0][0].get_x() < bars[1][0].get_x() and bars[1][0].get_x() < 1 - 0.4
    labels = {line.get_label() for ax in fig.axes for line in ax.get_lines()}
    assert f"{llc.MPKI_SERIES[0][3]} ({llc.DRIVERS['compact'][1]})" in labels


def test_runs_of_one_point_each_draw_every_point_the_sweep_has_stored(tmp_path):
    # `--only` runs list only their own point in the store's manifest; the draw must still show the others stored
    # (the LLC study's key points at full conditions are run one command at a time).
    import argparse
    import dataclasses

    from rich.console import Console

    from drivers.cli import figures
    from drivers.studies import llc

    sweep = dataclasses.replace(llc.sweeps(conditions=common.Conditions(items=1 << 22))[0],
                                evaluator="drivers.synthetic:evaluate_point", options={"sleep_ms": 0},
                                share_checkpoint=False)
    args = argparse.Namespace(sweep=[], only={}, draw_only=False, store=str(tmp_path), jobs=1, scheduler=None,
                              no_progress=True)
    console, summary = Console(stderr=True), []
    for kb in (768, 512):
        only = {**vars(args), "only": {"caches.llc.size": str(kb * 1024 * 60)}}
        table = figures.run_sweep(sweep, argparse.Namespace(**only), console, summary)
    assert sorted(table["param.caches.llc.size"] // 60 // 1024) == [512, 768]
    drawn = figures.run_sweep(sweep, argparse.Namespace(**{**vars(args), "draw_only": True}), console, summary)
    assert sorted(drawn["param.caches.llc.size"] // 60 // 1024) == [512, 768]
    # A store none of whose points is this sweep's (here: other options, so other keys; on a real host a run stopped
    # before its first point ended, or points of another engine build) draws as empty, not as a table without columns.
    other = dataclasses.replace(sweep, options={"sleep_ms": 1})
    empty = figures.run_sweep(other, argparse.Namespace(**{**vars(args), "draw_only": True}), console, summary)
    assert len(empty) == 0 and "status" in empty
    assert empty[empty.status == "ok"].empty          # what every study's frame() selects


def test_the_llc_report_lists_the_points_not_run_and_each_drivers_shared_load(tmp_path, monkeypatch):
    # A point the conditions have but no run measured is named as not run, never left silently out; each driver's
    # shared load gives its host time from its checkpoint record, or says there is none.
    import json

    from drivers.studies import llc

    measured = pd.DataFrame({"llc_per_core_kb": [512, 1024]})
    assert llc.not_run(llc.PER_CORE_KB, measured) == [256, 768, 2048]
    assert llc.not_run(llc.KEY_PER_CORE_KB, None) == llc.KEY_PER_CORE_KB
    assert llc.not_run_text(llc.PER_CORE_KB, measured).endswith("256 KB, 768 KB, 2 MB per core.")
    assert llc.not_run_text(llc.KEY_PER_CORE_KB, pd.DataFrame({"llc_per_core_kb": [1024, 768, 512]})) == \
        "Every point of these conditions was measured."

    c = common.Conditions(items=1 << 22)
    dpdk, compact = (sw.resolve()[0].data_set for sw in llc.sweeps(conditions=c))
    monkeypatch.setattr(llc, "DEFAULT_STORE", tmp_path)
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / f"{dpdk}.json").write_text(json.dumps(
        {"insts": 8.5e9, "cpu_seconds": 87.4, "host_seconds": 92.0, "bytes": 1.28e9}))
    first, second = llc.load_texts(c)
    assert "8.50 G instructions, 87 s CPU, 92 s wall, checkpoint 1.28 GB" in first
    assert first.startswith(f"shared load, {llc.DRIVERS['dpdk'][1]}")
    assert "no record" in second and compact in second
    assert llc.load_texts(common.Conditions(reduced=True, items=None)) == []


def test_the_llc_plot_takes_a_log_mpki_axis_only_where_the_nonzero_series_span_decades():
    from drivers.studies import llc

    def df(demand, sw, dma):
        return pd.DataFrame({"llc_per_core_kb": [512], "llc_demand_mpki": [demand], "llc_sw_prefetch_mpki": [sw],
                             "llc_dma_mpki": [dma]})
    assert llc.mpki_log_threshold({"dpdk": df(0.1, 3.7, 0.00023)}) == pytest.approx(1e-4)   # the full-condition split
    assert llc.mpki_log_threshold({"dpdk": df(2.0, 0.6, 0.4)}) is None                        # within two decades
    assert llc.mpki_log_threshold({"dpdk": df(0.09, 3.6, 0.0)}) is None                       # nonzero: within 2
    # A window with no DMA allocation (0) beside one with some: log above the smallest nonzero value's decade.
    assert llc.mpki_log_threshold({"dpdk": df(0.09, 3.6, 0.0), "compact": df(0.1, 3.7, 0.0095)}) == pytest.approx(1e-3)
    # A CSV from before the MPKI split (only the total llc_mpki): a linear axis, not a crash.
    assert llc.mpki_log_threshold({"dpdk": pd.DataFrame({"llc_per_core_kb": [512], "llc_mpki": [3.8]})}) is None


def test_the_llc_report_reads_the_shared_loads_record_from_the_store_the_sweep_ran_in(tmp_path):
    """A sweep run with --store keeps its shared load's record in that store's checkpoints; the report cites it from
    there (it read the default store's and said "no record" for a load that was there)."""
    import json

    import pandas as pd

    from drivers.studies import common, llc
    from drivers.sweep import checkpoint_dir

    c = common.Conditions(items=1 << 22)
    default_sweep = llc.sweeps(conditions=c)[0]
    record = checkpoint_dir(tmp_path, default_sweep.resolve()[0].data_set).with_suffix(".json")
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"insts": 1.5e9, "cpu_seconds": 42.0, "host_seconds": 50.0, "bytes": 2.5e9}))
    table = pd.DataFrame({"status": pd.Series([], dtype=str)})
    table.attrs["checkpoint_root"] = str(tmp_path)
    compact_sweep = llc.sweeps(conditions=c)[1]
    texts = llc.load_texts(c, {default_sweep.name: table, compact_sweep.name: table})
    assert texts[0].endswith("1.50 G instructions, 42 s CPU, 50 s wall, checkpoint 2.50 GB (once per driver; not in "
                             "the points' host time)")
    assert f"no record in {tmp_path.name}/checkpoints" in texts[1]       # the compact driver's: not loaded there


def test_figures_with_store_gives_the_llc_report_that_stores_shared_load_record(tmp_path, monkeypatch):
    """`kvsim figures --study llc --store DIR`: the report's shared-load line cites the record in DIR's checkpoints,
    through the command's own wiring (each table told the store it ran in), not a table set up by hand. The sweeps
    are not run (their tables come back empty) and the report is reduced to its shared-load lines."""
    import json

    import pandas as pd

    from drivers.cli import figures
    from drivers.studies import common, llc
    from drivers.sweep import checkpoint_dir

    c = common.Conditions(items=1 << 22)
    store = tmp_path / "store"
    default_sweep, compact_sweep = llc.sweeps(conditions=c)
    record = checkpoint_dir(store, default_sweep.resolve()[0].data_set).with_suffix(".json")
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"insts": 1.5e9, "cpu_seconds": 42.0, "host_seconds": 50.0, "bytes": 2.5e9}))
    ran, texts = [], []
    monkeypatch.setattr(figures, "run_sweep", lambda sw, *_: ran.append(sw.name) or
                        pd.DataFrame({"status": pd.Series([], dtype=str)}))
    monkeypatch.setattr(llc, "make", lambda tables, outdir, conditions=None, **_:
                        texts.extend(llc.load_texts(conditions, tables)) or [])
    assert figures.main(["--study", "llc", "--items", str(1 << 22), "--store", str(store),
                         "--outdir", str(tmp_path / "out"), "--no-progress"]) == 0
    assert ran == [default_sweep.name, compact_sweep.name]
    assert texts[0].endswith("1.50 G instructions, 42 s CPU, 50 s wall, checkpoint 2.50 GB (once per driver; not in "
                             "the points' host time)")
    assert "no record in store/checkpoints" in texts[1]       # the compact driver's: not loaded there
