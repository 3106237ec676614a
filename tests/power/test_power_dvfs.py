"""Voltage-frequency relation, operating points, per-core assignments and the TDP check."""

import numpy as np
import pytest

import power
from power import dvfs, platforms
from power.tech import technology


@pytest.mark.parametrize("node,device", [(45, "hp"), (32, "hp"), (22, "hp"), (16, "hp"), (22, "lop"),
                                         (32, "lstp")])
def test_vf_monotone(node, device):
    c = dvfs.vf_curve(technology(node, device, 350))
    v = np.linspace(c.vmin, c.vmax, 50)
    f = c.frequency_MHz(v)
    assert np.all(np.diff(f) > 0)
    fs = np.linspace(c.fmin_at_vmin_MHz, c.fmax_MHz, 40)
    vs = [c.voltage(x) for x in fs]
    assert np.all(np.diff(vs) > 0)
    assert c.frequency_MHz(c.vnom) == pytest.approx(c.f_ref_MHz)
    for x in fs:  # inverse
        assert c.frequency_MHz(c.voltage(x)) == pytest.approx(x, rel=1e-6)
    assert c.voltage(c.fmin_at_vmin_MHz / 2) == pytest.approx(c.vmin)  # below f(Vmin): Vmin


def test_vf_range_errors():
    c = dvfs.vf_curve(technology(22, "hp", 350))
    with pytest.raises(ValueError, match="at most"):
        c.voltage(c.fmax_MHz * 1.1)
    with pytest.raises(ValueError, match="out of range"):
        c.frequency_MHz(c.vmax + 0.1)
    with pytest.raises(ValueError):
        c.voltage(0)


def test_target_operating_points():
    p = platforms.brps_target_socket()
    m = power.build(p)
    pts = dvfs.operating_points(m, platforms.OPERATING_POINTS[p.name])
    assert pts["low"].MHz == 1500 and pts["normal"].MHz == 2500 and pts["turbo"].MHz == 3500
    assert pts["low"].vdd < pts["normal"].vdd < pts["turbo"].vdd
    r = {n: dvfs.evaluate_point(m, pt) for n, pt in pts.items()}
    assert r["low"].peak_power_W < r["normal"].peak_power_W < r["turbo"].peak_power_W
    assert r["low"].area_mm2 == r["normal"].area_mm2 == r["turbo"].area_mm2


def test_mixed_assignment():
    p = platforms.brps_target_socket()
    m = power.build(p)
    pts = dvfs.operating_points(m, platforms.OPERATING_POINTS[p.name])
    all_normal = dvfs.evaluate_point(m, pts["normal"])
    same = dvfs.evaluate_assignment(m, {}, pts)
    assert same.peak_power_W == pytest.approx(all_normal.peak_power_W, rel=1e-12)
    low = dvfs.evaluate_point(m, pts["low"]).peak_power_W
    turbo = dvfs.evaluate_point(m, pts["turbo"]).peak_power_W
    mix = dvfs.evaluate_assignment(m, {0: "turbo", 1: "turbo", 5: "low"}, pts)
    assert low < mix.peak_power_W and mix.peak_power_W < turbo
    # per-core contributions add: one core moved from normal to turbo adds (turbo - normal) / cores of the cores
    one = dvfs.evaluate_assignment(m, {7: "turbo"}, pts)
    cores = lambda r: r.by_class().loc["cores", "peak_power_W"]  # noqa: E731
    step = (cores(dvfs.evaluate_point(m, pts["turbo"])) - cores(all_normal)) / p.cores
    assert cores(one) - cores(all_normal) == pytest.approx(step, rel=1e-9)
    with pytest.raises(ValueError, match="out of range"):
        dvfs.evaluate_assignment(m, {60: "turbo"}, pts)
    with pytest.raises(ValueError, match="unknown"):
        dvfs.evaluate_assignment(m, {0: "overdrive"}, pts)


def test_tdp_check():
    p = platforms.brps_target_socket()
    m = power.build(p)
    pts = dvfs.operating_points(m, platforms.OPERATING_POINTS[p.name])
    r = dvfs.evaluate_point(m, pts["normal"])
    peak = r.peak_power_W
    ok = dvfs.tdp_check(r, peak * 1.1)
    assert ok.ok and ok.metric == "peak" and ok.margin_W == pytest.approx(peak * 0.1)
    assert ok.margin_pct == pytest.approx(100 * 0.1 / 1.1)
    over = dvfs.tdp_check(r, peak * 0.9)
    assert not over.ok and over.margin_W < 0 and "OVER" in str(over)
    with pytest.raises(ValueError):
        dvfs.tdp_check(r, 0)
    with pytest.raises(ValueError, match="activity"):
        dvfs.tdp_check(r, 100, "runtime")
