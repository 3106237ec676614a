"""The headline table (drivers/studies/headline_table.py): full-condition ratios with their intervals where a
full-condition CSV exists, the cost of the rest where none does, and the measured costs it scales from."""

import json
import math

import pandas as pd
import pytest

from drivers.studies import headline_table as ht

FULL = "full platform; reduced data set: 16Mi tiny items (the paper's is 192Mi); the points that carry the conclusion"


def _llc(path, kbs, mrps, ci=None, conditions="reduced: a 4-core share", cpu=None):
    path.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame({"llc_per_core_kb": kbs, "throughput_mrps": mrps, "conditions": conditions})
    if ci is not None:
        df["throughput_ci_mrps"] = ci
    if cpu is not None:
        df["cpu_seconds"] = cpu
    df.to_csv(path / "llc.csv", index=False)


def test_a_ratio_of_two_windows_carries_both_half_widths():
    r, half = ht.ratio_interval(100.0, 2.0, 110.0, 3.3)
    assert r == pytest.approx(1.1)
    assert half == pytest.approx(1.1 * math.hypot(0.02, 0.03))
    assert math.isnan(ht.ratio_interval(100.0, math.nan, 110.0, 1.0)[1])


def test_full_llc_points_fill_the_full_column_and_the_rest_say_they_were_not_run(tmp_path):
    reduced, figures = tmp_path / "reduced", tmp_path / "figures"
    _llc(reduced / "llc", [256, 512, 768, 1024, 2048], [10.0, 11.0, 11.0, 12.0, 12.5])
    _llc(figures / "llc", [512, 768, 1024], [200.0, 210.0, 220.5], ci=[4.0, 4.2, 4.41], conditions=FULL,
         cpu=[900.0, 1000.0, 1100.0])
    rows = {r.ratio: r for r in ht.rows(figures, reduced, tmp_path / "sweeps", with_costs=False) if r.study == "llc"}
    assert rows["512 KB -> 768 KB"].full == pytest.approx(1.05)
    assert rows["512 KB -> 768 KB"].full_half_width == pytest.approx(1.05 * math.hypot(0.02, 0.02))
    assert rows["768 KB -> 1 MB"].full == pytest.approx(1.05) and rows["768 KB -> 1 MB"].status == "measured"
    assert rows["512 KB -> 768 KB"].reduced == pytest.approx(1.0)
    assert math.isnan(rows["256 KB -> 512 KB"].full)
    assert rows["256 KB -> 512 KB"].status == "not run at full conditions: 256 KB per core"


def test_a_single_full_point_names_the_neighbours_it_lacks_and_their_cost(tmp_path):
    reduced, figures, sweeps = tmp_path / "reduced", tmp_path / "figures", tmp_path / "sweeps"
    _llc(reduced / "llc", [512, 768, 1024], [11.0, 11.0, 12.0])
    _llc(figures / "llc", [768], [210.0], ci=[4.2], conditions=FULL, cpu=[1500.0])
    rows = {r.ratio: r for r in ht.rows(figures, reduced, sweeps) if r.study == "llc"}
    assert rows["512 KB -> 768 KB"].status == "not run at full conditions: 512 KB per core: needs about 25 CPU-min"
    assert math.isnan(rows["768 KB -> 1 MB"].full)


def test_a_reduced_csv_is_never_taken_for_a_full_one(tmp_path):
    reduced, figures = tmp_path / "reduced", tmp_path / "figures"
    _llc(reduced / "llc", [512, 768], [11.0, 11.0])
    _llc(figures / "llc", [512, 768], [200.0, 210.0], ci=[4.0, 4.2])      # a reduced run's conditions
    rows = [r for r in ht.rows(figures, reduced, tmp_path / "sweeps", with_costs=False) if r.study == "llc"]
    assert all(math.isnan(r.full) for r in rows) and all(r.status == "not measured" for r in rows)


