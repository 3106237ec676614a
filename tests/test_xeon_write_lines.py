"""sim-scripts/xeon_write_lines.py: a saved Xeon run's DRAM writes per request by whose data they carry, and its I/O
footprint against the DDIO ways, from its statistics and configuration."""

from __future__ import annotations

import json
import math

import pytest

from drivers.cli import xeon_write_lines as xw


def _stats(per_socket_ddio: bool = True) -> dict[str, float]:
    """Two sockets, 10 measured requests, 2 of them SETs; two NICs of one queue each."""
    s = {"client.requests": 10.0, "client.puts": 2.0, "client.items": 1000.0, "client.throughput_mrps": 1.0}
    ddio = {"writebacks_core_lines": 3.0, "writebacks_core_data_in_dma_lines": 1.0, "writebacks_dma_data": 0.5,
            "writes_to_memory": 0.0, "leaky_evictions": 0.5, "write_hits": 20.0, "write_allocs": 1.0,
            "dma_lines_displaced_by_cores": 1.0, "dma_lines_displaced_by_dma": 0.5}
    for k in (0, 1):
        sock = f"system.socket{k}"
        s.update({f"{sock}.mem.channel0.writes": 3.0, f"{sock}.mem.channel1.writes": 1.5,
                  # the LLC's own dirty victims: 4 of the socket's 4.5 dirty lines; one back-invalidated copy
                  f"{sock}.llc.writebacks": 3.5,
                  # a slice's counter is not the socket's: not summed again
                  f"{sock}.llc.slice0.writebacks": 3.5,
                  f"system.nic{k}.queue0.io_lines": 1000.0 + 500 * k})
        if per_socket_ddio:
            s.update({f"{sock}.ddio.{name}": v for name, v in ddio.items()})
    if not per_socket_ddio:
        s.update({f"system.ddio.{name}": 2 * v for name, v in ddio.items()})
    return s


CONFIG = {"caches": {"llc": {"size": 31457280, "line_size": 64}}, "nic": {"ddio": True, "ddio_ways": 0.1}}


@pytest.mark.parametrize("per_socket", [True, False])
def test_writes_are_split_by_whose_data_they_carry_per_request_over_every_socket(per_socket):
    f = xw.write_lines(_stats(per_socket), CONFIG)
    assert f["dram_writes"] == pytest.approx(0.9)
    assert (f["core_lines"], f["core_data_in_dma_lines"], f["dma_data"]) == pytest.approx((0.6, 0.2, 0.1))
    # The LLC's own dirty victims and the dirty private copies its evictions back-invalidated make up the dirty lines.
    assert f["llc_dirty_victims"] == pytest.approx(0.7) and f["inclusion_victims"] == pytest.approx(0.2)
    assert (f["leaky_evictions"], f["dma_write_hits"], f["dma_write_allocs"]) == pytest.approx((0.1, 4.0, 0.2))
    assert f["dma_lines_displaced"] == pytest.approx(0.3)
    assert f["sets_per_request"] == 0.2 and f["dram_writes_per_set"] == pytest.approx(4.5)


def test_channel_writes_no_source_counter_claims_are_reported_not_hidden():
    # The fixture's channels write exactly what the sources claim: nothing left over.
    assert xw.write_lines(_stats(), CONFIG)["unattributed"] == pytest.approx(0.0)
    # A write-back with no counter of its own (a private line past the LLC, a remote copy written home) shows up.
    s = _stats()
    s["system.socket1.mem.channel1.writes"] += 1.0
    f = xw.write_lines(s, CONFIG)
    assert f["dram_writes"] == pytest.approx(1.0) and f["unattributed"] == pytest.approx(0.1)


def test_the_io_footprint_is_a_queues_distinct_lines_against_one_sockets_ddio_ways():
    f = xw.write_lines(_stats(), CONFIG)
    assert f["io_lines_per_queue"] == 1250.0 and f["io_lines_per_socket"] == 1250.0
    assert f["ddio_lines_per_socket"] == 30 * 2**20 * 0.1 / 64          # 49,152 lines: 2 of 20 ways of 30 MiB
    # A dual server: its first socket's LLC (the top-level caches are an unused default), the listed NICs' share.
    dual = {"caches": {"llc": {"size": "45MiB"}}, "sockets": [CONFIG, CONFIG], "nic": {"ddio": False},
            "nics": [{"ddio": True, "ddio_ways": 0.1}]}
    assert xw.ddio_lines(dual) == f["ddio_lines_per_socket"]
    assert xw.ddio_lines({**CONFIG, "nic": {"ddio": False, "ddio_ways": 0.1}}) == 0.0
    assert xw.ddio_lines({"caches": {"llc": {"size": "30MiB"}}, "nic": {"ddio": True, "ddio_ways": 0.1}}) == \
        f["ddio_lines_per_socket"]
    assert math.isnan(xw.write_lines(_stats())["ddio_lines_per_socket"])           # no configuration: unknown


def test_the_published_lines_a_request_are_the_memory_write_over_the_throughput():
    assert xw.published_lines(4) == pytest.approx(0.23e9 / 23.33e6 / 64)
    assert xw.published_lines(1) is None


def test_a_missing_counter_a_run_without_requests_or_a_missing_folder_is_an_error(tmp_path):
    s = _stats()
    for k in (0, 1):
        del s[f"system.socket{k}.llc.writebacks"]
    with pytest.raises(KeyError, match="llc.writebacks"):
        xw.write_lines(s)
    with pytest.raises(ValueError, match="no request"):
        xw.write_lines({**_stats(), "client.requests": 0.0})
    with pytest.raises(SystemExit, match="no stats.json"):
        xw.report(tmp_path)
    with pytest.raises(ValueError, match="not a size"):
        xw._bytes("thirty")


def test_the_report_prints_each_source_the_footprint_and_the_published_comparison(tmp_path):
    s = _stats()
    for k in (0, 1):
        for c in range(2):
            s[f"system.socket{k}.core{c}.insts"] = 1.0          # 4 cores: the published 4-core point
    (tmp_path / "stats.json").write_text(json.dumps(s))
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    out = xw.report(tmp_path)
    assert "4 core(s)" in out and "DRAM: lines the memory channels wrote" in out and "0.9000" in out
    assert "DDIO ways hold 49,152 lines a socket (2.5%)" in out
    assert "published memory write" in out and f"{(0.9 - xw.published_lines(4)) / xw.published_lines(4) * 100:+.1f}%" in out
