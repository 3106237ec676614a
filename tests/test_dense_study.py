"""The dense-server study (drivers/studies/dense.py): the stacks it simulates, the figures it reads from a run, the
server table it derives, and (slow) one small capacity search end to end."""

import subprocess

import pytest

from drivers import capacity as cap
from drivers.studies import dense
from models.dense_server import StackFigures

from conftest import WORKLOADS


def test_stack_systems_are_the_platforms_with_the_memcached_client():
    for name, (_module, kwargs, memory) in dense.PLATFORMS.items():
        s = dense.stack_system(name, 2.5, requests_per_core=10)
        s.validate()
        assert s.harts == kwargs["cores"] and s.client.protocol == "memcached"
        assert s.client.offered_mpps == 2.5 and s.client.requests == 10 * s.harts
        assert (s.detailed_start, s.warm_caches) == ("roi", True)
        # The stack's memory behind the caches, or the DDR stand-in while the engine cannot build it.
        assert s.memory.kind in (memory, "ddr")
        assert s.client.window * s.harts <= 512           # never more frames in flight than the RX FIFO holds


def test_memory_traffic_is_read_from_the_stack_or_the_ddr_channels():
    assert dense.memory_gbps({"system.socket0.mem.bandwidth_gbps": 3.5}) == 3.5
    stats = {"client.measured_ns": 2e6, "system.socket0.mem.channel0.read_bytes": 3e6,
             "system.socket0.mem.channel0.write_bytes": 1e6, "system.socket0.mem.channel0.reads": 7.0}
    assert dense.memory_gbps(stats) == pytest.approx(4e6 / 2e-3 / 1e9)


def test_the_server_row_is_the_aggregation_of_the_measured_stack():
    figures = StackFigures(requests_per_s=10e6, logic_power_w=3.0, memory_gbps=2.0, capacity_bytes=4 << 30)
    probe = cap.Probe(offered_mpps=11.0, loss=0.0, answered_mpps=10.0, stage="refine")
    search = cap.SearchResult(best=probe, probes=[probe], resolution=0.02, max_loss=0.01, upper_mpps=11.5)
    stats = {"client.latency.p95": 20_000.0, "client.insts_per_request": 3000.0}
    row = dense.table_rows([dense.StackResult("Mercury-32 (A7, 1 GHz)", "dram3d", search, stats, figures)])[0]
    # 3 W + 2 GB/s x 210 mW = 3.42 W a stack; 96 stacks + 96 PHYs x 0.3 W = 357.12 W, within 472 W.
    assert row["stack W"] == pytest.approx(3.42)
    assert (row["stacks"], row["server W"]) == (96, pytest.approx(96 * 3.42 + 28.8))
    assert row["server M req/s"] == pytest.approx(960.0)
    assert row["req/s per GB"] == pytest.approx(960e6 / 384)
    assert row["GB per server"] == pytest.approx(384.0)
    assert row["p95 us"] == 20.0 and not row["line limited"]
    # A stack that draws more than 472 / 96 W: the server holds only as many stacks as the budget allows.
    hot = StackFigures(requests_per_s=10e6, logic_power_w=6.0, memory_gbps=0.0, capacity_bytes=4 << 30)
    row = dense.table_rows([dense.StackResult("Mercury-32 (A7, 1 GHz)", "dram3d", search, stats, hot)])[0]
    assert row["stacks"] == int(472 // 6.3) and row["server W"] <= 472


@pytest.mark.slow
def test_a_small_stack_capacity_is_searched_and_priced(engine, tmp_path):
    build = subprocess.run(["make", "-s", "-C", str(WORKLOADS / "mcd"), "riscv"], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    r = dense.measure_stack("Mercury-32 (A7, 1 GHz)", cores=2, requests_per_core=150)
    st = r.stats
    assert r.search.best is not None and r.search.best.loss < 0.01
    assert st["client.requests"] == 300 and st["client.loss"] < 0.01
    # Two A7 cores answer a few hundred thousand GETs per second each: far below a 10 GbE port's line rate.
    assert 0.2e6 < r.figures.requests_per_s < 2e6 and not r.search.line_limited
    assert r.figures.logic_power_w > dense.MAC_POWER_W and r.figures.memory_gbps > 0
