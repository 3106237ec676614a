"""sim-scripts/xeon_read_lines.py: a saved Xeon run's DRAM reads per request by requester, from its statistics."""

from __future__ import annotations

import json

import pytest

from drivers.cli import xeon_read_lines as xr


def _stats() -> dict[str, float]:
    """Two sockets of one core each, 10 measured requests."""
    s = {"client.requests": 10.0, "client.items": 1000.0, "client.throughput_mrps": 1.0}
    for k in (0, 1):
        sock, core = f"system.socket{k}", f"system.socket{k}.core{k}"
        s.update({f"{sock}.mem.channel0.reads": 20.0, f"{sock}.mem.channel1.reads": 5.0,
                  f"{sock}.llc.read_misses": 24.0, f"{sock}.llc.sw_prefetch_misses": 18.0,
                  f"{sock}.llc.hw_prefetch_misses": 5.0, f"{sock}.llc.demand_misses": 1.0,
                  f"{sock}.llc.dma_misses": 0.0, f"{sock}.llc.sw_prefetch_accesses": 30.0,
                  f"{sock}.llc.hw_prefetch_accesses": 8.0,
                  # a slice's counter is not the socket's: not summed again
                  f"{sock}.llc.slice0.read_misses": 24.0,
                  f"{core}.l1d.sw_prefetch_accesses": 30.0, f"{core}.l1d.prefetcher.issued": 6.0,
                  f"{core}.l1d.prefetcher.useful": 1.0, f"{core}.l1d.prefetcher.useless": 5.0,
                  f"{core}.l2.hw_prefetch_misses": 3.0, f"{core}.l2.prefetcher.issued": 5.0,
                  f"{core}.l2.prefetcher.useful": 1.0, f"{core}.l2.prefetcher.useless": 4.0,
                  f"{core}.dtlb.2m.walks": 4.0, f"{core}.dtlb.4k.walks": 0.0, f"{core}.itlb.4k.walks": 1.0,
                  f"{core}.itlb.2m.walks": 0.0})
    s.update({"system.ddio.dma_read_forwards": 7.0, "system.ddio.dma_read_hits": 2.0, "system.ddio.dma_read_misses": 1.0})
    return s


def test_reads_are_counted_per_request_over_every_socket_and_core():
    f = xr.read_lines(_stats())
    assert f["dram_reads"] == 5.0 and f["llc_read_misses"] == 4.8
    assert (f["llc_swpf_misses"], f["llc_hwpf_misses"], f["llc_demand_misses"]) == (3.6, 1.0, 0.2)
    assert f["l1d_pf_issued"] == 1.2 and f["l1d_pf_l2_misses"] == 0.6 and f["l2_pf_issued"] == 1.0
    assert f["walks_2m"] == 0.8 and f["walks_4k"] == 0.2
    assert (f["dma_reads_forwarded"], f["dma_reads_llc_hits"], f["dma_reads_llc_misses"]) == (0.7, 0.2, 0.1)
    # MICA's design: the software prefetches' bucket and item lines, less the packet's two lines a request.
    assert f["mica_design"] == pytest.approx(6.0 - 2) and f["excess_over_design"] == pytest.approx(1.0)


def test_the_published_lines_a_request_are_the_memory_read_over_the_throughput():
    assert xr.published_lines(4) == pytest.approx(6.21e9 / 23.33e6 / 64)
    assert xr.published_lines(1) is None


def test_a_missing_counter_or_folder_is_an_error_not_a_zero(tmp_path):
    s = _stats()
    for k in (0, 1):
        del s[f"system.socket{k}.core{k}.l2.prefetcher.issued"]
    with pytest.raises(KeyError, match="l2.prefetcher.issued"):
        xr.read_lines(s)
    with pytest.raises(SystemExit, match="no stats.json"):
        xr.report(tmp_path)


def test_the_report_prints_each_requester_and_the_published_comparison(tmp_path, capsys):
    (tmp_path / "stats.json").write_text(json.dumps(_stats()))
    assert xr.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "2 core(s)" in out and "software prefetches (MICA's pipeline)" in out
    assert "published" not in out, "no published memory read at 2 cores"
