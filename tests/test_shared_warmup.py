"""Probes that share one warm-up (drivers/shared_warmup.py, issue 24): a probe forked where detailed timing starts
gives every statistic a fresh restored run gives, at any offered load and request count; so does a steady-state
window, with the same progress reports and batch means; the warm-up runs once for runs that differ only in those;
anything else (another seed) warms again or runs as it is; and the engine refuses to change the measured phase
where it cannot."""

from __future__ import annotations

import functools
import json
import pathlib
import re
import subprocess
import sys
import threading

import pytest
from test_checkpoint import kvs_server  # noqa: F401 (the fixture)

from drivers import capacity
from drivers import steady_state as ss
from drivers.shared_warmup import SharedWarmup, can_share, cpu_seconds, warmup_key
from models.errors import ConfigError
from models.params import ParamError
from models.sim import simulate


def server(rate, requests=300, **extra):
    from configs import brps_target_socket

    return brps_target_socket.system(cores=2, items=4096, requests=requests, offered_mpps=rate,
                                     warmup_requests=2000, **extra)


@pytest.fixture(scope="module")
def data_set(kvs_server, tmp_path_factory):  # noqa: F811
    folder = tmp_path_factory.mktemp("shared") / "ck"
    s = server(1.0)
    s.checkpoint_to = str(folder)
    simulate(s)
    return folder


def restored(rate, data_set, requests=300):
    s = server(rate, requests)
    s.restore_from = str(data_set)
    return s


def in_a_process_of_its_own(test):
    """Run `test` again in a fresh pytest process when this one holds other threads: a shared warm-up forks its
    server only from a one-thread process (else it starts a fresh interpreter), and earlier tests of a whole suite
    leave threads behind (dask's event loop), so these tests would otherwise never test the fork."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        if threading.active_count() == 1:
            return test(*args, **kwargs)
        node = f"{pathlib.Path(__file__).resolve()}::{test.__name__}"
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", node],
                              capture_output=True, text=True, check=False, cwd=pathlib.Path(__file__).parent.parent)
        assert proc.returncode == 0 and re.search(r"^1 passed", proc.stdout, re.M), (proc.stdout + proc.stderr)[-4000:]
        return None

    return run


def same(a, b):
    return json.dumps(a.stats, sort_keys=True) == json.dumps(b.stats, sort_keys=True)


@in_a_process_of_its_own
def test_a_forked_probe_equals_a_fresh_restored_run(data_set):
    asks = [(2.0, 300), (40.0, 300), (2.0, 500)]        # a sustained load, an overloaded one, a longer window
    with SharedWarmup() as shared:
        forked = [shared(restored(rate, data_set, requests)) for rate, requests in asks]
        assert shared.warmups == 1, "one warm-up for runs that differ only in the measured phase"
        assert len(shared.run_cpu) == 3 and all(cpu > 0 for cpu in shared.run_cpu), "each run's own CPU time"
    for (rate, requests), run in zip(asks, forked):
        fresh = simulate(restored(rate, data_set, requests))
        assert same(run, fresh), (rate, requests)
        assert run.stats["client.offered_mpps"] == pytest.approx(rate * 2)   # both ports of the two-core server
        assert run.stats["client.requests"] == requests
    loss = [capacity.outcome_from_stats(run.stats, rate).loss for (rate, _), run in zip(asks, forked)]
    assert loss[0] < 0.01 < loss[1], f"the loads differ as asked: loss {loss}"


@in_a_process_of_its_own
def test_a_forked_probe_at_a_rate_of_17_digits_equals_a_fresh_run(data_set):
    """A capacity search's rates carry 17 significant digits. A fresh run reads its rate from the configuration's
    JSON text, whose parser is not exact at 17 digits (13.871745132195207 is read one unit in the last place
    off); a forked run's rate goes through the same text, so it is the very value the fresh run reads."""
    rates = (13.871745132195207, 9.899795751772176)
    with SharedWarmup() as shared:
        forked = [shared(restored(rate, data_set)) for rate in rates]
    for rate, run in zip(rates, forked):
        fresh = simulate(restored(rate, data_set))
        assert repr(run.stats["client.offered_mpps"]) == repr(fresh.stats["client.offered_mpps"]), rate
        assert same(run, fresh), rate


@in_a_process_of_its_own
def test_another_configuration_warms_again_and_a_run_that_cannot_share_runs_as_it_is(data_set):
    other = restored(2.0, data_set)
    other.core.rob_entries = 32
    assert warmup_key(other) != warmup_key(restored(2.0, data_set)) == warmup_key(restored(9.0, data_set, 700))
    plain = server(2.0)                           # loads its data set: nothing to share
    assert not can_share(plain) and can_share(other)
    with SharedWarmup() as shared:
        assert same(shared(restored(2.0, data_set)), simulate(restored(2.0, data_set)))
        assert same(shared(other), simulate(other))
        assert same(shared(plain), simulate(plain))
        assert shared.warmups == 2


