"""A sweep's result store (drivers/sweep/) as one pandas DataFrame, and as Parquet.

One row per point of the sweep, in the sweep's order: `key`, `index`, `status` ('ok', 'failed', or 'missing' for a
point not run yet), `error`, `host_seconds`, then `param.<path>` (the values the sweep varied), `cfg.<path>` (the
whole resolved configuration, flattened as in `load_runs`) and `stat.<name>` (every statistic, power.* included
when the point was priced).
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pandas as pd

from models import param_path
from models.durable import read_sealed_json

from .results import config_columns


def _row(record: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"key": record["key"], "index": record.get("index"), "status": record["status"],
                           "error": record.get("error"), "host_seconds": record.get("host_seconds"),
                           "cpu_seconds": record.get("cpu_seconds", float("nan"))}   # NaN: recorded before it was
    row.update({param_path.column("param", k): v for k, v in record.get("params", {}).items()})
    row.update(config_columns(record.get("config", {})))
    row.update({f"stat.{k}": v for k, v in record.get("stats", {}).items()})
    return row


def load_sweep(store: str | pathlib.Path, *, include_missing: bool = False,
               keys: list[str] | None = None) -> pd.DataFrame:
    """The sweep stored in `store` as a DataFrame (see the module doc). Points stored there that the sweep no
    longer lists (an older version of it) are left out; with include_missing, listed points not run yet appear
    with status 'missing'. `keys`: the points of these keys instead of the last run's list (a run of some of the
    sweep's points lists only those)."""
    store = pathlib.Path(store)
    manifest_path = store / "sweep.json"
    if not manifest_path.exists():
        raise FileNotFoundError(f"{store} is not a sweep store: sweep.json missing")
    keys = json.loads(manifest_path.read_text())["keys"] if keys is None else keys
    rows = []
    for i, key in enumerate(keys):
        path = store / "points" / f"{key}.json"
        if path.exists():
            rows.append(_row(read_sealed_json(path)))     # DamagedFile names a damaged point
        elif include_missing:
            rows.append({"key": key, "index": i, "status": "missing"})
    frame = pd.DataFrame(rows)
    # A point stored by an earlier version of the sweep that varied fewer parameters (same resolved configuration,
    # so the same key) lacks the newer param.* values: they are its configuration's.
    for path in json.loads(manifest_path.read_text()).get("paths", []):
        column, resolved = param_path.column("param", path), param_path.column("cfg", path)
        if resolved in frame:
            frame[column] = frame[column].fillna(frame[resolved]) if column in frame else frame[resolved]
    return frame.reset_index(drop=True)


def write_parquet(frame: pd.DataFrame, path: str | pathlib.Path) -> pathlib.Path:
    """Write a sweep table as Parquet (pyarrow). Columns that mix types (a parameter that is a number at one point
    and a string at another) are stored as strings, which Parquet needs."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object:
            kinds = {type(v) for v in out[column].dropna()}
            if len(kinds) > 1 or kinds & {list, dict}:
                out[column] = out[column].map(lambda v: None if v is None else
                                              (json.dumps(v) if isinstance(v, (list, dict)) else str(v)))
    out.to_parquet(path, engine="pyarrow", index=False)
    return path
