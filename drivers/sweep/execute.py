"""Execution: run the points not yet stored, and the loads of their shared data sets, on a local process pool or
a Dask cluster, with a progress bar."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import pathlib
import shutil
import signal
import time
import traceback
import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..shared_warmup import cpu_seconds
from .checkpoints import check_existing, checkpoint_bytes, checkpoint_dir, loaded_elsewhere, prepare_checkpoint
from .data_set import data_set_key, shares_data_set
from .journal import PointJournal, clean_journals, journal_path
from .points import Base, Point, Sweep, _resolve_callable
from .store import atomic_write_json, recover_orphans, store_dir, stored_points

if TYPE_CHECKING:
    from models.client import Client


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

    started, started_cpu = time.time(), cpu_seconds()
    record: dict[str, Any] = {"key": point.key, "index": point.index, "params": point.params}
    if point.restore_from:
        record["data_set"] = point.data_set
    journal = None
    try:
        record["config"] = point.system().to_dict()
        evaluator = _resolve_callable(point.evaluator)
        if getattr(evaluator, "journals", False):
            # Its finished units are journaled (drivers/sweep/journal.py); a point a stop interrupted replays them.
            journal = PointJournal(journal_path(store_path, point.key), point.key, report)
            if len(journal):
                shown = report

                def report(text: str) -> None:
                    shown(f"{text} [resumed: {journal.replayed} units replayed]")

                journal.report = shown
            out = evaluator(point.run_system, point.options, report, journal=journal)
        else:
            out = evaluator(point.run_system, point.options, report)
        record.update(status="ok", error=None, **out)
    except Exception as err:  # a failed point is a result too: recorded, and the sweep goes on
        record.update(status="failed", error=f"{type(err).__name__}: {err}", traceback=traceback.format_exc(),
                      stats={})
    record["host_seconds"] = time.time() - started
    # The worker's CPU time: on a shared, busy host the wall time says more about the other loads than the point.
    # With its reaped children's (the processes of a shared warm-up, drivers/shared_warmup.py).
    record["cpu_seconds"] = cpu_seconds() - started_cpu
    atomic_write_json(store_path / "points" / f"{point.key}.json", record)
    if journal is not None and record["status"] == "ok":
        journal.remove()        # the record holds the result now (a failed point keeps it for retry_failed)
    progress_file.unlink(missing_ok=True)
    return record


def clean_sweep_journals(plan: list[tuple[Sweep, pathlib.Path]], *, dry_run: bool = False,
                         say: Callable[[str], None] = print) -> list[tuple[pathlib.Path, int, str]]:
    """Remove the journals no point of these sweeps needs (journal.clean_journals): `plan` is each sweep with its
    store; sweeps that share a store plan its points together, so a journal of one is never taken for stale by
    another. Every sweep is resolved first (a ParamError before anything is removed). Returns what was removed."""
    plans: dict[pathlib.Path, set[str]] = {}
    for sweep, store in plan:
        plans.setdefault(pathlib.Path(store), set()).update(p.key for p in sweep.resolve())
    ok = {store: {key for key, r in stored_points(store).items() if r.get("status") == "ok"} for store in plans}
    return clean_journals(plans, ok, dry_run=dry_run, say=say)


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
    # A run killed mid-write (kill -9) left temporaries: its finished records are put in place, the rest removed.
    recovered = recover_orphans(path)
    if recovered["finished"] or recovered["removed"]:
        warnings.warn(f"{path}: a run killed mid-write left {len(recovered['finished'])} whole record(s), put in "
                      f"place, and {len(recovered['removed'])} partial or superseded temporary file(s), removed",
                      stacklevel=2)
    atomic_write_json(path / "sweep.json", {"name": sweep.name, "base": {"config": sweep.base.config,
                                                                         "kwargs": sweep.base.kwargs},
                                            "paths": sweep.space.paths(), "ties": sweep.ties,
                                            "evaluator": sweep.evaluator, "options": sweep.options,
                                            "keys": [p.key for p in points]})
    done = stored_points(path)
    todo = [p for p in points if p.key not in done or (retry_failed and done[p.key]["status"] == "failed")]
    skipped = len(points) - len(todo)
    if sweep.restore_from:
        todo, loads = _restore_existing(sweep, points, todo), 0
    else:
        todo, loads = _share_checkpoints(str(path), points, todo, jobs, scheduler, progress, sweep.name,
                                         sweep.checkpoints or str(path))
    if todo:
        runner = _run_dask if scheduler is not None else _run_local
        runner(str(path), todo, skipped, len(points), jobs, scheduler, progress, sweep.name)
    final = stored_points(path)
    failed = sum(1 for p in points if final.get(p.key, {}).get("status") == "failed")
    return SweepReport(path, len(points), skipped, len(points) - skipped, failed, time.time() - started, loads,
                       checkpoint_bytes(sweep.checkpoints or path))



def _share_checkpoints(store: str, points: list[Point], todo: list[Point], jobs: int | None, scheduler: Any,
                       progress: bool = False, name: str = "", root: str = "") -> tuple[list[Point], int]:
    """Load every data set the points to run share (the first point of each group in sweep order loads it) and
    point them at its checkpoint. The points of a data set that failed to load are stored failed with its error.
    Returns the points left to run and the number of data sets loaded."""
    needed = {p.data_set for p in todo if p.data_set}
    if not needed:
        return todo, 0
    loaders = list({p.data_set: p for p in reversed(points) if p.data_set in needed}.values())
    with _Progress(store, f"{name}: loading {len(loaders)} data set(s)", len(points) - len(todo), len(points),
                   progress) as bar:
        results = {r["data_set"]: r for r in _prepare_all(root or store, loaders, jobs, scheduler, bar.poll)}
    runnable = []
    for p in todo:
        r = results.get(p.data_set) if p.data_set else None
        if r is not None and r["status"] != "ok":
            atomic_write_json(pathlib.Path(store) / "points" / f"{p.key}.json",
                              {"key": p.key, "index": p.index, "params": p.params, "status": "failed",
                               "data_set": p.data_set, "error": f"loading the shared data set failed: {r['error']}",
                               "stats": {}, "host_seconds": 0.0})
            continue
        runnable.append(replace(p, restore_from=r["folder"]) if r is not None else p)
    return runnable, sum(1 for r in results.values() if r["loaded"] and r["status"] == "ok")



def _restore_existing(sweep: Sweep, points: list[Point], todo: list[Point]) -> list[Point]:
    """Sweep.restore_from: every point of the sweep restores that checkpoint, checked against each point's data set
    first (a ParamError before any point runs); a sweep none of whose points can restore one is refused too."""
    from models.params import ParamError

    if not any(p.data_set for p in points):
        raise ParamError(f"sweep {sweep.name!r}: restore_from = {sweep.restore_from}, but no point of it restores a "
                         "checkpoint (share_checkpoint off, an evaluator that does not restore, or no bulk load)")
    for p in points:
        if p.data_set:
            check_existing(sweep.restore_from, p)
    return [replace(p, restore_from=str(sweep.restore_from)) if p.data_set else p for p in todo]


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



# A checkpoint's files (engine checkpoint.rs), each estimated from the configuration it is a load of:
# - pages.bin: every resident guest page as one record of PAGE_RECORD_BYTES (isa memory.rs PAGE_RECORD: the page's
#   4,096 bytes and its has_code flag, the struct 8-byte aligned): the pages the server's store touches
#   (models.client.kvs_server_memory: its log as written, the index pages its keys fall on) and the rest of the
#   process (program, stacks, rings, heap), PAGES_PER_HART a hart;
# - client_versions.bin: the client's acknowledged version of every item, CHECKPOINT_VERSION_BYTES each;
# - client_buckets.bin: the client's key count per bucket, a byte each over every partition's buckets in use, when
#   the counts are dense (client store_model.rs StoreModel::new: at most max(4 x items, 2^24) of them; else a map in
#   state.json, not estimated: a data set whose index is far larger than it);
# - state.json: the machine's state, whose size follows the resident pages (their permissions and regions),
#   STATE_BYTES_PER_PAGE each.
# PAGES_PER_HART and STATE_BYTES_PER_PAGE are MEASURED on this engine's checkpoints (no published figure), so that
# the estimate errs high (a disk check that refuses): pages beyond the store's, 376-382 a hart on the Xeon's loads
# (1-4 harts, 16 Mi and 192 Mi items, sessions 21-23) and 128 on the 60-core target socket's (4 Mi items, session
# 24: results/mend-s24/checkpoint_need.md), so up to 1 MB a hart too many there. PAGES_PER_HART is the 1-core 192 Mi
# load's 377, not the largest seen (382): the up to 5 pages a hart more (20 KB) of the other Xeon loads are covered by
# the state's bytes a page, taken at the largest seen, 16.3 (the target's, 4 Mi items) rounded up, against the Xeon's
# 9.2-9.9 (millions of pages: megabytes to spare); every Xeon load is estimated 0.16-0.17% high (checkpoint_need.md).
# Checked against loads that did not set them (tests/test_checkpoint_need.py: the LLC study's 60-core 192 Mi load,
# 13.02 GB: +0.3%).
PAGE_RECORD_BYTES = 4104
PAGES_PER_HART = 377
STATE_BYTES_PER_PAGE = 17
CHECKPOINT_VERSION_BYTES = 4
DENSE_BUCKET_COUNTS_MIN = 1 << 24


def checkpoint_parts(argv: list[str], client: Client, partitions: int) -> dict[str, int]:
    """The bytes of disk a checkpoint of a bulk load takes, by file (the comment above), from what the configuration
    loaded gives: its server's arguments `argv` (log and index), its `client` (items and their sizes) and its
    `partitions` (one a hart)."""
    from models.client import kvs_server_capacity, kvs_server_memory

    items = client.items
    pages = -(-kvs_server_memory(argv, client, partitions) // 4096) + PAGES_PER_HART * partitions
    bucket_counts = partitions * kvs_server_capacity(argv)[1]
    dense = bucket_counts <= max(4 * items, DENSE_BUCKET_COUNTS_MIN)
    return {"pages": pages * PAGE_RECORD_BYTES, "versions": CHECKPOINT_VERSION_BYTES * items,
            "buckets": bucket_counts if dense else 0, "state": pages * STATE_BYTES_PER_PAGE}


def data_set_need(store: str | pathlib.Path, base: Base, label: str) -> tuple[Point, int]:
    """The point `load_once` would load for `base`'s configuration, and the bytes of disk its checkpoint would take
    (checkpoint_parts of that configuration): 0 when the store holds that data set already. A ParamError when the
    configuration loads no data set. Nothing is loaded or written."""
    from models.params import ParamError

    system = base.build()
    if not shares_data_set(system) or not system.serves_kvs():
        raise ParamError(f"checkpoints in {store} for {label}: its configuration loads no KVS data set (the client's "
                         "bulk load, no restore_from or checkpoint_to of its own)")
    point = Point(label, 0, {}, base, {}, "", {}, data_set_key(system.to_dict()))
    there = (checkpoint_dir(store, point.data_set) / "manifest.json").is_file()
    if there or loaded_elsewhere(store, point) is not None:
        return point, 0
    return point, sum(checkpoint_parts(system.server_argv(), system.client, system.harts).values())


def load_once(store: str | pathlib.Path, base: Base, label: str) -> tuple[pathlib.Path, dict[str, Any]]:
    """A driver's own point, outside a sweep: the data set of `base`'s configuration loaded and checkpointed into
    the store's shared checkpoints as a sweep's would be (prepare_checkpoint: `store`/checkpoints/<data set key>/,
    the key covering what a restore refuses to change and the binary's and engine's content), unless it is there
    already. Refused with a ParamError before any work when the configuration loads no data set or the disk cannot
    hold the checkpoint (checkpoint_parts), and after the load (in a worker process) when it failed. Returns the
    folder to restore and the load's record ('loaded': this call loaded it)."""
    from models.params import ParamError

    point, need = data_set_need(store, base, label)
    folder = checkpoint_dir(store, point.data_set)
    if need:
        root = pathlib.Path(store)
        root.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(root).free
        if free < need:
            raise ParamError(f"checkpoints in {store} for {label}: its data set's checkpoint takes about "
                             f"{need / 1e9:.1f} GB, the disk has {free / 1e9:.1f} GB free")
    # In a worker process, as a sweep's loads run: the load's host memory (about 9 GiB at the paper's 192 Mi items)
    # goes back to the system when it ends, not kept by this process's allocator under the run that restores it.
    record = _prepare_all(str(store), [point], 1, None)[0]
    if record["status"] != "ok":
        raise ParamError(f"checkpoints in {store} for {label}: loading the data set into {folder} failed: "
                         f"{record['error']}")
    return pathlib.Path(record["folder"]), record


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
