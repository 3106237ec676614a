"""Probes that share one warm-up (issue 24): the runs of a capacity point restore one checkpoint and warm their
caches over the same closed-loop warm-up, and differ only in the measured phase's offered load and request count
(`Client.offered_mpps`, `Client.requests`), which nothing before that phase reads (the client's open loop starts
with it). So the warm-up runs once: a server process restores and warms, and where detailed timing is about to
start (`simulate(at_measure=...)`, no engine thread running then) it forks one child per probe, which sets the
probe's load and runs the measured phase. A child starts from the very state a fresh run reaches there, so every
statistic equals a fresh run's (tests/test_shared_warmup.py compares them).

A steady-state window (drivers/steady_state.py) is such a run too: the point's configuration with a longer measured
phase, sampled through progress reports. The engine counts a phase's reports from that phase's start (engine
`driver::Progress::phase_insts`), and the child sets its own interval where it forks (`at_measure` answers it), so a
forked window is sampled at the very instructions a fresh one is. The child keeps its reports and the caller's
`progress` gets them, in order, once the run is over (it cannot stop the run, as it could a fresh one's).

At the paper's 192 Mi items a probe's warm-up (1.5 M requests, cache warming) is most of its host time; a search of 6
probes warmed 6 times. A run that cannot share (no restore, functional, closed loop, FS mode) runs as it is.

The server is forked from the caller when the caller has one thread. A process with other threads (a dask worker's)
must not fork (the child would hold locks those threads held), so there the server is a fresh interpreter
(`python -m drivers.shared_warmup`, fork and exec), given the configuration through its pipe; it has one thread and
forks its runs as above.

Host time: a probe's CPU time is its child's; the warm-up's is the server's. Both are children of the caller once
reaped (`cpu_seconds` counts them: resource.RUSAGE_CHILDREN).
"""

from __future__ import annotations

import copy
import os
import pickle
import resource
import struct
import subprocess
import sys
import threading
import time
from typing import Any, Callable

from models.sim import ProgressFn, RunResult, _engine_progress, simulate
from models.system import System

# The measured phase's own parameters (what a probe may change without another warm-up).
MEASURE_ONLY = (("client", "offered_mpps"), ("client", "requests"))
# The server's progress interval over the warm-up: the engine's signal-check interval (models/engine/engine/src/lib.rs
# SIGNAL_CHECK_EVERY), so the warm-up pauses no more often than a run without reports does.
WARMUP_REPORT_EVERY = 2_000_000


def cpu_seconds() -> float:
    """This process's CPU time and its reaped children's (a shared warm-up's server and probes)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def can_share(system: System) -> bool:
    """Does a run of `system` restore a data set and reach an open-loop measured phase in detailed timing (what a
    shared warm-up needs)?"""
    return bool(system.restore_from) and system.mode == "detailed" and system.os_level == "se" and \
        system.client.enabled and system.client.offered_mpps > 0 and system.client.transport != "tcp"


def warmup_key(system: System) -> str:
    """The configuration without the measured phase's own parameters: runs with equal keys share a warm-up."""
    config = copy.deepcopy(system.to_dict())
    for group, name in MEASURE_ONLY:
        config.get(group, {}).pop(name, None)
    return repr(sorted(_flat(config)))


