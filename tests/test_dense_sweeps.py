"""The dense servers' studies (drivers/studies/dense_sweeps.py): the design space they sweep, the figures they read
from a point (port utilisation, the 1.5U server), the network-bound diagnosis, bad input refused before any run,
and a smoke version of the whole study end to end (sweeps, tables, plots, report)."""

import math
import subprocess
import warnings

import pandas as pd
import pytest

from drivers import sweep as sw
from drivers.studies import common, dense
from drivers.studies import dense_sweeps as ds
from models.dense_server import DenseServer, ServerBudgetWarning, StackFigures
from models.params import ParamError

from conftest import WORKLOADS

GiB = 1 << 30


@pytest.fixture(scope="module")
def mcd_built():
    build = subprocess.run(["make", "-s", "-C", str(WORKLOADS / "mcd"), "riscv"], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr


def test_the_reduced_study_sweeps_every_stack_the_issue_names(mcd_built):
    sweeps = ds.sweeps(scale=ds.REDUCED)
    names = [s.name for s in sweeps]
    assert len(names) == len(set(names))
    points = {s.name: s.resolve() for s in sweeps}         # every point builds and validates before any run
    for platform in ("mercury", "iridium"):
        for kind in ("a7", "a15"):
            for n in (1, 2, 4, 8, 16, 32):
                assert f"dense-{platform}-{kind}-n{n}" in names
    # Memory latency 10-100 ns x with and without L2 on the 32-core Mercury stacks.
    grid = [p.params for p in points["dense-mercury-a7-n32"]]
    assert len(grid) == 8 and {p["memory.dram3d.access_latency"] for p in grid} == {"10ns", "25ns", "50ns", "100ns"}
    assert {p["caches.l2_enabled"] for p in grid} == {False, True}
    assert [p.params for p in points["dense-mercury-a7-n16"]] == [{"caches.l2_enabled": False}]
    for n in (2, 4, 8, 16):
        assert f"dense-keyvault-a15-n{n}" in names
    assert points["dense-mercury-a15-n32-pcie"][0].params == {"nic.pcie_latency": ds.WHAT_IF_PCIE_LATENCY}
    # The stacks come from the configs, with the study's scale.
    s = points["dense-iridium-a15-n4"][0].system()
    assert (s.harts, s.memory.kind, s.caches.l2_enabled, s.core.model, s.core.clock) == (4, "flash", True, "ooo",
                                                                                         1_500_000_000)
    assert s.client.requests == max(4 * ds.REDUCED.requests_per_core, ds.REDUCED.min_requests)
    assert (s.detailed_start, s.warm_caches, s.client.protocol) == ("roi", True, "memcached")
    kv = points["dense-keyvault-a15-n16"][0].system()
    assert (kv.harts, kv.client.requests) == (16, 16 * 300)
    assert sum(len(p) for p in points.values()) == 12 + 12 + 14 + 4 + 1


def test_bad_study_points_are_refused_before_any_run_naming_the_limit(mcd_built):
    too_many = ds.Scale("bad", 10, 10, 0.1, 4, core_counts=(33,), platforms=("mercury",), kinds=("a7",),
                        what_if=False)
    with pytest.raises(ParamError, match="33 cores need 3 per port.*allow at most 32 cores"):
        ds.sweeps(scale=too_many)[0].resolve()
    slow_write = sw.Sweep("bad-flash", sw.Base("drivers.studies.dense_sweeps:stack", platform="iridium", cores=2),
                          sw.List([{"memory.flash.write_latency": "5us"}]), evaluator=ds.EVALUATOR)
    with pytest.raises(ParamError, match=r"NandFlash.write_latency = 5000000 ps is below NandFlash.read_latency"):
        slow_write.resolve()
    with pytest.raises(ValueError, match="platform 'hbm'"):
        ds.stack("hbm", 2)


def test_a_flash_write_faster_than_its_read_is_refused_by_the_iridium_config():
    import configs

    with pytest.raises(ParamError, match="NandFlash.write_latency = 200000000 ps is below NandFlash.read_latency "
                                         "= 300000000 ps"):
        configs.load("iridium").system(cores=2, read_latency="300us")


def test_port_figures_by_hand():
    # 9,600 request frames of 83.6 B: the port carries 10e9 / 8 / (83.6 + 24) = 11.617 M frames/s.
    stats = {"system.nic0.port0.rx_frames": 9600.0, "system.nic0.port0.rx_bytes": 9600 * 83.6,
             "system.nic0.port0.tx_frames": 9600.0, "system.nic0.port0.tx_bytes": 9600 * 84.8}
    p = ds.port_figures(stats, 9.0, 10.0)
    assert p["port.rx_frame_bytes"] == pytest.approx(83.6) and p["port.tx_frame_bytes"] == pytest.approx(84.8)
    assert p["port.line_rate_mfps"] == pytest.approx(10e9 / 8 / 107.6 / 1e6)
    assert p["port.rx_utilisation"] == pytest.approx(9.0 / (10e9 / 8 / 107.6 / 1e6))
    assert p["port.tx_utilisation"] == pytest.approx(9.0e6 * 108.8 * 8 / 10e9)
    assert math.isnan(ds.port_figures({}, 1.0, 10.0)["port.rx_utilisation"])


def _point(name, *, mrps, logic_w, gbps, cores=32, model="inorder", l2=False, latency=10_000, offered=None,
           util=0.5, upper=1.0, pcie=400_000, capacity=4 * GiB, queue_ps=300_000.0, p95_ns=20_000.0):
    """A sweep table of one point, as load_sweep gives it (the columns frame() reads)."""
    return name, pd.DataFrame([{
        "status": "ok", "host_seconds": 1.0, "cfg.harts": cores, "cfg.core.model": model, "cfg.caches.l2_enabled": l2,
        "cfg.memory.dram3d.access_latency": latency, "cfg.memory.flash.read_latency": 20_000_000,
        "cfg.nic.pcie_latency": pcie,
        "stat.capacity.mrps": mrps, "stat.capacity.mpps_per_port": offered or mrps, "stat.capacity.probes": 5.0,
        "stat.capacity.upper_mpps_per_port": upper, "stat.client.latency.p95": p95_ns,
        "stat.client.measured_ns": 1e6,
        "stat.client.insts_per_request": 4000.0, "stat.dense.logic_power_w": logic_w, "stat.dense.memory_gbps": gbps,
        "stat.dense.capacity_bytes": float(capacity), "stat.port.rx_utilisation": util,
        "stat.port.line_rate_mfps": 11.6, "stat.port.rx_frame_bytes": 83.6, "stat.port.tx_frame_bytes": 84.8,
        "stat.system.socket0.mem.avg_queue_delay_ps": queue_ps, "stat.system.socket0.mem.port0.reads": 30.0,
        "stat.system.socket0.mem.port0.writes": 10.0, "stat.system.socket0.mem.port1.reads": 60.0,
        "stat.system.socket0.core0.load_latency_avg": queue_ps / 30_000, "stat.system.socket0.core1.load_latency_avg":
        queue_ps / 10_000}])


def test_each_point_is_aggregated_into_its_server():
    tables = dict([_point("dense-mercury-a7-n32", mrps=6.0, logic_w=3.0, gbps=2.0),
                   _point("dense-mercury-a15-n32", mrps=9.0, logic_w=6.0, gbps=0.0, model="ooo"),
                   _point("dense-keyvault-a15-n16", mrps=9.0, logic_w=2.0, gbps=1.0, cores=16, model="ooo", l2=True),
                   _point("dense-iridium-a15-n32", mrps=0.015, logic_w=30.0, gbps=0.1, model="ooo", l2=True,
                          capacity=21_260_088_115)])
    df = ds.frame(tables).set_index("platform")
    m = df[df.core == "A7 1 GHz"].loc["mercury"]
    # 3 W + 2 GB/s x 210 mW = 3.42 W a stack; 96 stacks + 96 PHYs x 0.3 W = 357.12 W, within 472 W.
    assert m["stack W"] == pytest.approx(3.42) and m["stacks per 1.5U"] == 96
    assert m["server W"] == pytest.approx(96 * 3.42 + 28.8) and m["server M req/s"] == pytest.approx(576.0)
    assert m["stack req/s per W"] == pytest.approx(6e6 / 3.42) and m["stack req/s per GB"] == pytest.approx(1.5e6)
    assert m["server req/s per GB"] == pytest.approx(576e6 / 384) and m["limited by"].startswith("DenseServer.stacks")
    # 6.3 W a stack with its PHY: the budget holds 74 of them (74 x 6.3 = 466.2 W).
    a15 = df[df.core == "A15 1.5 GHz"].loc["mercury"]
    assert a15["stacks per 1.5U"] == 74 and a15["limited by"] == "power budget 472.0 W"
    assert a15["server W"] == pytest.approx(74 * 6.3) and a15["server req/s per W"] == pytest.approx(74 * 9e6 / 466.2)
    # KeyVault: 144 stacks on 12 switch ports: 144 x 2.21 + 12 x (0.3 + 0.819) W.
    kv = df.loc["keyvault"]
    assert kv["stacks per 1.5U"] == 144 and kv["server W"] == pytest.approx(144 * 2.21 + 12 * 1.119)
    # Iridium: flash at 6 mW per GB/s; 30.0006 W a stack: 15 stacks within 472 W.
    ir = df.loc["iridium"]
    assert ir["stack W"] == pytest.approx(30.0006) and ir["stacks per 1.5U"] == 15
    assert ir["memory latency ns"] == 20_000
    table = ds.server_table(ds.frame(tables))
    assert list(table.server) == ["Mercury-32 (A7 1 GHz)", "Mercury-32 (A15 1.5 GHz)", "Iridium-32 (A15 1.5 GHz, L2)",
                                  "KeyVault-16 (A15 1.5 GHz, L2)"]
    kvm = ds.keyvault_frame(ds.frame(tables))
    assert list(kvm["stack"]) == ["KeyVault (A15 1.5 GHz, L2)"]      # no 16-core Mercury point to set beside it


def test_the_server_names_the_limit_it_fills_to():
    figures = StackFigures(requests_per_s=1e6, logic_power_w=3.0, memory_gbps=0.0, capacity_bytes=4 * GiB)
    assert DenseServer().fill(figures) == (96, "DenseServer.stacks = 96 (96 ports)")
    hot = StackFigures(requests_per_s=1e6, logic_power_w=10.0, memory_gbps=0.0, capacity_bytes=4 * GiB)
    assert DenseServer().fill(hot) == (45, "power budget 472.0 W")          # 45 x 10.3 = 463.5 W, 46 x 10.3 > 472
    n, limit = DenseServer(stacks=120, max_ports=100).fill(figures)
    assert n == 100 and "101 Ethernet ports, over DenseServer.max_ports = 100" in limit
    assert DenseServer().fill(StackFigures(1e6, 500.0, 0.0, 4 * GiB)) == (0, "power budget 472.0 W")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ServerBudgetWarning)      # fill() itself never warns
        DenseServer().fill(hot)


