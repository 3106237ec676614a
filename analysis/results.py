"""Load run folders (results/<run>/ with config.json and stats.json) into pandas.

`load_runs` gives one tidy row per run: `run`, `status` (the folder's status file: 'ok', 'running',
'interrupted', 'failed', ... or 'unknown' for a folder written before status files existed), `stop_reason`, the
run's provenance (`prov.` columns: config, config_args, commit, dirty, command, engine and guest hashes, host,
kvsim_version), the flattened configuration (`cfg.` columns, dotted paths) and the statistics (`stat.` columns),
so a sweep is a groupby away from a figure. Unfinished runs (any status but 'ok' and 'unknown') are left out
unless asked for.
"""

from __future__ import annotations

import json
import pathlib
import warnings
from typing import Any, Iterable

import pandas as pd

from models import param_path
from models.durable import read_sealed_json, verify_checksums

# Statuses of a run whose statistics are complete (a folder from before status files existed has none).
FINISHED = ("ok", "unknown")


class UnreadableRunWarning(UserWarning):
    """A folder given to load_runs has no statistics (a run that never wrote them, or not a run folder)."""


def config_columns(config: dict[str, Any]) -> dict[str, Any]:
    """A resolved configuration as `cfg.<path>` columns, the paths in models/param_path.py's grammar
    (`cfg.caches.llc.size`, `cfg.nics[0].socket`); a list that is not of parameter objects is one JSON cell."""
    return {f"cfg.{path}": json.dumps(value) if isinstance(value, list) else value
            for path, value in param_path.flatten(config).items()}   # canonical already


def run_status(run_dir: str | pathlib.Path) -> tuple[str, str]:
    """(status, detail) from a run folder's status file: ('ok', 'client_done'), ('interrupted', '...'), or
    ('unknown', '') when it has none."""
    try:
        text = (pathlib.Path(run_dir) / "status").read_text().strip()
    except OSError:
        return "unknown", ""
    status, _, detail = text.partition(":")
    return status.strip(), detail.strip()


def _provenance(run_dir: pathlib.Path) -> dict[str, Any]:
    try:
        record = json.loads((run_dir / "provenance.json").read_text())
    except (OSError, ValueError):
        return {}
    record.pop("status", None)          # the status column has it
    record["argv"] = json.dumps(record.get("argv", []))
    record["config_args"] = json.dumps(record.get("config_args", {}), sort_keys=True)
    return {f"prov.{k}": v for k, v in param_path.flatten(record).items()}


def load_run(run_dir: str | pathlib.Path) -> dict[str, Any]:
    """One run folder as a flat dict: run, status, stop_reason, prov.<field>, cfg.<path> and stat.<name> keys."""
    run_dir = pathlib.Path(run_dir)
    missing = [name for name in ("config.json", "stats.json") if not (run_dir / name).exists()]
    if missing:
        raise FileNotFoundError(f"{run_dir} is not a finished run: {', '.join(missing)} missing")
    status = run_dir / "status"
    if status.is_file() and status.read_text(errors="replace").startswith("running"):
        raise FileNotFoundError(f"{run_dir} is not a finished run: its status says running (still running, or "
                                "killed before it finished)")
    return _row(run_dir, with_stats=True)


def _row(run_dir: pathlib.Path, *, with_stats: bool) -> dict[str, Any]:
    status, detail = run_status(run_dir)
    row: dict[str, Any] = {"run": run_dir.name, "status": status,
                           "stop_reason": detail if status == "ok" else None}
    row.update(_provenance(run_dir))
    if with_stats:
        verify_checksums(run_dir)                          # DamagedFile names a file changed since it was written
    if (run_dir / "config.json").exists():
        row.update(config_columns(read_sealed_json(run_dir / "config.json")))
    if with_stats:
        row.update({f"stat.{k}": v for k, v in read_sealed_json(run_dir / "stats.json").items()})
    return row


def _run_folders(run_dirs: Iterable[str | pathlib.Path] | str | pathlib.Path) -> list[pathlib.Path]:
    """The folders to load: those given, or, for one folder that is not itself a run, the runs inside it."""
    if isinstance(run_dirs, (str, pathlib.Path)):
        root = pathlib.Path(run_dirs)
        if (root / "config.json").exists():
            return [root]
        return sorted(p for p in root.iterdir() if p.is_dir() and (p / "config.json").exists())
    return [pathlib.Path(d) for d in run_dirs]


def load_runs(run_dirs: Iterable[str | pathlib.Path] | str | pathlib.Path, *,
              include_unfinished: bool = False) -> pd.DataFrame:
    """Many runs as one DataFrame, a row each (see the module doc); `run_dirs` is a list of run folders or one
    folder holding runs (e.g. "results"). Runs whose status is not 'ok' (running, interrupted, failed, ...) are
    left out unless include_unfinished; a folder without statistics is left out with an UnreadableRunWarning (with
    include_unfinished, it is a row with its status and configuration but no stat. columns)."""
    rows = []
    for run_dir in _run_folders(run_dirs):
        status, _ = run_status(run_dir)
        if not (run_dir / "stats.json").exists():
            warnings.warn(f"{run_dir}: no stats.json (status {status!r}); "
                          + ("kept without statistics" if include_unfinished else "left out"),
                          UnreadableRunWarning, stacklevel=2)
            if include_unfinished:
                rows.append(_row(run_dir, with_stats=False))
            continue
        if status not in FINISHED and not include_unfinished:
            continue
        rows.append(_row(run_dir, with_stats=True))
    return pd.DataFrame(rows)
