"""Design-space sweeps: a base configuration, the parameters that vary, and a store of results that survives a stop.

A sweep is Python::

    Sweep("rob", Base("brps_target_socket", cores=4),
          Grid({"core.rob_entries": [1, 16, 64], "client.dataset": ["tiny", "large"]}),
          ties={"core.issue_width": ("core.fetch_width", "core.commit_width")})

Spaces: `Grid` (every combination), `List` (explicit points), `Zip` (axes walked together), `Random` and
`LatinHypercube` (n points over ranges, seeded), and `Product` of any of them. A parameter path is a path of the
configuration tree in models/param_path.py's grammar (`caches.llc.size`, `sockets[1].cores`);
`workload.argv[prefetch]` sets the guest's `prefetch=` argument.
`ties` copy a varied value to other paths (fetch and commit width follow the issue width).

Every point is resolved and validated before any runs: an unknown parameter, an empty axis or an out-of-range value
is a ParamError naming the parameter. A point's key is the SHA-256 of its resolved configuration (config.json's
content), the content hashes of the guest binary and of the engine, and what is measured; equal keys are one point.

The store (`results/sweeps/<name>/` by default) holds `sweep.json` (the description and the point keys in order)
and `points/<key>.json`, one per finished point, written by the worker the moment the point finishes: to a
temporary name that names its host and process, fsync'd, renamed; a run finds the temporaries of writers killed
before their rename (kill -9), puts a whole record in place and removes the rest (`recover_orphans`, with a warning
that counts them). A point that raises is stored with status 'failed' and its error; the others go
on. Running the sweep again skips every stored point, so a sweep stopped by Ctrl-C, kill -9 or a crash resumes
without redoing or losing a point (`retry_failed` reruns the failed ones). Inside a point, an evaluator marked
`journals` (evaluate_capacity, the end-to-end study's) journals each finished unit (a probe, a steady-state window)
in `journal/<key>.jsonl` as it finishes: a point stopped mid-way replays them when it runs again and goes on from
where it stopped, with the record an uninterrupted run gives (`journal`; capacity.replayed_units says how many).
Journals no point of the sweep's plan needs (another engine build's or configuration's keys) are removed only on
an explicit command, `clean_sweep_journals` (the CLIs' --clean-journals), which says what it removed.

Points that share a data set load it once (`share_checkpoint`, True by default; `checkpoints` names a folder
several sweeps share, else the store's own): points whose configurations agree on
everything a checkpoint restore refuses to change (the binary, its arguments, harts, items, dataset, seeds ...:
the engine's `checkpoint_identity`) form a group; before its points run, one functional run of the group's first
point loads the store and checkpoints it into `checkpoints/<data set key>/`, and every point of the group (every
probe of a capacity search too) restores from it. Only evaluators marked `restores` (they run the configuration
they are given: evaluate_run, evaluate_capacity) take part; a point without the client's bulk load loads nothing. Every point restores, the first included, so a point's result
never depends on which points were already stored. A restored run warms its caches over
`client.warmup_requests` requests of its own measured mix rather than over the load. The checkpoints stay in the
store (a resumed or extended sweep reuses them); the report gives their disk use. `restore_from` names a checkpoint
made elsewhere instead (another store or checkout, a load of its own): every point restores it, after a check that
it holds each point's data set (the parameters a restore may not change, the binary's content), else a ParamError
naming what differs, before any point runs.

Back-ends: a local process pool (default, `jobs` workers) or a Dask distributed cluster (`scheduler` = its address,
or a `distributed.Client`). A rich progress bar shows points done with the ETA, and the running point's own progress
(workers write it to `progress/<key>`, which the driver polls).

One module per concern: `space` (the design spaces), `points` (the sweep, its points and the parameter setter),
`store` (point keys and the store's atomic records), `journal` (a point's finished units, replayed on resume),
`data_set` (which points share a data set), `checkpoints` (shared data sets' checkpoints), `evaluators` (what one
point measures) and `execute` (running the points on a process pool or Dask). This package re-exports their public
names.
"""

from .checkpoints import (
    CHECKPOINTS,
    check_existing,
    checkpoint_bytes,
    checkpoint_dir,
    loaded_elsewhere,
    loader_system,
    packed_as_loaded,
    prepare_checkpoint,
)
from .data_set import data_set_key, shares_data_set
from .evaluators import capacity_key_options, evaluate_capacity, evaluate_run
from .execute import (
    SweepReport,
    _Progress,
    _record_of,
    clean_sweep_journals,
    data_set_need,
    load_once,
    load_sweep_module,
    run,
    run_point,
)
from .points import CAPACITY_EVALUATOR, RUN_EVALUATOR, Base, Point, Sweep, build_point, set_path
from .space import Grid, LatinHypercube, List, Product, Random, Space, Zip
from .store import DEFAULT_STORE, ROOT, atomic_write_json, engine_hash, file_hash, point_key, store_dir, stored_points

__all__ = [
    "CAPACITY_EVALUATOR", "CHECKPOINTS", "DEFAULT_STORE", "ROOT", "RUN_EVALUATOR", "Base", "Grid", "LatinHypercube",
    "List", "Point", "Product", "Random", "Space", "Sweep", "SweepReport", "Zip", "_Progress", "_record_of",
    "atomic_write_json", "build_point", "capacity_key_options", "check_existing", "checkpoint_bytes", "checkpoint_dir", "clean_sweep_journals",
    "data_set_key", "data_set_need", "engine_hash",
    "evaluate_capacity", "evaluate_run", "file_hash", "load_once", "load_sweep_module", "loaded_elsewhere", "loader_system",
    "packed_as_loaded", "point_key",
    "prepare_checkpoint", "run", "run_point", "set_path", "shares_data_set", "store_dir", "stored_points",
]
