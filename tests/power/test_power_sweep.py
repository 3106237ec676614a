"""Issue 15's acceptance: the calibrated model against McPAT 1.3's sweep (read from ../shared at run time), the
cross-validation's honesty, monotonicity of the calibrated model, and runtime power from activity (zero activity =
leakage + clock power)."""

import copy
import dataclasses
import itertools

import numpy as np
import pandas as pd
import pytest

import power
from power import calibration as cal
from power import fit, platforms
from power.activity import Activity, CacheActivity, CoreActivity

from power_helpers import synthetic_stats

# The tolerance reached in sample (sim-scripts/mcpat_compare.py; see power/README.md), per metric, on these fixed
# points: the templates' baselines and points of every sweep group.
FIXED_POINTS = ("alpha_base", "arma9_base", "niagara1_base", "niagara2_base", "penryn_base", "xeon_base",
                "xeon_n22", "xeon_w2", "xeon_rob256", "penryn_l2_12m", "niagara2_n45", "xeon_t340", "penryn_c4_mesh2x2")
# (area 14%, was 13%: niagara1_base's in-order core at 90 nm went from 12.4% to 13.5% when the undifferentiated
# core's area took McPAT's 1.5x at 180 nm, the sweep's area MAE going from 6.2% to 6.15%)
# (15%, was 14%: niagara1_base's area 13.5% -> 14.6% when the caches' H-tree strip was modelled, issue 26 session
# 8; the sweep's area MAE 4.9% -> 3.6%)
TOLERANCE_PCT = {"area_mm2": 15.0, "peak_dynamic_W": 21.0, "total_leakage_W": 15.0, "runtime_dynamic_W": 30.0}
# ... except the one point of the 180 nm node (the Alpha 21364), whose leakage the laws' node smoothing pulls
# towards 90 nm's level: +15% (+24% before its router buffers took their own law and its memory controllers
# McPAT's area laws; +72% before its leaking widths took McPAT's 180 nm layout size, its undifferentiated core
# McPAT's leaking width by node and its links the bus law)
# and Niagara 1's baseline (session 11): area +18.5% and leakage +16.8% (were +14.6% and +13.5%) once Niagara 2's
# NIUs took McPAT's published figures. The fit had offset their 2x area and 5x leakage with the in-order,
# multithreaded cores' undifferentiated core (3.86 -> 4.88 mm^2 a core on niagara1_base now), which Niagara 1
# shares; its remaining excess is its first-level directory (+135% area) and cores.
POINT_TOLERANCE_PCT = {("alpha_base", "total_leakage_W"): 17.0, ("niagara1_base", "area_mm2"): 19.0,
                       ("niagara1_base", "total_leakage_W"): 17.5}
# in-sample mean absolute error over the whole sweep reached by the shipped laws (+ a small margin): area 4.9%
# (6.2% before McPAT's memory-controller area laws), peak dynamic 7.6%, leakage 6.8% (7.2% before the router
# buffers took their own law); runtime dynamic 10.3% over the points where McPAT's runtime is not above its own
# peak in any component, 25.4% over all (runtime per access is at most the peak's, structure by structure)
# Session 8 (the caches' H-tree strip): area 3.6%, peak dynamic 7.0%, leakage 6.9%; runtime 12.7% / 26.7% (10.6% /
# 25.8% before: the Xeon template's points lost about 2 W of runtime, the bus's law moving with the longer raw
# die its wires span in the fit)
# Session 9 (the H-tree's repeaters leak; the bus spans one die in the fit and in pricing): area 3.6%, peak dynamic
# 6.4%, leakage 5.4% (tightened); runtime 14.8% / 27.9% (loosened: the Xeon template's bus, +18% over McPAT's
# runtime on xeon_l3_48m, is now within 0.4% of it, and no longer offsets its cores' -19%)
# Session 11 (runtime priced from the counts with no cap at each structure's peak, as McPAT does; the NIU from
# McPAT's published figures): area 3.7%, peak dynamic 6.3%, leakage 4.6%; runtime 10.3% / 12.2% (tightened from
# 14.6% / 26.6%)
MAE_PCT = {"area_mm2": 4.0, "peak_dynamic_W": 6.8, "total_leakage_W": 5.8, "runtime_dynamic_W": 11.0}
MAE_RUNTIME_ALL_PCT = 13.0


def _require_sweep():
    try:
        return fit.sweep_dir()
    except FileNotFoundError as e:
        pytest.skip(f"McPAT sweep absent: {e}")


