"""`make validate` (drivers/cli/validate_xeon.py) on a tiny run: the power rows come from the power model and add up,
the data set's fraction of the paper's 192 Mi items is said in every output, and --save keeps what priced it."""

from __future__ import annotations

import json

import pytest

from drivers.cli import validate_xeon as vx


def test_a_reduced_run_says_so_and_prices_its_power(engine, tmp_path, capsys):
    assert vx.main(["--cores", "1", "--items", "4096", "--requests-per-core", "300", "--no-target",
                    "--save", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "4,096 items = 1/4.915e+04 of the paper's 192 Mi Tiny set (REDUCED" in out
    assert "4,096 items (reduced data set)" in out, "each point says its data set too"
    assert "measured after a 4,096-request warm-up of the mix" in out, "and its steady-state warm-up"
    rows = {line[:43].strip(): line[43:].split() for line in out.splitlines() if line.startswith("   ")}
    cpu, nic, chips, dram, wall = (float(rows[dict(vx.METRICS)[k]][0]) for k in (
        "cpu_power_w", "nic_power_w", "nic_model_w", "rest_power_w", "wall_power_w"))
    assert cpu > 0 and nic > 0 and dram > 0
    # The wall is CPUs + the NIC cards as built + DRAM; the model's traffic-driven NIC chips are beside, not added.
    assert abs(wall - (cpu + nic + dram)) < 0.01 * wall
    assert 0 < chips < nic
    stats = json.loads((tmp_path / "1" / "stats.json").read_text())
    config = json.loads((tmp_path / "1" / "config.json").read_text())
    assert stats["client.throughput_mrps"] > 0 and config["mode"] == "detailed"
    # The compared miss rates are the demand ones (software prefetches left out), and the output says so.
    assert "Miss rates compared" in out and "l1d.demand_misses / l1d.demand_accesses" in out
    l1d = "system.socket0.core0.l1d."
    assert stats[l1d + "sw_prefetch_accesses"] == stats["system.socket0.core0.prefetches"] > 0
    assert stats[l1d + "demand_accesses"] + stats[l1d + "sw_prefetch_accesses"] == stats[l1d + "accesses"]
    assert stats[l1d + "demand_misses"] + stats[l1d + "sw_prefetch_misses"] == stats[l1d + "misses"]
    demand = stats[l1d + "demand_misses"] / stats[l1d + "demand_accesses"]
    assert float(rows[dict(vx.METRICS)["l1d_miss_rate"]][0]) == float(f"{demand:.3f}")
    # MICA's lossy index: the GETs of items a full bucket dropped miss, and the table says how many.
    assert float(rows[dict(vx.METRICS)["get_miss"]][0]) == float(f"{stats['client.misses'] / stats['client.gets']:.3f}")
    # perf's L1-dcache-load-misses / -loads on Ivy Bridge: every L1D fill (prefetchers' too) per retired load uop
    # (MEM_UOPS_RETIRED.ALL_LOADS: loads, software prefetches and atomics).
    core = "system.socket0.core0."
    retired = stats[core + "loads"] + stats[core + "prefetches"] + stats[core + "atomics"]
    fills = (stats[l1d + "misses"] + stats[l1d + "prefetcher.issued"]) / retired
    assert float(rows[dict(vx.METRICS)["l1d_fills_per_load"]][0]) == float(f"{fills:.3f}")
    # Ivy Bridge's retired-load events: loads (software prefetches among them) that missed the L1D per load, fill-
    # buffer hits (the L1D's MSHR merges) not misses.
    ivb_l1d = stats[l1d + "read_misses"] / retired
    assert stats[l1d + "reads"] > stats[l1d + "read_misses"] > 0
    assert float(rows[dict(vx.METRICS)["l1d_load_miss_ivb"]][0]) == float(f"{ivb_l1d:.3f}")
    # Ivy Bridge's L2_RQSTS: misses, in-flight hits and L2 prefetcher requests over lookups and prefetcher requests.
    l2 = "system.socket0.core0.l2."
    pf = stats[l2 + "prefetcher.issued"]
    rqsts = (stats[l2 + "misses"] + stats[l2 + "mshr_merges"] + pf) / (stats[l2 + "accesses"] + pf)
    assert float(rows[dict(vx.METRICS)["l2_rqsts_miss_rate"]][0]) == float(f"{rqsts:.3f}")
    assert "MEM_LOAD_UOPS_RETIRED.L1_MISS" in out and "L2_RQSTS" in out, "the output names the events it models"
    # The same figures again from what was saved, without a run.
    again = vx.power_figures(type("Run", (), {"stats": stats})(), type("Sys", (), {"to_dict": lambda self: config})())
    assert abs(again["wall_power_w"] - wall) < 0.01 * wall
    # --from prints the same table from the saved point, and says the data set and that it is a saved run.
    assert vx.main(["--from", str(tmp_path)]) == 0
    reprinted = capsys.readouterr().out
    assert "saved run; 4,096 items = 1/4.915e+04 of the paper's 192 Mi Tiny set (REDUCED" in reprinted
    rows_again = {line[:43].strip(): line[43:].split() for line in reprinted.splitlines() if line.startswith("   ")}
    assert rows_again == rows


def test_a_log_size_sensitivity_replaces_the_servers_log_and_a_bad_one_is_refused_before_any_run(tmp_path):
    import pytest

    system = vx.xeon_factory(1, 4096, 300, log_mib=4)(1.0)
    assert [a for a in system.workload.argv if a.startswith(("log_mib=", "log_kib="))] == ["log_mib=4"]
    default = vx.xeon_factory(1, 4096, 300)(1.0)
    assert "log_mib=4" not in default.workload.argv
    for bad in ("3", "0"):
        with pytest.raises(SystemExit, match=f"--log-mib {bad}: the server takes a power of two"):
            vx.main(["--cores", "1", "--log-mib", bad, "--no-target"])
    with pytest.raises(SystemExit, match="no <cores>/stats.json"):
        vx.main(["--from", str(tmp_path)])


def test_the_measured_power_is_compared_on_the_24_core_row_only():
    assert {k for k, v in vx.PUBLISHED.items() if "wall_power_w" in v} == {24}
    assert (vx.PUBLISHED[24]["wall_power_w"], vx.PUBLISHED[24]["cpu_power_w"]) == (399.2, 255.0)
    # validation.md's split: CPUs 255 + four NICs 62 + rest 82 = 399.2 W, each compared with what prices it
    p = vx.PUBLISHED[24]
    assert (p["nic_power_w"], p["rest_power_w"]) == (62.0, 82.0)
    assert p["cpu_power_w"] + p["nic_power_w"] + p["rest_power_w"] == pytest.approx(p["wall_power_w"], abs=0.5)  # rounded


def test_the_power_rows_say_what_they_hold():
    labels = dict(vx.METRICS)
    assert labels["nic_power_w"] == "NIC cards as built (W)"
    assert "DRAM, board, fans, disk, PSU" in labels["rest_power_w"] and "through the PSU" in labels["wall_power_w"]
    assert "power supply losses" in labels["psu_loss_w"]
    assert all(len(label) <= 40 for label in labels.values()), "the table's label column is 40 wide"
    assert "power/server.py" in vx.POWER_NOTE and "nic_parts" in vx.POWER_NOTE and "assumed" in vx.POWER_NOTE
    assert "registers" in vx.POWER_NOTE and "128 GB" in vx.POWER_NOTE     # the DRAM as priced (session 25)


def test_the_power_rows_price_the_nic_cards_beside_the_traffic_driven_chips(monkeypatch):
    """power_figures on a priced dual-socket run: the NIC row is the cards' parts (unmodelled.nic_cards_W) of every
    socket, the traffic-driven chips beside it, the rest the DRAM, the server's chassis and the supply's losses, and
    the wall every part through the supply (power/server.py; before session 25: CPUs + cards + DRAM only)."""
    import types

    import pandas as pd

    import power
    from power import report, server, unmodelled

    def socket(nic_W, dram_W):
        s = pd.DataFrame({"class": ["nic", "dram"], "runtime_power_W": [nic_W, dram_W]})
        platform = types.SimpleNamespace(part="xeon-e5-2697v2", name="xeon-e5-2697v2 socket1")
        return types.SimpleNamespace(structures=s, model=types.SimpleNamespace(platform=platform))

    sockets = [socket(2.0, 10.0), socket(3.0, 11.0)]
    monkeypatch.setattr(power, "price_run", lambda stats, config: types.SimpleNamespace(sockets=sockets))
    monkeypatch.setattr(report, "SystemResult", types.SimpleNamespace)
    monkeypatch.setattr(unmodelled, "parts", lambda res: [unmodelled.Part("cpu", 100.0, "", False)])
    f = vx.power_figures(types.SimpleNamespace(stats={}), types.SimpleNamespace(to_dict=dict))
    card = unmodelled.NIC_CARDS["xeon-e5-2697v2"]
    chips = card.controllers * unmodelled.NIC_CONTROLLER_TYPICAL_W[card.controller] + \
        unmodelled.PCIE_SWITCH_TYPICAL_W[card.pcie_switch]
    per_socket = card.per_socket * (chips / unmodelled.VR_EFFICIENCY + card.qsfp_cages * unmodelled.ASSUMED_QSFP_MODULE_W)
    assert f["nic_power_w"] == pytest.approx(2 * per_socket)
    assert f["nic_model_w"] == pytest.approx(5.0) and f["dram_power_w"] == pytest.approx(21.0)
    box = server.XEON_SERVER
    fed = 21.0 + box.dimms * box.dimm_register_W + box.pch_W + box.bmc_W     # the DIMMs' registers fed with the DRAM
    dc = 200.0 + 2 * per_socket + fed / box.board_vr_efficiency + box.fans * box.fan_rated_W * \
        box.fan_speed_share ** 3 + box.disks * box.disk_W
    curve = server.EIGHTY_PLUS_230V_REDUNDANT[box.psu]
    wall = dc / curve.efficiency(dc / (box.psus_sharing * box.psu_rated_W))
    assert f["wall_power_w"] == pytest.approx(wall, rel=1e-12) and f["psu_loss_w"] == pytest.approx(wall - dc)
    assert f["rest_power_w"] == pytest.approx(wall - 200.0 - 2 * per_socket, rel=1e-12)
    # a platform with no chassis declared (the target) has no rest or wall figure: n/a, not a partial sum
    for res in sockets:
        res.model.platform.part = res.model.platform.name = "brps-target"
    g = vx.power_figures(types.SimpleNamespace(stats={}), types.SimpleNamespace(to_dict=dict))
    assert all(g[k] != g[k] for k in ("rest_power_w", "psu_loss_w", "wall_power_w"))
    assert g["nic_model_w"] == pytest.approx(5.0)


def test_a_counter_no_core_reports_is_an_error_not_a_figure():
    """A figure whose counter no core reports stops the comparison naming it (it was nan before)."""
    import types

    import pytest

    stats = {"system.socket0.cores0.cycles": 1.0, "client.throughput_mrps": 1.0, "client.loss": 0.0,
             "client.gets": 1.0, "client.misses": 0.0}
    with pytest.raises(KeyError, match="no core of the run reports .ipc."):
        vx.figures(types.SimpleNamespace(stats=stats), harts=1)


def one_core_without_l2(**values: float) -> dict[str, float]:
    """The statistics figures() reads of a one-core run whose core has no L2 (`values` replace some)."""
    stats = {"client.throughput_mrps": 1.0, "client.loss": 0.0, "client.gets": 4.0, "client.misses": 1.0,
             "client.latency.p95": 2000.0, "system.socket0.mem.read_bw": 3e9, "system.socket0.mem.write_bw": 1e9,
             "system.socket0.ddio.core_read_hits": 3.0, "system.socket0.ddio.core_read_misses": 1.0,
             "client.insts_per_request_work": 900.0, "client.insts_per_request_idle": 40.0,
             "client.requests": 100.0, "client.puts": 5.0, "system.socket0.ddio.writebacks_dma_data": 1.0,
             "system.socket0.ddio.writebacks_core_data_in_dma_lines": 2.0,
             "system.socket0.ddio.writebacks_core_lines": 7.0}
    for name in ("ipc", "l1d.mpki", "l1d.miss_rate", "l1d.demand_miss_rate", "l1d.misses", "l1d.reads",
                 "l1d.read_misses", "l1d.demand_misses", "l1d.demand_accesses", "loads", "prefetches", "atomics"):
        stats[f"system.socket0.core0.{name}"] = 0.5
    return {**stats, **values}


def test_a_platform_without_private_l2s_gets_n_a_l2_rows_not_an_error():
    """The target socket has no private L2 (its L2 is the shared LLC): its L2 rows are n/a, while the Xeon's, whose
    cores have L2s, must read every L2 counter (the default `make validate` runs both)."""
    import math
    import types

    import pytest

    stats = one_core_without_l2()
    f = vx.figures(types.SimpleNamespace(stats=stats), harts=1)
    assert all(math.isnan(f[k]) for k in ("l2_mpki", "l2_miss_rate", "l2_rqsts_miss_rate", "l2_miss_rate_all"))
    assert f["l1d_load_miss_ivb"] == 0.5 / 1.5, "read misses per retired load (loads, prefetches, atomics)"
    assert f["l1d_walk_reads_per_load"] == 0.0, "a core without TLBs walks nothing"
    assert (f["get_miss"], f["p95_us"], f["mem_read_gbs"], f["ddio_core_hit"]) == (0.25, 2.0, 3.0, 0.75)
    for missing in ("client.latency.p95", "system.socket0.mem.write_bw", "system.socket0.ddio.core_read_misses"):
        partial = {k: v for k, v in stats.items() if k != missing}
        with pytest.raises(KeyError):       # read as a zero before: p95 0 us passed '< 100 us', memory 0 GB/s
            vx.figures(types.SimpleNamespace(stats=partial), harts=1)
    stats["system.socket0.core0.l2.mpki"] = 0.5     # an L2 that reports some counters but not the rest
    with pytest.raises(KeyError, match="l2"):
        vx.figures(types.SimpleNamespace(stats=stats), harts=1)


def test_the_servers_log_is_micas_rule_at_the_papers_data_set_scaled_to_the_run():
    """MICA's netbench server sizes a partition's log at 1.2 x its items' bytes (24-byte header, key, value),
    rounded up to a power of two: for the paper's 192 Mi Tiny items 4 GiB at 4 partitions (2.13 x the data) and
    512 MiB at 24 (1.6 x). A reduced run keeps those ratios with a window of the power-of-two log."""
    import pytest

    paper = vx.PAPER_ITEMS
    assert vx.mica_log_bytes(paper, 4, 8, 8) == 4 << 30
    assert vx.mica_log_bytes(paper, 12, 8, 8) == 1 << 30
    assert vx.mica_log_bytes(paper, 24, 8, 8) == 512 << 20
    assert vx.mica_log_args(paper, 24) == ["log_mib=512"]
    # 16 Mi items = 1/12: 512 MiB / 12 = 43,690.67 KiB kept of a 64 MiB log (1.6 x 26.67 MiB of data).
    assert vx.mica_log_args(16 << 20, 24) == ["log_mib=64", "log_window_kib=43690"]
    assert vx.mica_log_args(16 << 20, 4) == ["log_mib=512", "log_window_kib=349525"]
    # The rule at 1/16 of the paper's items is a power of two again: no window.
    assert vx.mica_log_args(paper // 16, 24) == ["log_mib=32"]
    # The Xeon runs take it by default (24 partitions on the dual-socket server); --log-mib replaces it.
    argv = vx.xeon_factory(24, 16 << 20, 10)(1.0).workload.argv
    assert [a for a in argv if a.startswith("log_")] == ["log_mib=64", "log_window_kib=43690"]
    argv = vx.xeon_factory(24, 16 << 20, 10, log_mib=16)(1.0).workload.argv
    assert [a for a in argv if a.startswith("log_")] == ["log_mib=16"]
    with pytest.raises(SystemExit, match="below the server's smallest log"):
        vx.mica_log_args(100, 24)


def test_the_measured_load_is_offered_as_the_published_network_rx_over_the_ports():
    """--offered measured: at 24 cores the measured server received 105.45 Gb/s on the wire over 12 ports; with
    104.4 wire bytes per request frame (GET 80 + 24, PUT 88 + 24, 95% GETs) that is 10.521 M frames/s per port."""
    import pytest

    system = vx.xeon_factory(24, 1 << 16, 10)(1.0)
    assert vx.mean_wire_frame(system) == pytest.approx(0.95 * 104 + 0.05 * 112)
    mpps, how = vx.measured_mpps(system, 24)
    assert mpps == pytest.approx(105.45e9 / 8 / 104.4 / 12 / 1e6) and "105.45 Gb/s received, over 12 port(s)" in how
    with pytest.raises(SystemExit, match="no network RX is published for 3 cores"):
        vx.measured_mpps(vx.xeon_factory(3, 1 << 16, 10)(1.0), 3)
    with pytest.raises(SystemExit, match="--offered measured and --search"):
        vx.main(["--cores", "24", "--offered", "measured", "--search", "--no-target"])


def test_the_servers_index_is_micas_rule_at_the_papers_data_set_scaled_to_the_run():
    """MICA's netbench server gives a partition 1.2 x its items over 15-item buckets, rounded up to a power of two:
    for the paper's 192 Mi Tiny items 2^20 buckets at 24 partitions and 2^21 at 12 (8 items a bucket), 2^22 at 4
    (12). A reduced run keeps those items per bucket with fewer buckets in use than the power of two allocated."""
    import pytest

    paper = vx.PAPER_ITEMS
    assert [vx.mica_index_buckets(paper, p) for p in (4, 12, 24)] == [1 << 22, 1 << 21, 1 << 20]
    assert vx.mica_index_args(paper, 24) == ["buckets=1048576"]
    # 16 Mi items = 1/12: 2^20 / 12 = 87,381.3 buckets in use of 131,072 (8.0 items a bucket, not the 0.67 of the
    # index that holds the data set without loss, nor the 10.7 of MICA's rule applied at 16 Mi).
    assert vx.mica_index_args(16 << 20, 24) == ["buckets=131072", "buckets_used=87381"]
    assert vx.mica_index_args(16 << 20, 12) == ["buckets=262144", "buckets_used=174762"]
    assert vx.mica_index_args(16 << 20, 4) == ["buckets=524288", "buckets_used=349525"]
    assert vx.mica_index_args(paper // 16, 24) == ["buckets=65536"]
    # The Xeon runs take it by default; --buckets replaces it (a power of two, all used); a bad one stops the run.
    argv = vx.xeon_factory(24, 16 << 20, 10)(1.0).workload.argv
    assert [a for a in argv if a.startswith("buckets")] == ["buckets=131072", "buckets_used=87381"]
    argv = vx.xeon_factory(4, 16 << 20, 10, buckets=1 << 20)(1.0).workload.argv
    assert [a for a in argv if a.startswith("buckets")] == ["buckets=1048576"]
    assert vx.log_note(argv).endswith("buckets=1048576")
    for bad in ("3", "0", str((1 << 32) * 2)):
        with pytest.raises(SystemExit, match=f"--buckets {bad}: the server takes a power of two"):
            vx.main(["--cores", "1", "--buckets", bad, "--no-target"])
    with pytest.raises(SystemExit, match="no whole bucket"):
        vx.mica_index_args(8, 24)


def test_the_memory_writes_are_given_per_request_per_set_and_by_whose_lines_they_are():
    """Bytes written per request (the write bandwidth over the throughput), lines per SET (MICA's SET is the request
    that writes the store) and the share of the LLC's write-backs whose line a DMA wrote; the published row's bytes
    per request is its write bandwidth over its throughput (4 cores: 0.23 GB/s / 23.33 M = 9.86 B)."""
    import types

    import pytest

    stats = one_core_without_l2(**{
        "client.throughput_mrps": 20.0, "system.socket0.mem.write_bw": 0.128e9,
        "client.insts_per_request_work": 960.0, "client.insts_per_request_idle": 250.0,
        "system.socket0.ddio.writebacks_core_data_in_dma_lines": 3.0, "system.socket0.ddio.writebacks_core_lines": 12.0})
    f = vx.figures(types.SimpleNamespace(stats=stats), harts=1)
    assert f["mem_write_per_req"] == pytest.approx(6.4)            # 0.128 GB/s over 20 M requests/s
    assert f["mem_write_lines_per_set"] == pytest.approx(2.0)      # 0.1 lines a request, 1 request in 20 a SET
    assert f["mem_write_io_share"] == pytest.approx(0.25)          # (1 + 3) of 16 write-backs
    assert (f["work_insts_per_req"], f["idle_insts_per_req"]) == (960.0, 250.0)
    assert vx.PUBLISHED[4]["mem_write_per_req"] == pytest.approx(0.23e9 / 23.33e6)
    assert vx.PUBLISHED[24]["mem_write_per_req"] == vx.PUBLISHED[12]["mem_write_per_req"]
    for missing in ("system.socket0.ddio.writebacks_core_lines", "client.puts", "client.insts_per_request_idle"):
        partial = {k: v for k, v in stats.items() if k != missing}
        with pytest.raises(KeyError):                               # a missing counter is an error, not a zero
            vx.figures(types.SimpleNamespace(stats=partial), harts=1)


def test_the_output_says_no_miss_rate_definition_is_established_as_the_measurements():
    assert "NOT established" in vx.MISS_RATES_NOTE and "no row is marked as the measurement's" in vx.MISS_RATES_NOTE


def test_the_two_core_batch_is_compared_as_the_publication_gives_it_six_times_the_three_core_one():
    """"RX batch falls to 5.29 packets per call (6x smaller than with 2 cores)": the 2-core row's batch is 6 x 5.29."""
    import pytest

    assert vx.PUBLISHED[2]["rx_batch"] == pytest.approx(6 * vx.PUBLISHED[3]["rx_batch"])
    assert vx.PUBLISHED[3]["rx_batch"] == 5.29


def test_clock_sets_the_chips_whole_clock_domain_on_every_socket_and_a_bad_one_is_refused_before_any_run():
    """--clock (a sensitivity): the cores, the ring and LLC, and their network at the given clock, each socket's on the
    dual server (a top-level path there is shadowed by the sockets' own and would change nothing)."""
    import pytest

    from models.params import ParamError

    assert vx.clock_overrides(4, None) == ()
    assert vx.clock_overrides(4, "2.5GHz") == ("clock=2.5GHz", "core.clock=2.5GHz", "caches.uncore_clock=2.5GHz",
                                               "noc.clock=2.5GHz")
    def value_at(d: dict, path: str):
        for part in path.split("."):
            name, _, index = part.partition("[")
            d = d[name] if not index else d[name][int(index[:-1])]
        return d

    for cores, sockets in ((1, [""]), (24, ["sockets[0].", "sockets[1]."])):
        d = vx.point_system(cores, 1 << 12, 10, 1.0, overrides=vx.clock_overrides(cores, "2.5GHz")).to_dict()
        paths = ["clock"] + [s + p for s in sockets for p in ("core.clock", "caches.uncore_clock", "noc.clock")]
        assert {value_at(d, p) for p in paths} == {2_500_000_000}, cores
        untouched = vx.point_system(cores, 1 << 12, 10, 1.0).to_dict()
        assert {value_at(untouched, p) for p in paths} == {2_700_000_000}, "the part's own clock without --clock"
    with pytest.raises((ParamError, SystemExit), match="clock"):
        vx.main(["--cores", "1", "--items", "4096", "--no-target", "--clock", "fast"])


def test_two_sockets_runs_a_point_as_the_measured_4_core_one_and_refuses_an_odd_count():
    """--two-sockets (a layout sensitivity): the 4-core point on the dual-socket server, two cores and one port on
    each socket as measured, the server's partitions and MICA sizing unchanged; an odd count is refused before any
    run."""
    two = vx.point_system(4, 4096, 300, 1.0, two_sockets=True)
    one = vx.point_system(4, 4096, 300, 1.0)
    d, o = two.to_dict(), one.to_dict()
    assert d["harts"] == o["harts"] == 4
    assert [s["cores"] for s in d["sockets"]] == [2, 2] and o["sockets"] == []
    assert [(n["socket"], n["ports"]) for n in d["nics"]] == [(0, 1), (1, 1)]
    assert [(n["socket"], n["ports"]) for n in o["nics"]] == [(0, 1), (0, 1)]
    assert two.workload.argv == one.workload.argv
    assert vx.clock_overrides(4, "2.5GHz", two_sockets=True)[1].startswith("sockets[0].")
    with pytest.raises(SystemExit, match="--two-sockets --cores 3: half the cores on each socket takes an even"):
        vx.main(["--cores", "3", "--two-sockets", "--no-target"])


def _isa_file(path, x86=700.0, rv=800.0, ratio=None):
    rec = {"x86_64": {"per_request": x86}, "rv64": {"per_request": rv},
           "x86_over_rv64": x86 / rv if ratio is None else ratio, "tree_commit": "f" * 40}
    path.write_text(json.dumps(rec))
    return path


def test_the_x86_rows_scale_the_simulated_work_by_the_ratio_read_from_its_file(tmp_path, capsys):
    isa = vx.isa_ratio(_isa_file(tmp_path / "isa.json"))
    assert isa["ratio"] == 0.875
    vx.print_xeon_point(1, {"ipc": 2.0, "work_insts_per_req": 900.0, "idle_insts_per_req": 100.0}, "n", 1, isa)
    out = capsys.readouterr().out
    rows = {line[:43].strip(): line[43:].split() for line in out.splitlines() if line.startswith("   ")}
    labels = dict(vx.METRICS)
    assert rows[labels["x86_insts_per_req"]] == ["875.0", "-"]
    # Beside the published IPC, with its error; the simulated (RV64) IPC row is left as it was.
    assert rows[labels["ipc_x86"]] == ["1.750", "1.910", "-8.4%"]
    assert rows[labels["ipc"]] == ["2.000", "1.910", "+4.7%"]
    assert "NOT a model change" in vx.isa_note(isa) and "0.875" in vx.isa_note(isa)


def test_the_committed_ratio_is_the_measured_one_with_its_provenance():
    isa = vx.isa_ratio()
    rec = json.loads(vx.ISA_RATIO_FILE.read_text())
    assert isa["ratio"] == rec["x86_64"]["per_request"] / rec["rv64"]["per_request"]
    assert 0.5 < isa["ratio"] < 1.5
    # Counted, not typed in: two packet counts differenced, per request.
    for isa_leg in ("x86_64", "rv64"):
        lo, hi = rec[isa_leg]["instructions"]
        assert rec[isa_leg]["per_request"] == (hi - lo) / (rec["packets"][1] - rec["packets"][0])
    assert len(rec["tree_commit"]) == 40 and rec["command"].startswith("sim-scripts/isa_work_per_request.py")


def test_a_missing_or_inconsistent_ratio_file_is_refused_with_its_reason(tmp_path):
    with pytest.raises(SystemExit, match="isa_work_per_request.py --write"):
        vx.isa_ratio(tmp_path / "none.json")
    with pytest.raises(SystemExit, match="is not x86_64.per_request / rv64.per_request"):
        vx.isa_ratio(_isa_file(tmp_path / "bad.json", ratio=0.9))
    (tmp_path / "partial.json").write_text(json.dumps({"x86_64": {"per_request": 1.0}}))
    with pytest.raises(SystemExit, match="no 'rv64' in it"):
        vx.isa_ratio(tmp_path / "partial.json")
