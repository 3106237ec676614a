"""The per-point store: a point's key (its resolved configuration, the binaries that run it, what is measured),
and its record written atomically, so a stopped sweep resumes without redoing or losing a point."""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import warnings
from typing import Any

from models import provenance
from models.durable import SEAL, DamagedFile, atomic_write, orphaned_temporaries, read_sealed_json, seal

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
DEFAULT_STORE = ROOT / "results" / "sweeps"


def file_hash(path: str | pathlib.Path) -> str:
    """Content hash of a file ('' when it does not exist: e.g. a guest binary not built yet)."""
    return provenance.file_sha256(path) or ""


def engine_hash() -> str:
    """Content hash of the built engine extension (a rebuilt simulator may give other results)."""
    lib = provenance.engine_library()
    return file_hash(lib) if lib else ""


def point_key(config: dict[str, Any], measure: dict[str, Any]) -> str:
    """The key of a point: its resolved configuration, the content of the binaries that run it, and what is
    measured. Anything else (the order of the sweep, the host, the time) does not enter."""
    blob = {"config": config, "binary": file_hash(config["workload"]["binary"]), "engine": engine_hash(),
            "measure": measure}
    return hashlib.sha256(json.dumps(blob, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:24]


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


def recover_orphans(store: pathlib.Path) -> dict[str, list[pathlib.Path]]:
    """Clear up what writers killed before their rename (kill -9 of a sweep) left in a store: temporaries whose
    writer, on this host, is gone (models/durable.py names them so). A point's temporary that holds its whole
    sealed record, of the key its name gives, with no record stored yet, is renamed into place (the write the kill
    interrupted, finished: the work done is kept); any other (cut short, or its record stored since) is removed, as
    are the dead temporaries of sweep.json and of the journals (a journal rewritten on resume kept its old file
    as `.damaged`; nothing a run finished is in them alone), and the progress lines (`progress/<key>`, display
    only) of points whose record is stored: a kill between the record's rename and the line's removal leaves one,
    which the progress bar would show for the whole of the next run. Returns the files `finished` and `removed`."""
    done: dict[str, list[pathlib.Path]] = {"finished": [], "removed": []}
    for folder in (store, store / "points", store / "journal"):
        for tmp, target in orphaned_temporaries(folder):
            if folder.name == "points" and not target.exists() and _whole_record_of(tmp, target.stem):
                os.replace(tmp, target)
                dirfd = os.open(folder, os.O_RDONLY)
                try:
                    os.fsync(dirfd)
                finally:
                    os.close(dirfd)
                done["finished"].append(target)
            else:
                tmp.unlink(missing_ok=True)
                done["removed"].append(tmp)
    for line in sorted((store / "progress").glob("*")):
        if (store / "points" / f"{line.name}.json").is_file():
            line.unlink(missing_ok=True)
            done["removed"].append(line)
    return done


def _whole_record_of(path: pathlib.Path, key: str) -> bool:
    """Whether `path` holds a sealed point record of `key`, whole and unchanged."""
    try:
        record = json.loads(path.read_bytes())
        if not isinstance(record, dict) or SEAL not in record:   # (`in` on a number or null raises TypeError)
            return False
        return read_sealed_json(path).get("key") == key
    except (OSError, ValueError, AttributeError):       # DamagedFile and JSONDecodeError are ValueErrors
        return False
