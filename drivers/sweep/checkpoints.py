"""Shared checkpoints: the points of a sweep that share a data set load it once and restore it."""

from __future__ import annotations

import json
import pathlib
import shutil
import time
import traceback
from typing import TYPE_CHECKING, Any

from models import provenance
from models import stats_paths as paths
from models.client import guest_memory_bytes
from models.system import System

from .store import atomic_write_json, engine_hash

if TYPE_CHECKING:
    from .points import Point

CHECKPOINTS = "checkpoints"       # the store's folder of shared checkpoints, one per data set
# A load whose KVS store (its log as written and its index, models/client.guest_memory_bytes) is larger than
# this keeps only this much guest memory as whole pages and packs the rest (System.unpacked_memory, isa packed.rs),
# which changes no statistic: the paper's 192 Mi Tiny items need 22.5 GiB whole, about 9.5 GiB so
# (results/memory/load_memory.md). Smaller loads stay whole, as packing costs CPU on every touch of a packed page.
# 2 GiB (assumed: about a tenth of this host's memory).
LOAD_UNPACKED = 2 << 30


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
    return packed_as_loaded(system)


def packed_as_loaded(system: System) -> System:
    """`system` with the guest memory kept whole as a load of its data set keeps it (LOAD_UNPACKED where the KVS
    store is larger; a System.unpacked_memory already set stays): also what a run restoring that load needs, or it
    unpacks every page the checkpoint holds. Returns the system."""
    if system.unpacked_memory == 0 and system.os_level == "se" and system.client.enabled and \
            system.client.protocol == "mica":
        if guest_memory_bytes(system.client.items, system.harts, system.client.dataset) > LOAD_UNPACKED:
            system.unpacked_memory = LOAD_UNPACKED
    return system


def prepare_checkpoint(store: str, point: Point) -> dict[str, Any]:
    """In a worker: load `point`'s data set and checkpoint it (unless the store has it already). Returns a record
    (status 'ok' or 'failed' with the error), also stored as checkpoints/<key>.json."""
    from models.sim import simulate

    target = checkpoint_dir(store, point.data_set)
    record_path = target.parent / f"{point.data_set}.json"
    if (target / "manifest.json").is_file() and record_path.is_file():
        return {**json.loads(record_path.read_text()), "loaded": False, "folder": str(target)}
    found = loaded_elsewhere(store, point)
    if found is not None:
        return found
    for stale in target.parent.glob(f".{point.data_set}.partial-*"):   # a loader killed mid-write
        shutil.rmtree(stale, ignore_errors=True)
    if target.exists():                                                  # written, but its record was not
        shutil.rmtree(target)
    progress_file = pathlib.Path(store) / "progress" / f"load-{point.data_set}"
    started, started_cpu = time.time(), time.process_time()
    # The engine build that loads it (its content hash, and the source tree's commit), named in the record: another
    # build that finds it by check_existing's rule says whose load it restores (loaded_elsewhere).
    record: dict[str, Any] = {"data_set": point.data_set, "point": point.key, "params": point.params,
                              "engine": engine_hash(), "source": provenance.source_revision()}
    try:
        system = loader_system(point, target)
        progress_file.parent.mkdir(parents=True, exist_ok=True)

        def progress(insts: int, ticks: int, phase: str) -> None:
            progress_file.write_text(f"loading the data set: {insts:,} instructions")

        result = simulate(system, progress=progress, progress_every=20_000_000)
        record.update(status="ok", error=None, bytes=int(result.stats[paths.CHECKPOINT.stat("bytes")]),
                      insts=result.insts, config=system.to_dict())
    except Exception as err:  # every point of the group is recorded failed with this error
        record.update(status="failed", error=f"{type(err).__name__}: {err}", traceback=traceback.format_exc())
    record["host_seconds"] = time.time() - started
    record["cpu_seconds"] = time.process_time() - started_cpu
    if record["status"] == "ok":
        atomic_write_json(record_path, record)
    progress_file.unlink(missing_ok=True)
    return {**record, "loaded": True, "folder": str(target)}


