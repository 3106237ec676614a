"""Design-space sweeps: a base configuration, the parameters that vary, and a store of results that survives a stop.

A sweep is Python::

    Sweep("rob", Base("brps_target_socket", cores=4),
          Grid({"core.rob_entries": [1, 16, 64], "client.dataset": ["tiny", "large"]}),
          ties={"core.issue_width": ("core.fetch_width", "core.commit_width")})

Spaces: `Grid` (every combination), `List` (explicit points), `Zip` (axes walked together), `Random` and
`LatinHypercube` (n points over ranges, seeded), and `Product` of any of them. A parameter path is the dotted
path of the configuration tree (`caches.llc.size`); `workload.argv[prefetch]` sets the guest's `prefetch=` argument.
`ties` copy a varied value to other paths (fetch and commit width follow the issue width).

Every point is resolved and validated before any runs: an unknown parameter, an empty axis or an out-of-range value
is a ParamError naming the parameter. A point's key is the SHA-256 of its resolved configuration (config.json's
content), the content hashes of the guest binary and of the engine, and what is measured; equal keys are one point.

The store (`results/sweeps/<name>/` by default) holds `sweep.json` (the description and the point keys in order)
and `points/<key>.json`, one per finished point, written by the worker the moment the point finishes: to a
temporary name, fsync'd, renamed. A point that raises is stored with status 'failed' and its error; the others go
on. Running the sweep again skips every stored point, so a sweep stopped by Ctrl-C, kill -9 or a crash resumes
without redoing or losing a point (`retry_failed` reruns the failed ones).

Points that share a data set load it once (`share_checkpoint=True`): points whose configurations agree on
everything a checkpoint restore refuses to change (the binary, its arguments, harts, items, dataset, seeds ...:
the engine's `checkpoint_identity`) form a group; before its points run, one functional run of the group's first
point loads the store and checkpoints it into `checkpoints/<data set key>/`, and every point of the group (every
probe of a capacity search too) restores from it. Only evaluators marked `restores` (they run the configuration
they are given: evaluate_run, evaluate_capacity) take part; a point without the client's bulk load loads nothing. Every point restores, the first included, so a point's result
never depends on which points were already stored. A restored run warms its caches over
`client.warmup_requests` requests of its own measured mix rather than over the load. The checkpoints stay in the
store (a resumed or extended sweep reuses them); the report gives their disk use.

Back-ends: a local process pool (default, `jobs` workers) or a Dask distributed cluster (`scheduler` = its address,
or a `distributed.Client`). A rich progress bar shows points done with the ETA, and the running point's own progress
(workers write it to `progress/<key>`, which the driver polls).
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import hashlib
import importlib
import itertools
import json
import multiprocessing
import os
import pathlib
import random
import shutil
import signal
import time
import traceback
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable

from models.durable import DamagedFile, atomic_write, read_sealed_json, seal
from models.params import ParamError, SimObject
from models.system import System

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_STORE = ROOT / "results" / "sweeps"
RUN_EVALUATOR = "drivers.sweep:evaluate_run"
CAPACITY_EVALUATOR = "drivers.sweep:evaluate_capacity"
CHECKPOINTS = "checkpoints"       # the store's folder of shared checkpoints, one per data set


# ---------------------------------------------------------------------------------------------------------------
# Spaces: each gives a list of points, a point being {parameter path: value}.

class Space:
    def paths(self) -> list[str]:
        raise NotImplementedError

    def points(self) -> list[dict[str, Any]]:
        raise NotImplementedError


def _check_axes(kind: str, axes: dict[str, Any]) -> None:
    if not axes:
        raise ParamError(f"{kind}: no parameter to vary (an empty sweep)")
    for path, values in axes.items():
        if isinstance(values, (list, tuple)) and len(values) == 0:
            raise ParamError(f"{kind}: parameter {path!r} has no values (an empty grid)")


@dataclass
class Grid(Space):
    """Every combination of the axes' values (the first axis varies slowest)."""
    axes: dict[str, list[Any]]

    def __post_init__(self):
        _check_axes("Grid", self.axes)

    def paths(self):
        return list(self.axes)

    def points(self):
        return [dict(zip(self.axes, combo)) for combo in itertools.product(*self.axes.values())]


