"""The paper's sensitivity studies (validation.md, "Studies ... to reproduce", items 1, 2, 5, 6), each a module with

- `sweeps(full) -> [Sweep]`: the design space, at reduced scale (common.REDUCED_CORES cores, per-core resources in
  proportion) or on the full 60-core socket;
- `compare_sweep() -> Sweep`: three of its points on the full socket, to measure the reduced scale's error;
- `make(tables, outdir, full) -> [paths]`: the plot drawn the way the paper shows it, its CSV and a Markdown report.
"""

from __future__ import annotations

import importlib

STUDIES = ("core_weight", "llc", "batching", "prefetch")


def get(name: str):
    if name not in STUDIES:
        raise ValueError(f"study {name!r}: must be one of {', '.join(STUDIES)}")
    return importlib.import_module(f"drivers.studies.{name}")
