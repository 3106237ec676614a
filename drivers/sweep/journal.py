"""A point's journal: the units of work a point has finished, kept durably so that a point stopped mid-way (the
session ends, the host runs out of memory, Ctrl-C) resumes where it stopped instead of from zero (issue 28: a
192 Mi capacity point takes 70-120 minutes of host time, most of it in its steady-state windows).

A unit is one simulation whose result the point decides on: a probe of the capacity search (its offered load and
the outcome: loss, answered rate, loss law, the cores' shares, the run's statistics), a steady-state window (its
load, seed and length, its batch means, throughput, p95 and interval, the run's statistics), or the end-to-end
study's DVFS planning run (its statistics). Each is appended to `STORE/journal/<point key>.jsonl` the moment it
finishes, one JSON line sealed with its SHA-256 (models/durable.py) and fsync'd, so a line is on disk before the
point goes on.

A re-run of the point (the same key: configuration, binaries' and engine's content, evaluator and options,
drivers/sweep/store.point_key) replays the journaled units instead of simulating them and simulates from the first
unit not in the journal. Replay is exact because each unit depends only on its inputs: a probe on the point's
configuration and its load; a window on that, its length and its seed. Runs that share a warm-up fork from a state
equal to a fresh run's there (drivers/shared_warmup.py), whatever ran before on the same server, and a seed's
warm-up is its own (drivers/steady_state.py); nothing else carries between units but what the driver computes from
their journaled results (the bracket, the service rate, the windows kept). So the final record equals an
uninterrupted run's: every statistic and decision, bit for bit (JSON carries a float's shortest round-trip
form), but `capacity.replayed_units` and the host times.

One kind of unit is never replayed: a run that writes a checkpoint (`System.checkpoint_to`: the first probe of
`capacity.capacity(restore=True)` loads the store and checkpoints it). Its product is the checkpoint the later
units restore, not only its statistics, and a replay would leave them nothing to restore (or the next probe would
load instead, and measure another warm-up). It runs again.

A line that does not read (a write cut short by the kill, a changed byte) is left out with a warning naming the
file and line (the unit runs again); a line of another point's key is never used (warned too). The file is then
rewritten without them before anything is appended, the file as it was kept beside it (`<name>.damaged`). A point that finishes removes its journal once its record is
stored (the record holds the result); a failed point keeps it for `retry_failed`.
"""

from __future__ import annotations

import json
import os
import pathlib
import warnings
from typing import Any, Callable

import numpy as np

from models.durable import SEAL, atomic_write, seal

JOURNALS = "journal"        # the store's folder of journals


def journal_path(store: str | pathlib.Path, key: str) -> pathlib.Path:
    return pathlib.Path(store) / JOURNALS / f"{key}.jsonl"


class PointJournal:
    """The journal of the point `key` at `path` (module doc). `replayed` counts the units replayed by this run;
    `report` is told once, when the first unit not in the journal is reached after some were replayed."""

    def __init__(self, path: str | pathlib.Path, key: str, report: Callable[[str], None] | None = None) -> None:
        self.path, self.key, self.report = pathlib.Path(path), key, report
        self.units: dict[str, dict[str, Any]] = {}
        self.replayed = 0
        self._said = False
        self._load()

    def _load(self) -> None:
        if not self.path.is_file():
            return
        good, damaged, others = [], [], {}
        for number, line in enumerate(self.path.read_bytes().split(b"\n"), 1):
            if not line.strip():
                continue
            entry = _unsealed(line)
            if entry is None:
                damaged.append(number)
            elif entry["point"] != self.key:
                others.setdefault(entry["point"], []).append(number)
            else:
                self.units[entry["unit"]] = entry["data"]
                good.append(line)
        if not damaged and not others:
            return
        aside = self.path.with_name(self.path.name + ".damaged")
        if damaged:
            warnings.warn(f"{self.path}: line(s) {_lines(damaged)} damaged (cut short or changed since written): "
                          f"ignored, those units run again (the file as it was: {aside})", stacklevel=3)
        for key, numbers in others.items():
            warnings.warn(f"{self.path}: line(s) {_lines(numbers)} are units of point {key}, not {self.key}: "
                          f"never used here (the file as it was: {aside})", stacklevel=3)
        # Appends must start on a line of their own: the file keeps only the lines that read; the file as it was
        # is kept beside it (nothing a run wrote is deleted).
        os.replace(self.path, aside)
        atomic_write(self.path, b"".join(line + b"\n" for line in good))

    def __len__(self) -> int:
        return len(self.units)

    def replay(self, unit: str) -> dict[str, Any] | None:
        """The journaled result of `unit`, counted as replayed; None when it is not journaled."""
        data = self.units.get(unit)
        if data is not None:
            self.replayed += 1
        elif self.replayed and not self._said and self.report is not None:
            self._said = True
            self.report(f"resumed: {self.replayed} units replayed; simulating from {unit}")
        return data

    def record(self, unit: str, data: dict[str, Any]) -> None:
        """Append `unit`'s result, durably (fsync'd before this returns)."""
        line = json.dumps(seal({"point": self.key, "unit": unit, "data": data}), separators=(",", ":")) + "\n"
        new = not self.path.exists()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as f:
            f.write(line.encode())
            f.flush()
            os.fsync(f.fileno())
        if new:       # the file's name too
            fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        self.units[unit] = data

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)

    # ---- the units ----------------------------------------------------------------------------------------------

    def probe(self, rate: float, run: Callable[[], Any], outcome: Callable[..., Any], system: Any = None) -> Any:
        """A capacity probe at `rate` (capacity.Outcome, which `outcome` builds from a replayed probe: passed in so
        the journal does not import the search that uses it; the simulated run is not kept: nothing after the
        search reads it). `system`: the probe's, to see whether it writes a checkpoint (then never replayed)."""
        unit = f"probe at {rate!r}"
        if getattr(system, "checkpoint_to", ""):
            return run()
        data = self.replay(unit)
        if data is not None:
            return outcome(data["loss"], data["answered_mpps"], data["stats"], None, data["law"],
                                    tuple(data["shares"]))
        out = run()
        self.record(unit, {"offered_mpps": rate, "loss": out.loss, "answered_mpps": out.answered_mpps,
                           "law": out.law, "shares": list(out.shares), "stats": dict(out.stats)})
        return out

    def window(self, load: float, requests: int, seed: int, run: Callable[[], Any]) -> Any:
        """A steady-state window (steady_state.Window) at `load`, `requests` long, of `seed`'s stream."""
        from .. import steady_state as ss

        unit = f"window at {load!r} of {requests} requests, seed {seed}"
        data = self.replay(unit)
        if data is not None:
            # The load factor is not journaled: it is a function of the statistics (as a simulated window's), so a
            # line written before session 20 replays to the same window as one written after.
            return ss.Window(data["length"], np.asarray(data["batch_rates"], dtype=np.float64), data["throughput"],
                             data["busiest_utilization"], data["p95"], data["p95_half_width"], data["p95_batches"],
                             data["stats"], ss.window_load_factor(data["stats"]))
        w = run()
        self.record(unit, {"offered_mpps": load, "seed": seed, "length": w.length,
                           "batch_rates": [float(x) for x in w.batch_rates], "throughput": w.throughput,
                           "busiest_utilization": w.busiest_utilization, "p95": w.p95,
                           "p95_half_width": w.p95_half_width, "p95_batches": w.p95_batches, "stats": dict(w.stats)})
        return w

    def stats(self, unit: str, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """A run whose statistics alone are kept (the end-to-end study's DVFS planning run)."""
        data = self.replay(unit)
        if data is not None:
            return data["stats"]
        stats = dict(run())
        self.record(unit, {"stats": stats})
        return stats


def _lines(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:5])) + (f" and {len(numbers) - 5} more" if len(numbers) > 5 else "")