@dataclass
class List(Space):
    """Explicit points, each a {path: value} dict."""
    items: list[dict[str, Any]]

    def __post_init__(self):
        if not self.items:
            raise ParamError("List: no points (an empty sweep)")

    def paths(self):
        return list(dict.fromkeys(p for item in self.items for p in item))

    def points(self):
        return [dict(item) for item in self.items]


@dataclass
class Zip(Space):
    """The axes walked together: point i takes the i-th value of every axis (all axes the same length)."""
    axes: dict[str, list[Any]]

    def __post_init__(self):
        _check_axes("Zip", self.axes)
        lengths = {path: len(v) for path, v in self.axes.items()}
        if len(set(lengths.values())) != 1:
            raise ParamError(f"Zip: the axes must have the same length, not {lengths}")

    def paths(self):
        return list(self.axes)

    def points(self):
        return [dict(zip(self.axes, combo)) for combo in zip(*self.axes.values())]


def _sample(path: str, spec: Any, u: float) -> Any:
    """A value for `path` from a uniform u in [0, 1): `spec` is a list of choices or a (low, high) range; integer
    ranges give integers (both ends included), float ranges floats."""
    if isinstance(spec, list):
        return spec[min(int(u * len(spec)), len(spec) - 1)]
    if not (isinstance(spec, tuple) and len(spec) == 2):
        raise ParamError(f"parameter {path!r}: give a list of choices or a (low, high) range, not {spec!r}")
    low, high = spec
    if high < low:
        raise ParamError(f"parameter {path!r}: range ({low}, {high}) is empty")
    if isinstance(low, int) and isinstance(high, int):
        return low + min(int(u * (high - low + 1)), high - low)
    return low + u * (high - low)


@dataclass
class Random(Space):
    """n points drawn independently and uniformly (seeded) from each axis' choices or (low, high) range."""
    axes: dict[str, Any]
    n: int
    seed: int = 1

    def __post_init__(self):
        _check_axes("Random", self.axes)
        if self.n < 1:
            raise ParamError(f"Random: n = {self.n}: must be at least 1")

    def paths(self):
        return list(self.axes)

    def points(self):
        rng = random.Random(self.seed)
        return [{path: _sample(path, spec, rng.random()) for path, spec in self.axes.items()} for _ in range(self.n)]


@dataclass
class LatinHypercube(Space):
    """n points whose projections on every axis fall one in each of n equal strata (scipy's LHS, seeded)."""
    axes: dict[str, Any]
    n: int
    seed: int = 1

    def __post_init__(self):
        _check_axes("LatinHypercube", self.axes)
        if self.n < 1:
            raise ParamError(f"LatinHypercube: n = {self.n}: must be at least 1")

    def paths(self):
        return list(self.axes)

    def points(self):
        from scipy.stats import qmc

        unit = qmc.LatinHypercube(d=len(self.axes), seed=self.seed).random(self.n)
        return [{path: _sample(path, spec, float(u)) for (path, spec), u in zip(self.axes.items(), row)}
                for row in unit]


@dataclass
class Product(Space):
    """Every combination of the spaces' points (e.g. a Zip of core shapes times a Grid of datasets)."""
    spaces: list[Space]

    def __init__(self, *spaces: Space):
        if not spaces:
            raise ParamError("Product: no spaces (an empty sweep)")
        self.spaces = list(spaces)

    def paths(self):
        return list(dict.fromkeys(p for s in self.spaces for p in s.paths()))

    def points(self):
        return [dict(itertools.chain.from_iterable(p.items() for p in combo))
                for combo in itertools.product(*(s.points() for s in self.spaces))]


# ---------------------------------------------------------------------------------------------------------------
# Configurations: a base, and parameter paths set on it.

