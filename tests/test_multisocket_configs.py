"""The multi-socket servers (configs/brps_target_dual.py, brps_target_quad.py, xeon_e5_2697v2_dual.py): each is
its one-socket description repeated, so the totals (cores, NICs, ports, memory channels, LLC) are the socket's times
the sockets; every core's NIC queue is on a NIC of its own socket; and the KVS server runs on them functionally,
with the client's per-core statistics and steering right on 120 and 240 cores."""

from __future__ import annotations

import pytest

from configs import (
    _multisocket,
    brps_target_dual,
    brps_target_quad,
    brps_target_socket,
    xeon_e5_2697v2_dual,
    xeon_e5_2697v2_socket,
)
from models import System
from models.params import ParamError
from models.sim import simulate

MB = 1024 * 1024
# name: (module, sockets, cores, NICs, ports, Gb/s per port, DRAM channels, LLC bytes per socket)
SERVERS = {
    "brps_target_dual": (brps_target_dual, 2, 120, 6, 6, 100.0, 12, 768 * 1024 * 60),
    "brps_target_quad": (brps_target_quad, 4, 240, 12, 12, 100.0, 24, 768 * 1024 * 60),
    # The X520-QDA1s as built: each card is two dual-port 82599 controllers, so 4 NIC entries per socket.
    "xeon_e5_2697v2_dual": (xeon_e5_2697v2_dual, 2, 24, 8, 12, 10.0, 8, 30 * MB),
}
# A small KVS for functional runs: 1 MiB of log and 1024 buckets per partition.
SMALL_KVS = ["mode=erew", "log_mib=1", "buckets=1024"]


def port_of_core(system: System) -> list[int]:
    """Which global port each core's queue is on: one queue per hart, spread over all ports (NIC 0's first) in
    contiguous blocks (workloads/ABI.md, "The NIC")."""
    ports = sum(n.ports for n in system.nics)
    per_port = system.harts // ports
    return [min(c // per_port, ports - 1) for c in range(system.harts)]


def nic_of_port(system: System) -> list[int]:
    return [k for k, n in enumerate(system.nics) for _ in range(n.ports)]


@pytest.mark.parametrize("name", SERVERS)
def test_server_totals_are_the_socket_times_the_sockets(name):
    module, sockets, cores, nics, ports, gbps, channels, llc = SERVERS[name]
    system = module.system()
    assert len(system.sockets) == sockets and system.harts == cores == sum(s.cores for s in system.sockets)
    assert len(system.nics) == nics and sum(n.ports for n in system.nics) == ports
    assert {n.port_gbps for n in system.nics} == {gbps}
    assert sum(s.memory.channels for s in system.sockets) == channels
    assert [s.caches.llc.size for s in system.sockets] == [llc] * sockets
    # NICs are numbered socket by socket, each socket with the same share.
    assert [n.socket for n in system.nics] == [k for k in range(sockets) for _ in range(nics // sockets)]
    # Every core's queue is on a port of a NIC of its own socket (MICA pins each core to a local port).
    socket_of_core = [k for k, s in enumerate(system.sockets) for _ in range(s.cores)]
    nic_of = nic_of_port(system)
    assert [system.nics[nic_of[p]].socket for p in port_of_core(system)] == socket_of_core
    # The socket itself is the one-socket description's, unchanged.
    single = (xeon_e5_2697v2_socket if name.startswith("xeon") else brps_target_socket).system()
    assert all(s.to_dict() == single.socket_list()[0].to_dict() for s in system.sockets)
    assert system.client.mode == "erew"
    assert system.mode == "detailed"


@pytest.mark.parametrize("name", SERVERS)
def test_server_validates_functionally_and_in_detail(name):
    module = SERVERS[name][0]
    _multisocket.functional(module.system()).validate()
    module.system().validate()
    detailed = module.system()
    assert (detailed.mode, detailed.detailed_start, detailed.warm_caches) == ("detailed", "roi", True)


def test_replicate_refuses_what_it_cannot_repeat():
    with pytest.raises(ValueError, match="at least one socket"):
        _multisocket.replicate(brps_target_socket.system(cores=2), 0)
    with pytest.raises(ValueError, match="one-socket system"):
        _multisocket.replicate(brps_target_dual.system(cores_per_socket=2), 2)


def test_a_nic_on_a_socket_that_does_not_exist_is_refused():
    system = _multisocket.functional(brps_target_dual.system(cores_per_socket=2))
    system.nics[3].socket = 2
    with pytest.raises(ParamError, match=r"System\.nics\[3\]\.socket = 2\b.*sockets?\b.*0\.\.1"):
        system.validate()


@pytest.mark.parametrize("name, cores_per_socket", [("brps_target_dual", 2), ("xeon_e5_2697v2_dual", 2),
                                                    ("brps_target_quad", 2)])
def test_reduced_server_serves_every_request_functionally(name, cores_per_socket):
    module, sockets = SERVERS[name][:2]
    system = _multisocket.functional(module.system(cores_per_socket=cores_per_socket, requests=1000, items=2048))
    system.workload.argv = SMALL_KVS
    result = simulate(system)
    s = result.stats
    assert result.stop_reason == "client_done", result.stdout
    assert (s["client.requests"], s["client.misses"], s["client.lost_requests"]) == (1000, 0, 0)
    cores = cores_per_socket * sockets
    assert sum(s[f"client.core{c}.requests"] for c in range(cores)) == 1000
    # Each socket's partitions (core state, partition, buckets, log, NIC queue memory) are placed on it, equally,
    # but for one 2 MB page: a socket's heap whose growth finds the address space below it taken by another
    # socket's pages starts a new run and leaves its old free space unused (linux.rs `alloc_on`).
    placed = [s[f"system.numa.socket{k}.bytes_placed"] for k in range(sockets)]
    assert min(placed) > cores_per_socket * MB and max(placed) - min(placed) <= 2 * MB, placed


@pytest.mark.parametrize("name", ["brps_target_dual", "brps_target_quad"])
def test_full_server_client_statistics_and_steering_on_every_core(name):
    """The whole 120- or 240-core server, functionally: the client's per-core statistics cover every core, every
    core is served, and each NIC's frames are exactly those of the cores whose queues it holds, on its socket."""
    module, sockets, cores = SERVERS[name][:3]
    requests = 40 * cores
    system = _multisocket.functional(module.system(requests=requests, items=8192))
    system.workload.argv = SMALL_KVS
    result = simulate(system)
    s = result.stats
    assert result.stop_reason == "client_done" and f"kvs: {cores} cores, EREW" in result.stdout.decode()
    assert (s["client.requests"], s["client.misses"], s["client.lost_requests"]) == (requests, 0, 0)
    per_core = [s[f"client.core{c}.requests"] for c in range(cores)]
    assert f"client.core{cores}.requests" not in s
    assert sum(per_core) == requests and min(per_core) > 0
    assert [s[f"client.partition{c}.requests"] for c in range(cores)] == per_core     # EREW: partition = core
    ports = port_of_core(system)
    nic_of = nic_of_port(system)
    for k, nic in enumerate(system.nics):
        mine = [c for c in range(cores) if nic_of[ports[c]] == k]
        assert {c // (cores // sockets) for c in mine} == {nic.socket}
        frames = sum(s[f"system.nic{k}.port{p}.rx_frames"] for p in range(nic.ports))
        assert frames == sum(per_core[c] for c in mine), k
