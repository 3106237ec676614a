"""Shared fixtures for the guest-program tests: where the riscv64 programs are built, how to run one under
qemu-riscv64 (the functional reference) and under the engine.

Tests that need the engine take the `engine` fixture: when the Rust engine is missing or is still the
placeholder, they fail with one clear message (CI builds it first: `make engine`), never skip."""

from __future__ import annotations

import math
import os
import pathlib
import signal
import subprocess
import warnings
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORKLOADS = ROOT / "workloads"
BUILD = WORKLOADS / "build"
TEST_PROGRAMS = BUILD / "tests"
FAULT_PROGRAMS = BUILD / "tests" / "faults"
BENCH_PROGRAMS = BUILD / "bench"
CROSS_CC = "riscv64-linux-gnu-gcc"
QEMU = "qemu-riscv64"

# The guest sees exactly these environment strings under both runners, so the initial stacks hold the same
# strings (qemu-user hands its own environment to the guest).
GUEST_ENV: dict[str, str] = {}


@dataclass
class GuestRun:
    """What a guest program did: the same shape for qemu and the engine, so tests compare them directly."""

    stdout: bytes
    stderr: bytes
    exit_code: int | None


def is_program(path: pathlib.Path) -> bool:
    """A built riscv64 executable (not an object, dependency file or directory)."""
    if not path.is_file() or path.suffix in (".o", ".d") or not os.access(path, os.X_OK):
        return False
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def programs_in(folder: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in folder.iterdir() if is_program(p)) if folder.is_dir() else []


def run_qemu(binary: pathlib.Path | str, args: list[str] | tuple[str, ...] = (), *, timeout: float = 120,
             qemu_flags: list[str] | tuple[str, ...] = (), env: dict[str, str] | None = None) -> GuestRun:
    """Run a program under qemu-riscv64 with the guest environment `env` (default: GUEST_ENV, empty)."""
    proc = subprocess.run([QEMU, *qemu_flags, str(binary), *args], capture_output=True, timeout=timeout,
                          env=dict(GUEST_ENV if env is None else env))
    code = proc.returncode
    if code < 0:
        raise AssertionError(f"qemu-riscv64 {binary} died from signal {-code}: stderr {proc.stderr[-2000:]!r}")
    return GuestRun(proc.stdout, proc.stderr, code)


def make_system(binary: pathlib.Path | str, args: list[str] | tuple[str, ...] = (), *,
                env: dict[str, str] | None = None, **params):
    """A System running `binary` with `args` and environment `env` (default GUEST_ENV), other System
    parameters as keywords (harts=4, max_insts=...)."""
    from models.system import System, Workload

    env = GUEST_ENV if env is None else env
    return System(workload=Workload(binary=str(binary), argv=list(args), env=[f"{k}={v}" for k, v in env.items()]),
                  **params)


def kvs_on_sockets(sockets: int, cores: int, requests: int = 1500, items: int = 4096):
    """The default KVS run (4 target cores' config, the client's STANDARD workload) on `sockets` sockets of `cores`
    cores each, one NIC per socket (one socket: the flat fields, as configs/kvs_default.py gives them)."""
    from configs import kvs_default
    from models.nic import Nic
    from models.socket import Socket

    s = kvs_default.system(harts=sockets * cores, requests=requests, items=items)
    if sockets == 1:
        return s
    sock = dict(cores=cores, cores_per_cluster=cores, core=s.core, caches=s.caches, memory=s.memory, noc=s.noc)
    s.sockets = [Socket(**sock) for _ in range(sockets)]
    # The flat fields now live in the sockets: back to their defaults.
    for name in s.FLAT_SOCKET_FIELDS:
        setattr(s, name, s._params[name].fresh_default())
    s.nic = Nic()
    s.nics = [Nic(enabled=True, socket=k, queues=cores) for k in range(sockets)]
    return s


def run_engine(binary: pathlib.Path | str, args: list[str] | tuple[str, ...] = (), *,
               env: dict[str, str] | None = None, **params):
    """Run a program in the engine; returns the models.sim.RunResult."""
    from models.sim import simulate

    return simulate(make_system(binary, args, env=env, **params))


def as_guest_run(result) -> GuestRun:
    return GuestRun(bytes(result.stdout), bytes(result.stderr), result.exit_code)


@pytest.fixture(scope="session")
def workloads_built() -> pathlib.Path:
    """Build workloads/ (incremental: a no-op when up to date) and return the build folder."""
    proc = subprocess.run(["make", "-s", "-C", str(WORKLOADS), "programs"], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"building workloads/ failed:\n{proc.stdout}\n{proc.stderr}", pytrace=False)
    return BUILD