def test_the_network_diagnosis_reads_the_what_if_point():
    base = _point("dense-mercury-a15-n32", mrps=8.9, logic_w=6.0, gbps=0.0, model="ooo", offered=9.0, util=0.78)
    fast = _point("dense-mercury-a15-n32-pcie", mrps=11.4, logic_w=6.0, gbps=0.0, model="ooo", offered=11.6,
                  util=1.0, upper=-1.0, pcie=10_000, queue_ps=20_000.0)
    l2 = _point("dense-mercury-a15-n32-grid", mrps=11.2, logic_w=6.0, gbps=0.0, model="ooo", offered=11.3, util=0.98,
                l2=True, queue_ps=150_000.0)
    notes = ds.network_notes(ds.frame(dict([base, fast, l2])))
    assert "With the 2 MB L2 the same stack reaches 11.30 M frames/s (98% of the line rate, port-bound; memory " \
           "queueing 150 ns)" in notes[1]
    assert notes[0].startswith("Port-bound (a stack with one 10 GbE port): mercury-32 A15 1.5 GHz L2 10 ns (98% of")
    assert "78% busy: not the line rate" in notes[1] and "from 400 ns to 10 ns" in notes[1]
    assert "the ceiling is the PCIe NIC path's latency" in notes[1]
    assert "mean queueing delay is 300 ns (20 ns in the what-if)" in notes[1]
    assert "busiest port takes 60% of all accesses (2 ports); the cores' mean load latency is 20.0 cycles (1.3 in " \
           "the what-if)" in notes[1]
    # A what-if that changes nothing says so; a stack at its line rate is port-bound.
    same = _point("dense-mercury-a15-n32-pcie", mrps=8.9, logic_w=6.0, gbps=0.0, model="ooo", offered=9.1,
                  util=0.79, pcie=10_000)
    assert "the PCIe path is not what limits it" in ds.network_notes(ds.frame(dict([base, same])))[1]
    # A p95 beyond a tenth of the measured window is a backlog, not a steady state.
    slow = _point("dense-iridium-a7-n32", mrps=0.014, logic_w=4.0, gbps=0.0, l2=True, p95_ns=500_000.0)
    notes = ds.network_notes(ds.frame(dict([base, slow])))
    assert notes[-1].startswith("Not a steady state: at the capacity the search found, the p95 latency of "
                                "iridium-32 A7 1 GHz exceeds")
    bound = _point("dense-mercury-a15-n32", mrps=11.4, logic_w=6.0, gbps=0.0, model="ooo", offered=11.6, util=0.99)
    notes = ds.network_notes(ds.frame(dict([bound])))
    assert notes[0].startswith("Port-bound (a stack with one 10 GbE port): mercury-32 A15 1.5 GHz")


