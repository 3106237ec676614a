"""NUMA in the guest ABI (workloads/ABI.md, "NUMA"): SOCKET_OF gives each hart's socket, ALLOC_LOCAL and ALLOC_ON
put their pages on the socket asked for, every hart's stack is on its socket, everything else on socket 0, and a
socket that does not exist stops the run naming it. Each placement is checked twice: from the guest (SOCKET_OF_ADDR,
`workloads/micro/numa.c`) and from the engine's page map (the run's `numa_ranges` and the
`system.numa.socket{k}.bytes_placed` statistics). The KVS server puts each partition on its own core's socket."""

from __future__ import annotations

import re

import pytest

from models import System, Workload
from models.errors import BadSimcall, ConfigError
from models.sim import simulate
from models.socket import Socket

from conftest import BUILD, run_qemu

NUMA = BUILD / "micro" / "numa"
PAGE = 4096


def numa_system(cores: list[int], args: list[str] | tuple[str, ...] = (), **params) -> System:
    """A functional system of len(cores) sockets with cores[k] harts on socket k, running numa.c."""
    return System(harts=sum(cores), sockets=[Socket(cores=n) for n in cores], mem_limit="256MiB",
                  workload=Workload(binary=str(NUMA), argv=list(args)), **params)


def socket_of_hart(cores: list[int]) -> list[int]:
    return [k for k, n in enumerate(cores) for _ in range(n)]


def page_map_socket(ranges: list[tuple[int, int, int]], addr: int) -> int:
    """The socket of `addr` by the run's page map: the range that holds it, else socket 0 (the ABI's default)."""
    for start, end, socket in ranges:
        if start <= addr < end:
            return socket
    return 0


def parse(stdout: str):
    harts = {int(m[1]): dict(socket=int(m[2]), local=int(m[3], 16), bytes=int(m[4]), local_socket=int(m[5]),
                             stack_socket=int(m[6]))
             for m in re.finditer(r"hart (\d+) socket (\d+) local 0x([0-9a-f]+) bytes (\d+) local_socket (-?\d+) "
                                  r"stack_socket (-?\d+)", stdout)}
    on = {int(m[1]): dict(addr=int(m[2], 16), bytes=int(m[3]), socket=int(m[4]))
          for m in re.finditer(r"socket (\d+) on 0x([0-9a-f]+) bytes (\d+) addr_socket (-?\d+)", stdout)}
    return harts, on