@in_a_process_of_its_own
def test_a_capacity_search_with_shared_warmups_finds_the_same_probes(data_set):
    before = cpu_seconds()
    plain = capacity.search(capacity.simulated_server(lambda r: restored(r, data_set)), 40.0, resolution=0.05)
    with SharedWarmup() as shared:
        forked = capacity.search(capacity.simulated_server(lambda r: restored(r, data_set), runner=shared), 40.0,
                                 resolution=0.05)
        assert shared.warmups == 1
    assert [p.offered_mpps for p in forked.probes] == [p.offered_mpps for p in plain.probes]
    assert all(json.dumps(a.stats, sort_keys=True) == json.dumps(b.stats, sort_keys=True)
               for a, b in zip(forked.probes, plain.probes))
    assert cpu_seconds() > before


def measured(runner, system, every):
    """The run's progress reports of its measured phase (steady_state.measured_reports' selection), and the run."""
    reports = []
    run = runner(system, progress=lambda *r: reports.append(r), progress_every=every)
    detailed = [r for r in reports if r[2] == ss.MEASURED_PHASE]
    return detailed, run


@in_a_process_of_its_own
def test_a_steady_window_forked_from_the_shared_warmup_equals_one_run_from_scratch(data_set):
    """The windows of a point (longer measured phases, sampled through progress reports) fork from the warm-up its
    probes shared: their reports fall at the same instructions, so statistics and batch means are a fresh run's."""
    def at(requests):
        return restored(2.0, data_set, requests)

    lengths = (600, 1200)
    fresh = [ss.simulated_window(at, None)(n) for n in lengths]
    with SharedWarmup() as shared:
        shared(restored(40.0, data_set))                       # a probe first, as in a capacity point
        forked = [ss.simulated_window(at, None, runner=shared)(n) for n in lengths]
        # The reports themselves, at an interval finer than and one coarser than the warm-up server's (2 M).
        for every in (20_000, 3_000_000):
            assert measured(shared, at(1200), every)[0] == measured(simulate, at(1200), every)[0], every
        assert shared.warmups == 1, "the windows forked from the probes' warm-up"
    for n, a, b in zip(lengths, forked, fresh):
        assert json.dumps(a.stats, sort_keys=True) == json.dumps(b.stats, sort_keys=True), n
        assert a.batch_rates.tolist() == b.batch_rates.tolist() and len(a.batch_rates) == ss.BATCHES, n
        assert repr((a.throughput, a.p95, a.p95_half_width)) == repr((b.throughput, b.p95, b.p95_half_width)), n


@in_a_process_of_its_own
def test_another_seed_warms_again_and_equals_its_own_fresh_window(data_set):
    """A seed's warm-up draws from its own stream (client.measure_seed): it does not share seed 0's warm-up, and its
    window equals a fresh run of that seed."""
    def seeded(requests):
        s = restored(2.0, data_set, requests)
        s.client.measure_seed = 1
        return s

    assert warmup_key(seeded(600)) != warmup_key(restored(2.0, data_set, 600))
    with SharedWarmup() as shared:
        shared(restored(2.0, data_set))
        forked = ss.simulated_window(seeded, None, runner=shared)(600)
        assert shared.warmups == 2
    fresh = ss.simulated_window(seeded, None)(600)
    assert json.dumps(forked.stats, sort_keys=True) == json.dumps(fresh.stats, sort_keys=True)
    assert forked.batch_rates.tolist() == fresh.batch_rates.tolist()


def test_the_measured_phase_changes_only_where_it_may(data_set):
    closed = restored(0.0, data_set)              # closed loop: no rate to set
    with pytest.raises(ConfigError, match="an open-loop rate .* in an open-loop run"):
        simulate(closed, at_measure=lambda: (2.0, 300))
    with pytest.raises(ConfigError, match="at least one request"):
        simulate(restored(2.0, data_set), at_measure=lambda: (2.0, 0))
    with pytest.raises(ZeroDivisionError):        # the callback's own error propagates
        simulate(restored(2.0, data_set), at_measure=lambda: 1 / 0)
    assert same(simulate(restored(2.0, data_set), at_measure=lambda: None), simulate(restored(2.0, data_set)))
    fs = restored(2.0, data_set)
    fs.os_level = "fs"
    with pytest.raises(ParamError, match="SE mode only"):
        simulate(fs, at_measure=lambda: None)


def recorded(monkeypatch, module):
    """The SharedWarmups `module` makes from now on (its `SharedWarmup` replaced by a subclass that keeps them)."""
    made = []

    class Recorded(SharedWarmup):
        def __init__(self):
            super().__init__()
            made.append(self)

    monkeypatch.setattr(module, "SharedWarmup", Recorded)
    return made