_engine_problem: list[str] = []


@pytest.fixture(scope="session")
def engine(workloads_built) -> None:
    """Fails (does not skip) every test that needs the engine when it is not built or still the placeholder."""
    if _engine_problem:
        pytest.fail(_engine_problem[0], pytrace=False)
    from models.errors import ConfigError, EngineBug

    try:
        from models import _engine  # noqa: F401
    except ImportError as exc:
        _engine_problem.append(f"the Rust engine is not built ({exc}): run `make engine`")
    else:
        probe = TEST_PROGRAMS / "printf_fmt"
        try:
            run_engine(probe, max_insts=1000)
        except EngineBug as exc:
            if "not built yet" in str(exc):
                _engine_problem.append(f"the engine is still the placeholder ({exc}): land it and run "
                                       "`make engine`")
        except ConfigError as exc:
            if "unknown field" in str(exc):
                _engine_problem.append(f"the built engine is older than models/ ({exc}): run `make engine`")
        except Exception:  # any other failure belongs to the test that hits it, with its own details
            pass
    if _engine_problem:
        pytest.fail(_engine_problem[0], pytrace=False)


@pytest.fixture(scope="session")
def mcd_server(engine) -> pathlib.Path:
    """The memcached-class server's guest binary (workloads/mcd), built once per session."""
    build = subprocess.run(["make", "-s", "-C", str(WORKLOADS / "mcd"), "riscv"], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    return WORKLOADS / "build" / "mcd" / "mcd-server"


def cross_compile(sources: list[pathlib.Path], output: pathlib.Path, *, extra: list[str] | None = None,
                  runtime: bool = False) -> pathlib.Path:
    """Compile and link a freestanding static riscv64 program (as the workloads Makefile does). With runtime,
    the project's crt0 and libc are linked in; otherwise the sources provide _start."""
    flags = ["-O2", "-static", "-nostdlib", "-ffreestanding", "-march=rv64imac", "-mabi=lp64", "-no-pie",
             "-fno-pie", "-Wl,--build-id=none", "-Wl,--no-warn-rwx-segments"]
    objs: list[str] = []
    if runtime:
        flags.append(f"-I{WORKLOADS / 'runtime'}")
        objs = [str(WORKLOADS / "runtime" / "crt0.S"), str(WORKLOADS / "runtime" / "kvsim_libc.c")]
    cmd = [CROSS_CC, *flags, *(extra or []), "-o", str(output), *objs, *map(str, sources), "-lgcc"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"cross-compiling failed: {' '.join(cmd)}\n{proc.stderr[-4000:]}")
    return output


# The memory system's message sizes (models/timing/src/network.rs): a request or acknowledgement, and a line of data
# with its header.
CONTROL_BYTES = 8
DATA_BYTES = 72


def noc_message_cycles(noc, hops: int, nbytes: int) -> int:
    """Unloaded network cycles of one `nbytes` message `hops` mesh links away (0: inside a cluster, through its
    crossbar), as the mesh model times it: the head through each router and link, the tail one flit per cycle
    behind."""
    flits = -(-nbytes // noc.link_bytes)
    head = noc.crossbar_latency if hops == 0 else hops * (noc.router_latency + noc.link_latency)
    return head + flits - 1


@pytest.fixture(autouse=True)
def _sigint_left_as_found(request):
    """A test that leaves Ctrl-C ignored in this process makes every later child ignore it too (a Python child
    installs its KeyboardInterrupt handler only if SIGINT is not ignored when it starts), and the Ctrl-C tests then
    hang: put the handler back after each test and name the test that changed it."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)
        warnings.warn(f"{request.node.nodeid} left SIGINT's handler changed ({after!r}); put back", stacklevel=1)


def sigint_default() -> None:
    """For a child that a Ctrl-C test interrupts (`preexec_fn`): SIGINT at its default disposition, whatever this
    process inherited or was left with, so the child's Python installs its KeyboardInterrupt handler. The usual
    inheritance: a test run started as a background job of a non-interactive shell (`make test &`, as scripts and
    remote runners do) starts with SIGINT ignored, as POSIX requires of such jobs; no test is needed to cause it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)



def same_stats(a: dict, b: dict) -> bool:
    """Two runs' statistics equal, a NaN equal to a NaN (a statistic a short run cannot define, such as the p95's
    batch spread with fewer than 20 responses a batch, is NaN in both; NaN never compares equal)."""
    return a.keys() == b.keys() and all(
        x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y))
        for x, y in ((a[k], b[k]) for k in a))
