"""Files that survive a crash and say when they are damaged: atomic writes (a temporary name in the same folder,
fsync, rename, fsync of the folder), JSON records sealed with their own SHA-256, and a run folder's checksum list.

A reader of these files gets the whole old file or the whole new one, never a part (kill -9, a full disk, a power
cut), and a file changed after it was written (truncated, a flipped bit) raises DamagedFile naming it instead of
loading as good.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pathlib
import shutil
import socket
import tempfile
import time
from typing import Any

# A run folder's checksums, in sha256sum's format (`sha256sum -c checksums.sha256` checks them by hand too).
CHECKSUMS = "checksums.sha256"
# The field of a sealed JSON record that holds the SHA-256 of the rest of it.
SEAL = "sha256"
# A temporary's name says who wrote it: `.<name>.tmp-<host>-<pid>-<random>`, so a writer killed before its rename
# leaves a file that a later run can prove is an orphan (its writer, on this host, is gone) and clear up. The writer
# also holds an exclusive flock on the temporary from its creation to its rename: the kernel drops it when the
# writer dies, and another process sees it whatever its PID namespace (a container's writer, whose pid means
# another process here or none, on a store shared through a volume).
TEMPORARY = ".tmp-"
# A temporary whose lock is free and that nothing has written for this long is an orphan whatever its pid says
# here (that pid may be another namespace's, or reused). Younger, its pid decides: a writer takes its lock right
# after creating the file, and a checker must not take that instant for a death.
ORPHAN_AFTER_S = 10.0
# The permissions an ordinary new file gets (mkstemp's are private): read once, as os.umask can only be read by
# setting it.
_UMASK = os.umask(0o022)
os.umask(_UMASK)


class DamagedFile(ValueError):
    """A stored result is unreadable, truncated or changed since it was written; the message names the file."""


def atomic_write(path: str | pathlib.Path, data: bytes | str) -> None:
    """Write `data` to `path` so a reader sees the old file or the whole new one, never a part; a failure (a full
    disk) leaves the old file and no temporary behind and raises the OSError."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{path.name}{TEMPORARY}{socket.gethostname()}-{os.getpid()}-"
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=path.parent)
    try:
        _lock(fd)
        os.fchmod(fd, 0o666 & ~_UMASK)
        # Held open (and locked) until the rename: a free lock then means a dead writer.
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
            os.replace(tmp, path)
    except OSError as err:            # a full disk: say which file could not be written
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise OSError(err.errno, f"{err.strerror or err}: cannot write {path}", str(path)) from None
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise
    dirfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dirfd)
    finally:
        os.close(dirfd)


def _canonical(record: dict[str, Any]) -> bytes:
    return json.dumps({k: v for k, v in record.items() if k != SEAL}, sort_keys=True,
                      separators=(",", ":")).encode()


def seal(record: dict[str, Any]) -> dict[str, Any]:
    """The record with its SHA-256 (over its canonical JSON without the seal) in the `sha256` field."""
    return {**record, SEAL: hashlib.sha256(_canonical(record)).hexdigest()}


def read_sealed_json(path: str | pathlib.Path) -> dict[str, Any]:
    """A JSON record written sealed; DamagedFile names the file when it is not JSON, not a record, or its seal does
    not match. A record without a seal (written before records were sealed) is returned as it is."""
    path = pathlib.Path(path)
    try:
        record = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DamagedFile(f"{path} is damaged (truncated or changed since it was written: {err}); delete it to "
                          "recompute it") from None
    if not isinstance(record, dict):
        raise DamagedFile(f"{path} is damaged: it holds a {type(record).__name__}, not a record")
    if SEAL in record and record.pop(SEAL) != hashlib.sha256(_canonical(record)).hexdigest():
        raise DamagedFile(f"{path} is damaged: its content does not match its SHA-256 (changed since it was "
                          "written); delete it to recompute it")
    return record


def write_checksums(folder: str | pathlib.Path, names: list[str]) -> None:
    """Write `folder`/checksums.sha256: the SHA-256 of each named file that exists (sha256sum's format)."""
    folder = pathlib.Path(folder)
    lines = [f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}\n" for n in names
             if (folder / n).is_file()]
    atomic_write(folder / CHECKSUMS, "".join(lines))