def _unsealed(line: bytes) -> dict[str, Any] | None:
    """A journal line's entry, or None when it does not read or its seal does not match."""
    try:
        entry = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(entry, dict) or not {"point", "unit", "data", SEAL} <= entry.keys():
        return None
    sealed = entry.pop(SEAL)
    return entry if seal(entry)[SEAL] == sealed else None


def journaled_server(journal: PointJournal | None, make: Callable[[float], Any],
                     evaluate: Callable[[float], Any], outcome: Callable[..., Any]) -> Callable[[float], Any]:
    """A capacity search's probe function (`evaluate(rate) -> capacity.Outcome`) whose probes go through `journal`
    (`make(rate)`: the probe's system, to see whether it writes a checkpoint; `outcome`: capacity.Outcome, to
    rebuild a replayed probe); `evaluate` itself without one."""
    if journal is None:
        return evaluate
    return lambda rate: journal.probe(rate, lambda: evaluate(rate), outcome, make(rate))


# ---- journals no point needs any more -----------------------------------------------------------------------------
#
# A journal is removed when its point's record is stored ok. One whose point will never run again stays: a point of
# another engine build or configuration (its key changed), a point dropped from the sweep, or one killed between
# its record and the removal. At 192 Mi a unit is about 1 MB. They are removed only on an explicit command
# (`kvsim sweep ... --clean-journals`, `kvsim figures ... --clean-journals`), never when a sweep starts: a sweep run
# with other options (another --binary, other conditions) plans other keys, and a journal it does not know may be
# one a later run of the first kind resumes.

STALE_PLAN = "not a point of the sweep's plan"
STALE_STORED = "its point's record is stored"


def stale_journals(store: str | pathlib.Path, keys: set[str], stored_ok: set[str] = frozenset()
                   ) -> list[tuple[pathlib.Path, str]]:
    """The journal files in `store`'s journal folder (`<key>.jsonl` and the `<key>.jsonl.damaged` kept beside)
    that no point needs: their key is not in `keys` (the points the sweeps of this store plan), or is in
    `stored_ok` (points whose ok record is stored: the record holds the result). With the reason. Other files
    are not journals and are left alone."""
    folder = pathlib.Path(store) / JOURNALS
    out = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else ():
        key, _, tail = path.name.partition(".")
        if not path.is_file() or tail not in ("jsonl", "jsonl.damaged"):
            continue
        if key not in keys:
            out.append((path, STALE_PLAN))
        elif key in stored_ok:
            out.append((path, STALE_STORED))
    return out


def clean_journals(plans: dict[pathlib.Path, set[str]], stored_ok: dict[pathlib.Path, set[str]], *,
                   dry_run: bool = False, say: Callable[[str], None] = print) -> list[tuple[pathlib.Path, int, str]]:
    """Remove (`dry_run`: only list) every stale journal (`stale_journals`) of each store in `plans` (store ->
    the keys its sweeps plan; `stored_ok`: store -> the keys stored ok), saying each file, its size and why, and
    the total. Returns (path, bytes, reason) of each."""
    done = []
    for store, keys in plans.items():
        for path, why in stale_journals(store, keys, stored_ok.get(store, set())):
            size = path.stat().st_size
            if not dry_run:
                path.unlink()
            say(f"{'would remove' if dry_run else 'removed'} {path} ({size / 1e6:.2f} MB): {why}")
            done.append((path, size, why))
    say(f"{len(done)} journal file(s), {sum(s for _, s, _ in done) / 1e6:.2f} MB "
        f"{'to remove (dry run: nothing removed)' if dry_run else 'removed'} in {len(plans)} store(s)")
    return done