@dataclass
class Base:
    """The base configuration: `configs.<config>.system(**kwargs)`, or `module:function(**kwargs)` when `config`
    names one. Plain data, so workers can rebuild it."""
    config: str
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __init__(self, config: str, **kwargs: Any):
        self.config, self.kwargs = config, kwargs

    def build(self) -> System:
        if ":" in self.config:
            return _resolve_callable(self.config)(**self.kwargs)
        import configs

        return configs.load(self.config).system(**self.kwargs)


def set_path(system: SimObject, path: str, value: Any) -> None:
    """Set one parameter by its dotted path; `workload.argv[name]` replaces (or appends) the guest argument
    `name=value`. Errors are ParamErrors that name the path."""
    try:
        if path.endswith("]") and "[" in path:
            head, name = path[:-1].split("[", 1)
            target = _walk(system, head.split("."))
            argv = [a for a in getattr(target[0], target[1]) if not a.startswith(f"{name}=")]
            setattr(target[0], target[1], [*argv, f"{name}={value}"])
            return
        obj, leaf = _walk(system, path.split("."))
        setattr(obj, leaf, value)
    except ParamError as err:
        raise ParamError(f"parameter {path!r} = {value!r}: {err}") from None


def _walk(system: SimObject, parts: list[str]) -> tuple[SimObject, str]:
    obj = system
    for i, part in enumerate(parts[:-1]):
        child = obj._params.get(part)
        if child is None or child.kind != "child" or child.many:
            raise ParamError(f"{'.'.join(parts[:i + 1])} is not a sub-object of {type(obj).__name__} (it has "
                             f"{', '.join(n for n, p in obj._params.items() if p.kind == 'child' and not p.many)})")
        obj = getattr(obj, part)
    if parts[-1] not in obj._params:
        raise ParamError(f"{type(obj).__name__} has no parameter {parts[-1]!r}; its parameters are: "
                         f"{', '.join(obj._params)}")
    return obj, parts[-1]


