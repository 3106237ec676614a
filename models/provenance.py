"""Where a run's results came from: `provenance.json` in every run folder.

It records what is needed to reproduce or to distrust a result: the command line, the config and the arguments
its `system()` was called with, the source commit and whether the tree had uncommitted changes, the content hashes
of the engine extension and of the guest binary, the host, the kvsim version, and the run's status (kept equal to
the folder's `status` file: `running`, `ok: ...`, `interrupted: ...`, `failed: ...`). Hashes are cached per
process by (path, mtime, size), so a sweep of many runs hashes each file once.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import json
import os
import pathlib
import platform
import shlex
import subprocess
import sys
from typing import Any

from .durable import atomic_write

FILE = "provenance.json"
ROOT = pathlib.Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=64)
def _sha256(path: str, mtime_ns: int, size: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_sha256(path: str | pathlib.Path) -> str | None:
    """The SHA-256 of a file's content, or None when it cannot be read."""
    try:
        st = os.stat(path)
        return _sha256(str(path), st.st_mtime_ns, st.st_size)
    except OSError:
        return None


def engine_library() -> pathlib.Path | None:
    """The engine extension this process runs (models/_engine*.so)."""
    libs = sorted(pathlib.Path(__file__).resolve().parent.glob("_engine*.so"))
    return libs[0] if libs else None


@functools.lru_cache(maxsize=1)
def source_revision() -> dict[str, Any]:
    """The git commit of the source tree and whether it has uncommitted changes (None for both outside git)."""
    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit.strip() if commit else None, "dirty": None if status is None else bool(status.strip())}


def kvsim_version() -> str | None:
    from importlib import metadata

    try:
        return metadata.version("kvsim")
    except metadata.PackageNotFoundError:
        return None


def collect(config: dict[str, Any], *, config_name: str | None = None,
            config_args: dict[str, Any] | None = None, command: list[str] | None = None) -> dict[str, Any]:
    """The provenance of a run of the resolved configuration `config` (models.System.to_dict()). `command`
    defaults to this process's command line."""
    engine = engine_library()
    binary = config.get("workload", {}).get("binary")
    argv = list(sys.argv if command is None else command)
    return {
        "command": shlex.join(argv),
        "argv": argv,
        "cwd": os.getcwd(),
        "config": config_name,
        "config_args": config_args or {},
        **source_revision(),
        "engine": {"path": str(engine) if engine else None, "sha256": file_sha256(engine) if engine else None},
        "guest_binary": {"path": binary, "sha256": file_sha256(binary) if binary else None},
        "host": {"name": platform.node(), "platform": platform.platform(), "python": platform.python_version(),
                 "cpus": os.cpu_count()},
        "kvsim_version": kvsim_version(),
        "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "finished": None,
        "status": "running",
    }


def write(outdir: pathlib.Path, record: dict[str, Any]) -> None:
    atomic_write(pathlib.Path(outdir) / FILE, json.dumps(record, indent=2) + "\n")


def read(outdir: pathlib.Path) -> dict[str, Any] | None:
    """A run folder's provenance, or None when it has none (a run written before provenance existed)."""
    try:
        return json.loads((pathlib.Path(outdir) / FILE).read_text())
    except (OSError, ValueError):
        return None


def update(outdir: pathlib.Path, **fields: Any) -> None:
    """Change fields of an existing provenance.json (e.g. the status when the run ends); no file, no change."""
    record = read(outdir)
    if record is None:
        return
    record.update(fields)
    write(outdir, record)


def set_status(outdir: pathlib.Path, status: str) -> None:
    """Keep provenance.json's status equal to the status file's; a final status also stamps the finish time."""
    done = None if status == "running" else datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    update(outdir, status=status, finished=done)
