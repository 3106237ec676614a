"""The end-to-end studies (drivers/studies/partition_load.py, end_to_end.py, scaling.py, servers.py): the expected
per-core load is computed from the same definitions as the client, the simulated load agrees with it and does not
depend on timing, the capacity evaluator keeps to its probe budget, and each study draws its figure from a table."""

import pathlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from analysis.sweeps import load_sweep
from drivers import capacity, studies
from drivers import sweep as sw
from drivers.studies import end_to_end, partition_load, scaling, servers
from drivers.synthetic import QueueServer
from models.sim import simulate

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_keyhash_port_matches_the_servers_vectors():
    """The vectorised XXH64 gives the KVS keyhash for every vector shorter than 32 bytes."""
    checked = 0
    for line in (ROOT / "workloads" / "kvs" / "keyhash_vectors.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        key_hex, want = line.split()
        key = b"" if key_hex == "-" else bytes.fromhex(key_hex)
        if len(key) >= 32:
            continue
        got = partition_load.xxh64_rows(np.frombuffer(key, dtype=np.uint8).reshape(1, len(key)))[0]
        assert int(got) == int(want, 16), key_hex
        checked += 1
    assert checked >= 40


def test_the_expected_share_is_a_distribution_and_crew_spreads_the_gets():
    erew = partition_load.expected_core_share(4096, 16, "erew")
    crew = partition_load.expected_core_share(4096, 16, "crew", get_ratio=0.95)
    assert erew.sum() == pytest.approx(1.0) and crew.sum() == pytest.approx(1.0)
    assert crew == pytest.approx(0.05 * erew + 0.95 / 16)
    # The hottest partition holds item 0 (rank 1), whose own share is 1 / H(4096, 0.99).
    h = (np.arange(1, 4097) ** -0.99).sum()
    hot = int(partition_load.keyhash_of_items(np.array([0], dtype=np.uint64))[0] >> np.uint64(48)) % 16
    assert erew.argmax() == hot and erew[hot] > 1 / h
    # Chunking does not change the sum.
    assert partition_load.expected_partition_share(5000, 7, chunk=999) == \
        pytest.approx(partition_load.expected_partition_share(5000, 7))
    with pytest.raises(ValueError, match="mode"):
        partition_load.expected_core_share(64, 4, "mrew")


def _zipf_run(cores: int, mode: str, detailed: bool = False, requests_per_core: int = 600):
    system = partition_load.system(cores, items=4096, requests_per_core=requests_per_core)
    system.client.mode = mode
    system.workload.argv = [a for a in system.workload.argv if not a.startswith("mode=")] + [f"mode={mode}"]
    if detailed:
        system.mode, system.detailed_start = "detailed", "roi"
        system.client.offered_mpps = 2.0        # open loop, well below the share's capacity
    return simulate(system).stats


def test_the_simulated_per_core_load_follows_the_zipf_weights_of_each_partition():
    """EREW on 16 cores, 9,600 Zipf requests over 4,096 items: each core's count fits the expected share (chi-square),
    the hottest core is the one holding the hottest keys, and per-core counts equal per-partition counts."""
    stats = _zipf_run(16, "erew")
    counts = partition_load.per_core_counts(stats)
    parts = np.array([stats[f"client.partition{p}.requests"] for p in range(16)])
    assert (counts == parts).all() and counts.sum() == 16 * 600
    expected = partition_load.expected_core_share(4096, 16, "erew") * counts.sum()
    assert scipy_stats.chisquare(counts, expected).pvalue > 1e-3
    assert counts.argmax() == expected.argmax() and counts.max() / counts.mean() > 2.0
    # CREW: the GETs spread round-robin, so no core is far from the mean.
    crew = partition_load.per_core_counts(_zipf_run(16, "crew"))
    assert crew.max() / crew.mean() < 1.5 < counts.max() / counts.mean()


def test_the_per_core_load_does_not_depend_on_timing():
    """Functional (closed loop) and detailed (open loop) runs with the same seed send the same requests to the
    same cores: the study may measure the load functionally."""
    functional = partition_load.per_core_counts(_zipf_run(4, "erew", requests_per_core=150))
    detailed = partition_load.per_core_counts(_zipf_run(4, "erew", detailed=True, requests_per_core=150))
    assert (functional == detailed).all()


def test_the_platforms_beyond_one_socket_run_functionally():
    s = partition_load.system(240)
    s.validate()
    assert s.harts == 240 and s.mode == "functional" and len(s.active_nics()) == 12
    assert s.client.requests == 240 * partition_load.REQUESTS_PER_CORE and s.client.popularity == "zipf"
    assert [len(x.resolve()) for x in partition_load.sweeps()] == [2, 2, 2]


def _table(rows):
    return pd.DataFrame(rows)


def test_partition_load_draws_its_cdf_csv_and_report(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    tables = {}
    for cores in (24, 120):
        rows = []
        for mode in ("erew", "crew"):
            share = partition_load.expected_core_share(4096, cores, mode)
            counts = rng.multinomial(cores * 500, share)
            row = {"status": "ok", "param.client.mode": mode, "cfg.client.items": 4096, "cfg.client.get_ratio": 0.95,
                   "host_seconds": 1.0}
            row.update({f"stat.client.core{c}.requests": float(n) for c, n in enumerate(counts)})
            rows.append(row)
        tables[f"partition-load-{cores}c"] = _table(rows)
    df = partition_load.frame(tables)
    assert len(df) == 2 * (24 + 120)
    assert df.groupby(["cores", "mode"]).load.mean().to_numpy() == pytest.approx(1.0)
    summary = partition_load.summary(df, paper_items=None)
    assert (summary[summary["mode"] == "erew"].sim_max.to_numpy() >
            summary[summary["mode"] == "crew"].sim_max.to_numpy()).all()
    monkeypatch.setattr(partition_load, "PAPER_ITEMS", 1 << 14)      # the paper's 192 Mi items take a minute
    paths = partition_load.make(tables, tmp_path, False)
    assert {p.suffix for p in paths} == {".csv", ".png", ".md"} and all(p.stat().st_size > 100 for p in paths)
    written = pd.read_csv(tmp_path / "partition_load_summary.csv")
    assert "expected_max_16Ki_items" in written.columns and (written.expected_max_16Ki_items > 0).all()


def test_the_evaluator_keeps_to_its_probe_budget(monkeypatch):
    """A server with a known capacity: within the budget the search converges as drivers.capacity's does; with too
    few probes the answer is the best sustained probe and the point says the budget was hit."""
    server = QueueServer(capacity_mpps=7.0)

    def fake(make, **_):
        return lambda rate: capacity.outcome_from_stats(
            {"client.offered_mpps": rate, "client.packets": 1.0, "client.requests": 1.0,
             "client.throughput_mrps": server(rate).answered_mpps, "client.loss": 0.0}, rate)

    monkeypatch.setattr(capacity, "simulated_server", fake)

    def make():
        return servers.server(1, cores=2, requests_per_core=10)

    out = end_to_end.evaluate(make, {"resolution": 0.02, "max_probes": 20}, lambda _: None)
    s = out["stats"]
    assert s["capacity.budget_hit"] == 0.0 and 7.0 / 1.02 <= s["capacity.mpps_per_port"] <= 7.0 / 0.99
    assert s["capacity.probes"] == len(out["probes"]) <= 20
    # From a guess below the capacity (3 M frames/s): the first probe sustains and the next one saturates at line
    # rate, which predicts the threshold (stepping up 4 resolutions a probe from the guess took 15 probes).
    low = end_to_end.evaluate(make, {"resolution": 0.02, "max_probes": 30, "start_from": 3.0 / 1.05}, lambda _: None)
    assert low["probes"][0]["offered_mpps"] == pytest.approx(3.0) and low["probes"][0]["sustained"]
    assert low["probes"][1]["offered_mpps"] == pytest.approx(capacity.line_rate_mpps(make()))
    assert 7.0 / 1.02 <= low["stats"]["capacity.mpps_per_port"] <= 7.0 / 0.99 and len(low["probes"]) <= 4
    # (drivers.capacity finds this server in three probes: saturate, just below the predicted threshold, above it)
    few = end_to_end.evaluate(make, {"resolution": 0.001, "max_probes": 2}, lambda _: None)
    assert few["stats"]["capacity.budget_hit"] == 1.0 and len(few["probes"]) == 2
    assert few["stats"]["capacity.mpps_per_port"] == max(p["offered_mpps"] for p in few["probes"] if p["sustained"])


def test_the_server_sets_the_workload_and_refuses_bad_input():
    s = servers.server(1, cores=4, popularity="zipf", get_ratio=0.5, mode="crew")
    s.validate()
    assert (s.client.popularity, s.client.get_ratio, s.client.mode) == ("zipf", 0.5, "crew")
    assert "mode=crew" in s.workload.argv and "mode=erew" not in s.workload.argv
    with pytest.raises(ValueError, match="sockets = 3"):
        servers.server(3)
    with pytest.raises(ValueError, match="mode"):
        servers.server(1, cores=4, mode="mrew")
    with pytest.raises(ValueError, match="share of one socket"):
        servers.server(2, cores=4)


def test_every_end_to_end_study_is_registered():
    for name in studies.END_TO_END:
        study = studies.get(name)
        assert callable(study.sweeps) and callable(study.make)
    with pytest.raises(ValueError, match="must be one of"):
        studies.get("nosuch")


def _client(offered_mrps, loss=0.0, ports=3):
    """A probe's client stats that sustained `offered_mrps` requests/s with `loss` (one request per frame)."""
    out = {"stat.client.offered_mpps": offered_mrps, "stat.client.requests": 1000.0, "stat.client.packets": 1000.0,
           "stat.client.throughput_mrps": offered_mrps * (1 - loss), "stat.client.measured_ns": 1e6,
           "stat.client.latency.mean": 0.0, "stat.client.loss": loss}
    out.update({f"stat.system.nic{p}.port0.rx_wire_gbps": 1.0 for p in range(ports)})
    return out


def test_the_sustained_rate_is_the_offered_rate_less_the_loss():
    """A short window's answered rate is biased low by one round trip; the sustained rate is not (figures of the
    one-socket reduced search: 141.2 M answered over 127.5 us with a 37.9 us mean round trip, 199.8 M offered)."""
    short = {"client.offered_mpps": 199.84, "client.requests": 18000.0, "client.packets": 18000.0,
             "client.throughput_mrps": 141.17, "client.measured_ns": 127502.9, "client.latency.mean": 37924.5,
             "client.loss": 0.0, **{f"system.nic{k}.port0.rx_wire_gbps": 1.0 for k in range(3)}}
    assert end_to_end.sustained_mrps(short) == pytest.approx(199.84)
    lossy = dict(short, **{"client.loss": 0.008})
    assert end_to_end.sustained_mrps(lossy) == pytest.approx(199.84 * 0.992)
    assert np.isnan(end_to_end.sustained_mrps({}))


def test_a_search_under_skew_starts_below_the_uniform_capacity_by_the_hottest_cores_load():
    uniform = servers.server(1, cores=16, items=4096)
    assert end_to_end.start_mpps(uniform, 60.0) == pytest.approx(63.0)
    erew = servers.server(1, cores=16, items=4096, popularity="zipf", mode="erew")
    crew = servers.server(1, cores=16, items=4096, popularity="zipf", mode="crew")
    hot = partition_load.expected_core_share(4096, 16, "erew").max() * 16
    assert end_to_end.start_mpps(erew, 60.0) == pytest.approx(63.0 / hot)
    assert end_to_end.start_mpps(erew, 60.0) < end_to_end.start_mpps(crew, 60.0) < 63.0


def test_a_skewed_point_measures_fewer_requests_so_the_hottest_core_gets_a_uniform_cores_share():
    def make(popularity):
        return lambda: servers.server(1, cores=16, items=4096, requests_per_core=300, popularity=popularity)

    assert end_to_end.windowed(make("uniform"))().client.requests == 16 * 300
    hot = end_to_end.hottest_load(make("zipf")())
    assert hot > 2 and end_to_end.windowed(make("zipf"))().client.requests == round(16 * 300 / hot)


def _e2e_rows(sockets, scale=1.0, dvfs=False):
    rows = []
    for pop in ("uniform", "zipf"):
        for g in (0.95, 0.5):
            for mode in ("erew", "crew"):
                hot = pop == "zipf" and mode == "erew"
                rows.append({"status": "ok", "cfg.harts": 60 * sockets, "param.client.popularity": pop,
                             "param.client.get_ratio": g, "param.client.mode": mode, "host_seconds": 1.0,
                             **_client(200.0 * sockets * scale * (0.3 if hot else 1.0)),
                             "stat.client.latency.p95": 40e3 if not hot else 120e3,
                             "stat.capacity.mpps_per_port": 60.0, "stat.capacity.probes": 6.0})
    return pd.DataFrame(rows)


def test_the_end_to_end_figure_groups_workloads_and_modes(tmp_path):
    tables = {"e2e-2s": _e2e_rows(2), "e2e-4s": _e2e_rows(4), "e2e-4s-T": _e2e_rows(4, 1.5, dvfs=True)}
    df = end_to_end.frame(tables)
    assert len(df) == 24 and set(df["mode"]) == {"EREW", "CREW", "EREW-T", "CREW-T"}
    quad = df[(df.sockets == 4) & (df.workload == "Uniform") & (df.get_ratio == 0.95) & (df["mode"] == "EREW")]
    assert quad.throughput_mrps.iloc[0] == 800.0 and quad.p95_us.iloc[0] == 40.0
    assert (~df[df.p95_us > 100].p95_under_100us).all()
    paths = end_to_end.make(tables, tmp_path, False)
    assert {p.suffix for p in paths} == {".csv", ".png", ".md"}
    report = (tmp_path / "end_to_end.md").read_text()
    assert "p95 at or above 100 us" in report and "reduced" in report


def test_the_end_to_end_report_marks_windows_that_lost_or_did_not_converge(tmp_path):
    # The steady window's own loss and stopping rule are in the table and named in the notes: a window that lost
    # more than the search's bound, or ran out of windows, must not read as a capacity at < 1% loss.
    t = _e2e_rows(2)
    window = {"stat.steady.loss": 0.0002, "stat.steady.sustained": 1.0, "stat.steady.converged": 1.0}
    t = pd.DataFrame([{**row, **window} for row in t.to_dict("records")])
    zipf = (t["param.client.popularity"] == "zipf") & (t["param.client.get_ratio"] == 0.5) & \
        (t["param.client.mode"] == "erew")
    t.loc[zipf, ["stat.steady.loss", "stat.steady.sustained"]] = [0.0607, 0.0]
    uniform = (t["param.client.popularity"] == "uniform") & (t["param.client.get_ratio"] == 0.5) & \
        (t["param.client.mode"] == "erew")
    t.loc[uniform, "stat.steady.converged"] = 0.0
    df = end_to_end.frame({"e2e-2s": t})
    assert sorted(df.window_sustained) == [0.0] + [1.0] * 7 and sorted(df.window_converged) == [0.0] + [1.0] * 7
    assert df[df.window_sustained == 0].window_loss.iloc[0] == pytest.approx(0.0607)
    end_to_end.make({"e2e-2s": t}, tmp_path, False)
    report = (tmp_path / "end_to_end.md").read_text()
    assert "2s Skewed (Zipf 0.99) 50% EREW window loss 6.07%" in report
    assert "did not meet its stopping rule in the windows allowed (the last is reported; " \
        "drivers/steady_state.py): 2s Uniform 50% EREW" in report
    # Without windows (the older reduced studies) nothing is marked.
    (tmp_path / "plain").mkdir()
    end_to_end.make({"e2e-2s": _e2e_rows(2)}, tmp_path / "plain", False)
    plain = (tmp_path / "plain" / "end_to_end.md").read_text()
    assert "window loss" not in plain and "stopping rule in the windows" not in plain


def test_scaling_reads_efficiency_and_the_limits_from_the_stats(tmp_path):
    def row(sockets, mrps):
        return {"status": "ok", "cfg.harts": 60 * sockets, "host_seconds": 1.0, **_client(mrps, ports=3 * sockets),
                "param.client.popularity": "uniform", "param.client.get_ratio": 0.95, "param.client.mode": "erew",
                "stat.client.measured_ns": 100e3, "stat.system.nic0.pcie.up_busy_ps": 50e6,
                "stat.system.nic1.pcie.up_busy_ps": 80e6, "stat.system.socket0.mem.reads": 100.0,
                "stat.system.socket1.mem.reads": 100.0, "stat.system.socket1.mem.remote_reads": 50.0}
    tables = {f"e2e-{s}s": pd.DataFrame([row(s, m)]) for s, m in ((1, 200.0), (2, 380.0), (4, 700.0))}
    # The end-to-end study's other points in the same store are left out.
    tables["e2e-4s"] = pd.concat([tables["e2e-4s"], pd.DataFrame([{**row(4, 300.0), "param.client.mode": "crew"}])])
    df = scaling.frame(tables)
    assert list(df.sockets) == [1, 2, 4]
    assert list(df.efficiency) == pytest.approx([1.0, 0.95, 0.875])
    assert df.pcie_up_busy_max.iloc[0] == pytest.approx(0.8) and df.remote_access_fraction.iloc[0] == 0.25
    paths = scaling.make(tables, tmp_path, False)
    assert {p.suffix for p in paths} == {".csv", ".png", ".md"}


@pytest.mark.slow
def test_a_reduced_end_to_end_point_on_a_share_of_a_socket(tmp_path):
    """A real sweep point through the runner: 4 cores, uniform and skewed EREW at a short window. The capacity is
    positive and below line rate, the loss under 1%, and the skewed point's hottest core shows in its stats."""
    scale = end_to_end.Scale("tiny", requests_per_core=200, items=1 << 12, resolution=0.1, max_probes=6)
    sweep = end_to_end.server_sweeps(1, scale, cores=4, name="e2e-share")[0]
    sweep = sw.Sweep(sweep.name, sweep.base, sw.List([
        {"client.popularity": "uniform", "client.get_ratio": 0.95, "client.mode": "erew"},
        {"client.popularity": "zipf", "client.get_ratio": 0.95, "client.mode": "erew"}]),
        ties=sweep.ties, evaluator=sweep.evaluator, options=sweep.options)
    report = sw.run(sweep, store=tmp_path / "e2e", jobs=1, progress=False)
    assert report.failed == 0
    table = load_sweep(report.store)
    df = end_to_end.frame({"e2e-share": table})
    assert (df.throughput_mrps > 0).all() and (df.loss < 0.01).all() and (df.p95_us > 0).all()
    for _, row in table.iterrows():
        assert 0 < row["stat.capacity.mpps_per_port"] < capacity.line_rate_mpps(servers.server(1, cores=4))
    zipf = table[table["param.client.popularity"] == "zipf"].iloc[0]
    counts = partition_load.per_core_counts(zipf)
    assert counts.max() / counts.mean() > 1.2


def _script(name):
    import importlib

    return importlib.import_module(f"drivers.cli.{name.replace('-', '_')}")


def test_the_xeon_validation_sums_and_averages_over_both_sockets():
    """The 24-core row reads both sockets: bandwidths summed, per-core and per-socket figures averaged, whether core
    numbers restart on each socket or run on."""
    from types import SimpleNamespace

    xeon = _script("validate_xeon")
    stats = {"client.throughput_mrps": 120.0, "client.loss": 0.0, "system.socket0.mem.read_bw": 10e9, "system.socket1.mem.read_bw": 20e9,
             "system.socket0.mem.write_bw": 1e9, "system.socket1.mem.write_bw": 2e9,
             "system.socket0.llc.mpki": 1.0, "system.socket1.llc.mpki": 3.0,
             "system.socket0.core0.ipc": 2.0, "system.socket0.core1.ipc": 2.0, "system.socket1.core2.ipc": 1.0,
             "system.socket1.core3.ipc": 1.0, "system.nic0.port0.rx_wire_gbps": 50.0,
             "system.nic3.port2.rx_wire_gbps": 55.0, "system.socket1.ddio.core_read_hits": 3.0,
             "system.socket0.ddio.core_read_misses": 1.0}
    # the per-core counters every run reports, which the figures read (a missing one is an error), on each of the
    # four cores (the miss rates read every core the run has)
    for core, name in ((core, name) for core in ("socket0.core0", "socket0.core1", "socket1.core2", "socket1.core3")
                       for name in ("l1d.mpki", "l2.mpki", "l1d.miss_rate", "l2.miss_rate", "llc.miss_rate", "llc.mpki",
                 "l1d.demand_miss_rate", "l2.demand_miss_rate", "l1d.misses", "loads", "l1d.reads", "l1d.read_misses",
                 "l2.accesses", "l2.misses", "l2.mshr_merges", "l2.demand_accesses", "l2.demand_misses",
                 "l2.hw_prefetch_accesses", "l2.hw_prefetch_misses", "l2.sw_prefetch_accesses", "l2.sw_prefetch_misses",
                 "l1d.mshr_merges", "l1d.demand_accesses", "l1d.demand_misses", "prefetches", "atomics")):
        stats[f"system.{core}.{name}"] = 0.5
    stats.update({"client.requests": 10.0, "client.gets": 4.0, "client.misses": 1.0, "client.latency.p95": 5e4,
                  "client.puts": 2.0, "client.insts_per_request_work": 900.0, "client.insts_per_request_idle": 100.0})
    # Where the write-backs came from, per socket: DMA-written lines (1 + 1 on socket 0) and core-only lines (2 + 4).
    for k, (dma, core_in_dma, core) in enumerate(((1.0, 1.0, 2.0), (0.0, 0.0, 4.0))):
        stats.update({f"system.socket{k}.ddio.writebacks_dma_data": dma,
                      f"system.socket{k}.ddio.writebacks_core_data_in_dma_lines": core_in_dma,
                      f"system.socket{k}.ddio.writebacks_core_lines": core})
    assert xeon.sockets_in(stats) == 2 and xeon.sockets_in({}) == 1
    f = xeon.figures(SimpleNamespace(stats=stats), 4)
    assert f["mem_read_gbs"] == 30.0 and f["mem_write_gbs"] == 3.0 and f["llc_mpki"] == 2.0
    assert f["ipc"] == 1.5 and f["net_rx_gbps"] == 105.0 and f["ddio_core_hit"] == 0.75
    assert f["get_miss"] == 0.25 and f["p95_us"] == 50.0
    # Memory writes per request over both sockets (3 GB/s at 120 M req/s: 25 B), per SET (2 SETs in 10 requests), and
    # the DMA-written share of both sockets' write-backs (2 of 8).
    assert f["mem_write_per_req"] == pytest.approx(25.0)
    assert f["mem_write_lines_per_set"] == pytest.approx(25.0 / 64 / 0.2)
    assert f["mem_write_io_share"] == 0.25
    assert f["work_insts_per_req"] == 900.0 and f["idle_insts_per_req"] == 100.0
    # The memory read a request in lines, both sockets (30 GB/s at 120 M req/s), beside the derived published one.
    assert f["mem_read_lines_per_req"] == pytest.approx(30e9 / 120e6 / 64)
    assert xeon.PUBLISHED[24]["mem_read_lines_per_req"] == pytest.approx(34.97e9 / 120.5e6 / 64)
    # In x86 terms: every instruction a request (900 + 100) and the IPC, scaled by the measured ratio.
    x86 = xeon.x86_figures(f, {"ratio": 0.5})
    assert x86 == {"x86_insts_per_req": 500.0, "ipc_x86": 0.75}
    # What the L2 sees per measured request, summed over the cores: 0.5 of each on four cores over 10 requests.
    assert f["l2_demand_per_req"] == f["l2_swpf_per_req"] == f["l1d_merges_per_req"] == 0.2
    assert f["l2_miss_rate_l1pf"] == 1.0
    assert xeon.PUBLISHED[24]["throughput_mrps"] == 120.5 and 24 in xeon.P95_ROWS
    with pytest.raises(SystemExit, match="even count"):
        xeon.xeon_factory(25, 1 << 10, 10)


def test_the_server_benchmark_finds_the_capacity_of_the_same_data_set(tmp_path, monkeypatch):
    import json

    bench = _script("bench_server")
    monkeypatch.setattr(bench, "ROOT", tmp_path)

    def store(name, items, mpps, popularity="uniform"):
        points = tmp_path / "results" / "sweeps" / name / "points"
        points.mkdir(parents=True, exist_ok=True)
        rec = {"status": "ok", "params": {"client.popularity": popularity, "client.get_ratio": 0.95,
                                          "client.mode": "erew"}, "config": {"client": {"items": items}},
               "stats": {"capacity.mpps_per_port": mpps}}
        (points / f"{name}-{items}-{popularity}.json").write_text(json.dumps(rec))

    assert bench.stored_capacity(4, 1 << 16) is None
    store("e2e-4s-reduced", 1 << 18, 66.0)
    store("e2e-4s-reduced", 1 << 16, 60.0)
    store("e2e-4s-reduced", 1 << 16, 10.0, popularity="zipf")
    store("e2e-4s-reduced-T", 1 << 16, 80.0)
    assert bench.stored_capacity(4, 1 << 16) == 60.0 and bench.stored_capacity(2, 1 << 16) is None
    assert bench.vm_hwm_bytes() > 0


def test_the_server_benchmarks_seed_reaches_the_clients_random_choices():
    """`bench_server --seed N` once set System.seed only; the client's keys and operations come from client.seed, so
    runs at seeds 2 and 3 were bit-identical (threads-s23 found it)."""
    import argparse

    bench = _script("bench_server")
    opts = argparse.Namespace(sockets=2, items=1 << 12, schedule="global", host_threads=1,
                              partition_order="socket", seed=7)
    system = bench.bench_system(opts, 10.0, 1000)
    assert system.seed == 7 and system.client.seed == 7 and system.client.requests == 1000
    config = bench.servers.server(2, items=1 << 12, requests_per_core=1, offered_mpps=10.0)
    default = bench.bench_system(argparse.Namespace(**{**vars(opts), "seed": 0}), 10.0, 1000)
    assert (default.seed, default.client.seed) == (config.seed, config.client.seed) != (7, 7)
