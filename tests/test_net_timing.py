"""The timed network path (detailed mode): line rate, the bounded RX FIFO and its drops, PCIe, DDIO, the open-loop
client's latency and loss, and the loss search. Exact line-rate numbers (100 GbE with 88-byte frames = 111.6 M
frames/s, 10 GbE = 11.16 M) and the DDIO hit/miss/leak mechanics are also unit-tested in models/engine/src/
nictime.rs and models/timing/src/cache.rs; here they are checked end to end with the real KVS server."""

from __future__ import annotations

import subprocess

import pytest

from configs import kvs_functional
from drivers import capacity
from models.sim import simulate

from conftest import WORKLOADS

SERVER_ARGS = ("log_mib=8", "buckets=4096")


@pytest.fixture(scope="module")
def kvs_server(engine):
    proc = subprocess.run(["make", "-s", "-C", str(WORKLOADS), "kvs"], capture_output=True, text=True)
    if proc.returncode != 0 or not kvs_functional.KVS_SERVER.is_file():
        pytest.fail(f"building the KVS server failed:\n{proc.stdout}\n{proc.stderr}", pytrace=False)
    return kvs_functional.KVS_SERVER


def timed(harts=2, gbps=10.0, nic=None, caches=None, **client):
    client.setdefault("items", 2048)
    client.setdefault("requests", 2000)
    s = kvs_functional.system(harts=harts, server_args=SERVER_ARGS, **client)
    s.mode = "detailed"
    s.detailed_start = "roi"
    s.nic.port_gbps = gbps
    for k, v in (nic or {}).items():
        setattr(s.nic, k, v)
    for k, v in (caches or {}).items():
        setattr(s.caches, k, v)
    return s


def test_a_port_fed_beyond_line_rate_receives_exactly_line_rate(kvs_server):
    # GETs only: every request frame is 80 bytes (48 of headers, a 24-byte descriptor, an 8-byte key), 104 bytes
    # on the wire with the 24 bytes of preamble, FCS and gap.
    r = simulate(timed(get_ratio=1.0, offered_mpps=40.0))
    s = r.stats
    line = 10e9 / 8 / (80 + 24)
    assert s["system.nic0.port0.rx_frames_per_s"] == pytest.approx(line, rel=1e-3)
    assert s["system.nic0.port0.rx_wire_gbps"] == pytest.approx(10.0, rel=1e-3)
    assert r.stop_reason == "client_done"


def test_an_on_die_mac_receives_line_rate_without_pcie_and_sooner(kvs_server):
    """Nic.attach = 'on_die' (Mercury's integrated MAC): the port still receives exactly line rate, the statistics
    show the MAC's on-die bus and no PCIe link, and a frame reaches the guest far sooner than over PCIe (a 400 ns
    link crossing at least) at a light load."""
    r = simulate(timed(get_ratio=1.0, offered_mpps=40.0, nic={"attach": "on_die"}))
    s = r.stats
    assert s["system.nic0.port0.rx_frames_per_s"] == pytest.approx(10e9 / 8 / (80 + 24), rel=1e-3)
    assert not [k for k in s if k.startswith("system.nic0.pcie")]
    assert s["system.nic0.on_die.up_bytes.rx_data"] >= 80 * s["system.nic0.port0.rx_frames"] * 0.99
    light = {k: simulate(timed(offered_mpps=0.3, requests=300, nic={"attach": k})).stats for k in ("pcie", "on_die")}
    # On the die: the frame's 80 bytes (5 ns at 16 GB/s), its descriptor (1 ns) and 4 ns to memory.
    assert light["on_die"]["system.nic0.rx_dma_latency_ns"] == pytest.approx(10.0, abs=0.5)
    assert light["pcie"]["system.nic0.rx_dma_latency_ns"] > 400.0
    assert light["on_die"]["client.latency.p50"] < light["pcie"]["client.latency.p50"] - 1.0
    assert light["on_die"]["client.loss"] == 0 and "system.nic0.pcie.up_bytes" in light["pcie"]


def test_a_slow_server_makes_the_rx_fifo_drop(kvs_server):
    # Two cores answer about 12 M requests/s; a 100 GbE port offered 40 M frames/s overwhelms them.
    r = simulate(timed(gbps=100.0, offered_mpps=40.0, nic={"rx_fifo_frames": 64}))
    s = r.stats
    assert s["system.nic0.port0.rx_fifo_overflows"] > 0
    assert s["system.nic0.port0.rx_drops"] == s["system.nic0.queue0.rx_drops"] + s["system.nic0.queue1.rx_drops"]
    assert s["client.lost_packets"] == s["system.nic0.port0.rx_fifo_overflows"]
    assert s["client.loss"] > 0.2
    assert s["client.requests"] + s["client.lost_requests"] == 2000
    light = simulate(timed(offered_mpps=0.3, requests=300)).stats
    assert light["client.loss"] == 0 and light["system.nic0.port0.rx_fifo_overflows"] == 0


