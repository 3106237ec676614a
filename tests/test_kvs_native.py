"""The KVS server's own tests (workloads/kvs).

`make -C workloads/kvs native-test` builds the portable KVS core with the host compiler (ASan + UBSan, -Werror) and
runs its C test suite: the index, the log, the CREW version protocol, packet parsing and responses, end-to-end runs
through the software loopback NIC against a reference model, and a fuzz run. Each C test case is reported here as
its own pytest case. The riscv64 server binary is also run under qemu-riscv64 in its self-test mode (a software
queue instead of the NIC, every response checked), in EREW and CREW, with prefetching on and off.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess

import pytest
from native_suite import NativeRun, assert_case_passed, list_cases, run_suite

ROOT = pathlib.Path(__file__).resolve().parent.parent
KVS = ROOT / "workloads" / "kvs"
TEST_BINARY = ROOT / "workloads" / "build" / "kvs" / "native" / "kvs_tests"
SERVER = ROOT / "workloads" / "build" / "kvs" / "kvs-server"
CASES = list_cases(KVS, TEST_BINARY)


@pytest.fixture(scope="module")
def native_run() -> NativeRun:
    return run_suite(KVS)


def test_native_suite(native_run) -> None:
    """`make -C workloads/kvs native-test` succeeds, runs every listed case, and reports them all passing."""
    proc, results, _ = native_run
    tail = (proc.stdout + proc.stderr)[-4000:]
    assert proc.returncode == 0, f"make native-test failed (exit {proc.returncode}):\n{tail}"
    assert CASES, "the KVS test binary lists no cases"
    assert sorted(results) == sorted(CASES), f"cases run differ from cases listed:\n{tail}"
    assert all(v == "PASS" for v in results.values()), tail
    assert re.search(rf"^{len(CASES)} tests, {len(CASES)} passed, 0 failed$", proc.stdout, re.M), tail


@pytest.mark.parametrize("case", CASES)
def test_c_case(native_run, case: str) -> None:
    """One C test case of workloads/kvs/tests."""
    assert_case_passed(native_run, case)


SELFTESTS = [
    ["mode=erew", "prefetch=1"],
    ["mode=erew", "prefetch=0"],
    ["mode=crew", "prefetch=1"],
    ["mode=crew", "prefetch=0", "lru=0"],
    ["mode=erew", "log_kib=64"],  # a small log: LRU moves and FIFO evictions; misses only after the log wrapped
    # The real poll-mode NIC driver against fake_nic.c (the ABI's NIC, modelled in software): default rings; tiny
    # rings that bursts overflow (RX drops, ring wrap-around, TX reclaim); CREW with 4 requests per packet.
    ["selftest_nic=1"],
    ["selftest_nic=1", "rx_ring=8", "tx_ring=16"],
    ["selftest_nic=1", "mode=crew", "rx_ring=16", "tx_ring=16", "selftest_batch=4"],
    # MICA's DPDK life cycle: the fake NIC in report-status mode writes DD only where the driver set RS, once per
    # reclaim group (32 by default; 8 here), and the driver reclaims buffers a whole group at a time.
    # As DPDK, the driver frees sent TX buffers one group at a time and only once fewer than tx_free_thresh (32)
    # descriptors are free, so the ring holds its sent buffers; tx_free = the ring size frees them at every burst.
    ["selftest_nic=1", "selftest_rs=1"],
    ["selftest_nic=1", "selftest_rs=1", "tx_ring=64", "tx_rs=8", "buf_headroom=0", "buf_meta=128"],
    ["selftest_nic=1", "selftest_rs=1", "tx_ring=64", "tx_rs=8", "tx_free=16"],
    ["selftest_nic=1", "selftest_rs=1", "tx_free=512"],
]


@pytest.mark.parametrize("args", SELFTESTS, ids=lambda a: "_".join(x.replace("=", "") for x in a))
def test_riscv_selftest_under_qemu(args: list[str]) -> None:
    """The riscv64 server runs its self-test (software queue, 20000 checked requests) under qemu-riscv64."""
    if not (KVS.parent / "runtime" / "kvsim.h").exists():
        pytest.fail("workloads/runtime/kvsim.h is missing: the riscv64 server cannot be built")
    for tool in ("riscv64-linux-gnu-gcc", "qemu-riscv64"):
        assert shutil.which(tool), f"{tool} not found (make setup installs it)"
    build = subprocess.run(["make", "-s", "-C", str(KVS), "riscv"], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0 and SERVER.exists(), build.stdout + build.stderr
    run = subprocess.run(["qemu-riscv64", str(SERVER), "selftest=20000", *args], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    m = re.search(r"kvs selftest: (\d+) requests \((\d+) GETs, (\d+) right, (\d+) evicted\), (\d+) wrong", run.stdout)
    assert m, run.stdout
    requests, gets, right, evicted, wrong = map(int, m.groups())
    assert requests >= 20000 and gets > 0 and right + evicted == gets and wrong == 0, run.stdout
    if not any(a.startswith("log_kib=") for a in args):
        assert evicted == 0, run.stdout  # the default 64 MiB log holds everything
    if "selftest_nic=1" in args:
        m = re.search(r"fake NIC: (\d+) frames in, (\d+) out, (\d+) dropped \(client saw (\d+)\)", run.stdout)
        assert m, run.stdout
        frames_in, frames_out, nic_drops, client_drops = map(int, m.groups())
        assert frames_in == frames_out and nic_drops == client_drops and frames_in > 0, run.stdout
        if "rx_ring=8" in args:
            assert nic_drops > 0, run.stdout  # bursts of up to 12 frames overflow an RX ring that holds 7
        writebacks = int(re.search(r"(\d+) TX write-backs", run.stdout).group(1))
        if "selftest_rs=1" in args:
            group = next((int(a.split("=")[1]) for a in args if a.startswith("tx_rs=")), 32)
            # The ring starts at descriptor 0 and every descriptor is sent in order: one write-back per group.
            assert writebacks == frames_out // group and writebacks > 0, run.stdout
            # The driver reclaims once per group, a whole group each time: as many reclaims as write-backs (the
            # last partial group has no RS descriptor and stays), exactly `group` descriptors freed in each.
            m = re.search(r"driver: (\d+) TX reclaim groups, (\d+) descriptors reclaimed in them; at most (\d+) TX "
                          r"descriptors free at a reclaim, (\d+) holding a buffer", run.stdout)
            assert m, run.stdout
            groups, reclaimed, most_free, most_held = map(int, m.groups())
            assert (groups, reclaimed) == (writebacks, writebacks * group), run.stdout
            ring = next((int(a.split("=")[1]) for a in args if a.startswith("tx_ring=")), 512)
            tx_free = next((int(a.split("=")[1]) for a in args if a.startswith("tx_free=")), 32)
            if tx_free < ring:
                # Lazy: no burst reclaimed while tx_free or more descriptors were free, so the ring filled up to
                # the threshold with sent buffers (ring - 1 usable descriptors, fewer than tx_free free).
                assert most_free < tx_free and most_held >= ring - tx_free, run.stdout
            else:
                # Every burst frees what is done: far fewer buffers held than the lazy driver's ~480.
                assert most_held < ring - 32, run.stdout
        else:
            assert writebacks == frames_out, run.stdout  # descriptor mode: every descriptor written back


def test_riscv_server_without_nic_says_so() -> None:
    """Without a NIC (qemu) and without selftest=N, the server explains itself and exits 1; bad arguments exit 2."""
    build = subprocess.run(["make", "-s", "-C", str(KVS), "riscv"], capture_output=True, text=True, timeout=600)
    assert build.returncode == 0 and SERVER.exists(), build.stdout + build.stderr
    run = subprocess.run(["qemu-riscv64", str(SERVER)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "no NIC queue" in run.stdout, run.stdout + run.stderr
    run = subprocess.run(["qemu-riscv64", str(SERVER), "mode=xrew"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "bad argument 'mode=xrew'" in run.stdout, run.stdout + run.stderr


@pytest.mark.skipif(shutil.which("riscv64-linux-gnu-gcc") is None, reason="no riscv64 cross compiler")
def test_the_server_builds_the_same_bytes_in_any_checkout(tmp_path) -> None:
    """The riscv64 server built from a copy of the sources at another path is byte for byte the checkout's build.

    A checkpoint names its guest binary by content (size and CRC-32), so a data set loaded in one checkout must
    restore with another checkout's build; a path in the debug information (the build's directory) broke that.
    """
    assert SERVER.exists(), "workloads/build/kvs/kvs-server is not built (make workloads)"
    copy = tmp_path / "elsewhere" / "workloads"
    for part in ("kvs", "runtime"):
        shutil.copytree(ROOT / "workloads" / part, copy / part, ignore=shutil.ignore_patterns("build"))
    proc = subprocess.run(["make", "-s", "-C", str(copy / "kvs"), "riscv"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    built = copy / "build" / "kvs" / "kvs-server"
    assert built.read_bytes() == SERVER.read_bytes(), "the server's bytes depend on the checkout's path"