def test_costs_come_from_the_measured_full_points_and_the_shared_load(tmp_path):
    figures, sweeps = tmp_path / "figures", tmp_path / "sweeps"
    _llc(figures / "llc", [512, 768], [200.0, 210.0], ci=[4.0, 4.2], conditions=FULL, cpu=[600.0, 1200.0])
    (sweeps / "checkpoints").mkdir(parents=True)
    (sweeps / "checkpoints" / "a.json").write_text(json.dumps(
        {"status": "ok", "cpu_seconds": 150.0, "config": {"harts": 60}}))
    (sweeps / "checkpoints" / "b.json").write_text(json.dumps(      # a 4-core load is not the full platform's
        {"status": "ok", "cpu_seconds": 9999.0, "config": {"harts": 4}}))
    assert ht.measured_costs(figures, sweeps) == (900.0, 150.0)
    _llc(figures / "llc", [512], [200.0], conditions="reduced: a 4-core share", cpu=[600.0])
    assert math.isnan(ht.measured_costs(figures, sweeps)[0])
    assert "cost unknown" in ht.cost_text("batching", math.nan, 150.0)


def test_the_cost_of_a_study_scales_with_its_points_and_their_cores():
    # batching's full-condition key points: 3 on the 60-core socket, one shared load.
    text = ht.cost_text("batching", 600.0, 120.0)
    assert "needs about 32 CPU-min (3 key point(s), 3 60-core point equivalents; 10 CPU-min per point, measured)" \
        in text
    # scaling: the 1-, 2- and 4-socket servers, one point each, each its own sweep and load.
    text = ht.cost_text("scaling", 600.0, 120.0)
    assert "(3 key point(s), 7 60-core point equivalents;" in text
    assert "needs about 76 CPU-min" in text


def test_an_estimated_point_cost_stands_in_only_while_none_is_measured_and_says_so(tmp_path):
    reduced, figures, sweeps = tmp_path / "reduced", tmp_path / "figures", tmp_path / "sweeps"
    _llc(reduced / "llc", [512, 768, 1024], [11.0, 11.0, 12.0])
    (r,) = [r for r in ht.rows(figures, reduced, sweeps, estimated_point_cpu=2400.0) if r.ratio == "768 KB -> 1 MB"]
    # The LLC study's key points with both drivers (llc.DRIVERS): 2 x 3.
    assert "needs about 240 CPU-min (6 key point(s)" in r.status and "estimated from the measured probes" in r.status
    _llc(figures / "llc", [768], [210.0], ci=[4.2], conditions=FULL, cpu=[1500.0])
    (r,) = [r for r in ht.rows(figures, reduced, sweeps, estimated_point_cpu=2400.0) if r.ratio == "768 KB -> 1 MB"]
    assert r.status == "not run at full conditions: 1024 KB per core: needs about 25 CPU-min"


def test_every_full_point_is_listed_with_its_interval_probes_and_host_time(tmp_path):
    reduced, figures = tmp_path / "reduced", tmp_path / "figures"
    _llc(reduced / "llc", [512, 768], [11.0, 11.0])
    _llc(figures / "llc", [768, 1024], [210.0, 220.5], ci=[4.2, 4.41], conditions=FULL, cpu=[1200.0, 1500.0])
    df = pd.read_csv(figures / "llc" / "llc.csv")
    df["probes"], df["host_seconds"], df["window_requests"] = [4.0, 5.0], [1260.0, 1800.0], [60000.0, 120000.0]
    df.to_csv(figures / "llc" / "llc.csv", index=False)
    # A reduced CSV of another study is not a full point.
    (figures / "batching").mkdir()
    pd.DataFrame({"requests_per_packet": [1], "throughput_mrps": [5.0], "conditions": ["reduced: a 4-core share"]}
                 ).to_csv(figures / "batching" / "batching.csv", index=False)
    points = ht.full_points(figures)
    assert list(points.point) == ["768 KB per core", "1024 KB per core"]
    assert list(points.probes) == [4.0, 5.0] and list(points["CPU min"]) == [20.0, 25.0]
    assert list(points["throughput (M req/s)"]) == ["210.000 +- 4.200", "220.500 +- 4.410"]
    out = ht.markdown(ht.rows(figures, reduced, tmp_path / "sweeps", with_costs=False), figures)
    assert "## Full-condition points measured" in out and "| llc | 768 KB per core | 210.000 +- 4.200 |" in out
    assert "make figures FULL=1" in out
    assert "(none yet)" in ht.markdown([], reduced)


