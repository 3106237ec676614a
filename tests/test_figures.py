"""The studies (drivers/studies/): their sweeps resolve, the reduced scale keeps per-core resources in proportion,
the batching delay model is right, and each study draws its plot, CSV and report from a table (here made by the
real sweep runner with the synthetic evaluator, so no simulation runs)."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from analysis.sweeps import load_sweep
from configs import brps_target_socket
from drivers import studies
from drivers import sweep as sw
from drivers.studies import batching, common

COUNTS = {"core_weight": [96], "llc": [5, 5], "batching": [6], "prefetch": [2, 2]}   # llc: one sweep per driver


@pytest.mark.parametrize("name", studies.STUDIES)
def test_every_study_resolves_at_both_scales(name):
    study = studies.get(name)
    assert [len(s.resolve()) for s in study.sweeps(full=False)] == COUNTS[name]
    full = study.sweeps(full=True)
    assert all(p.system().harts == common.FULL_CORES for s in full for p in s.resolve()[:2])
    assert len(study.compare_sweep().resolve()) == 3


def test_reduced_scale_keeps_per_core_resources_in_proportion():
    full, reduced = common.target(60), common.target(4)
    assert full.to_dict() == brps_target_socket.system(requests=60 * common.REQUESTS_PER_CORE).to_dict()
    for s in (full, reduced, common.target(40)):
        assert s.caches.llc.size == 768 * 1024 * s.harts
        assert sum(n.ports * n.port_gbps for n in s.active_nics()) == pytest.approx(5.0 * s.harts)
        assert len(s.active_nics()) == max(1, round(s.harts / 20))      # one 100 GbE NIC per 20 cores
        assert s.cores_per_cluster == 2 and s.caches.llc_slices == s.harts // 2
        s.validate()
    # PCIe: 24 lanes over 60 cores, per NIC
    assert [n.pcie_lanes for n in common.target(40).active_nics()] == [8, 8]
    assert [n.pcie_lanes for n in reduced.active_nics()] == [2]
    # memory: 6 channels over 60 cores, the nearest whole number and at least one
    assert reduced.memory.channels == 1 and common.target(32).memory.channels == 3
    # one core: a cluster of one on a mesh of one router
    single = common.target(1)
    single.validate()
    assert single.cores_per_cluster == 1 and single.caches.llc_slices == 1
    assert single.noc.dimensions(1) == (1, 1)


def test_the_batching_delay_model_matches_a_monte_carlo_client():
    """Poisson requests for one partition, packed N to a packet: the mean wait is (N - 1) / (2 lambda)."""
    rng = np.random.default_rng(5)
    rate = 2.5  # M requests/s
    arrivals = np.cumsum(rng.exponential(1 / rate, size=400_000))
    for n in (1, 2, 8, 32):
        usable = len(arrivals) // n * n
        packets = arrivals[:usable].reshape(-1, n)
        waits = packets[:, -1:] - packets
        mean, worst = batching.batching_delay_us(n, rate)
        assert waits.mean() == pytest.approx(mean, abs=0.01 * max(mean, 0.01))
        assert waits[:, 0].mean() == pytest.approx(worst, rel=0.02) if n > 1 else worst == 0


def _synthetic(study_sweep):
    return dataclasses.replace(study_sweep, evaluator="drivers.synthetic:evaluate_point",
                               options={"sleep_ms": 0})


@pytest.mark.slow
@pytest.mark.parametrize("name", studies.STUDIES)
def test_each_study_draws_its_plot_csv_and_report(tmp_path, name):
    study = studies.get(name)
    tables = {}
    for s in study.sweeps(full=False):
        report = sw.run(_synthetic(s), store=tmp_path / s.name, jobs=2, progress=False)
        assert report.failed == 0
        tables[s.name] = load_sweep(report.store)
    out = tmp_path / "figures"
    out.mkdir()
    paths = study.make(tables, out, False)
    assert {p.suffix for p in paths} == {".csv", ".png", ".md"}
    for p in paths:
        assert p.stat().st_size > 100
    csv = pd.read_csv(next(p for p in paths if p.suffix == ".csv"))
    # The LLC study's CSV is the server's default driver's; the compact driver's points have a CSV of their own.
    assert len(csv) == (COUNTS[name][0] if name == "llc" else sum(COUNTS[name])) and csv.throughput_mrps.notna().all()
    if name == "llc":
        assert len(pd.read_csv(out / "llc_compact_driver.csv")) == COUNTS[name][1]
    report = next(p for p in paths if p.suffix == ".md").read_text()
    assert "## Configuration" in report and ".png)" in report
    if name == "core_weight":
        # Normalized to the in-order single-issue core of each data set; the synthetic IPC grows with ROB and width.
        assert (csv[(csv.rob == 1) & (csv.issue_width == 1)].normalized == 1).all()
        tiny = csv[csv.dataset == "tiny"].set_index(["issue_width", "rob"]).normalized
        assert tiny[(1, 64)] > tiny[(1, 1)] and tiny[(3, 64)] > tiny[(1, 64)]


def test_the_figures_count_every_nic():
    """A full socket has 3 NICs: the network and batch figures sum and average over all of them, not NIC 0's."""
    row = {"cfg.harts": 60, "cfg.core.clock": 2.5e9,
           "stat.system.nic0.port0.rx_wire_gbps": 10.0, "stat.system.nic1.port0.rx_wire_gbps": 20.0,
           "stat.system.nic0.rx_writebacks": 99.0,
           "stat.system.nic0.queue0.rx_batches": 100.0, "stat.system.nic2.queue5.rx_batches": 300.0,
           "stat.system.nic0.queue0.rx_batch_mean": 2.0, "stat.system.nic2.queue5.rx_batch_mean": 4.0,
           "stat.system.socket0.core0.cycles": 1e6}
    f = common.figures_of(row)
    assert f["net_rx_gbps"] == 30.0 and f["rx_batch"] == 3.0
    assert f["ns_per_rx_batch"] == pytest.approx(1e6 / 2.5 / 400)


def test_the_prefetch_study_draws_one_point_of_its_pair_without_a_ratio(tmp_path):
    # `figures --only workload.argv[prefetch]=0` runs one of the pair: the draw shows it (it crashed on the
    # missing 'on' point) and gives no ratio until the other lands.
    from drivers.studies import prefetch

    one = {"items": 1 << 24, "prefetch": "off", "throughput_mrps": 117.7, "throughput_ci_mrps": 1.0,
           "l1d_mpki": 4.8, "llc_mpki": 2.1, "mem_read_gbs": 16.8, "ns_per_rx_batch": 2279.0,
           "ns_per_rx_packet": 509.0}
    df = pd.DataFrame([one])
    prefetch.plot(df, tmp_path / "prefetch.png", "one point")
    assert (tmp_path / "prefetch.png").stat().st_size > 0
    assert prefetch.headline(df) == {}
    both = pd.DataFrame([one, {**one, "prefetch": "on", "throughput_mrps": 198.5}])
    assert prefetch.headline(both)["16,777,216 items: throughput off / on"] == pytest.approx(117.7 / 198.5)
