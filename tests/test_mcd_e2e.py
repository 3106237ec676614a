"""End to end: the memcached-class server (workloads/mcd) on a Mercury stack against the ghost client speaking the
memcached binary protocol over UDP (Client.protocol = 'memcached'). The client checks every response against its
model of the store (a wrong value or flags, a wrong echo, a bad checksum, a miss or DELETE result that neither a
DELETE nor an eviction explains, or a lost response raises ClientCheckFailed); these tests check the statistics on
top. That corrupted responses are caught is tested with forged responses in
models/engine/src/client/memcached_tests.rs, and end to end here by a server whose values do not match the client's
(`test_a_server_returning_wrong_values_fails_the_run`).
"""

from __future__ import annotations

import pytest

import configs
from models.errors import ClientCheckFailed, ConfigError
from models.params import ParamError
from models.sim import simulate

mercury = configs.load("mercury")


def run(tmp_path, cores, mode="functional", store_mem="4MiB", **client):
    client.setdefault("items", 4096)
    client.setdefault("requests", 3000)
    system = mercury.system(cores=cores, store_mem=store_mem, **client)
    system.mode = mode
    return simulate(system, outdir=tmp_path)


def check_counts(st, cores, requests, items):
    assert st["client.requests"] == requests
    assert st["client.gets"] + st["client.puts"] + st["client.deletes"] == requests
    assert st["client.responses_checked"] == requests + items       # the bulk load's SETs are checked too
    assert st["client.load.requests"] == items
    assert st["client.hits"] + st["client.misses"] == st["client.gets"]
    # One instance per core on its own port: every core served its share.
    per_core = [st[f"client.core{c}.requests"] for c in range(cores)]
    assert sum(per_core) == requests and min(per_core) > 0


@pytest.mark.parametrize("cores", [1, 16, 32])
def test_every_response_is_checked_on_a_mercury_stack(mcd_server, tmp_path, cores):
    st = run(tmp_path, cores, get_ratio=0.8, delete_ratio=0.05).stats
    check_counts(st, cores, 3000, 4096)
    assert st["client.deletes"] > 100 and st["client.puts"] > 400 and st["client.hits"] > 2000
    # Nothing is evicted (4 MiB per instance holds every item), so every miss follows a DELETE of its key: with
    # 5% DELETEs over 4096 items a few percent of the GETs miss, never more than the DELETEs could explain.
    assert 0 < st["client.misses"] <= st["client.deletes"] * 3
    assert st["client.loss"] == 0


def test_runs_are_deterministic(mcd_server, tmp_path):
    a = run(tmp_path / "a", 4, delete_ratio=0.05).stats
    b = run(tmp_path / "b", 4, delete_ratio=0.05).stats
    assert a == b


def test_a_detailed_run_on_16_cores(mcd_server, tmp_path):
    st = run(tmp_path, 16, mode="detailed", requests=2000, delete_ratio=0.02).stats
    check_counts(st, 16, 2000, 4096)
    assert st["client.latency.samples"] == 2000
    # A GET on an A7 at 1 GHz takes a few microseconds of server time; closed loop with queueing on top.
    assert 2_000 < st["client.latency.p50"] < 500_000                 # ns
    assert st["client.throughput_mrps"] > 0.5                          # 16 instances of ~0.4 M req/s each
    assert st["system.socket0.core0.ipc"] > 0


def test_evicting_instances_may_miss_but_still_return_only_right_values(mcd_server, tmp_path):
    """64 KiB per instance (buckets=4) holds 511 items of 128-byte chunks: 4096 items on one core evict, and the
    client accepts misses only because this instance can evict; every hit is still checked."""
    system = mercury.system(cores=1, store_mem="64KiB", items=4096, requests=3000)
    system.workload.argv = system.workload.argv + ["buckets=4"]
    system.mode = "functional"
    st = simulate(system, outdir=tmp_path).stats
    check_counts(st, 1, 3000, 4096)
    assert st["client.misses"] > 0.5 * st["client.gets"] and st["client.hits"] > 0


def test_a_server_returning_wrong_values_fails_the_run(mcd_server, tmp_path):
    """The server (with mcd's test hook corrupt_every=N) flips a byte of every Nth GET value it returns: the client
    must fail the run naming the request."""
    system = mercury.system(cores=2, store_mem="4MiB", items=1024, requests=2000)
    system.workload.argv = system.workload.argv + ["corrupt_every=500"]
    system.mode = "functional"
    with pytest.raises(ClientCheckFailed, match="wrong value or flags"):
        simulate(system, outdir=tmp_path)


def test_protocol_mismatches_are_refused(mcd_server, tmp_path):
    system = mercury.system(cores=1)
    system.client.protocol = "mica"
    with pytest.raises(ParamError, match="Client.protocol = 'mica' but the server mcd-server speaks 'memcached'"):
        system.validate()
    kvs = configs.load("kvs_functional").system(harts=1)
    kvs.client.protocol = "memcached"
    with pytest.raises(ParamError, match="kvs-server speaks 'mica'"):
        kvs.validate()
    with pytest.raises(ParamError, match="DELETEs are sent only with Client.protocol = 'memcached'"):
        configs.load("kvs_functional").system(harts=1, get_ratio=0.5, delete_ratio=0.1).validate()
    # The server's port must be the NIC's steering base port (instance i serves port + i).
    system = mercury.system(cores=1)
    system.workload.argv = ["port=11211", "mem=1MiB"]
    with pytest.raises(ConfigError, match="port=11211 is not Nic.steering_base_port = 16384"):
        simulate(system, outdir=tmp_path)
