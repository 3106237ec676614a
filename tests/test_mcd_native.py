"""The memcached-class server's own tests (workloads/mcd).

`make -C workloads/mcd native-test` builds the server's portable core (network stack with UDP and TCP, memcached
UDP and binary protocol, store) with the host compiler under ASan + UBSan and -Werror and runs its C tests; each C
case is reported here as its own pytest case. The riscv64 server (freestanding runtime, the KVS server's NIC driver) then runs its
self-test under qemu-riscv64: a client on hart 0 sends random GET/SET/DELETE frames and checks every response.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import pytest
from native_suite import NativeRun, assert_case_passed, list_cases, run_suite

ROOT = pathlib.Path(__file__).resolve().parent.parent
MCD = ROOT / "workloads" / "mcd"
TEST_BINARY = ROOT / "workloads" / "build" / "mcd" / "native" / "mcd_tests"
SERVER = ROOT / "workloads" / "build" / "mcd" / "mcd-server"
CASES = list_cases(MCD, TEST_BINARY)


@pytest.fixture(scope="module")
def native_run() -> NativeRun:
    return run_suite(MCD)


def test_native_suite(native_run) -> None:
    """`make -C workloads/mcd native-test` succeeds (sanitizers clean, no leaks) and every listed case passes."""
    proc, results, _ = native_run
    tail = (proc.stdout + proc.stderr)[-4000:]
    assert proc.returncode == 0, f"make native-test failed (exit {proc.returncode}):\n{tail}"
    assert len(CASES) >= 10, f"the mcd test binary lists too few cases: {CASES}"
    assert sorted(results) == sorted(CASES), tail
    assert re.search(rf"^{len(CASES)} tests, {len(CASES)} passed, 0 failed$", proc.stdout, re.M), tail


@pytest.mark.parametrize("case", CASES)
def test_c_case(native_run, case: str) -> None:
    """One C test case of workloads/mcd/tests."""
    assert_case_passed(native_run, case)


def _server() -> pathlib.Path:
    for tool in ("riscv64-linux-gnu-gcc", "qemu-riscv64"):
        assert shutil.which(tool), f"{tool} not found (make setup installs it)"
    build = subprocess.run(["make", "-s", "-C", str(MCD), "riscv"], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0 and SERVER.exists(), build.stdout + build.stderr
    return SERVER


@pytest.mark.parametrize("args", [[], ["selftest_nic=1"], ["selftest_nic=1", "rx_ring=8", "tx_ring=8", "burst=4"],
                                  ["buckets=4", "conns=8"]],
                         ids=["soft_queue", "nic_driver", "nic_small_rings", "small_tables"])
def test_riscv_selftest_under_qemu(args: list[str]) -> None:
    """The riscv64 server answers 5000 random requests correctly under qemu-riscv64, through a software queue or
    the real NIC driver over the software NIC model."""
    run = subprocess.run(["qemu-riscv64", str(_server()), "selftest=5000", *args], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    m = re.search(r"mcd selftest: (\d+) requests \((\d+) GETs, (\d+) hits\), (\d+) wrong", run.stdout)
    assert m, run.stdout
    requests, gets, hits, wrong = map(int, m.groups())
    assert requests == 5000 and gets > 3000 and hits > 1000 and wrong == 0, run.stdout


def test_riscv_server_without_nic_or_with_bad_arguments_says_so() -> None:
    server = str(_server())
    run = subprocess.run(["qemu-riscv64", server], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "no NIC queue" in run.stdout, run.stdout + run.stderr
    run = subprocess.run(["qemu-riscv64", server, "speed=9"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "bad argument 'speed=9'" in run.stdout, run.stdout + run.stderr
    run = subprocess.run(["qemu-riscv64", server, "conns=3"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "conns a power of two" in run.stdout, run.stdout + run.stderr
    for bad in ("tcp_conns=3", "tcp_conns=8192"):
        run = subprocess.run(["qemu-riscv64", server, bad], capture_output=True, text=True, timeout=60)
        assert run.returncode == 2 and "tcp_conns a power of two up to 4096" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize("args", [["bench=300"], ["bench=300", "bench_all=1", "bench_vlen=1000"],
                                  ["bench=300", "bench_tcp=1"], ["bench=300", "bench_tcp=1", "bench_vlen=1000"]],
                         ids=["one_hart", "all_harts", "tcp", "tcp_large_values"])
def test_riscv_bench_mode_serves_every_get_under_qemu(args: list[str]) -> None:
    """The GET benchmark (the breakdown's source) answers every GET with a hit, on one or every hart, over UDP or
    over TCP connections (a GET whose segment carried a wrong sequence number would get a bare duplicate ACK, not
    a hit's reply)."""
    run = subprocess.run(["qemu-riscv64", str(_server()), *args], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    vlen = 1000 if "bench_vlen=1000" in args else 32
    over = " over TCP" if "bench_tcp=1" in args else ""
    assert f"mcd bench: 300 GETs per phase, 300 hits of {vlen}-byte values" in run.stdout, run.stdout
    assert run.stdout.rstrip().endswith(f"){over}"), run.stdout