def loaded_elsewhere(store: str | pathlib.Path, point: Point) -> dict[str, Any] | None:
    """A checkpoint of `point`'s data set in the store under another key: loaded by another engine build (the key
    covers the engine's content), and accepted by check_existing, the rule an explicitly named checkpoint passes
    (the engine's checkpoint identity and the guest binary's content, not the engine build). The first such in
    key order, as the record prepare_checkpoint returns ('folder' to restore, 'reused' saying whose load it is),
    or None. An engine that cannot read its format refuses it on the restore with the reason."""
    from models.params import ParamError

    root = pathlib.Path(store) / CHECKPOINTS
    for record_path in sorted(root.glob("*.json")) if root.is_dir() else []:
        folder = record_path.with_suffix("")
        if folder.name == point.data_set or folder.name.startswith(".") or \
                not (folder / "manifest.json").is_file():
            continue
        try:
            record = json.loads(record_path.read_text())
            if record.get("status") != "ok":
                continue
            check_existing(folder, point)
        except (OSError, ValueError, ParamError):    # unreadable, or another data set: not this point's
            continue
        engine = record.get("engine") or "not recorded (loaded before the load records named their engine)"
        if (record.get("source") or {}).get("commit"):
            engine += f", source commit {record['source']['commit'][:12]}" + \
                (" with uncommitted changes" if record["source"].get("dirty") else "")
        note = (f"restored the data set loaded under key {folder.name} by another engine build (engine "
                f"{engine}; this build {engine_hash() or 'unknown'}): same checkpoint identity and guest binary")
        return {**record, "data_set": point.data_set, "loaded": False, "folder": str(folder),
                "reused": {"data_set": folder.name, "engine": record.get("engine"), "note": note}}
    return None



def check_existing(folder: str | pathlib.Path, point: Point) -> None:
    """Refuse, before any run, an existing checkpoint that does not hold `point`'s data set: no checkpoint there, a
    parameter a restore may not change that differs (the engine's checkpoint identity of the manifest's
    configuration against the point's; each differing one named with both values), or another guest binary (the
    point's file against the manifest's size and CRC-32, which is how the engine compares it)."""
    import zlib

    from models import _engine
    from models.params import ParamError

    where = f"checkpoint {folder} for point {point.params}"
    manifest_path = pathlib.Path(folder) / "manifest.json"
    try:
        manifest = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as err:
        raise ParamError(f"{where}: not a checkpoint ({manifest_path}: {err})") from None
    if manifest.get("format") != "kvsim-checkpoint" or "config" not in manifest:
        raise ParamError(f"{where}: {manifest_path} names no kvsim checkpoint")
    config = point.system().to_dict()
    now = json.loads(_engine.checkpoint_identity(json.dumps(config)))
    # A parameter declared after the checkpoint was taken is absent from its configuration, which the engine's
    # strict reading refuses: it takes this point's value, unless a restore must match it (then it differs).
    old, added = with_added_parameters(manifest["config"], config)
    if must_match := [path for path in added if any(path == p or path.startswith(p + ".") for p in now)]:
        raise ParamError(f"{where}: it holds another data set: {', '.join(must_match)} (which a restore must match) "
                         "is not in the checkpoint's configuration")
    then = json.loads(_engine.checkpoint_identity(json.dumps(old)))
    paths = [path for path in sorted(set(then) | set(now)) if then.get(path) != now.get(path)]
    # The identity holds a prefix ('workload') beside its fields: name the fields that differ, not the whole again.
    paths = [path for path in paths if not any(other.startswith(path + ".") for other in paths)]
    if paths:
        raise ParamError(f"{where}: it holds another data set: " + "; ".join(
            f"{path} is {json.dumps(now.get(path))} here but {json.dumps(then.get(path))} in the checkpoint"
            for path in paths))
    binary = pathlib.Path(config["workload"]["binary"])
    data = binary.read_bytes() if binary.is_file() else b""
    if (len(data), zlib.crc32(data)) != (manifest.get("binary_bytes"), manifest.get("binary_crc32")):
        raise ParamError(f"{where}: it was taken running another binary ({manifest.get('binary')}, "
                         f"{manifest.get('binary_bytes')} bytes, CRC-32 {manifest.get('binary_crc32', 0):#010x}); "
                         f"this point's {binary} " + (f"has {len(data)} bytes, CRC-32 {zlib.crc32(data):#010x}"
                                                      if binary.is_file() else "does not exist"))


def with_added_parameters(old: Any, new: Any, path: str = "") -> tuple[Any, list[str]]:
    """`old` (a checkpoint's configuration) with every field `new` (a point's) has and it lacks added from `new`,
    and the dotted paths of those fields (list items matched by position, their index left out of the path)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out, added = dict(old), []
        for key, value in new.items():
            where = f"{path}.{key}" if path else key
            if key not in old:
                out[key], added = value, added + [where]
            else:
                out[key], more = with_added_parameters(old[key], value, where)
                added += more
        return out, added
    if isinstance(old, list) and isinstance(new, list):
        pairs = [with_added_parameters(o, n, path) for o, n in zip(old, new)]
        return [o for o, _ in pairs] + old[len(new):], [p for _, more in pairs for p in more]
    return old, []


def checkpoint_bytes(store: str | pathlib.Path) -> int:
    """Disk used by a store's shared checkpoints."""
    root = pathlib.Path(store) / CHECKPOINTS
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) if root.is_dir() else 0