@pytest.fixture(scope="module")
def in_sample():
    _require_sweep()
    return fit.compare_points(fit.sweep_index())


@pytest.mark.parametrize("metric", sorted(TOLERANCE_PCT))
def test_fixed_sweep_points_within_tolerance(in_sample, metric):
    names = [n for n in FIXED_POINTS if n in set(in_sample.name)]
    assert len(names) >= 8, "the fixed points are missing from the sweep"
    rows = in_sample[(in_sample.metric == metric) & in_sample.name.isin(names)]
    if metric == "runtime_dynamic_W":
        # where McPAT's runtime is above its own peak in a component, its counts exceed its peak access rates
        # and its runtime figure carries its energy per access at those counts (arma9_base: the L1 directory at
        # 3.6 W runtime against a fraction of a watt at peak): left out, as the acceptance's runtime figure does
        rows = rows[~rows.mcpat_runtime_over_peak.astype(bool)]
    tol = rows.name.map(lambda n: POINT_TOLERANCE_PCT.get((n, metric), TOLERANCE_PCT[metric]))
    bad = rows[rows.error_pct.abs() > tol]
    assert bad.empty, bad[["name", "kvsim", "mcpat", "error_pct"]].to_string()


@pytest.mark.parametrize("metric", sorted(MAE_PCT))
def test_in_sample_mean_error(in_sample, metric):
    rows = in_sample[in_sample.metric == metric]
    assert len(rows) == len(fit.sweep_index())
    if metric == "runtime_dynamic_W":
        assert rows.error_pct.abs().mean() <= MAE_RUNTIME_ALL_PCT
        rows = rows[~rows.mcpat_runtime_over_peak.astype(bool)]
        assert len(rows) >= 30
    assert rows.error_pct.abs().mean() <= MAE_PCT[metric]


def test_cross_validation_leaves_out_whole_groups(monkeypatch):
    """Every fold's fit sees none of its held-out points and all of the others; the table holds exactly the
    held-out points, priced with that fold's laws."""
    _require_sweep()
    raw = fit.Raw()
    seen = []

    def recording_fit(sub, start=None, max_nfev=None):
        seen.append(set(sub.index.name))
        return fit.zero_laws() if start is None else start

    monkeypatch.setattr(fit, "fit", recording_fit)
    for by in fit.FOLD_KEYS:
        seen.clear()
        cv = fit.cross_validate(raw, by)
        values = pd.unique(raw.index[by])
        assert len(seen) == len(values) == cv.fold.nunique()
        for value, train in zip(values, seen):
            held = set(raw.index.name[raw.index[by] == value])
            assert not (train & held)
            assert train | held == set(raw.index.name)
            assert set(cv[cv.fold == f"{by}={value}"].name) == held


def test_raw_subset_renumbers_points():
    _require_sweep()
    raw = fit.Raw()
    pts = np.array([3, 7, 11])
    sub = raw.subset(pts)
    assert list(sub.index.name) == list(raw.index.name.iloc[pts])
    assert sorted(sub.rows.point.unique()) == [0, 1, 2]
    assert len(sub.rows) == sum((raw.rows.point == p).sum() for p in pts)


# ------------------------------------------------------------------------------------------------- monotonicity
def _priced(p):
    return power.build(p).evaluate()


def test_area_energy_leakage_rise_with_llc_capacity_and_associativity():
    base = platforms.brps_target_socket()
    prev = None
    for scale in (0.25, 0.5, 1, 2, 4):
        p = copy.deepcopy(base)
        p.caches[0].capacity_B = int(base.caches[0].capacity_B * scale)
        r = _priced(p).by_class().loc["caches"]
        cur = (r.area_mm2, r.peak_dynamic_W, r.leakage_W)
        if prev:
            assert all(c > q for c, q in zip(cur, prev)), (scale, cur, prev)
        prev = cur
    prev = None
    for assoc in (2, 4, 8, 16, 32):
        p = copy.deepcopy(base)
        p.caches[0].assoc = assoc
        r = _priced(p).by_class().loc["caches"]
        cur = (r.area_mm2, r.peak_dynamic_W)
        if prev:
            assert all(c > q for c, q in zip(cur, prev)), (assoc, cur, prev)
        prev = cur


def test_area_and_energy_rise_with_l1_capacity():
    base = platforms.xeon_e5_2697v2_socket()
    prev = None
    for kb in (8, 16, 32, 64, 128):
        p = copy.deepcopy(base)
        p.core.dcache = dataclasses.replace(p.core.dcache, capacity_B=kb * 1024)
        r = _priced(p).by_class().loc["cores"]
        cur = (r.area_mm2, r.peak_dynamic_W)
        if prev:
            assert all(c > q for c, q in zip(cur, prev)), (kb, cur, prev)
        prev = cur