@functools.lru_cache(maxsize=64)
def _file_sha256(path: str, mtime_ns: int, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_hash(path: str | pathlib.Path) -> str:
    """Content hash of a file ('' when it does not exist: e.g. a guest binary not built yet)."""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return _file_sha256(str(path), st.st_mtime_ns, st.st_size)


def engine_hash() -> str:
    """Content hash of the built engine extension (a rebuilt simulator may give other results)."""
    import models

    libs = sorted(pathlib.Path(models.__file__).parent.glob("_engine*.so"))
    return file_hash(libs[0]) if libs else ""


def point_key(config: dict[str, Any], measure: dict[str, Any]) -> str:
    """The key of a point: its resolved configuration, the content of the binaries that run it, and what is
    measured. Anything else (the order of the sweep, the host, the time) does not enter."""
    blob = {"config": config, "binary": file_hash(config["workload"]["binary"]), "engine": engine_hash(),
            "measure": measure}
    return hashlib.sha256(json.dumps(blob, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:24]


# ---------------------------------------------------------------------------------------------------------------
# The sweep.

@dataclass
class Sweep:
    """A named design space over a base configuration; `evaluator` ('module:function') measures one point (a
    simulated run by default; CAPACITY_EVALUATOR for the capacity search), with `options` passed to it."""
    name: str
    base: Base
    space: Space
    ties: dict[str, tuple[str, ...]] = field(default_factory=dict)
    evaluator: str = RUN_EVALUATOR
    options: dict[str, Any] = field(default_factory=dict)
    share_checkpoint: bool = False     # points sharing a data set load it once and restore it (module doc)

    def resolve(self) -> list["Point"]:
        """Every point, resolved and validated (ParamError naming the parameter before anything runs). Points whose
        keys coincide are one point."""
        for tied in self.ties:
            if tied not in self.space.paths():
                raise ParamError(f"sweep {self.name!r}: tie on {tied!r}, which the sweep does not vary")
        measure = {"evaluator": self.evaluator, "options": self.options}
        # Only an evaluator that simulates the point's own configuration can restore it (not a synthetic one).
        share = self.share_checkpoint and getattr(_resolve_callable(self.evaluator), "restores", False)
        points: dict[str, Point] = {}
        for params in self.space.points():
            system = build_point(self.base, params, self.ties, sweep=self.name)
            config = system.to_dict()
            data_set = data_set_key(config) if share and shares_data_set(system) else ""
            # A restored point warms up differently from one that loads: the key says which it is.
            key = point_key(config, {**measure, "restored": True} if data_set else measure)
            points.setdefault(key, Point(key, len(points), params, self.base, self.ties, self.evaluator,
                                         self.options, data_set))
        return list(points.values())


@dataclass
class Point:
    key: str
    index: int
    params: dict[str, Any]
    base: Base
    ties: dict[str, tuple[str, ...]]
    evaluator: str
    options: dict[str, Any]
    data_set: str = ""        # the shared data set's key ('' : the point loads its own)
    restore_from: str = ""    # set by the runner: the shared checkpoint the point restores

    def system(self) -> System:
        """The point's configuration, as its key describes it."""
        return build_point(self.base, self.params, self.ties)

    def run_system(self) -> System:
        """The configuration the point runs: its own, restored from the shared checkpoint when it has one."""
        system = self.system()
        system.restore_from = self.restore_from
        return system


def build_point(base: Base, params: dict[str, Any], ties: dict[str, tuple[str, ...]], sweep: str = "") -> System:
    try:
        system = base.build()
        for path, value in params.items():
            set_path(system, path, value)
            for follower in ties.get(path, ()):
                set_path(system, follower, value)
        system.validate()
    except ParamError as err:
        where = f"sweep {sweep!r}, point {params}" if sweep else f"point {params}"
        raise ParamError(f"{where}: {err}") from None
    return system


# ---------------------------------------------------------------------------------------------------------------
# Shared checkpoints: the points of a sweep that share a data set load it once.

def shares_data_set(system: System) -> bool:
    """Can this point restore a shared checkpoint? It needs the client's bulk load (the checkpoint is taken at its
    end) and must not name a checkpoint of its own."""
    return system.client.enabled and system.client.bulk_load and not system.restore_from and \
        not system.checkpoint_to


def data_set_key(config: dict[str, Any]) -> str:
    """The key of the data set a point's checkpoint holds: what a restore refuses to change (the engine's own list),
    the guest binary's content and the engine's. Points with equal keys can restore one checkpoint."""
    from models import _engine

    blob = {"identity": json.loads(_engine.checkpoint_identity(json.dumps(config))),
            "binary": file_hash(config["workload"]["binary"]), "engine": engine_hash()}
    return hashlib.sha256(json.dumps(blob, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:24]


def checkpoint_dir(store: str | pathlib.Path, data_set: str) -> pathlib.Path:
    return pathlib.Path(store) / CHECKPOINTS / data_set


def loader_system(point: Point, target: pathlib.Path) -> System:
    """The run that loads the point's data set and checkpoints it: the point's configuration, functional (timing
    is not in a checkpoint), with one measured request after the checkpoint."""
    system = point.system()
    system.mode, system.detailed_start, system.warm_caches, system.warm_start_insts = "functional", "start", False, 0
    system.max_insts, system.max_time = 0, 0
    system.client.requests = 1
    system.checkpoint_to = str(target)
    return system


def prepare_checkpoint(store: str, point: Point) -> dict[str, Any]:
    """In a worker: load `point`'s data set and checkpoint it (unless the store has it already). Returns a record
    (status 'ok' or 'failed' with the error), also stored as checkpoints/<key>.json."""
    from models.sim import simulate

    target = checkpoint_dir(store, point.data_set)
    record_path = target.parent / f"{point.data_set}.json"
    if (target / "manifest.json").is_file() and record_path.is_file():
        return {**json.loads(record_path.read_text()), "loaded": False}
    for stale in target.parent.glob(f".{point.data_set}.partial-*"):   # a loader killed mid-write
        shutil.rmtree(stale, ignore_errors=True)
    if target.exists():                                                  # written, but its record was not
        shutil.rmtree(target)
    progress_file = pathlib.Path(store) / "progress" / f"load-{point.data_set}"
    started = time.time()
    record: dict[str, Any] = {"data_set": point.data_set, "point": point.key, "params": point.params}
    try:
        system = loader_system(point, target)
        progress_file.parent.mkdir(parents=True, exist_ok=True)

        def progress(insts: int, ticks: int, phase: str) -> None:
            progress_file.write_text(f"loading the data set: {insts:,} instructions")

        result = simulate(system, progress=progress, progress_every=20_000_000)
        record.update(status="ok", error=None, bytes=int(result.stats["system.checkpoint.bytes"]),
                      insts=result.insts, config=system.to_dict())
    except Exception as err:  # every point of the group is recorded failed with this error
        record.update(status="failed", error=f"{type(err).__name__}: {err}", traceback=traceback.format_exc())
    record["host_seconds"] = time.time() - started
    if record["status"] == "ok":
        atomic_write_json(record_path, record)
    progress_file.unlink(missing_ok=True)
    return {**record, "loaded": True}


def _prepare_all(store: str, loaders: list[Point], jobs: int | None, scheduler: Any,
                 poll: Callable[[], None] = lambda: None) -> list[dict[str, Any]]:
    """Run prepare_checkpoint for every loader point, in parallel on the sweep's back-end. A worker that dies is a
    failed load."""
    def died(point: Point, err: BaseException) -> dict[str, Any]:
        return {"data_set": point.data_set, "status": "failed", "loaded": True,
                "error": f"the loader's worker died: {type(err).__name__}: {err}"}

    if scheduler is not None:
        from distributed import Client

        client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
        try:
            futures = [client.submit(prepare_checkpoint, store, p, key=f"kvsim-load-{p.data_set}", pure=False)
                       for p in loaders]
            out = []
            for p, fut in zip(loaders, futures):
                try:
                    out.append(fut.result())
                except Exception as err:
                    out.append(died(p, err))
            return out
        finally:
            if client is not scheduler:
                client.close()
    pool = _local_pool(min(len(loaders), jobs or os.cpu_count() or 1))
    try:
        futures = [pool.submit(prepare_checkpoint, store, p) for p in loaders]
        pending = set(futures)
        while pending:                                   # the loaders' progress on the bar (their progress files)
            _, pending = cf.wait(pending, timeout=0.5)
            poll()
        out = []
        for p, fut in zip(loaders, futures):
            try:
                out.append(fut.result())
            except cf.process.BrokenProcessPool as err:
                out.append(died(p, err))
        pool.shutdown()
        return out
    except BaseException:
        _stop(pool)
        raise


def checkpoint_bytes(store: str | pathlib.Path) -> int:
    """Disk used by a store's shared checkpoints."""
    root = pathlib.Path(store) / CHECKPOINTS
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) if root.is_dir() else 0


# ---------------------------------------------------------------------------------------------------------------
# Evaluators: (point's system factory, options, report) -> {"stats": {...}, ...extra JSON}.

def evaluate_run(make_system: Callable[[], System], options: dict[str, Any],
                 report: Callable[[str], None]) -> dict[str, Any]:
    """One simulation; with options['power'] true, priced by the power model from the run's own configuration
    (power.* stats)."""
    from models.sim import simulate

    system = make_system()

    def progress(insts: int, ticks: int, phase: str) -> None:
        report(f"{phase}: {insts:,} instructions, {ticks * 1e-9:.3f} ms simulated")

    result = simulate(system, progress=progress, progress_every=5_000_000)
    stats = dict(result.stats)
    if options.get("power"):
        import power

        stats.update(power.price_run(stats, system.to_dict()).stats())
    return {"stats": stats, "host": {"insts": result.insts, "sim_seconds": result.sim_seconds}}


evaluate_run.restores = True    # runs make_system()'s configuration as is: a shared checkpoint can be restored


def evaluate_capacity(make_system: Callable[[], System], options: dict[str, Any],
                      report: Callable[[str], None]) -> dict[str, Any]:
    """The capacity search (drivers.capacity) on the point: the stats are the best probe's, plus capacity.*."""
    from . import capacity

    def make(rate: float) -> System:
        system = make_system()
        system.client.offered_mpps = rate
        return system

    def progress(p) -> None:
        report(f"probe at {p.offered_mpps:.3f} M frames/s per port: loss {100 * p.loss:.2f}%")

    res = capacity.capacity(make, resolution=options.get("resolution", capacity.DEFAULT_RESOLUTION),
                            max_loss=options.get("max_loss", capacity.DEFAULT_MAX_LOSS), progress=progress)
    stats = dict(res.best.stats if res.best else {})
    stats.update({"capacity.mpps_per_port": res.offered_mpps, "capacity.upper_mpps_per_port":
                  res.upper_mpps if not res.line_limited else -1.0, "capacity.probes": float(len(res.probes)),
                  "capacity.mrps": stats.get("client.throughput_mrps", 0.0)})
    if options.get("power") and res.best:
        import power

        stats.update(power.price_run(stats, make(res.offered_mpps).to_dict()).stats())
    return {"stats": stats, "probes": res.table()}


evaluate_capacity.restores = True   # every probe restores the shared checkpoint


def _resolve_callable(name: str) -> Callable:
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


# ---------------------------------------------------------------------------------------------------------------
# The store.

def atomic_write_json(path: pathlib.Path, data: Any) -> None:
    """Write to a temporary name in the same folder, fsync, rename over `path`, fsync the folder: a reader sees
    the old file or the whole new one, never a part, even after kill -9 or a power cut. A record is sealed with
    its SHA-256 (models/durable.py), so a changed one is found when it is read."""
    atomic_write(path, json.dumps(seal(data) if isinstance(data, dict) else data, separators=(",", ":")))


def store_dir(name: str, store: str | pathlib.Path | None = None) -> pathlib.Path:
    return pathlib.Path(store) if store is not None else DEFAULT_STORE / name


def stored_points(store: pathlib.Path) -> dict[str, dict[str, Any]]:
    """Every finished point's record in a store, by key."""
    out = {}
    for path in (store / "points").glob("*.json"):
        try:
            record = read_sealed_json(path)
        except DamagedFile as err:      # not a result: said, and the point runs again
            warnings.warn(f"{err}; the point runs again", stacklevel=2)
            continue
        out[record["key"]] = record
    return out


def run_point(store: str, point: Point) -> dict[str, Any]:
    """Run one point in a worker and store its record (status 'ok' or 'failed' with the error). Returns it."""
    store_path = pathlib.Path(store)
    progress_file = store_path / "progress" / point.key
    last = [0.0]

    def report(text: str) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.2:        # rate-limited: the driver polls a few times a second
            last[0] = now
            try:
                progress_file.parent.mkdir(parents=True, exist_ok=True)
                progress_file.write_text(text)
            except OSError:
                pass

    started = time.time()
    record: dict[str, Any] = {"key": point.key, "index": point.index, "params": point.params}
    if point.restore_from:
        record["data_set"] = point.data_set
    try:
        record["config"] = point.system().to_dict()
        out = _resolve_callable(point.evaluator)(point.run_system, point.options, report)
        record.update(status="ok", error=None, **out)
    except Exception as err:  # a failed point is a result too: recorded, and the sweep goes on
        record.update(status="failed", error=f"{type(err).__name__}: {err}", traceback=traceback.format_exc(),
                      stats={})
    record["host_seconds"] = time.time() - started
    atomic_write_json(store_path / "points" / f"{point.key}.json", record)
    progress_file.unlink(missing_ok=True)
    return record


@dataclass
class SweepReport:
    store: pathlib.Path
    points: int
    skipped: int                   # already stored before this run
    ran: int
    failed: int                    # failed points in the store after this run
    host_seconds: float
    loads: int = 0                 # shared data sets loaded (and checkpointed) by this run
    checkpoint_bytes: int = 0      # disk used by the store's shared checkpoints


def run(sweep: Sweep, *, store: str | pathlib.Path | None = None, jobs: int | None = None,
        scheduler: Any = None, retry_failed: bool = False, progress: bool = True) -> SweepReport:
    """Run every point of `sweep` not yet in its store. `scheduler`: a Dask scheduler address or a
    distributed.Client (else a local process pool of `jobs` workers, by default the host's CPU count)."""
    started = time.time()
    points = sweep.resolve()                      # every ParamError happens here, before anything runs
    path = store_dir(sweep.name, store)
    (path / "points").mkdir(parents=True, exist_ok=True)
    atomic_write_json(path / "sweep.json", {"name": sweep.name, "base": {"config": sweep.base.config,
                                                                         "kwargs": sweep.base.kwargs},
                                            "paths": sweep.space.paths(), "ties": sweep.ties,
                                            "evaluator": sweep.evaluator, "options": sweep.options,
                                            "keys": [p.key for p in points]})
    done = stored_points(path)
    todo = [p for p in points if p.key not in done or (retry_failed and done[p.key]["status"] == "failed")]
    skipped = len(points) - len(todo)
    todo, loads = _share_checkpoints(str(path), points, todo, jobs, scheduler, progress, sweep.name)
    if todo:
        runner = _run_dask if scheduler is not None else _run_local
        runner(str(path), todo, skipped, len(points), jobs, scheduler, progress, sweep.name)
    final = stored_points(path)
    failed = sum(1 for p in points if final.get(p.key, {}).get("status") == "failed")
    return SweepReport(path, len(points), skipped, len(points) - skipped, failed, time.time() - started, loads,
                       checkpoint_bytes(path))


def _share_checkpoints(store: str, points: list[Point], todo: list[Point], jobs: int | None, scheduler: Any,
                       progress: bool = False, name: str = "") -> tuple[list[Point], int]:
    """Load every data set the points to run share (the first point of each group in sweep order loads it) and
    point them at its checkpoint. The points of a data set that failed to load are stored failed with its error.
    Returns the points left to run and the number of data sets loaded."""
    needed = {p.data_set for p in todo if p.data_set}
    if not needed:
        return todo, 0
    loaders = list({p.data_set: p for p in reversed(points) if p.data_set in needed}.values())
    with _Progress(store, f"{name}: loading {len(loaders)} data set(s)", len(points) - len(todo), len(points),
                   progress) as bar:
        results = {r["data_set"]: r for r in _prepare_all(store, loaders, jobs, scheduler, bar.poll)}
    runnable = []
    for p in todo:
        r = results.get(p.data_set) if p.data_set else None
        if r is not None and r["status"] != "ok":
            atomic_write_json(pathlib.Path(store) / "points" / f"{p.key}.json",
                              {"key": p.key, "index": p.index, "params": p.params, "status": "failed",
                               "data_set": p.data_set, "error": f"loading the shared data set failed: {r['error']}",
                               "stats": {}, "host_seconds": 0.0})
            continue
        runnable.append(replace(p, restore_from=str(checkpoint_dir(store, p.data_set))) if r is not None else p)
    return runnable, sum(1 for r in results.values() if r["loaded"] and r["status"] == "ok")


class _Progress:
    """The bar over points (with ETA) and a line for the running point's own progress."""

    def __init__(self, store: str, name: str, done: int, total: int, enabled: bool):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress_dir = pathlib.Path(store) / "progress"
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), disable=not enabled)
        self.points = self.bar.add_task(f"sweep {name}", total=total, completed=done)
        self.current = self.bar.add_task("", total=None)
        self.failed = 0

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        self.bar.__exit__(*exc)

    def finished(self, record: dict[str, Any]) -> None:
        self.failed += record["status"] == "failed"
        self.bar.update(self.points, advance=1,
                        description=f"points ({self.failed} failed)" if self.failed else "points")

    def poll(self) -> None:
        lines = []
        for f in sorted(self.progress_dir.glob("*")):
            try:
                lines.append(f"{f.name[:8]}: {f.read_text()}")
            except OSError:
                continue
        self.bar.update(self.current, description="  " + ("; ".join(lines[:2]) or "waiting for a point"))