def verify_checksums(folder: str | pathlib.Path, missing_ok: bool = False) -> None:
    """Check every file listed in `folder`/checksums.sha256 (none listed, no file: nothing to check); DamagedFile
    names the first that differs or (unless missing_ok) is missing."""
    folder = pathlib.Path(folder)
    listing = folder / CHECKSUMS
    if not listing.is_file():
        return
    for line in listing.read_text(errors="replace").splitlines():
        digest, _, name = line.partition("  ")
        if len(digest) != 64 or not name:
            raise DamagedFile(f"{listing} is damaged: cannot read the line {line!r}")
        path = folder / name
        if not path.is_file():
            if missing_ok:
                continue
            raise DamagedFile(f"{path} is missing (listed in {listing})")
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            raise DamagedFile(f"{path} is damaged: its SHA-256 differs from the one written with it ({listing})")


def _lock(fd: int) -> None:
    """Take the writer's exclusive lock on its temporary (see TEMPORARY). A file system without flock (some network
    ones) leaves the file unlocked: its pid alone then says whether its writer lives."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        pass


def writer_locked(path: str | pathlib.Path) -> bool | None:
    """Whether a live process holds `path`'s writer lock (True), none does (False), or this file system cannot say
    (None: no flock, or the file is gone)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)                                          # (drops the lock if it was taken)
    return False


def _started_at(stat: str) -> float | None:
    """When the process whose /proc/<pid>/stat is `stat` started (seconds since the epoch), or None."""
    try:
        ticks = int(stat.rpartition(")")[2].split()[19])    # field 22, starttime: clock ticks after boot
        btime = next(int(line.split()[1]) for line in pathlib.Path("/proc/stat").read_text().splitlines()
                     if line.startswith("btime "))
        return btime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def writer_alive(pid: int, wrote_at: float | None = None) -> bool:
    """Whether process `pid` of this host is running. A zombie (killed, not yet reaped: in a container whose
    first process reaps nothing it stays one) is not: it writes nothing more. With `wrote_at` (when the writer last
    wrote, seconds since the epoch), a process `pid` that started after it is another one (the pid was reused, after
    a reboot or a wrap): not the writer."""
    if pathlib.Path("/proc/self/stat").is_file():         # Linux: the process's state says it
        try:
            stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return False
        if stat.rpartition(")")[2].split()[0] == "Z":
            return False
        started = _started_at(stat) if wrote_at is not None else None
        # (btime is whole seconds, and boot-time adjustments move it by a little: a margin of 2 s.)
        return started is None or started <= wrote_at + 2.0
    try:                                                     # elsewhere: ask the kernel
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass                                                 # alive, someone else's
    return True


def orphaned_temporaries(folder: str | pathlib.Path) -> list[tuple[pathlib.Path, pathlib.Path]]:
    """The temporaries in `folder` that atomic_write's writers on this host were killed before renaming, each with
    the file it was to become. A writer is alive while it holds its temporary's lock (whatever PID namespace it runs
    in); a temporary whose lock is free is an orphan once nothing has written it for ORPHAN_AFTER_S, and before
    that (or where the file system has no locks) when its pid is not running here or is a process started after
    the temporary was written. A temporary of another host (its process cannot be checked from here) or with a
    name atomic_write does not give is not listed."""
    host = socket.gethostname()
    out = []
    for tmp in pathlib.Path(folder).glob(f".*{TEMPORARY}*"):
        stem, _, owner = tmp.name.rpartition(TEMPORARY)
        if not owner.startswith(f"{host}-"):
            continue
        pid, dash, _random = owner[len(host) + 1:].partition("-")
        if not dash or not pid.isdigit():
            continue
        locked = writer_locked(tmp)
        if locked:
            continue
        try:
            wrote_at = tmp.stat().st_mtime
        except FileNotFoundError:                           # renamed or removed since the listing
            continue
        quiet = locked is False and time.time() - wrote_at >= ORPHAN_AFTER_S
        if not quiet and writer_alive(int(pid), wrote_at):
            continue
        out.append((tmp, tmp.with_name(stem[1:])))
    return out


def remove_dead_partials(target: str | pathlib.Path) -> list[pathlib.Path]:
    """Remove what writers killed while writing `target` left: folders `.<name>.partial-<pid>` beside it (the
    engine's checkpoint writer's temporary name) whose process is gone. Returns what was removed."""
    target = pathlib.Path(target)
    removed = []
    for partial in target.parent.glob(f".{target.name}.partial-*"):
        pid = partial.name.rsplit("-", 1)[-1]
        if not pid.isdigit() or writer_alive(int(pid)):
            continue
        shutil.rmtree(partial, ignore_errors=True)
        removed.append(partial)
    return removed
