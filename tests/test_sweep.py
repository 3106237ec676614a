"""The sweep runner (drivers/sweep/) with a synthetic evaluator (drivers/synthetic.py): resume after kill -9,
failed points, the Dask back-end, the key, the spaces and bad sweeps. The configurations are the real ones
(configs/brps_target_socket.py), resolved and validated; only the measurement is made up."""

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from analysis.sweeps import load_sweep
from drivers import sweep as sw
from drivers.sweep import Base, Grid, LatinHypercube, List, Product, Random, Sweep, Zip
from models.params import ParamError

ROOT = sw.ROOT
SYNTHETIC = "drivers.synthetic:evaluate_point"


def synthetic_sweep(name="syn", sleep_ms=0, seeds=(1, 2, 3), robs=(1, 16, 64, 128)):
    return Sweep(name, Base("brps_target_socket", cores=2),
                 Grid({"core.rob_entries": list(robs), "client.seed": list(seeds)}),
                 evaluator=SYNTHETIC, options={"sleep_ms": sleep_ms})


def comparable(table: pd.DataFrame) -> pd.DataFrame:
    """The table without host timing, wall and CPU (which differ between runs)."""
    return table.drop(columns=["host_seconds", "cpu_seconds"]).sort_values("key").reset_index(drop=True)


def test_a_sweep_runs_every_point_once_and_resumes_without_rerunning(tmp_path):
    s = synthetic_sweep()
    first = sw.run(s, store=tmp_path, jobs=2, progress=False)
    assert (first.points, first.ran, first.skipped, first.failed) == (12, 12, 0, 0)
    again = sw.run(s, store=tmp_path, jobs=2, progress=False)
    assert (again.ran, again.skipped) == (0, 12)
    table = load_sweep(tmp_path)
    assert len(table) == 12 and table.key.is_unique and (table.status == "ok").all()
    assert list(table["param.core.rob_entries"]) == [1, 1, 1, 16, 16, 16, 64, 64, 64, 128, 128, 128]
    assert (table["cfg.core.rob_entries"] == table["param.core.rob_entries"]).all()
    # The statistic follows the parameter: the synthetic IPC rises with the ROB.
    ipc = table.groupby("param.core.rob_entries")["stat.system.socket0.core0.ipc"].first()
    assert ipc.is_monotonic_increasing and ipc.iloc[0] < ipc.iloc[-1]


SWEEP_FILE = """
from drivers.sweep import Base, Grid, Sweep
SWEEP = Sweep("killed", Base("brps_target_socket", cores=2),
              Grid({{"core.rob_entries": [1, 8, 16, 32, 64, 128], "client.seed": [1, 2, 3]}}),
              evaluator="drivers.synthetic:evaluate_point", options={{"sleep_ms": {sleep}}})
"""