@in_a_process_of_its_own
def test_the_end_to_end_point_gives_the_same_answer_with_its_probes_sharing_a_warmup(data_set, monkeypatch):
    from drivers.studies import end_to_end

    made = recorded(monkeypatch, end_to_end)
    # The refined search (session 24: no longer the default where windows judge), so that its 5 probes share too.
    options = {"resolution": 0.05, "max_probes": 5, "power": False, "steady": True, "steady_max_windows": 2,
               "capacity_search": "refined"}
    shared = end_to_end.evaluate(lambda: restored(1.0, data_set), options, lambda _: None)
    assert [m.warmups for m in made] == [1], "the point's probes and its steady-state windows shared one warm-up"
    alone = end_to_end.evaluate(lambda: restored(1.0, data_set), {**options, "shared_warmup": False}, lambda _: None)
    assert shared["probes"] == alone["probes"] and len(shared["probes"]) == 5
    assert json.dumps(shared["windows"]) == json.dumps(alone["windows"]) and shared["windows"]   # NaN p95 widths
    assert "steady.throughput" in shared["stats"]
    assert json.dumps(shared["stats"], sort_keys=True) == json.dumps(alone["stats"], sort_keys=True)


def test_a_process_with_another_thread_runs_the_shared_warmup_in_a_fresh_interpreter(data_set):
    """A process with other threads (a dask worker's) must not fork: its server is a fresh one-thread interpreter,
    and its runs (probes and a window) still equal fresh ones."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert can_share(restored(2.0, data_set))
        with SharedWarmup() as shared:
            runs = [shared(restored(rate, data_set)) for rate in (2.0, 40.0)]
            window = ss.simulated_window(lambda n: restored(2.0, data_set, n), None, runner=shared)(600)
            server = shared._server
            assert shared.warmups == 1 and len(shared.run_cpu) == 3
        # The server is a fresh interpreter (a Popen's wait), not a fork. (Other tests may leave threads of their own
        # running, such as dask's offload thread, so the count is at least 2, not exactly 2.)
        assert server is not None and isinstance(getattr(server[0], "__self__", None), subprocess.Popen)
        assert threading.active_count() >= 2
    finally:
        stop.set()
        other.join()
    for rate, run in zip((2.0, 40.0), runs):
        assert same(run, simulate(restored(rate, data_set))), rate
    fresh = ss.simulated_window(lambda n: restored(2.0, data_set, n), None)(600)
    assert json.dumps(window.stats, sort_keys=True) == json.dumps(fresh.stats, sort_keys=True)
    assert window.batch_rates.tolist() == fresh.batch_rates.tolist()


@in_a_process_of_its_own
def test_a_restoring_capacity_search_shares_one_warmup_across_its_probes(kvs_server, tmp_path):  # noqa: F811
    """capacity(restore=True): the first probe loads the store and checkpoints it, and the others restore it and
    fork from one warm-up; each gives the statistics it gives run alone (share_warmup=False: each restores and
    warms itself). The checkpoint folders' names have one length (a saved checkpoint's size counts its path)."""
    def search(folder, **extra):
        return capacity.capacity(server, restore=True, checkpoint=tmp_path / folder, resolution=0.05, high=40.0,
                                 **extra)

    shared = search("a")
    alone = search("b", share_warmup=False)
    assert len(shared.probes) >= 3 and shared.warmups == 1, "one warm-up for the restored probes"
    assert alone.warmups == len(alone.probes) - 1, "run alone, every restored probe warms"
    assert [p.offered_mpps for p in shared.probes] == [p.offered_mpps for p in alone.probes]
    for a, b in zip(shared.probes, alone.probes):
        assert json.dumps(a.stats, sort_keys=True) == json.dumps(b.stats, sort_keys=True), a.offered_mpps
    assert shared.probes[1].result.stats["client.requests"] == 300


@in_a_process_of_its_own
def test_the_sweeps_capacity_evaluator_shares_its_probes_warmup_with_its_windows(data_set, monkeypatch):
    """The sweep's plain capacity evaluator on a point that restores the sweep's checkpoint: its probes and its
    steady-state windows share one warm-up, and the record (probes, windows, statistics) is the one it gives with
    every run warming itself."""
    from drivers import shared_warmup
    from drivers.sweep import evaluators

    made = recorded(monkeypatch, shared_warmup)
    # The refined search: its several probes are what must share the windows' warm-up (the default, saturated
    # search, stops at its one saturated probe; session 24).
    options = {"resolution": 0.05, "steady": True, "steady_max_windows": 2, "capacity_search": "refined"}
    shared = evaluators.evaluate_capacity(lambda: restored(1.0, data_set), options, lambda _: None)
    assert [m.warmups for m in made] == [1], "the probes and the windows shared one warm-up"
    alone = evaluators.evaluate_capacity(lambda: restored(1.0, data_set), {**options, "shared_warmup": False},
                                         lambda _: None)
    assert len(made) == 1 and shared["probes"] == alone["probes"] and len(shared["probes"]) >= 3
    assert json.dumps(shared["windows"]) == json.dumps(alone["windows"]) and shared["windows"]
    assert json.dumps(shared["stats"], sort_keys=True) == json.dumps(alone["stats"], sort_keys=True)