def _ignore_sigint() -> None:
    # Workers leave Ctrl-C to the driver, which stops them: an interrupted point is not a failed point.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _local_pool(jobs: int) -> cf.ProcessPoolExecutor:
    # spawn: workers start clean (no inherited threads or locks from the driver) and import what they need.
    return cf.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                                  initializer=_ignore_sigint)


def _stop(pool: cf.ProcessPoolExecutor) -> None:
    workers = list((getattr(pool, "_processes", None) or {}).values())    # shutdown forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in workers:
        proc.terminate()


def _run_local(store, todo, done, total, jobs, _scheduler, progress, name):
    jobs = jobs or os.cpu_count() or 1
    stored = set()
    with _Progress(store, name, done, total, progress) as bar:
        pool = _local_pool(jobs)
        try:
            futures = {pool.submit(run_point, store, p): p for p in todo}
            pending = set(futures)
            while pending:
                finished, pending = cf.wait(pending, timeout=0.5, return_when=cf.FIRST_COMPLETED)
                for fut in finished:
                    record = fut.result()        # BrokenProcessPool when a worker died: handled below
                    stored.add(record["key"])
                    bar.finished(record)
                bar.poll()
            pool.shutdown()
        except cf.process.BrokenProcessPool:
            # A worker died (the process crashed, not a Python error, which run_point records). Every pending
            # future fails with the pool, so rerun the points not stored one per fresh worker: the one that
            # crashes again is recorded as failed, the others run.
            _stop(pool)
            for point in todo:
                if point.key in stored or (pathlib.Path(store) / "points" / f"{point.key}.json").exists():
                    continue
                with _local_pool(1) as single:
                    bar.finished(_record_of(single.submit(run_point, store, point), point, store))
        except BaseException:
            _stop(pool)
            raise


