"""The seed papers' studies' evaluator (drivers/studies/seeds.py) journals its point like the capacity evaluators
(drivers/sweep/journal.py, issue 28, session 20): a point of three seeds with steady-state windows and a latency
curve, stopped mid-way (a unit that raises, as a kill would stop it) and run again, replays the probes, every
finished seed's windows and the curve runs its journal holds, simulates only the rest, and gives the record an
uninterrupted run gives (but capacity.replayed_units and the host time). Probes, windows and curve runs are
synthetic (drivers/synthetic.py), the point's configuration a real 2-core server's."""

from __future__ import annotations

import json

import pytest
from test_window_capacity import BY_SEED, HIDDEN, _fake_windows

from drivers import capacity
from drivers import sweep as sw
from drivers.studies import seeds
from drivers.sweep.journal import PointJournal, journal_path
from models import stats_paths as paths

OPTIONS = {"steady": True, "seeds": 3, "curve": [0.5, 0.9], "resolution": 0.02}


class Killed(KeyboardInterrupt):
    """The stop: not an Exception, so run_point records nothing (as after a kill)."""


class Units(list):
    """Every unit simulated, in order: ('probe', load), (load, requests, seed) for a window (the fake windows append
    it) and ('curve', load); raises Killed when the unit after `stop` units is about to run."""

    def __init__(self, stop: int | None = None):
        super().__init__()
        self.stop = stop

    def append(self, item) -> None:
        if self.stop is not None and len(self) >= self.stop:
            raise Killed(f"stopped after {self.stop} units")
        super().append(item)


def _point() -> sw.Point:
    return sw.Sweep("seeds-resume", sw.Base("brps_target_socket", cores=2), sw.List([{}]),
                    evaluator=seeds.EVALUATOR, options=OPTIONS).resolve()[0]


def _fakes(monkeypatch, stop: int | None) -> Units:
    """Synthetic probes (HIDDEN), windows (BY_SEED: seed 1's fail where seed 0's sustain, so seed 1 moves the load
    down and every seed runs again) and curve runs, each appended to the Units returned."""
    units = Units(stop)

    def probe(rate: float) -> capacity.Outcome:
        units.append(("probe", rate))
        out = HIDDEN(rate)
        out.stats = {"client.measured_ns": 1e6, paths.NIC_QUEUE.stat(0, 0, "tx_frames"):
                     min(rate, HIDDEN.capacity_mpps) * 1e3}
        return out

    def curve_run(make_system, options, report):
        rate = make_system().client.offered_mpps
        units.append(("curve", rate))
        return {"stats": {"client.throughput_mrps": rate, "client.loss": 0.0, "client.latency.p50": 1e3 / rate,
                          "client.latency.p99": 5e3 / rate}}

    monkeypatch.setattr(capacity, "simulated_server", lambda make, **_: probe)
    monkeypatch.setattr(seeds, "evaluate_run", curve_run)
    _fake_windows(monkeypatch, BY_SEED, units)
    return units


def _run(monkeypatch, stop: int | None, journal: PointJournal | None) -> tuple[dict, Units]:
    units = _fakes(monkeypatch, stop)
    return seeds.evaluate(_point().run_system, OPTIONS, lambda text: None, journal=journal), units


def _record(out: dict) -> str:
    """The record as stored (JSON), but for the replay counter and the host time."""
    stats = {k: v for k, v in out["stats"].items() if k not in ("capacity.replayed_units", "seeds.host_seconds")}
    return json.dumps({**out, "stats": stats}, sort_keys=True)


def test_a_multi_seed_point_stopped_mid_way_resumes_from_its_journal_to_the_uninterrupted_record(monkeypatch,
                                                                                                  tmp_path):
    plain, units = _run(monkeypatch, None, None)
    windows = [u for u in units if u[0] not in ("probe", "curve")]
    assert {seed for _, _, seed in windows} == {0, 1, 2}, "every seed ran windows"
    assert [u[0] for u in units[-2:]] == ["curve", "curve"] and plain["stats"]["curve1.fraction"] == 0.9
    # Stopped among the windows after seed 0's were done (inside seed 1's or 2's), and among the curve runs.
    first_other = next(i for i, u in enumerate(units) if u[0] not in ("probe", "curve") and u[2] != 0)
    for stop in (first_other + 1, len(units) - 1):
        path = tmp_path / f"stop{stop}.jsonl"
        with pytest.raises(Killed):
            _run(monkeypatch, stop, PointJournal(path, "s" * 24))
        assert len(path.read_text().splitlines()) == stop, "each unit journaled the moment it finished"
        done = units[:stop]
        resumed, again = _run(monkeypatch, None, PointJournal(path, "s" * 24))
        assert _record(resumed) == _record(plain), f"stopped after {stop} units"
        assert resumed["stats"]["capacity.replayed_units"] == stop
        assert list(again) == units[stop:], "the finished probes, windows and curve runs are not simulated again"
        assert not set(again) & set(done)


def test_run_point_journals_a_seed_study_point_and_removes_the_journal_once_stored(monkeypatch, tmp_path):
    point = _point()
    plain, units = _run(monkeypatch, None, None)
    stop = len(units) - 3
    _fakes(monkeypatch, stop)
    with pytest.raises(Killed):
        sw.run_point(str(tmp_path), point)
    path = journal_path(tmp_path, point.key)
    assert len(path.read_text().splitlines()) == stop, "run_point gave the seed study's evaluator the journal"
    again = _fakes(monkeypatch, None)
    record = sw.run_point(str(tmp_path), point)
    assert record["status"] == "ok" and record["stats"]["capacity.replayed_units"] == stop
    assert _record({k: record[k] for k in plain}) == _record(plain)
    assert list(again) == units[stop:]
    assert not path.exists(), "the record holds the result: the journal is removed"
