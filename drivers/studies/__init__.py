"""The paper's sensitivity studies (validation.md, "Studies ... to reproduce", items 1, 2, 5, 6), each a module with

- `sweeps(full) -> [Sweep]`: the design space, at reduced scale (common.REDUCED_CORES cores, per-core resources in
  proportion) or on the full 60-core socket;
- `compare_sweep() -> Sweep`: three of its points on the full socket, to measure the reduced scale's error;
- `make(tables, outdir, full) -> [paths]`: the plot drawn the way the paper shows it, its CSV and a Markdown report.
"""

from __future__ import annotations

import importlib

STUDIES = ("core_weight", "llc", "batching", "prefetch")
# The end-to-end studies (validation.md items 3 and 4, and the scaling in sockets) have the same interface except
# `compare_sweep` (they run the whole server, there is no reduced socket to compare): `full` is the full-length
# measurement, the default a reduced one (shorter measured windows, fewer probes; each report says which).
END_TO_END = ("partition_load", "end_to_end", "scaling")
# The dense 3D-stacked servers (issue 17): the same interface as END_TO_END; capacity searches of one stack each.
DENSE = ("dense",)
# The other systems of the seed papers (issue 30): MICA's server, the TILEPro64 node, KV-Cache's server.
SEEDS = ("seed_mica", "seed_tilepro64", "seed_kvcache")
# The DVFS study as the paper defines it, beside the project's policy (issue 28 item 5): one skewed socket.
DVFS = ("dvfs",)
ALL = STUDIES + END_TO_END + DVFS + DENSE + SEEDS
# A study whose interface lives in a module of another name: the dense study's sweeps and report are
# dense_sweeps.py, which uses the stack measurement of dense.py (so dense.py does not import it back).
MODULES = {"dense": "dense_sweeps", "dvfs": "dvfs_socket"}


def takes_conditions(study) -> bool:
    """Whether a study's sweeps() and make() take `conditions` (drivers.studies.common.Conditions: the paper's
    conditions by default, issue 28) rather than only the older `full` flag."""
    import inspect

    return "conditions" in inspect.signature(study.sweeps).parameters


def get(name: str):
    if name not in ALL:
        raise ValueError(f"study {name!r}: must be one of {', '.join(ALL)}")
    return importlib.import_module(f"drivers.studies.{MODULES.get(name, name)}")
