"""Load run folders (results/<run>/ with config.json and stats.json) into pandas.

`load_runs` gives one tidy row per run: the flattened configuration (`cfg.` columns, dotted paths) beside the
statistics (`stat.` columns), so a sweep is a groupby away from a figure.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any, Iterable

import pandas as pd

from models.durable import read_sealed_json, verify_checksums


def _flatten(tree: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(tree, dict):
        for key, value in tree.items():
            _flatten(value, f"{prefix}.{key}" if prefix else key, out)
    elif isinstance(tree, list) and tree and all(isinstance(v, dict) for v in tree):
        for i, value in enumerate(tree):
            _flatten(value, f"{prefix}[{i}]", out)
    else:
        out[prefix] = json.dumps(tree) if isinstance(tree, list) else tree


def load_run(run_dir: str | pathlib.Path) -> dict[str, Any]:
    """One run folder as a flat dict: run, cfg.<path> and stat.<name> keys."""
    run_dir = pathlib.Path(run_dir)
    missing = [name for name in ("config.json", "stats.json") if not (run_dir / name).exists()]
    if missing:
        raise FileNotFoundError(f"{run_dir} is not a finished run: {', '.join(missing)} missing")
    status = run_dir / "status"
    if status.is_file() and status.read_text(errors="replace").startswith("running"):
        raise FileNotFoundError(f"{run_dir} is not a finished run: its status says running (still running, or "
                                "killed before it finished)")
    verify_checksums(run_dir)                              # DamagedFile names a file changed since it was written
    row: dict[str, Any] = {"run": run_dir.name}
    config: dict[str, Any] = {}
    _flatten(read_sealed_json(run_dir / "config.json"), "", config)
    row.update({f"cfg.{k}": v for k, v in config.items()})
    row.update({f"stat.{k}": v for k, v in read_sealed_json(run_dir / "stats.json").items()})
    return row


def load_runs(run_dirs: Iterable[str | pathlib.Path]) -> pd.DataFrame:
    """Many runs as one DataFrame, a row each; folders that are not finished runs raise FileNotFoundError."""
    return pd.DataFrame([load_run(d) for d in run_dirs])