def _record_of(fut, point: Point, store: str) -> dict[str, Any]:
    """The worker's record; a worker that died (the process, e.g. an engine crash) is recorded as failed here."""
    try:
        return fut.result()
    except Exception as err:
        record = {"key": point.key, "index": point.index, "params": point.params, "status": "failed",
                  "error": f"worker died: {type(err).__name__}: {err}", "stats": {}, "host_seconds": 0.0}
        atomic_write_json(pathlib.Path(store) / "points" / f"{point.key}.json", record)
        return record


def _run_dask(store, todo, done, total, _jobs, scheduler, progress, name):
    from distributed import Client, as_completed

    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        futures = {client.submit(run_point, store, p, key=f"kvsim-{name}-{p.key}", pure=False): p for p in todo}
        with _Progress(store, name, done, total, progress) as bar:
            for fut in as_completed(list(futures)):
                bar.finished(_record_of(fut, futures[fut], store))
                bar.poll()
    finally:
        if client is not scheduler:
            client.close()


def load_sweep_module(path: str | pathlib.Path) -> Iterable[Sweep]:
    """The sweeps a Python file defines: SWEEP, SWEEPS, or sweep()/sweeps()."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(pathlib.Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for attr in ("SWEEP", "SWEEPS", "sweep", "sweeps"):
        value = getattr(module, attr, None)
        if value is None:
            continue
        value = value() if callable(value) else value
        return [value] if isinstance(value, Sweep) else list(value)
    raise ValueError(f"{path} defines no SWEEP, SWEEPS, sweep() or sweeps()")
