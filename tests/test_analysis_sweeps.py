"""A sweep's store as one DataFrame and as Parquet (analysis/sweeps.py), and the run summary's figures."""

import json
import time

import pandas as pd
import pytest

from analysis.sweeps import load_sweep, write_parquet
from drivers.sweep import Base, atomic_write_json


def synthetic_store(path, n):
    """A store of n points written as the runner writes them: real resolved configurations, made-up stats (a few
    hundred each, like a detailed run's), power included, one failed point."""
    config = Base("brps_target_socket", cores=4).build().to_dict()
    keys = [f"{i:024x}" for i in range(n)]
    for i, key in enumerate(keys):
        cfg = json.loads(json.dumps(config))
        cfg["core"]["rob_entries"] = 1 + i % 256
        stats = {f"system.socket0.core{c}.{name}": float(i * c) for c in range(4)
                 for name in ("ipc", "insts", "cycles", "l1d.mpki", "l1d.hits", "l1d.misses", "branches",
                              "mispredicts", "loads", "stores", "rob_full", "lq_full", "sq_full", "fetch_stalls")}
        stats.update({f"power.cores.{c}": 0.5 * i for c in ("runtime_dynamic_W", "leakage_W", "peak_power_W")})
        stats["client.throughput_mrps"] = float(i)
        record = {"key": key, "index": i, "params": {"core.rob_entries": 1 + i % 256}, "config": cfg,
                  "status": "failed" if i == 7 else "ok", "error": "RuntimeError: x" if i == 7 else None,
                  "stats": {} if i == 7 else stats, "host_seconds": 1.0}
        atomic_write_json(path / "points" / f"{key}.json", record)
    atomic_write_json(path / "sweep.json", {"name": "synthetic", "keys": keys + ["f" * 24]})
    return keys


@pytest.mark.slow
def test_a_1000_point_sweep_loads_in_seconds_and_round_trips_through_parquet(tmp_path):
    keys = synthetic_store(tmp_path, 1000)
    started = time.perf_counter()
    table = load_sweep(tmp_path)
    seconds = time.perf_counter() - started
    assert seconds < 10, f"loading 1,000 points took {seconds:.1f} s"
    assert list(table.key) == keys, "one row per stored point, in the sweep's order; the unrun point left out"
    assert len(load_sweep(tmp_path, include_missing=True)) == 1001
    assert table.loc[7, "status"] == "failed" and table.loc[7, "error"] == "RuntimeError: x"
    assert (table["param.core.rob_entries"] == table["cfg.core.rob_entries"]).all()
    assert table.loc[500, "stat.power.cores.leakage_W"] == 250.0
    assert table.loc[3, "stat.system.socket0.core2.ipc"] == 6.0
    out = write_parquet(table, tmp_path / "table.parquet")
    back = pd.read_parquet(out)
    assert back.shape == table.shape
    pd.testing.assert_series_equal(back["stat.client.throughput_mrps"], table["stat.client.throughput_mrps"])
    assert list(back["cfg.workload.argv"])[:1] == [json.dumps(["mode=erew", "log_mib=16", "buckets=16384"])]


def test_a_folder_that_is_not_a_store_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="sweep.json"):
        load_sweep(tmp_path)


def _run_script():
    from drivers.cli import run

    return run


def test_the_run_summary_leads_with_throughput_loss_latency_and_power():
    stats = {"client.requests": 1000, "client.hits": 950, "client.misses": 0, "client.insts_per_request": 800.0,
             "client.throughput_mrps": 12.5, "client.offered_mpps": 13.0, "client.loss": 0.004,
             "client.latency.samples": 1000, "client.latency.p50": 2100.0, "client.latency.p95": 4000.0,
             "client.latency.p99": 9000.0, "power.socket.runtime_power_W": 50.0, "power.socket.peak_power_W": 80.0,
             "power.energy_per_request_J": 4e-6, "power.requests_per_s_per_W": 250000.0,
             "system.socket0.core0.ipc": 1.5, "system.socket0.core1.ipc": 2.5, "system.socket0.core0.l1d.mpki": 3.0,
             "system.socket0.llc.mpki": 0.5, "system.nic0.queue0.rx_batch_mean": 7.0}
    rows = dict(_run_script().kvs_summary(stats))
    labels = list(rows)
    assert labels[:6] == ["throughput", "loss", "latency p50 / p95 / p99", "power (runtime)",
                          "requests/s per watt", "requests checked"]
    assert rows["throughput"] == "12,500,000 requests/s"
    assert rows["loss"].startswith("0.40%")
    assert rows["latency p50 / p95 / p99"] == "2.10 / 4.00 / 9.00 us round trip"
    assert rows["requests/s per watt"].startswith("250,000")
    assert rows["IPC (mean of cores)"] == "2.000" and rows["RX batch (mean)"].startswith("7.0")
    # Unpriced, closed-loop: no power rows, no invented figures.
    closed = {k: v for k, v in stats.items() if not k.startswith("power.")}
    closed["client.offered_mpps"] = 0.0
    rows = dict(_run_script().kvs_summary(closed))
    assert "power (runtime)" not in rows and rows["loss"].endswith("(closed loop)")


def test_points_stored_by_a_narrower_version_of_the_sweep_get_their_parameters_from_their_configuration(tmp_path):
    synthetic_store(tmp_path, 3)
    manifest = json.loads((tmp_path / "sweep.json").read_text())
    manifest["paths"] = ["core.rob_entries", "client.seed"]
    atomic_write_json(tmp_path / "sweep.json", manifest)
    table = load_sweep(tmp_path)
    assert list(table["param.client.seed"]) == [1, 1, 1] and list(table["param.core.rob_entries"]) == [1, 2, 3]
