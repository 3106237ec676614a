"""Resumable points (drivers/sweep/journal.py, issue 28): a capacity point stopped mid-way (an evaluator that raises
after k units, as a kill or Ctrl-C would stop it) and run again replays the probes and windows its journal holds,
simulates only the rest, and gives the record an uninterrupted run gives; a damaged last line is skipped with a
warning naming the file; another point's journal is never used. On synthetic servers (drivers/synthetic.py)."""

from __future__ import annotations

import json
import warnings

import pytest
from test_window_capacity import BY_SEED, HIDDEN, LINE, RES, TRANSIENT, _fake_windows, _search, _system

from drivers import capacity
from drivers import sweep as sw
from drivers import window_capacity as wc
from drivers.sweep.journal import PointJournal, journal_path, journaled_server
from models import stats_paths as paths


class Killed(KeyboardInterrupt):
    """The stop: not an Exception, so run_point records nothing (as after a kill)."""


class Units(list):
    """The windows simulated (the fake appends each one's load, length and seed), and the probes; raises Killed when
    the unit after `stop` units is about to run."""

    def __init__(self, stop: int | None = None):
        super().__init__()
        self.stop, self.probes = stop, 0

    def tick(self) -> None:
        if self.stop is not None and self.probes + len(self) >= self.stop:
            raise Killed(f"stopped after {self.stop} units")

    def append(self, item) -> None:
        self.tick()
        super().append(item)


UNITS = Units()


def probe(rate: float) -> capacity.Outcome:
    """A probe of HIDDEN (a 10 M frames/s server whose buffer hides overloads from short probes), with the busiest
    queue's rate in its statistics (for the service rate)."""
    UNITS.tick()
    UNITS.probes += 1
    out = HIDDEN(rate)
    out.stats = {"client.measured_ns": 1e6, paths.NIC_QUEUE.stat(0, 0, "tx_frames"):
                 min(rate, HIDDEN.capacity_mpps) * 1e3}
    return out


def evaluate(make_system, options, report, journal=None):
    """A capacity point of three seeds (BY_SEED: seed 1's windows fail where seed 0's sustain, so seed 1 steps the
    load down and every seed runs again): the probes' search, then window_capacity.at_capacity."""
    res = capacity.search(journaled_server(journal, _system, probe, capacity.Outcome), LINE, resolution=RES)
    got = wc.at_capacity(_system, res, 3, {}, report, journal=journal)
    stats = got.pop("stats")
    got.pop("run_stats")
    if journal is not None:
        stats["capacity.replayed_units"] = float(journal.replayed)
    return {"stats": stats, "probes": res.table(), **got}


evaluate.journals = True


def _run(monkeypatch, stop: int | None, path=None, key="k" * 24) -> tuple[dict, Units, PointJournal | None]:
    global UNITS
    UNITS = Units(stop)
    _fake_windows(monkeypatch, BY_SEED, UNITS)
    journal = PointJournal(path, key) if path is not None else None
    return evaluate(None, {}, lambda text: None, journal), UNITS, journal