@pytest.mark.slow
def test_kill_9_then_resume_gives_the_uninterrupted_table(tmp_path):
    sweep_file = tmp_path / "killed_sweep.py"
    sweep_file.write_text(SWEEP_FILE.format(sleep=300))
    store = tmp_path / "store"
    cmd = [sys.executable, "-m", "drivers.cli.sweep", str(sweep_file), "--store", str(store),
           "--jobs", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    # Waits for the sweep's progress, not for a time: the deadline only stops a hung test (a slow host waits longer).
    deadline = time.monotonic() + 600
    while (proc.poll() is None and time.monotonic() < deadline
           and len(list((store / "points").glob("*.json"))) < 4):
        time.sleep(0.05)
    assert proc.poll() is None, f"the sweep ended (status {proc.returncode}) before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)          # the driver and its workers, mid-sweep
    proc.wait()
    stored = {p.name for p in (store / "points").glob("*.json")}
    assert 4 <= len(stored) < 18, "killed in the middle"
    for path in (store / "points").glob("*.json"):
        json.loads(path.read_text())             # every stored record is whole
    # A worker killed between its record's fsync and its rename left the whole record under its temporary name:
    # the resume puts it in place (tests/test_sweep_orphans.py makes that case on purpose).
    whole_orphans = sum(1 for path in (store / "points").glob(".*.tmp-*") if _whole_json(path))
    from drivers.sweep import load_sweep_module

    resumed = sw.run(load_sweep_module(sweep_file)[0], store=store, jobs=2, progress=False)
    assert resumed.skipped == len(stored) + whole_orphans and resumed.ran == 18 - resumed.skipped
    assert {p.name for p in (store / "points").glob("*.json")} >= stored
    # The same sweep uninterrupted, faster (the sleep is an option, so it has other keys: compare without them).
    clean = tmp_path / "clean"
    sweep_file.write_text(SWEEP_FILE.format(sleep=300))
    sw.run(load_sweep_module(sweep_file)[0], store=clean, jobs=2, progress=False)
    a, b = comparable(load_sweep(store)), comparable(load_sweep(clean))
    assert len(a) == 18 and a.key.is_unique
    pd.testing.assert_frame_equal(a, b)
    assert len(list((store / "points").iterdir())) == 18, "no duplicate or stray temporary file"


def _whole_json(path) -> bool:
    try:
        json.loads(path.read_bytes())
        return True
    except ValueError:
        return False


def test_a_point_that_raises_is_recorded_failed_and_the_others_finish(tmp_path):
    s = synthetic_sweep(seeds=(1, 13, 2), robs=(16, 64))
    report = sw.run(s, store=tmp_path, jobs=2, progress=False)
    assert report.points == 6 and report.failed == 2
    table = load_sweep(tmp_path)
    failed = table[table.status == "failed"]
    assert set(failed["param.client.seed"]) == {13}
    assert failed.error.str.contains("RuntimeError: synthetic failure").all()
    assert (table[table.status == "ok"]["stat.client.throughput_mrps"] > 0).all()
    # Failed points are finished points: not rerun unless asked.
    assert sw.run(s, store=tmp_path, jobs=1, progress=False).ran == 0
    assert sw.run(s, store=tmp_path, jobs=1, progress=False, retry_failed=True).ran == 2


def test_a_point_that_kills_its_worker_is_recorded_failed_and_the_others_finish(tmp_path):
    report = sw.run(synthetic_sweep(seeds=(1, 14, 2), robs=(16, 64)), store=tmp_path, jobs=2, progress=False)
    table = load_sweep(tmp_path)
    assert report.points == len(table) == 6 and report.failed == 2
    failed = table[table.status == "failed"]
    assert set(failed["param.client.seed"]) == {14} and failed.error.str.contains("worker died").all()
    assert (table[table.status == "ok"]["stat.client.throughput_mrps"] > 0).all()


@pytest.mark.slow
def test_dask_localcluster_gives_the_local_pool_table(tmp_path):
    from distributed import Client, LocalCluster

    s = synthetic_sweep(seeds=(1, 13), robs=(1, 32, 256))
    sw.run(s, store=tmp_path / "local", jobs=2, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        report = sw.run(s, store=tmp_path / "dask", scheduler=client, progress=False)
    assert report.ran == 6 and report.failed == 3
    pd.testing.assert_frame_equal(comparable(load_sweep(tmp_path / "local")),
                                  comparable(load_sweep(tmp_path / "dask")))


def _leaves(tree, prefix=()):
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _leaves(v, prefix + (k,))
    else:
        yield prefix, tree


def _changed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list):
        return value + ["x"]
    raise TypeError(value)


def test_the_key_changes_with_every_resolved_parameter_and_nothing_else(tmp_path):
    config = Base("brps_target_socket", cores=2).build().to_dict()
    measure = {"evaluator": SYNTHETIC, "options": {}}
    key = sw.point_key(config, measure)
    leaves = list(_leaves(config))
    assert len(leaves) > 80
    keys = set()
    for path, value in leaves:
        mutated = json.loads(json.dumps(config))
        node = mutated
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = _changed(value)
        keys.add(sw.point_key(mutated, measure))
    assert key not in keys and len(keys) == len(leaves), "every parameter enters the key, each differently"
    # Not otherwise: the same configuration built another way, in another order, or set to what it was.
    other = Base("brps_target_socket", cores=2).build()
    other.client.seed = other.client.seed
    sw.set_path(other, "core.rob_entries", 64)
    assert sw.point_key(other.to_dict(), measure) == key
    assert sw.point_key(json.loads(json.dumps(config, sort_keys=True)), dict(measure)) == key
    # What is measured and the guest binary's content enter it too.
    assert sw.point_key(config, {**measure, "options": {"resolution": 0.02}}) != key
    binary = tmp_path / "server"
    binary.write_bytes(b"one")
    config2 = {**config, "workload": {**config["workload"], "binary": str(binary)}}
    k1 = sw.point_key(config2, measure)
    time.sleep(0.01)
    binary.write_bytes(b"two")
    os.utime(binary, ns=(time.time_ns(), time.time_ns()))
    assert sw.point_key(config2, measure) != k1


@pytest.mark.parametrize("evaluator", [sw.CAPACITY_EVALUATOR, "drivers.studies.end_to_end:evaluate",
                                       "drivers.studies.seeds:evaluate"])
def test_a_capacity_points_key_names_the_search_it_runs(evaluator):
    """Session 24 made the saturated search the default where windows judge the load; a point's options need not
    name it. The key names the search run, so a point stored under {'steady': True} by 98a3949 (the refined search)
    is not reused as one of today's default, and a point naming the search it would run by default is the same
    point (fails on 0fe3c0d: the key was the options as given). Options without windows keep their keys."""
    def key(options):
        s = Sweep("search", Base("brps_target_socket", cores=2), List([{"core.rob_entries": 64}]),
                  evaluator=evaluator, options=options, share_checkpoint=False)
        (point,) = s.resolve()
        return point.key

    config = Base("brps_target_socket", cores=2).build()
    sw.set_path(config, "core.rob_entries", 64)
    as_given = lambda options: sw.point_key(config.to_dict(), {"evaluator": evaluator, "options": options})  # noqa: E731
    steady = {"steady": True, "resolution": 0.02}
    assert key(steady) != as_given(steady), "stored by 98a3949 under the refined search"
    assert key(steady) == key({**steady, "capacity_search": "saturated"})
    assert key(steady) != key({**steady, "capacity_search": "refined"})
    assert key({**steady, "capacity_search": "refined"}) == as_given({**steady, "capacity_search": "refined"})
    for options in ({"resolution": 0.02}, {**steady, "confirm": False}):
        assert key(options) == as_given(options), "no windows: the refined search, as before"


def test_points_that_resolve_alike_are_one_point():
    s = Sweep("dup", Base("brps_target_socket", cores=2), List([{"core.rob_entries": 64}, {"core.rob_entries": 64},
                                                                {"core.rob_entries": 32}]), evaluator=SYNTHETIC)
    assert len(s.resolve()) == 2


@pytest.mark.parametrize("space,where", [
    (lambda: Grid({"core.rob_entriez": [1, 2]}), "rob_entriez"),
    (lambda: Grid({"cache.llc.size": [1]}), "cache"),
    (lambda: Grid({"core.rob_entries": []}), "core.rob_entries"),
    (lambda: Grid({"core.rob_entries": [64, 5000]}), "core.rob_entries"),
    (lambda: Zip({"core.rob_entries": [1, 2], "core.issue_width": [1]}), "core.issue_width"),
    (lambda: Random({"client.get_ratio": (0.5, 1.5)}, n=50), "client.get_ratio"),
    (lambda: List([]), "empty"),
])
def test_bad_sweeps_fail_before_any_point_runs(tmp_path, space, where):
    with pytest.raises(ParamError, match=where.replace(".", r"\.")):
        sw.run(Sweep("bad", Base("brps_target_socket", cores=2), space(), evaluator=SYNTHETIC), store=tmp_path,
               progress=False)
    assert not (tmp_path / "points").exists() and not (tmp_path / "sweep.json").exists()


def test_spaces():
    assert len(Grid({"a": [1, 2, 3], "b": ["x", "y"]}).points()) == 6
    assert Zip({"a": [1, 2], "b": [3, 4]}).points() == [{"a": 1, "b": 3}, {"a": 2, "b": 4}]
    r = Random({"a": (1, 4), "b": (0.5, 0.75), "c": ["u", "v"]}, n=200, seed=7)
    pts = r.points()
    assert pts == Random({"a": (1, 4), "b": (0.5, 0.75), "c": ["u", "v"]}, n=200, seed=7).points()
    assert {p["a"] for p in pts} == {1, 2, 3, 4} and all(0.5 <= p["b"] < 0.75 for p in pts)
    assert {p["c"] for p in pts} == {"u", "v"}
    lhs = LatinHypercube({"x": (0.0, 1.0), "y": (0, 9)}, n=10, seed=3).points()
    assert sorted(int(p["x"] * 10) for p in lhs) == list(range(10)), "one point per stratum"
    assert sorted(p["y"] for p in lhs) == list(range(10))
    prod = Product(Zip({"a": [1, 2], "b": [1, 2]}), Grid({"c": [0, 1, 2]})).points()
    assert len(prod) == 6 and {"a": 2, "b": 2, "c": 1} in prod


def test_ties_and_guest_arguments():
    s = Sweep("ties", Base("brps_target_socket", cores=2),
              Grid({"core.issue_width": [1, 4], "workload.argv[prefetch]": [0, 1]}),
              ties={"core.issue_width": ("core.fetch_width", "core.commit_width")}, evaluator=SYNTHETIC)
    systems = [p.system() for p in s.resolve()]
    assert [(x.core.issue_width, x.core.fetch_width, x.core.commit_width) for x in systems] == \
        [(1, 1, 1), (1, 1, 1), (4, 4, 4), (4, 4, 4)]
    assert [x.workload.argv.count("prefetch=0") + 2 * x.workload.argv.count("prefetch=1") for x in systems] == \
        [1, 2, 1, 2]
    assert all("mode=erew" in x.workload.argv for x in systems)


def test_the_progress_shows_points_and_the_running_points_own_progress(tmp_path):
    bar = sw._Progress(str(tmp_path), "p", 1, 3, enabled=False)
    (tmp_path / "progress").mkdir()
    (tmp_path / "progress" / "0123456789abcdef").write_text("detailed: 1,000,000 instructions")
    bar.poll()
    assert "01234567: detailed: 1,000,000 instructions" in bar.bar.tasks[bar.current].description
    bar.finished({"status": "failed"})
    task = bar.bar.tasks[bar.points]
    assert task.completed == 2 and task.total == 3 and "1 failed" in task.description
    # A worker reports through that file while its point runs, and removes it when the point is stored.
    point = synthetic_sweep(sleep_ms=0).resolve()[0]
    record = sw.run_point(str(tmp_path), point)
    assert record["status"] == "ok" and not (tmp_path / "progress" / point.key).exists()
    assert sw.stored_points(tmp_path)[point.key] == record


def test_a_run_point_with_power_is_priced_from_its_own_configuration(engine):
    """evaluate_run's power option prices the point's run from the point's configuration (power.* stats)."""
    from models.system import System, Workload

    def make():
        return System(workload=Workload(binary=str(sw.ROOT / "workloads" / "build" / "tests" / "arith")),
                      mode="detailed")

    out = sw.evaluate_run(make, {"power": True}, report=lambda _: None)
    watts = out["stats"]["power.socket.runtime_power_W"]
    assert 0 < watts < out["stats"]["power.socket.peak_power_W"]
    assert "power.socket.runtime_power_W" not in sw.evaluate_run(make, {}, report=lambda _: None)["stats"]


def test_a_stopped_search_point_is_priced_at_the_load_its_windows_confirmed(monkeypatch):
    """options['power'] prices a capacity point at its capacity; a search stopped at its saturated probe has no
    best probe (the windows found the capacity), and the point went unpriced, silently."""
    import types

    import power
    from drivers import capacity, window_capacity
    from drivers.sweep import evaluators

    stopped = capacity.SearchResult(None, [], 0.02, 0.01, 30.0, predicted_mpps=12.0, refined=False)
    monkeypatch.setattr(capacity, "capacity", lambda *a, **k: stopped)
    monkeypatch.setattr(window_capacity, "at_capacity", lambda *a, **k: {
        "stats": {"capacity.mpps_per_port": 11.5, "client.throughput_mrps": 40.0}, "run_stats": {}, "windows": []})
    priced = []

    def price_run(stats, config):
        priced.append(stats["capacity.mpps_per_port"])
        return types.SimpleNamespace(stats=lambda: {"power.total_w": 99.0})

    monkeypatch.setattr(power, "price_run", price_run)
    system = types.SimpleNamespace(client=types.SimpleNamespace(offered_mpps=0.0), to_dict=lambda: {})
    out = evaluators.evaluate_capacity(lambda: system, {"power": True, "steady": True, "capacity_search": "saturated",
                                                        "shared_warmup": False}, report=lambda _: None)
    assert priced == [11.5] and out["stats"]["power.total_w"] == 99.0