@pytest.mark.slow
def test_the_smoke_study_runs_end_to_end(engine, mcd_built, tmp_path):
    """The whole study at the smoke scale: 6 capacity searches (Mercury A7 on 1 and 2 cores, the 2-core stack's
    latency x L2 grid, KeyVault-2), every response checked, then its tables, plots and report."""
    tables = {}
    for s in ds.sweeps(scale=ds.SMOKE):
        report = sw.run(s, store=tmp_path / "store" / s.name, jobs=1, progress=False)
        assert report.failed == 0, s.name
        from analysis.sweeps import load_sweep
        tables[s.name] = load_sweep(report.store)
    paths = ds.make(tables, tmp_path / "out", False, scale=ds.SMOKE)
    names = {p.name for p in paths}
    assert {"dense.csv", "dense_server_table.csv", "dense_keyvault.csv", "dense_cores.png", "dense_memory.png",
            "dense_keyvault.png", "dense.md"} <= names
    df = pd.read_csv(tmp_path / "out" / "dense.csv")
    assert len(df) == 6 and (df["stack M req/s"] > 0).all()
    for _, r in df.iterrows():
        st = tables[r.sweep]
        # Every row's server is its stack times the stacks, plus the PHYs (and switches).
        assert r["server M req/s"] == pytest.approx(r["stack M req/s"] * r["stacks per 1.5U"])
        assert r["stack W"] == pytest.approx(r["stack logic W"] + r["stack mem GB/s"] * 0.21)
        assert r["stack logic W"] > dense.MAC_POWER_W and r["port utilisation"] < 1
        assert st[st.status == "ok"]["stat.client.loss"].max() < 0.01
    # Two A7 cores answer far fewer than a 10 GbE port carries; more cores, more throughput.
    one, two = (df[(df.platform == "mercury") & (df.cores == n) & ~df.l2 & (df["memory latency ns"] == 10)]
                ["stack M req/s"].iloc[0] for n in (1, 2))
    assert 0.1 < one < two < 3.0
    text = (tmp_path / "out" / "dense.md").read_text()
    assert "## Server table (1.5U)" in text and "## KeyVault vs Mercury" in text and "smoke" in text
    for png in ("dense_cores.png", "dense_memory.png", "dense_keyvault.png"):
        assert (tmp_path / "out" / png).read_bytes()[:4] == b"\x89PNG"


def test_the_study_is_registered_for_the_figures_script():
    from drivers import studies

    study = studies.get("dense")
    assert "dense" in studies.ALL and study.make is not None
    assert [s.name for s in study.sweeps(full=False)] == [s.name for s in ds.sweeps(scale=ds.REDUCED)]
    assert all(s.name.endswith("-full") for s in study.sweeps(full=True))
    # The paper's conditions by default (issue 28): the full measurement of the server table's stacks and their
    # neighbours, every name saying so; the reduced run is explicit.
    assert studies.takes_conditions(study)
    default = study.sweeps()
    assert all(s.name.endswith("-full-key") for s in default)
    assert {s.name for s in default} >= {"dense-mercury-a7-n32-full-key", "dense-mercury-a15-n16-full-key",
                                         "dense-keyvault-a15-n16-full-key", "dense-keyvault-a15-n8-full-key"}
    assert not any("-n4-" in s.name for s in default)
    reduced = study.sweeps(conditions=common.Conditions(reduced=True, items=None))
    assert [s.name for s in reduced] == [s.name for s in ds.sweeps(scale=ds.REDUCED)]
