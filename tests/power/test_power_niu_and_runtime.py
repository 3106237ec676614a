"""Issue 26, session 11: McPAT's NIU priced from the published figures McPAT cites (its own calibration group), and
runtime dynamic power priced from the counts with no bound at a structure's peak, as McPAT prices it.

Before: a McPAT input's NIU was given a 512 KB packet buffer and 64 DMA queues McPAT's NIU does not have, under the
PCIe controllers' law; with Niagara 2 (the only template with NIUs) left out of the fit, that law came from the
Xeon's PCIe alone and priced niagara2_base's two NIUs at 5.6 W of subthreshold leakage against McPAT's 0.36 W, the
whole of the fold's +27%. And every structure's runtime was clipped at its peak, where McPAT's is not (its peak is a
thermal-design access rate: xeon_base's instruction cache runs at 1.48x it, its BTB at 2x with its writes).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import power
import power.calibration as cal
from power import fit, mcpat_tree, niu, platforms
from power.mcpat_xml import read

from power_helpers import synthetic_stats


def _point(name):
    d = fit.SWEEP
    if not (d / f"{name}.xml").is_file():
        pytest.skip(f"McPAT sweep absent ({d}): the McPAT reference points are not on this machine")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, a = read(d / f"{name}.xml")
    return p, a, (d / f"{name}.out").read_text()


def _niu(result, metric):
    s = result.structures
    comp = np.array([x.component for x in result.model.structs])
    return float(s.loc[comp == "niu", metric].sum())


def test_a_mcpat_niu_is_a_port_without_packet_buffer_or_dma_queues():
    p, _, _ = _point("niagara2_base")
    assert p.nic.count == 2
    assert p.nic.buffer_KB == 0 and p.nic.queues == 0


def test_a_mcpat_niu_area_and_peak_are_mcpats_published_figures():
    """At unit laws (the circuit model alone) the two NIUs' area is McPAT's 15.86 mm^2 (MAC 0.915 + PCS 5.27 +
    SerDes 1.75 mm^2 a port at 65 nm) and their peak dynamic power McPAT's 1.865 W."""
    p, a, out = _point("niagara2_base")
    mc = mcpat_tree.parse_out(out).drop_duplicates("line").set_index("line").loc["Total NIUs"]
    with fit.laws(fit.zero_laws()):
        r = power.build(p, a).evaluate()
    assert _niu(r, "area_mm2") == pytest.approx(mc["area_mm2"], rel=1e-3)
    assert _niu(r, "peak_dynamic_W") == pytest.approx(mc["peak_dynamic_W"], rel=1e-3)
    assert niu.port_area_mm2(False, 65.0, 10.0) == pytest.approx(mc["area_mm2"] / 2, rel=1e-3)


def test_a_mcpat_niu_runs_at_its_load_share_of_the_peak():
    """McPAT's NIU runtime is its peak times total_load_perc (0.7): 1.305 W; ours adds the SerDes' idle symbols
    (30% of the SerDes' 0.17 W on the idle 30% of the time)."""
    p, a, out = _point("niagara2_base")
    mc = mcpat_tree.parse_out(out).drop_duplicates("line").set_index("line").loc["Total NIUs"]
    r = power.build(p, a).evaluate()
    assert _niu(r, "runtime_dynamic_W") == pytest.approx(mc["runtime_dynamic_W"], rel=0.02)


def test_the_niu_has_its_own_law_not_the_pcie_controllers():
    """Raising the PCIe controllers' (``io``) leakage law moves PCIe's leakage and not the NIU's."""
    p, a, _ = _point("niagara2_base")
    base = power.build(p, a).evaluate()
    raised = {m: {g: dict(f) for g, f in gv.items()} for m, gv in cal.LAWS.items()}
    for f in raised["sub"]["io"]:
        raised["sub"]["io"][f] += 1.0
    with fit.laws(raised):
        r = power.build(p, a).evaluate()
    assert _niu(r, "subthreshold_leakage_W") == pytest.approx(_niu(base, "subthreshold_leakage_W"), rel=1e-12)
    s, s0 = r.structures, base.structures
    comp = np.array([x.component for x in r.model.structs])
    assert s.loc[comp == "pcie", "subthreshold_leakage_W"].sum() > 2.0 * s0.loc[comp == "pcie",
                                                                                "subthreshold_leakage_W"].sum()


def test_a_faster_port_is_priced_as_that_many_reference_ports():
    assert niu.port_area_mm2(False, 22.0, 100.0) == pytest.approx(10 * niu.port_area_mm2(False, 22.0, 10.0))
    assert niu.port_serdes_W(True, 32.0, 0.9, 40.0) == pytest.approx(4 * niu.port_serdes_W(True, 32.0, 0.9, 10.0))
    # a low-power port is smaller and its SerDes scales with F, a high-performance one's with sqrt(F)
    assert niu.port_area_mm2(True, 65.0, 10.0) < niu.port_area_mm2(False, 65.0, 10.0)
    assert niu.port_serdes_W(False, 22.5, 1.2, 10.0) == pytest.approx(0.1 * 0.5, rel=1e-9)
    assert niu.port_serdes_W(True, 65.0, 1.2, 10.0) == pytest.approx(0.216 * 0.5, rel=1e-9)


def test_runtime_follows_the_counts_above_a_structures_peak():
    """A structure's peak is a thermal-design access rate, not a bound: counts far above it price above it, and the
    counted part stays proportional to the counts (before: clipped at the peak, structure by structure)."""
    p = platforms.xeon_e5_2697v2_socket()
    r1 = power.build(p, power.from_stats(synthetic_stats(p, scale=200.0), p)).evaluate()
    r2 = power.build(p, power.from_stats(synthetic_stats(p, scale=400.0), p)).evaluate()
    s1, s2 = r1.structures, r2.structures
    assert (s1.runtime_dynamic_W > s1.peak_dynamic_W * 1.01).sum() >= 5
    core = (s1["class"] == "cores").to_numpy()
    ev1 = (s1.runtime_dynamic_W - s1.clock_W)[core].sum()
    ev2 = (s2.runtime_dynamic_W - s2.clock_W)[core].sum()
    assert ev2 == pytest.approx(2.0 * ev1, rel=1e-9)
