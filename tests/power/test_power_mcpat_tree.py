"""Per-component output in McPAT's tree (power.mcpat_tree): consistent with the result's totals, and McPAT's
printout parsed into the same lines."""

import pytest

from power import fit, mcpat_tree


def _point(name):
    try:
        d = fit.sweep_dir()
    except FileNotFoundError as e:
        pytest.skip(f"McPAT sweep absent: {e}")
    return fit.price_point(name), (d / f"{name}.out").read_text()


def test_tree_lines_add_up_to_the_result():
    r, _ = _point("xeon_base")
    t = mcpat_tree.tree(r).set_index("line")
    die = r.die
    assert t.loc["Processor", "area_mm2"] == pytest.approx(die.area_mm2)
    assert t.loc["Processor", "runtime_dynamic_W"] == pytest.approx(die.runtime_dynamic_W)
    cores = r.by_class().loc["cores"]
    n = r.model.platform.cores
    assert t.loc["Total Cores", "peak_dynamic_W"] == pytest.approx(cores.peak_dynamic_W)
    assert t.loc["Core", "area_mm2"] * n == pytest.approx(cores.area_mm2)
    assert t.loc["Core", "runtime_dynamic_W"] == pytest.approx(cores.runtime_dynamic_W)   # McPAT: all cores
    units = [u for u in mcpat_tree.UNITS if u in t.index]
    assert sum(t.loc[u, "area_mm2"] for u in units) == pytest.approx(t.loc["Core", "area_mm2"])


def test_mcpat_printout_parsed_line_by_line():
    r, out = _point("xeon_base")
    idx = fit.sweep_index().set_index("name").loc["xeon_base"]
    p = mcpat_tree.parse_out(out).set_index("line")
    assert p.loc["Processor", "area_mm2"] == pytest.approx(idx.area_mm2, rel=1e-5)
    assert p.loc["Total Cores", "peak_dynamic_W"] == pytest.approx(idx.cores_peak_dyn_W, rel=1e-5)
    for line in ("Instruction Fetch Unit", "Instruction Cache", "Renaming Unit", "Load Store Unit", "Data Cache",
                 "Execution Unit", "Integer ALUs", "Results Broadcast Bus"):
        assert p.loc[line, "area_mm2"] > 0, line
    # the private L2 (printed as a bare "L2" under the core) is its own line, not merged into the bus before it
    assert p.loc["L2", "area_mm2"] == pytest.approx(15.5, rel=0.01)
    assert p.loc["Results Broadcast Bus", "area_mm2"] < 1.0
    c = mcpat_tree.compare(r, out).set_index("line")
    assert c.loc["Processor", "mcpat_area_mm2"] == pytest.approx(idx.area_mm2, rel=1e-5)
    assert c.loc["Processor", "error_area_mm2_pct"] == pytest.approx(
        100 * (c.loc["Processor", "kvsim_area_mm2"] / idx.area_mm2 - 1))