def _flat(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [kv for k, v in value.items() for kv in _flat(v, f"{prefix}{k}.")]
    return [(prefix, repr(value))]


def _send(fd: int, obj: Any) -> None:
    data = pickle.dumps(obj)
    os.write(fd, struct.pack("<Q", len(data)))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _recv(fd: int) -> Any:
    head = _read(fd, 8)
    if head is None:
        return None
    data = _read(fd, struct.unpack("<Q", head)[0])
    return None if data is None else pickle.loads(data)


def _read(fd: int, n: int) -> bytes | None:
    parts, got = [], 0
    while got < n:
        chunk = os.read(fd, n - got)
        if not chunk:
            return None
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _portable(err: BaseException) -> BaseException:
    """The exception itself when it survives pickling, else a RuntimeError with its type and message."""
    try:
        pickle.loads(pickle.dumps(err))
        return err
    except Exception:
        return RuntimeError(f"{type(err).__name__}: {err}")


class SharedWarmup:
    """Call it as `simulate` (system -> RunResult): runs with equal `warmup_key`s that can share (`can_share`)
    share one warm-up; anything else is simulated as it is. `close()` (or leaving a `with` block) ends the server."""

    def __init__(self) -> None:
        self._server: tuple[Callable[[], Any], int, int, str] | None = None   # its wait, request fd, answer fd, key
        self.warmups = 0                                           # warm-ups run (servers started)
        self.run_cpu: list[float] = []    # each shared run's own CPU seconds (its child's, from the fork)

    def __enter__(self) -> "SharedWarmup":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def __call__(self, system: System, *, progress: ProgressFn | None = None,
                 progress_every: int = 10_000_000) -> RunResult:
        """`simulate(system, progress=..., progress_every=...)`; a shared run's measured-phase reports reach
        `progress` after the run (module doc)."""
        if not can_share(system):
            return simulate(system, progress=progress, progress_every=progress_every)
        key = warmup_key(system)
        if self._server is None or self._server[3] != key:
            self.close()
            self._server = self._start(system, key)
        _, ask, answer, _ = self._server
        _send(ask, (system.client.offered_mpps, system.client.requests, progress_every if progress else None))
        reply = _recv(answer)
        if reply is None:
            self.close()
            raise RuntimeError("the shared warm-up's server ended without an answer (see its messages above)")
        kind, value = reply
        if kind == "final":          # the run ended before detailed timing: nothing to share
            self.close()
            if progress is not None:     # its reports were not kept: run it again as it is
                return simulate(system, progress=progress, progress_every=progress_every)
            kind = "ok"
        if kind == "error":
            self.close()
            raise value
        result, reports, cpu = value
        self.run_cpu.append(cpu)
        if progress is not None:
            report = _engine_progress(progress)
            for r in reports:
                report(*r)
        return result

    def close(self) -> None:
        if self._server is None:
            return
        wait, ask, answer, _ = self._server
        self._server = None
        os.close(ask)
        os.close(answer)
        wait()

    def _start(self, system: System, key: str) -> tuple[Callable[[], Any], int, int, str]:
        ask_r, ask_w = os.pipe()
        answer_r, answer_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        if threading.active_count() > 1:
            # A process with other threads (a dask worker's) must not fork: the child holds only the calling
            # thread, and a lock another thread held (the allocator's, logging's, the event loop's) stays held in
            # it. The server runs in a fresh interpreter instead (one thread, so it forks its runs as below);
            # starting it is a fork and exec, which is safe there. It gets the configuration through the pipe.
            path = os.pathsep.join(p for p in sys.path if p)
            server = subprocess.Popen([sys.executable, "-m", "drivers.shared_warmup", str(ask_r), str(answer_w)],
                                      pass_fds=(ask_r, answer_w), env={**os.environ, "PYTHONPATH": path})
            os.close(ask_r)
            os.close(answer_w)
            _send(ask_w, system)
            self.warmups += 1
            return server.wait, ask_w, answer_r, key
        pid = os.fork()
        if pid:
            os.close(ask_r)
            os.close(answer_w)
            self.warmups += 1
            return lambda: os.waitpid(pid, 0), ask_w, answer_r, key
        # The server: never returns into the caller's code.
        status = 1
        try:
            os.close(ask_w)
            os.close(answer_r)
            _serve(system, ask_r, answer_w)
            status = 0
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)


def _serve(system: System, ask: int, answer: int) -> None:
    """Warm up once; then for each (offered_mpps, requests, progress_every or None) asked, a child that runs the
    measured phase so and answers ('ok', (RunResult, its progress reports, its CPU seconds)) or ('error',
    exception). A run that ends before detailed timing answers 'final'."""
    in_probe = False
    forked_at = 0.0
    reports: list[tuple[int, int, str, int | None]] | None = None     # the child's, when its caller wants them

    def keep(insts: int, ticks: int, phase: str, answered: int | None) -> None:
        if reports is not None:
            reports.append((insts, ticks, phase, answered))

    def at_measure() -> tuple[float, int] | tuple[float, int, int] | None:
        nonlocal in_probe, forked_at, reports
        wanted = asked
        while True:
            if wanted is None:            # the caller closed: the server ends
                os._exit(0)
            mpps, requests, every = wanted
            sys.stdout.flush()
            sys.stderr.flush()
            child = os.fork()
            if child == 0:
                os.close(ask)
                in_probe, forked_at = True, time.perf_counter()
                system.client.offered_mpps, system.client.requests = mpps, requests
                if every is None:         # the warm-up's interval goes on (a fresh run's without a callback)
                    return mpps, requests
                reports = []
                return mpps, requests, every
            _, status = os.waitpid(child, 0)
            if status != 0:
                _send(answer, ("error", RuntimeError(f"a shared-warm-up probe at {mpps} M frames/s a port ended "
                                                     f"abnormally (wait status {status})")))
            wanted = _recv(ask)

    asked = _recv(ask)
    if asked is None:
        return
    try:
        result = simulate(system, progress=keep, progress_every=WARMUP_REPORT_EVERY, at_measure=at_measure)
    except BaseException as err:                 # the warm-up's error, or a probe's
        _send(answer, ("error", _portable(err)))
        return
    if in_probe:
        result.host_seconds = time.perf_counter() - forked_at     # the probe's own part (the warm-up is shared)
        # A forked child's CPU times start at zero: process_time is the run's own since the fork.
        _send(answer, ("ok", (result, reports or [], time.process_time())))
    else:
        _send(answer, ("final", result))


def _main(argv: list[str]) -> None:
    """A server started in a fresh interpreter (`SharedWarmup._start` in a process with other threads): its request
    and answer pipes' descriptors, then the configuration as the first message."""
    status = 1
    try:
        ask, answer = int(argv[0]), int(argv[1])
        system = _recv(ask)
        if system is not None:
            _serve(system, ask, answer)
        status = 0
    finally:                  # as a forked server: its runs' children leave here too, without the caller's exit code
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


if __name__ == "__main__":
    _main(sys.argv[1:])