def test_latency_percentiles_and_queueing(kvs_server):
    light = simulate(timed(offered_mpps=0.2, requests=300)).stats
    heavy = simulate(timed(gbps=100.0, offered_mpps=30.0, requests=1000)).stats
    for s in (light, heavy):
        v = [s[f"client.latency.{k}"] for k in ("p50", "p95", "p99", "p999")]
        assert 0 < v[0] <= v[1] <= v[2] <= v[3]
        assert s["client.latency.samples"] == s["client.requests"]
        assert v[0] <= s["client.latency.mean"] * 3
    # At light load a round trip is wire + PCIe both ways + the server: above 2 PCIe latencies (400 ns each, the
    # default) and well under 20 us. Under overload the FIFO queue adds to it, and the RX batches grow.
    assert 800 < light["client.latency.p50"] < 20_000
    assert heavy["client.latency.p50"] > 3 * light["client.latency.p50"]
    assert heavy["system.nic0.queue0.rx_batch_mean"] > light["system.nic0.queue0.rx_batch_mean"]


def test_ddio_on_the_core_reads_packets_from_the_llc_off_from_memory(kvs_server):
    on = simulate(timed(offered_mpps=0.5, requests=1000)).stats
    off = simulate(timed(offered_mpps=0.5, requests=1000, nic={"ddio": False})).stats
    p = "system.socket0.ddio."
    assert on[p + "core_read_hits"] > 1000 and on[p + "core_read_misses"] == 0
    assert on[p + "write_allocs"] + on[p + "write_hits"] > 0 and on[p + "writes_to_memory"] == 0
    assert on[p + "mmio_accesses"] > 0, "doorbells are uncached device accesses"
    assert off[p + "core_read_misses"] > 1000 and off[p + "core_read_hits"] == 0
    assert off[p + "writes_to_memory"] > 0 and off[p + "write_allocs"] == 0
    assert off["system.socket0.mem.channel0.writes"] > on["system.socket0.mem.channel0.writes"]


def test_too_few_ddio_ways_for_the_buffers_in_flight_leak(kvs_server):
    # A 64 KiB, 16-way LLC: one DDIO way is 64 lines, far fewer than the frames queued in the RX rings under
    # overload; with every way, nothing leaks.
    from models.cache import Cache
    small = Cache(size="64KiB", assoc=16, hit_latency=20, mshrs=64, inclusive=True)
    leak = simulate(timed(gbps=100.0, offered_mpps=40.0, requests=1500, caches={"llc": small},
                          nic={"ddio_ways": 1 / 16})).stats
    small = Cache(size="64KiB", assoc=16, hit_latency=20, mshrs=64, inclusive=True)
    full = simulate(timed(offered_mpps=0.05, requests=300, caches={"llc": small}, nic={"ddio_ways": 1.0})).stats
    assert leak["system.socket0.ddio.leaky_evictions"] > 100
    assert full["system.socket0.ddio.leaky_evictions"] == 0


def test_identical_configuration_gives_identical_stats(kvs_server):
    a = simulate(timed(offered_mpps=3.0, requests=800)).stats
    b = simulate(timed(offered_mpps=3.0, requests=800)).stats
    assert a == b


def test_the_loss_search_backs_off_from_an_overloaded_server(kvs_server):
    def make(rate):
        return timed(gbps=100.0, offered_mpps=rate, requests=1500, nic={"rx_fifo_frames": 64})

    res = capacity.capacity(make, resolution=0.05)
    first = res.probes[0]
    assert first.offered_mpps == pytest.approx(capacity.line_rate_mpps(make(1.0)))
    assert first.loss >= 0.01, "two cores cannot take 100 GbE of small frames"
    assert res.probes[1].offered_mpps < first.offered_mpps, "it backs off"
    assert res.best is not None and res.best.loss < 0.01
    assert res.best.offered_mpps < first.offered_mpps
    assert all(p.loss >= 0.01 for p in res.probes if p.offered_mpps > res.best.offered_mpps)


def test_functional_mode_has_no_network_timing(kvs_server):
    s = simulate(kvs_functional.system(harts=2, server_args=SERVER_ARGS, items=1024, requests=500)).stats
    assert "system.nic0.pcie.up_bytes" not in s and "client.latency.p50" not in s
    assert s["client.loss"] == 0
