"""Nothing fails silently, hangs or loses a result: interrupts, guest faults, bad outputs and names, a server that
never readies its queues, deadlocked threads, the smallest stack, detailed runs whose timing never started."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from conftest import BUILD, ROOT, TEST_PROGRAMS, make_system, run_engine, sigint_default

GLIBC = BUILD / "glibc"
PY = sys.executable
RUN = [PY, "-m", "drivers.cli.run"]   # run from ROOT: this checkout's code


def wait_for_status(outdir: pathlib.Path, want: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = outdir / "status"
        if status.is_file() and status.read_text().startswith(want):
            return
        time.sleep(0.05)
    raise AssertionError(f"{outdir}/status never said {want!r}")


def test_ctrl_c_stops_run_py_without_a_terminal(tmp_path, workloads_built, engine):
    """SIGINT during a run whose output is a pipe and that has no progress line: it stops within seconds, exits
    130, and the folder holds the results so far with an 'interrupted' status."""
    out = tmp_path / "run"
    proc = subprocess.Popen([*RUN, "functional_default", "--set", f"workload.binary={GLIBC / 'spin'}",
                             "--set", 'workload.argv=["100000000000"]', "--progress-every", "0", "--outdir",
                             str(out)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT,
                            preexec_fn=sigint_default)
    try:
        wait_for_status(out, "running")
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        text, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, text
    assert b"Traceback" not in text, text
    assert (out / "status").read_text().startswith("interrupted"), (out / "status").read_text()
    assert (out / "guest.stdout").read_bytes() == b"spinning 100000000000 rounds\n"
    stats = json.loads((out / "stats.json").read_text())
    assert stats["system.hart0.insts"] > 1_000_000
    assert json.loads((out / "host.json").read_text())["stop_reason"] == "interrupted"


def test_ctrl_c_reaches_the_python_api_with_the_results(tmp_path, workloads_built, engine):
    """From the Python API (no progress callback): RunInterrupted, a KeyboardInterrupt, carries the result."""
    script = f"""
import os, signal, sys, threading
sys.path.insert(0, {str(ROOT)!r})
from models.errors import RunInterrupted
from models.sim import simulate
from models.system import System, Workload
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    simulate(System(workload=Workload(binary={str(GLIBC / 'spin')!r}, argv=["100000000000"])))
except KeyboardInterrupt as stop:
    assert isinstance(stop, RunInterrupted)
    print(stop.result.stop_reason, stop.result.insts > 1000000, stop.result.stdout)