def test_the_driver_ratio_compares_the_two_drivers_at_the_papers_llc_size(tmp_path):
    reduced, figures = tmp_path / "reduced", tmp_path / "figures"
    _llc(reduced / "llc", [512, 768], [11.0, 12.0])
    assert not [r for r in ht.rows(figures, reduced, tmp_path / "sweeps", with_costs=False) if "driver" in r.ratio]
    pd.DataFrame({"llc_per_core_kb": [512, 768], "throughput_mrps": [12.0, 15.0], "conditions": "reduced"}).to_csv(
        reduced / "llc" / "llc_compact_driver.csv", index=False)
    _llc(figures / "llc", [768], [200.0], ci=[4.0], conditions=FULL)
    (r,) = [r for r in ht.rows(figures, reduced, tmp_path / "sweeps", with_costs=False) if "driver" in r.ratio]
    assert r.reduced == pytest.approx(12.0 / 15.0) and math.isnan(r.full) and r.status.startswith("not run")
    pd.DataFrame({"llc_per_core_kb": [768], "throughput_mrps": [250.0], "throughput_ci_mrps": [5.0],
                  "conditions": FULL}).to_csv(figures / "llc" / "llc_compact_driver.csv", index=False)
    (r,) = [r for r in ht.rows(figures, reduced, tmp_path / "sweeps", with_costs=False) if "driver" in r.ratio]
    assert r.full == pytest.approx(0.8) and r.full_half_width == pytest.approx(0.8 * math.hypot(0.02, 0.02))
    assert r.status == "measured"


def test_every_studys_throughput_ratios_carry_their_half_widths_and_other_ratios_none():
    from drivers.studies import batching, prefetch

    df = pd.DataFrame({"requests_per_packet": [1, 4, 32], "throughput_mrps": [200.0, 240.0, 300.0],
                       "throughput_ci_mrps": [4.0, 7.2, 3.0]})
    out = ht.throughput_ratio_intervals(batching.headline, df)
    assert out["1 -> 4 requests per packet"] == pytest.approx((1.2, 1.2 * math.hypot(0.02, 0.03)))
    assert out["1 -> 32 requests per packet"] == pytest.approx((1.5, 1.5 * math.hypot(0.02, 0.01)))
    assert math.isnan(out["1 -> 2 requests per packet"][0])          # a point not run: no ratio, no interval
    pf = pd.DataFrame({"items": [1 << 24] * 2, "prefetch": ["on", "off"], "throughput_mrps": [200.0, 150.0],
                       "throughput_ci_mrps": [2.0, 3.0], "ns_per_rx_batch": [1000.0, 900.0],
                       "ns_per_rx_packet": [300.0, 350.0]})
    heads = ht.throughput_ratio_intervals(lambda d: prefetch.headline(d, by_items=False), pf)
    assert heads["large data set: throughput off / on"] == pytest.approx((0.75, 0.75 * math.hypot(0.01, 0.02)))
    assert math.isnan(heads["large data set: time per RX batch off / on"][1])   # not a throughput ratio
    unknown = pf.assign(throughput_ci_mrps=[2.0, math.nan])
    assert math.isnan(ht.throughput_ratio_intervals(lambda d: prefetch.headline(d, by_items=False),
                                                    unknown)["large data set: throughput off / on"][1])


def test_a_csv_last_measured_before_the_servers_tx_driver_change_is_marked_as_the_old_drivers(tmp_path, monkeypatch):
    import subprocess

    def git(*args):
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True).stdout.strip()
    git("init", "-q")
    git("config", "user.email", "t@t"), git("config", "user.name", "t")
    (tmp_path / "old.csv").write_text("a\n1\n")
    git("add", "old.csv"), git("commit", "-qm", "old")
    (tmp_path / "driver.c").write_text("tx_free\n")
    git("add", "driver.c"), git("commit", "-qm", "driver")
    monkeypatch.setattr(ht, "SERVER_TX_DRIVER_COMMIT", git("rev-parse", "--short", "HEAD"))
    (tmp_path / "new.csv").write_text("llc_per_core_kb,throughput_mrps\n768,198.5\n")   # not like old.csv: --follow
    git("add", "new.csv"), git("commit", "-qm", "new")
    assert ht._last_commit(tmp_path / "old.csv").endswith("the old driver's figures")
    assert "driver" not in ht._last_commit(tmp_path / "new.csv")
    monkeypatch.setattr(ht, "SERVER_TX_DRIVER_COMMIT", "0" * 40)      # not in this history: said, not guessed
    assert "unknown (git" in ht._last_commit(tmp_path / "old.csv")