def _same(a: dict, b: dict) -> bool:
    """Equal as stored (JSON: NaN equals NaN, floats bit for bit)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _without_replayed(out: dict) -> dict:
    return {**out, "stats": {k: v for k, v in out["stats"].items() if k != "capacity.replayed_units"}}


def test_a_point_stopped_mid_way_resumes_replaying_its_journal_to_the_uninterrupted_record(monkeypatch, tmp_path):
    plain, units, _ = _run(monkeypatch, None)
    total = units.probes + len(units)
    assert units.probes >= 3 and len(units) >= 6 and {seed for _, _, seed in units} == {0, 1, 2}
    path = tmp_path / "journal" / "k.jsonl"
    journaled, _, j = _run(monkeypatch, None, path)
    assert _same(_without_replayed(journaled), plain) and journaled["stats"]["capacity.replayed_units"] == 0.0
    assert len(j) == total, "every probe and window journaled"
    path.unlink()
    for stop in (2, units.probes + 3, total - 1):        # among the probes, among the windows, at the last window
        with pytest.raises(Killed):
            _run(monkeypatch, stop, path)
        lines = path.read_text().splitlines()
        assert len(lines) == stop, "each unit journaled the moment it finished"
        resumed, again, j = _run(monkeypatch, None, path)
        assert _same(_without_replayed(resumed), plain), f"stopped after {stop} units"
        assert resumed["stats"]["capacity.replayed_units"] == stop == j.replayed
        assert again.probes + len(again) == total - stop, "journaled units are not simulated again"
        assert set(again).isdisjoint({tuple(json.loads(x)["data"].get(k) for k in ("offered_mpps", "length", "seed"))
                                      for x in lines})
        path.unlink()


def test_a_damaged_last_line_is_skipped_with_a_warning_naming_the_file(monkeypatch, tmp_path):
    plain, units, _ = _run(monkeypatch, None)
    total = units.probes + len(units)
    path = tmp_path / "k.jsonl"
    stop = units.probes + 4
    with pytest.raises(Killed):
        _run(monkeypatch, stop, path)
    data = path.read_bytes()
    path.write_bytes(data[:len(data) - len(data.splitlines()[-1]) // 2 - 1])      # the last line cut in half
    with pytest.warns(UserWarning, match=f"{path}: line\\(s\\) {stop} damaged"):
        resumed, again, j = _run(monkeypatch, None, path)
    assert _same(_without_replayed(resumed), plain)
    assert j.replayed == stop - 1 and again.probes + len(again) == total - stop + 1
    assert len(path.read_text().splitlines()) == total, "the damaged line dropped, the rest appended after it"
    assert path.with_name("k.jsonl.damaged").read_bytes() == data[:len(data) - len(data.splitlines()[-1]) // 2 - 1]
    # A changed byte inside a line: its seal no longer matches.
    text = path.read_text().splitlines()
    text[1] = text[1].replace('"loss":', '"loss": ', 1).replace("1", "2", 1)
    path.write_text("\n".join(text) + "\n")
    with pytest.warns(UserWarning, match=r"line\(s\) 2 damaged"):
        assert len(PointJournal(path, "k" * 24)) == total - 1


def test_the_journal_of_another_point_is_never_used(monkeypatch, tmp_path):
    plain, units, _ = _run(monkeypatch, None)
    path = tmp_path / "k.jsonl"
    _run(monkeypatch, None, path, key="a" * 24)
    with pytest.warns(UserWarning, match=rf"{path}: line\(s\) 1, 2, 3, 4, 5 and \d+ more are units of point {'a' * 24}, not {'b' * 24}"):
        other, again, j = _run(monkeypatch, None, path, key="b" * 24)
    assert _same(_without_replayed(other), plain) and j.replayed == 0
    assert again.probes + len(again) == units.probes + len(units), "every unit simulated"


def test_run_point_resumes_a_stopped_point_from_the_stores_journal_and_says_so(monkeypatch, tmp_path):
    point = sw.Sweep("resume", sw.Base("brps_target_socket", cores=2), sw.List([{}]),
                     evaluator="test_point_resume:evaluate").resolve()[0]
    other = sw.Sweep("resume", sw.Base("brps_target_socket", cores=4), sw.List([{}]),
                     evaluator="test_point_resume:evaluate").resolve()[0]
    plain, units, _ = _run(monkeypatch, None)
    stop = units.probes + 5
    global UNITS
    UNITS = Units(stop)
    _fake_windows(monkeypatch, BY_SEED, UNITS)
    with pytest.raises(Killed):
        sw.run_point(str(tmp_path), point)
    path = journal_path(tmp_path, point.key)
    assert len(path.read_text().splitlines()) == stop and not (tmp_path / "points" / f"{point.key}.json").exists()
    # Another point (another key) does not take it.
    assert not journal_path(tmp_path, other.key).exists()
    said = []
    monkeypatch.setattr("drivers.sweep.execute.time.monotonic", lambda: 1.0 + len(said))   # no rate limit
    real_write = type(tmp_path).write_text
    monkeypatch.setattr(type(tmp_path), "write_text", lambda self, text, *a, **k: (said.append(text),
                                                                                   real_write(self, text, *a, **k)))
    UNITS = Units()
    _fake_windows(monkeypatch, BY_SEED, UNITS)
    record = sw.run_point(str(tmp_path), point)
    assert record["status"] == "ok" and record["stats"]["capacity.replayed_units"] == stop
    assert _same(_without_replayed({k: record[k] for k in plain}), plain)
    assert UNITS.probes + len(UNITS) == units.probes + len(units) - stop
    assert any(text.startswith(f"resumed: {stop} units replayed; simulating from window at") for text in said)
    assert any(text.endswith(f"[resumed: {stop} units replayed]") for text in said)
    assert not path.exists(), "the record holds the result: the journal is removed"
    assert _same(sw.stored_points(tmp_path)[point.key], record)     # NaN (an unmeasured load factor) as stored
    # A point that fails keeps its journal (retry_failed resumes it).
    UNITS = Units()
    _fake_windows(monkeypatch, {}, UNITS)             # every window raises KeyError: a failed point
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failed = sw.run_point(str(tmp_path), other)
    assert failed["status"] == "failed" and len(journal_path(tmp_path, other.key).read_text().splitlines()) == \
        UNITS.probes


def test_the_end_to_end_evaluator_journals_and_replays_its_probes_and_windows(monkeypatch, tmp_path):
    """The end-to-end study's evaluator (its own search, then window_capacity) on a 2-core share of the socket, its
    probes and windows synthetic: stopped among the windows and run again, the same record, journaled units not
    simulated again."""
    from drivers.studies import end_to_end, servers

    global UNITS

    def fake(make, **_):
        return probe

    monkeypatch.setattr(capacity, "simulated_server", fake)

    def make():
        return servers.server(1, cores=2, requests_per_core=10)

    options = {"steady": True, "resolution": RES, "power": False}

    def run(stop, journal):
        global UNITS
        UNITS = Units(stop)
        _fake_windows(monkeypatch, HIDDEN, UNITS)
        return end_to_end.evaluate(make, options, lambda text: None, journal=journal)

    plain = run(None, None)
    total = UNITS.probes + len(UNITS)
    assert plain["stats"]["capacity.confirmed"] == 1.0 and len(UNITS) >= 2
    path = tmp_path / "e2e.jsonl"
    stop = UNITS.probes + 1
    with pytest.raises(Killed):
        run(stop, PointJournal(path, "e" * 24))
    resumed = run(None, PointJournal(path, "e" * 24))
    assert resumed["stats"]["capacity.replayed_units"] == stop and UNITS.probes + len(UNITS) == total - stop
    assert _same(_without_replayed(resumed), plain)


def test_a_rechecked_window_is_journaled_and_replayed(monkeypatch, tmp_path):
    """A load whose window failed with no frame dropped is judged on a window 4 times as long
    (window_capacity.LOSS_RECHECK_FACTOR), through the same journal: stopped right after that window, the point run
    again replays it (not simulated again) and gives the uninterrupted record, re-judged loads and all."""
    res = _search(TRANSIENT)

    def run(stop, journal):
        global UNITS
        UNITS = Units(stop)
        _fake_windows(monkeypatch, TRANSIENT, UNITS)
        got = wc.at_capacity(_system, res, 1, {}, lambda text: None, journal=journal)
        return {k: got[k] for k in ("stats", "loads", "windows")}

    plain = run(None, None)
    units = list(UNITS)
    longer = [u for u in units if u[1] == wc.LOSS_RECHECK_FACTOR * 100]
    assert longer and any(row["rechecked"] for row in plain["loads"])
    stop = units.index(longer[0]) + 1                 # stopped after the first longer window finished
    path = tmp_path / "t.jsonl"
    with pytest.raises(Killed):
        run(stop, PointJournal(path, "t" * 24))
    journaled = [json.loads(x)["data"] for x in path.read_text().splitlines()]
    assert len(journaled) == stop and journaled[-1]["length"] == longer[0][1]
    resumed = run(None, PointJournal(path, "t" * 24))
    assert longer[0] not in UNITS and len(UNITS) == len(units) - stop, "journaled windows are not simulated again"
    assert _same(resumed, plain)