@pytest.mark.parametrize("cores", [[2, 3], [1, 1, 1, 1]])
def test_numa_allocation_puts_pages_on_their_socket_seen_from_guest_and_page_map(cores):
    result = simulate(numa_system(cores))
    out = result.stdout.decode()
    assert result.exit_code == 0, out
    harts, on = parse(out)
    want = socket_of_hart(cores)
    assert sorted(harts) == list(range(len(want))) and sorted(on) == list(range(len(cores)))
    ranges = result.numa_ranges
    stack_size = 1 << 20
    for h, r in harts.items():
        # From the guest: SOCKET_OF and SOCKET_OF_ADDR of its block and of its stack.
        assert (r["socket"], r["local_socket"], r["stack_socket"]) == (want[h],) * 3, (h, r)
        # From the page map: every page of the block, and nothing just outside it that another hart did not own.
        for addr in range(r["local"], r["local"] + r["bytes"], PAGE):
            assert page_map_socket(ranges, addr) == want[h], (h, hex(addr))
    for k, r in on.items():
        assert r["socket"] == k and r["addr"] % (2 * PAGE) == 0
        assert [page_map_socket(ranges, r["addr"] + o) for o in (0, PAGE)] == [k, k]
    assert f"{len(want)} harts, {len(cores)} sockets, image on socket 0, 0 wrong" in out
    # The totals: socket k holds its harts' stacks and its hugepage heap, which carves its harts' ALLOC_LOCAL blocks
    # and hart 0's ALLOC_ON block (page-aligned, as asked) from 2 MB pages: here all of them fit in one page, in which
    # they are distinct and do not overlap (not one 2 MB page each, all at one offset).
    huge = 2 << 20
    for k in range(len(cores)):
        mine = [h for h in harts if want[h] == k]
        blocks = sorted([(harts[h]["local"], harts[h]["bytes"]) for h in mine] + [(on[k]["addr"], on[k]["bytes"])])
        assert all(a % PAGE == 0 for a, _ in blocks) and len({a // huge for a, _ in blocks}) == 1, blocks
        assert all(a + n <= b for (a, n), (b, _) in zip(blocks, blocks[1:])), blocks
        expect = len(mine) * stack_size + huge
        assert result.stats[f"system.numa.socket{k}.bytes_placed"] == expect, k
        assert sum(e - s for s, e, sock in ranges if sock == k) == expect


def test_the_run_folder_holds_the_page_map(tmp_path):
    import csv

    result = simulate(numa_system([1, 2]), outdir=tmp_path)
    with open(tmp_path / "numa.csv") as f:
        rows = [(int(r["start"]), int(r["end"]), int(r["socket"])) for r in csv.DictReader(f)]
    assert rows == result.numa_ranges and {k for _, _, k in rows} == {0, 1}


def test_one_socket_places_nothing_and_everything_is_on_socket_0():
    result = simulate(numa_system([3]))
    assert result.exit_code == 0 and result.numa_ranges == []
    assert "3 harts, 1 sockets, image on socket 0, 0 wrong" in result.stdout.decode()
    assert result.stats["system.numa.socket0.bytes_placed"] == 0


def test_the_same_binary_runs_under_qemu_on_socket_0():
    run = run_qemu(NUMA)
    assert run.exit_code == 0, run.stdout
    assert b"1 harts, 1 sockets, image on socket 0, 0 wrong" in run.stdout


@pytest.mark.parametrize("socket", [2, 7])
def test_a_socket_that_does_not_exist_stops_the_run_naming_pc_call_and_socket(socket):
    with pytest.raises(BadSimcall) as caught:
        simulate(numa_system([1, 1], [str(socket)]))
    err = caught.value
    assert err.hart == 0 and err.pc > 0 and err.insn == 0x73
    assert err.reason == (f"simulator call ALLOC_ON asked for NUMA socket {socket}, which does not exist: the system "
                          "has sockets 0..1")
    assert f"at pc {err.pc:#x}" in str(err)


def test_an_existing_socket_given_explicitly_is_served():
    result = simulate(numa_system([1, 1], ["1"]))
    out = result.stdout.decode()
    m = re.search(r"ALLOC_ON socket 1 returned 0x([0-9a-f]+)", out)
    assert m and page_map_socket(result.numa_ranges, int(m[1], 16)) == 1


def all_on(ranges: list[tuple[int, int, int]], start: int, length: int, socket: int) -> bool:
    """Is every byte of [start, start + length) placed on `socket` in the page map?"""
    pos, end = start, start + length
    for s, e, k in ranges:
        if s <= pos < e:
            if k != socket:
                return False
            pos = e
            if pos >= end:
                return True
    return False


@pytest.mark.parametrize("config, cores_per_socket", [("brps_target_dual", 2), ("brps_target_quad", 4)])
def test_kvs_server_puts_each_partition_on_its_cores_socket(config, cores_per_socket):
    """A functional multi-socket KVS run: partition k's log and buckets are on socket_of(core k), as the server
    sees it (SOCKET_OF, SOCKET_OF_ADDR) and in the engine's page map."""
    from configs import _multisocket, load

    system = _multisocket.functional(load(config).system(cores_per_socket=cores_per_socket, requests=500,
                                                         items=1024))
    system.workload.argv = ["mode=erew", "log_mib=1", "buckets=1024", "numa_report=1"]
    result = simulate(system)
    out = result.stdout.decode()
    assert result.stop_reason == "client_done" and result.stats["client.misses"] == 0, out
    lines = re.findall(r"kvs: partition (\d+) core_socket (\d+) log 0x([0-9a-f]+) (\d+) log_socket (-?\d+) "
                       r"buckets 0x([0-9a-f]+) (\d+) buckets_socket (-?\d+)", out)
    assert len(lines) == system.harts
    for k, core_socket, log, log_bytes, log_socket, buckets, bucket_bytes, buckets_socket in lines:
        want = int(k) // cores_per_socket
        assert (int(core_socket), int(log_socket), int(buckets_socket)) == (want, want, want), k
        assert int(log_bytes) == 1 << 20
        assert all_on(result.numa_ranges, int(log, 16), int(log_bytes), want), k
        assert all_on(result.numa_ranges, int(buckets, 16), int(bucket_bytes), want), k


def test_numa_placement_survives_a_checkpoint(tmp_path):
    """The partitions are placed before the checkpoint (taken after the bulk load): a run restored from it never
    allocates them again, so its page map and statistics can only be right if the map was saved."""
    from configs import _multisocket, brps_target_dual, brps_target_socket

    def system():
        s = _multisocket.functional(brps_target_dual.system(cores_per_socket=2, requests=400, items=1024))
        s.workload.argv = ["mode=erew", "log_mib=1", "buckets=1024"]
        return s

    writer = system()
    writer.checkpoint_to = str(tmp_path / "ck")
    first = simulate(writer)
    reader = system()
    reader.restore_from = str(tmp_path / "ck")
    back = simulate(reader)
    assert back.stop_reason == "client_done"
    placed = [first.stats[f"system.numa.socket{k}.bytes_placed"] for k in range(2)]
    assert placed[1] > 2 << 20       # two partitions' 1 MiB logs, and more, are on socket 1
    assert back.numa_ranges == first.numa_ranges
    assert [back.stats[f"system.numa.socket{k}.bytes_placed"] for k in range(2)] == placed
    # The same harts on one socket would put the partitions elsewhere: the restore refuses, naming why.
    one = _multisocket.functional(brps_target_socket.system(cores=4, requests=400, items=1024))
    one.workload.argv = reader.workload.argv
    one.restore_from = reader.restore_from
    with pytest.raises(ConfigError, match=r"System.sockets.cores is \[\] here but \[2,2\] in the checkpoint"):
        simulate(one)
