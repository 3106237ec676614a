"""End to end over TCP: the memcached-class server (workloads/mcd, its guest TCP in mcd_tcp.c) on a Mercury stack
against the ghost client with `Client.transport = 'tcp'` (models/engine/src/client/tcp.rs). The client opens its
connections with the three-way handshake before the load, and checks every segment (checksums, ports, sequence and
acknowledgement numbers) and every response (as over UDP); a failed check raises ClientCheckFailed. These tests
check the statistics on top, and that bad transports are refused before the run.
"""

from __future__ import annotations

import pytest
from test_mcd_e2e import check_counts

import configs
from models.errors import ClientCheckFailed, ConfigError
from models.params import ParamError
from models.sim import simulate

mercury = configs.load("mercury")


def run(tmp_path, cores, mode="functional", store_mem="4MiB", **client):
    client.setdefault("items", 4096)
    client.setdefault("requests", 3000)
    system = mercury.system(cores=cores, store_mem=store_mem, transport="tcp", **client)
    system.mode = mode
    return simulate(system, outdir=tmp_path)


def check_tcp(st, cores, connections=1):
    assert st["client.tcp.connections"] == cores * connections
    assert st["client.tcp.handshakes"] == cores * connections
    # Every frame of requests left in at least one segment, and every one got its responses in at least one.
    frames = st["client.packets"] + st["client.load.packets"]
    assert st["client.tcp.segments_sent"] >= frames + cores * connections * 2       # + SYN and ACK each
    assert st["client.tcp.segments_received"] >= frames + cores * connections       # + SYN-ACK each


@pytest.mark.parametrize("cores", [1, 16, 32])
def test_every_response_is_checked_over_tcp_on_a_mercury_stack(mcd_server, tmp_path, cores):
    st = run(tmp_path, cores, get_ratio=0.8, delete_ratio=0.05).stats
    check_counts(st, cores, 3000, 4096)
    check_tcp(st, cores)
    assert st["client.deletes"] > 100 and st["client.puts"] > 400 and st["client.hits"] > 2000
    assert 0 < st["client.misses"] <= st["client.deletes"] * 3


def test_small_segments_and_several_connections_per_instance(mcd_server, tmp_path):
    """A 100-byte MSS cuts the load's frames (up to 1460 bytes of SETs) and the 200-byte values' GET responses into
    several segments each way; three connections per instance take the frames in turn."""
    st = run(tmp_path, 4, requests=2000, items=1024, value_size=200, tcp_mss=100, tcp_connections=3).stats
    check_counts(st, 4, 2000, 1024)
    check_tcp(st, 4, 3)
    frames = st["client.packets"] + st["client.load.packets"]
    assert st["client.tcp.segments_received"] > 2 * frames     # a 228-byte GET hit takes three segments
    assert st["client.hits"] > 1500


def test_values_beyond_a_frame_travel_over_the_guest_tcp_up_to_its_largest_chunk(mcd_server, tmp_path):
    """A 3,000-byte value does not fit a datagram, but over TCP its SET and GET hit span segments; the guest
    server's largest chunk (4 KiB) holds it. A value beyond that chunk is refused before the run."""
    st = run(tmp_path, 2, requests=300, items=256, value_size=3000, get_ratio=0.7).stats
    check_counts(st, 2, 300, 256)
    check_tcp(st, 2)
    assert st["client.hits"] > 150 and st["client.tcp.segments_received"] > 3 * st["client.hits"]
    with pytest.raises(ConfigError, match="exceeds the memcached server's largest chunk, item_max=4096"):
        run(tmp_path / "big", 2, requests=10, items=16, value_size=5000)


def test_a_detailed_run_over_tcp_is_deterministic(mcd_server, tmp_path):
    a = run(tmp_path / "a", 16, mode="detailed", requests=2000, delete_ratio=0.02).stats
    b = run(tmp_path / "b", 16, mode="detailed", requests=2000, delete_ratio=0.02).stats
    assert a == b
    check_counts(a, 16, 2000, 4096)
    check_tcp(a, 16)
    assert a["client.latency.samples"] == 2000
    assert 2_000 < a["client.latency.p50"] < 500_000                 # ns
    assert a["client.throughput_mrps"] > 0.5
    assert a["client.lost_packets"] == 0


def test_tcp_costs_the_server_more_instructions_than_udp(mcd_server, tmp_path):
    """The same requests over TCP run the guest's TCP (connection lookup by 4-tuple, sequence checks, the copies
    into and out of the socket buffers, ACKs): more instructions per request than over UDP."""
    udp = mercury.system(cores=2, store_mem="4MiB", items=1024, requests=2000)
    udp.mode = "functional"
    u = simulate(udp, outdir=tmp_path / "udp").stats
    t = run(tmp_path / "tcp", 2, items=1024, requests=2000).stats
    assert t["client.requests"] == u["client.requests"] == 2000
    assert t["client.insts_per_request"] > u["client.insts_per_request"]


def test_a_server_returning_wrong_values_over_tcp_fails_the_run(mcd_server, tmp_path):
    system = mercury.system(cores=2, store_mem="4MiB", items=1024, requests=2000, transport="tcp")
    system.workload.argv = system.workload.argv + ["corrupt_every=500"]
    system.mode = "functional"
    with pytest.raises(ClientCheckFailed, match="wrong value or flags"):
        simulate(system, outdir=tmp_path)


def test_bad_transports_are_refused_before_the_run(mcd_server, tmp_path):
    kvs = configs.load("kvs_functional").system(harts=1)
    kvs.client.transport = "tcp"
    with pytest.raises(ParamError, match="Client.transport = 'tcp' with Client.protocol = 'mica'"):
        kvs.validate()
    system = mercury.system(cores=1, transport="tcp", offered_mpps=1.0)
    with pytest.raises(ParamError, match="Client.transport = 'tcp' with Client.offered_mpps"):
        system.validate()
    with pytest.raises(ParamError, match="tcp_mss"):
        mercury.system(cores=1, transport="tcp", tcp_mss=1461).validate()
    # More connections per instance than the server has slots for.
    system = mercury.system(cores=1, transport="tcp", tcp_connections=4)
    system.workload.argv = system.workload.argv + ["tcp_conns=2"]
    system.mode = "functional"
    with pytest.raises(ConfigError, match="tcp_connections = 4 but the memcached server takes 2"):
        simulate(system, outdir=tmp_path)
