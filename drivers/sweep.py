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
import signal
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from models.params import ParamError, SimObject
from models.system import System

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_STORE = ROOT / "results" / "sweeps"
RUN_EVALUATOR = "drivers.sweep:evaluate_run"
CAPACITY_EVALUATOR = "drivers.sweep:evaluate_capacity"


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

    def resolve(self) -> list["Point"]:
        """Every point, resolved and validated (ParamError naming the parameter before anything runs). Points whose
        keys coincide are one point."""
        for tied in self.ties:
            if tied not in self.space.paths():
                raise ParamError(f"sweep {self.name!r}: tie on {tied!r}, which the sweep does not vary")
        measure = {"evaluator": self.evaluator, "options": self.options}
        points: dict[str, Point] = {}
        for params in self.space.points():
            system = build_point(self.base, params, self.ties, sweep=self.name)
            key = point_key(system.to_dict(), measure)
            points.setdefault(key, Point(key, len(points), params, self.base, self.ties, self.evaluator,
                                         self.options))
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

    def system(self) -> System:
        return build_point(self.base, self.params, self.ties)


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
# Evaluators: (point's system factory, options, report) -> {"stats": {...}, ...extra JSON}.

def evaluate_run(make_system: Callable[[], System], options: dict[str, Any],
                 report: Callable[[str], None]) -> dict[str, Any]:
    """One simulation; with options['power'] = socket name, priced by the power model (power.* stats)."""
    from models.sim import simulate

    system = make_system()

    def progress(insts: int, ticks: int, phase: str) -> None:
        report(f"{phase}: {insts:,} instructions, {ticks * 1e-9:.3f} ms simulated")

    result = simulate(system, progress=progress, progress_every=5_000_000)
    stats = dict(result.stats)
    if options.get("power"):
        import power

        stats.update(power.price_run(stats, system.to_dict(), options["power"]).stats())
    return {"stats": stats, "host": {"insts": result.insts, "sim_seconds": result.sim_seconds}}


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

        stats.update(power.price_run(stats, make(res.offered_mpps).to_dict(), options["power"]).stats())
    return {"stats": stats, "probes": res.table()}


def _resolve_callable(name: str) -> Callable:
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


# ---------------------------------------------------------------------------------------------------------------
# The store.

def atomic_write_json(path: pathlib.Path, data: Any) -> None:
    """Write to a temporary name in the same folder, fsync, rename over `path`, fsync the folder: a reader sees
    the old file or the whole new one, never a part, even after kill -9 or a power cut."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, separators=(",", ":"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise
    dirfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dirfd)
    finally:
        os.close(dirfd)


def store_dir(name: str, store: str | pathlib.Path | None = None) -> pathlib.Path:
    return pathlib.Path(store) if store is not None else DEFAULT_STORE / name


def stored_points(store: pathlib.Path) -> dict[str, dict[str, Any]]:
    """Every finished point's record in a store, by key."""
    out = {}
    for path in (store / "points").glob("*.json"):
        record = json.loads(path.read_text())
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
    try:
        system = point.system()
        record["config"] = system.to_dict()
        out = _resolve_callable(point.evaluator)(point.system, point.options, report)
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
    if todo:
        runner = _run_dask if scheduler is not None else _run_local
        runner(str(path), todo, skipped, len(points), jobs, scheduler, progress, sweep.name)
    final = stored_points(path)
    failed = sum(1 for p in points if final.get(p.key, {}).get("status") == "failed")
    return SweepReport(path, len(points), skipped, len(todo), failed, time.time() - started)


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
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
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