def test_leakage_rises_with_temperature_and_voltage_calibrated():
    p = platforms.xeon_e5_2697v2_socket()
    m = power.build(p)
    leak_t = [m.evaluate(temperature_K=t).leakage_W for t in (320, 340, 360, 380, 400)]
    assert all(b > a for a, b in zip(leak_t, leak_t[1:])), leak_t
    leak_v = [m.evaluate(core_vdd=v).leakage_W for v in (0.7, 0.8, 0.9, 1.0)]
    assert all(b > a for a, b in zip(leak_v, leak_v[1:])), leak_v


# --------------------------------------------------------------------------------------------- runtime power
def test_zero_activity_is_leakage_plus_clock_power():
    p = platforms.brps_target_socket()
    secs = 1e-3
    idle = Activity(seconds=secs, cores=[CoreActivity(cycles=secs * p.clock_MHz * 1e6)])
    r = power.build(p, idle).evaluate()
    s = r.structures
    assert (s.clock_W > 0).sum() >= 3              # cores' pipelines, memory controllers, NIC/PCIe idle
    np.testing.assert_allclose(s.runtime_dynamic_W, s.clock_W, rtol=1e-12, atol=0)
    assert r.socket.runtime_power_W == pytest.approx(r.socket.leakage_W + s.clock_W.sum(), rel=1e-12)
    assert r.socket.runtime_dynamic_W < 0.5 * r.socket.peak_dynamic_W
    # any counted event adds to it
    busy = power.build(p, power.from_stats(synthetic_stats(p), p)).evaluate()
    assert busy.socket.runtime_dynamic_W > r.socket.runtime_dynamic_W


def test_runtime_rises_with_activity_below_the_peak():
    p = platforms.xeon_e5_2697v2_socket()
    rt = [power.build(p, power.from_stats(synthetic_stats(p, scale=k), p)).evaluate().die.runtime_dynamic_W
          for k in (0.25, 0.5, 1.0)]
    assert rt[0] < rt[1] < rt[2]


def test_runtime_energy_per_access_never_above_peak_energy_per_access_in_any_group():
    """A counted access never costs more than an access at peak rate, in every calibration group: every
    coefficient of the runtime law is <= 0 on features that are >= 0, so its factor is <= 1 at any node, core
    type and thread count (McPAT's directory runtime figures, often above its own peak, had fitted the directory's
    at e^2.54 x its peak energy per access at 22 nm)."""
    for g in cal.GROUPS:
        assert all(v <= 0.0 for v in cal.LAWS["rt"][g].values()), (g, cal.LAWS["rt"][g])
        for node, inorder, threads, x86 in itertools.product((16, 22, 28, 32, 40, 45, 65, 90, 180, 250), (0, 1),
                                                              (1, 2, 4, 8), (0, 1)):
            p = copy.deepcopy(platforms.xeon_e5_2697v2_socket())
            x = dict(cal.platform_features(p), **cal.node_weights(node), inorder=float(inorder),
                     threads=float(np.log(threads)), x86=float(x86))
            assert cal.factor(g, "rt", x) <= 1.0 + 1e-12, (g, node, inorder, threads, x86)


def test_directory_runtime_per_access_at_or_below_its_peak_per_access_on_the_target():
    """End to end on the target socket (22 nm): the directory's runtime energy per counted read is at most its
    energy per read at peak, so a lightly loaded directory no longer reaches its peak power."""
    p = platforms.brps_target_socket()
    secs = 1e-3
    d = p.directories[0]
    clock_hz = (d.clock_MHz or p.uncore_clock_MHz or p.clock_MHz) * 1e6
    reads = 0.1 * clock_hz * secs * d.count     # a tenth of the peak rate
    act = Activity(seconds=secs, cores=[CoreActivity(cycles=secs * p.clock_MHz * 1e6)],
                   directories={d.name: CacheActivity(reads=reads)})
    s = power.build(p, act).evaluate().structures.set_index("component").loc[d.name]
    runtime_per_read = (s.runtime_dynamic_W - s.clock_W) * secs / reads
    peak_per_read = s.peak_dynamic_W / (clock_hz * d.count)
    assert 0 < runtime_per_read <= peak_per_read * (1 + 1e-9)
    assert s.runtime_dynamic_W < 0.5 * s.peak_dynamic_W
