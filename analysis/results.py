"""Load run folders (results/<run>/ with config.json and stats.json) into pandas.

`load_runs` gives one tidy row per run: the flattened configuration (`cfg.` columns, dotted paths) beside the
statistics (`stat.` columns), so a sweep is a groupby away from a figure.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any, Iterable

import pandas as pd

from models import param_path


def config_columns(config: dict[str, Any]) -> dict[str, Any]:
    """A resolved configuration as `cfg.<path>` columns, the paths in models/param_path.py's grammar
    (`cfg.caches.llc.size`, `cfg.nics[0].socket`); a list that is not of parameter objects is one JSON cell."""
    return {f"cfg.{path}": json.dumps(value) if isinstance(value, list) else value
            for path, value in param_path.flatten(config).items()}   # canonical already


def load_run(run_dir: str | pathlib.Path) -> dict[str, Any]:
    """One run folder as a flat dict: run, cfg.<path> and stat.<name> keys."""
    run_dir = pathlib.Path(run_dir)
    missing = [name for name in ("config.json", "stats.json") if not (run_dir / name).exists()]
    if missing:
        raise FileNotFoundError(f"{run_dir} is not a finished run: {', '.join(missing)} missing")
    row: dict[str, Any] = {"run": run_dir.name}
    row.update(config_columns(json.loads((run_dir / "config.json").read_text())))
    row.update({f"stat.{k}": v for k, v in json.loads((run_dir / "stats.json").read_text()).items()})
    return row


def load_runs(run_dirs: Iterable[str | pathlib.Path]) -> pd.DataFrame:
    """Many runs as one DataFrame, a row each; folders that are not finished runs raise FileNotFoundError."""
    return pd.DataFrame([load_run(d) for d in run_dirs])