"""
    proc = subprocess.run([PY, "-c", script], capture_output=True, text=True, timeout=60, preexec_fn=sigint_default)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "interrupted True b'spinning 100000000000 rounds\\n'", proc.stdout


def test_guest_fault_keeps_the_output_so_far(tmp_path, workloads_built, engine):
    from models.errors import MemoryFault
    from models.sim import simulate

    out = tmp_path / "fault"
    with pytest.raises(MemoryFault) as caught:
        simulate(make_system(GLIBC / "print_then_fault"), out)
    assert caught.value.result.stdout == b"output before the fault\n"
    assert (out / "guest.stdout").read_bytes() == b"output before the fault\n"
    assert (out / "status").read_text().startswith("failed: MemoryFault: hart 0 at pc ")
    assert json.loads((out / "config.json").read_text())["workload"]["binary"].endswith("print_then_fault")


def test_unwritable_outdir_fails_before_the_run(tmp_path, workloads_built, engine):
    from models.errors import OutputError
    from models.sim import simulate

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    started = time.perf_counter()
    with pytest.raises(OutputError, match="cannot write the run's outputs"):
        simulate(make_system(GLIBC / "spin", ["100000000000"]), blocker / "out")
    assert time.perf_counter() - started < 5, "the simulation ran before the output folder was checked"


def test_reused_outdir_loses_the_previous_runs_files(tmp_path, workloads_built, engine):
    from models.sim import simulate

    out = tmp_path / "again"
    out.mkdir()
    (out / "stats_series.csv").write_text("stale")
    (out / "guest.stderr").write_text("stale")
    simulate(make_system(GLIBC / "hello"), out)
    assert not (out / "stats_series.csv").exists()
    assert (out / "guest.stderr").read_bytes() == b""
    assert (out / "status").read_text() == "ok: exit\n"


@pytest.mark.parametrize("args,message", [
    (["no_such_config"], "UnknownConfig: no config named 'no_such_config'"),
    (["functional_default", "--set", "nosuch.x=1"], "System has no parameter 'nosuch'"),
    (["functional_default", "--set", "nosuch=1"], "System has no parameter 'nosuch'"),
    (["functional_default", "--power"], "--power needs a detailed run"),
])
def test_run_py_names_bad_input_without_a_traceback(args, message):
    proc = subprocess.run([*RUN, *args, "--progress-every", "0"], capture_output=True, text=True, timeout=60,
                          cwd=ROOT, env={**os.environ, "COLUMNS": "300"})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert message in proc.stdout, proc.stdout


def test_a_server_that_never_readies_its_queues_is_reported(workloads_built, engine):
    import configs
    from models.errors import ClientCheckFailed
    from models.sim import simulate

    system = configs.load("kvs_functional").system()
    system.workload.binary = str(TEST_PROGRAMS / "faults" / "spin_forever")
    system.client.stall_rounds = 300          # the fewest that cover a burst of the server's work (System.validate)
    with pytest.raises(ClientCheckFailed, match="never made its NIC queues ready"):
        simulate(system)


def test_deadlocked_threads_are_reported(workloads_built, engine):
    from models.errors import GuestDeadlock

    with pytest.raises(GuestDeadlock, match="every live thread waits on a futex") as caught:
        run_engine(GLIBC / "deadlock", max_insts=10**8)
    assert caught.value.result.stdout == b"locked once\n"


def test_smallest_stack(workloads_built, engine):
    """Two pages is the minimum: it runs a program; one page is refused before the run."""
    from models.params import ParamError

    small = run_engine(TEST_PROGRAMS / "syscalls", stack_size="8KiB", max_insts=10**8)
    normal = run_engine(TEST_PROGRAMS / "syscalls", max_insts=10**8)
    assert small.stop_reason == "exit" and (small.stdout, small.exit_code) == (normal.stdout, normal.exit_code)
    with pytest.raises(ParamError, match="stack_size"):
        make_system(TEST_PROGRAMS / "syscalls", stack_size="4KiB")


def test_detailed_run_that_never_starts_timing_warns(workloads_built, engine):
    from models.sim import DetailedTimingNeverStarted, simulate

    with pytest.warns(DetailedTimingNeverStarted, match="detailed timing never started"):
        result = simulate(make_system(GLIBC / "hello", mode="detailed", detailed_start="roi"))
    assert result.stop_reason == "exit"


def test_kvs_checker_accepts_lru_evictions_of_large_values(workloads_built, engine):
    """1,000-byte values, lru=1 and a log smaller than the data set: the server overwrites items in place on PUT
    (they keep their log position) and FIFO evicts them; the checker ages them from their append, so the misses
    are explained (it used to fail with "GET miss that no eviction explains")."""
    import configs
    from models.sim import simulate

    system = configs.load("kvs_functional").system(
        harts=2, server_args=("log_mib=1", "buckets=4096", "lru=1"), items=4096, value_size=1000, get_ratio=0.5,
        popularity="zipf", requests=20000)
    result = simulate(system)
    assert result.stop_reason == "client_done"
    assert result.stats["client.misses"] > 100 and result.stats["client.hits"] > 1000, result.stats


@pytest.mark.parametrize("what,right", [("rodata", "write"), ("readonly", "write"), ("none", "read"),
                                        ("stack", "execute")])
def test_page_permissions_fault_as_under_linux(what, right, workloads_built, engine):
    """A store to a read-only segment or an mprotect'ed page, a read of a PROT_NONE page and a jump to the stack
    kill the program under qemu-riscv64 (SIGSEGV); the engine stops with a memory fault naming the permission,
    keeping the line printed before."""
    from models.errors import MemoryFault

    proc = subprocess.run(["qemu-riscv64", str(GLIBC / "protect"), what], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGSEGV, proc
    with pytest.raises(MemoryFault, match=f"its page has no {right} permission") as caught:
        run_engine(GLIBC / "protect", [what], max_insts=10**8)
    assert caught.value.result.stdout == f"trying {what}\n".encode()


def test_mprotect_round_trip_matches_qemu(workloads_built, engine):
    proc = subprocess.run(["qemu-riscv64", str(GLIBC / "protect"), "ok"], capture_output=True, timeout=60)
    result = run_engine(GLIBC / "protect", ["ok"], max_insts=10**8)
    assert (bytes(result.stdout), result.exit_code) == (proc.stdout, proc.returncode) == (b"trying ok\nsum 2, now 5\n", 0)


def test_host_memory_is_checked_before_allocation(workloads_built, engine):
    """Caches whose tag arrays need more host memory than the machine has are refused with an error before the
    run (they used to abort the process on the failed allocation)."""
    from models.errors import HostMemoryError
    from models.sim import host_memory_available, host_memory_estimate, simulate

    system = make_system(GLIBC / "hello", mode="detailed", harts=16)
    system.caches.l1i.size = system.caches.l1d.size = system.caches.llc.size = "4GiB"
    for cache in (system.caches.l1i, system.caches.l1d, system.caches.llc):
        cache.hit_latency = 1000       # what 4 GiB arrays need at least (models/cache.py, hit_latency_floor)
    need = sum(host_memory_estimate(system).values())
    assert need > 16 * (8 << 30) // 64 * 25
    have = host_memory_available()
    assert have is not None and need > have, "this host has more memory than the test configuration needs"
    started = time.perf_counter()
    with pytest.raises(HostMemoryError, match="GiB of host memory"):
        simulate(system)
    assert time.perf_counter() - started < 2
    # An ordinary detailed configuration passes the check.
    assert sum(host_memory_estimate(make_system(GLIBC / "hello", mode="detailed")).values()) < 1 << 30
