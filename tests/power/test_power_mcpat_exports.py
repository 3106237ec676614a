"""Every config's McPAT export against McPAT 1.3 itself, component by component (power.mcpat_check).

The export tests need no McPAT: every config exports to an input McPAT's rules accept. The comparison tests run
../shared/tools/mcpat/mcpat (4-120 s a configuration, cached by content) and skip, saying so, where it is absent.
The tolerances are the ones reached (results/power/mcpat_components.md); the goal is 10% on every line.
"""

import math
import warnings

import pytest

from power import mcpat_check, mcpat_rules, mcpat_tree
from power.mcpat_xml import read

EXPORTS = mcpat_check.exports()


def _mcpat_or_skip():
    b = mcpat_check.mcpat_binary()
    if b is None:
        pytest.skip(f"McPAT 1.3 is not at {mcpat_check.MCPAT} (a development oracle: ../shared is absent here)")
    return b


@pytest.mark.parametrize("export", EXPORTS, ids=[f"{e.config}-s{e.socket}" for e in EXPORTS])
def test_every_config_exports_an_input_mcpat_accepts(export):
    assert mcpat_rules.check(export.xml) == []
    p, _ = read(export.xml)
    assert p.cores >= 1


def test_every_config_in_configs_is_exported():
    assert {e.config for e in EXPORTS} == set(mcpat_check.config_names())


def test_caches_below_cactis_smallest_array_are_rounded_up_with_a_warning():
    """The stacks' vestigial 256-byte LLC (one set a bank) and 8-entry return-address stack stop McPAT ("no valid
    data array organizations found"): the export raises them to CACTI's smallest array and says so."""
    from configs import mercury
    from power.from_config import platform_from_config
    from power.mcpat_xml import to_xml
    p = platform_from_config(mercury.system().to_dict())
    assert p.caches[0].capacity_B < mcpat_rules.cacti_min_capacity_B(64, 1, p.caches[0].banks)
    with pytest.warns(mcpat_rules.McpatExportWarning, match="CACTI's smallest array"):
        xml = to_xml(p)
    q, _ = read(xml)
    assert q.caches[0].capacity_B == mcpat_rules.cacti_min_capacity_B(64, 1, p.caches[0].banks)
    assert q.core.ras >= mcpat_rules.CACTI_MIN_ROWS
    with pytest.raises(mcpat_rules.McpatExportError):
        to_xml(p, policy="refuse")


def test_parse_blocks_reads_the_uncore_lines_of_a_printout():
    text = """Processor:
  Area = 10 mm^2
*****************************************************************************************
Memory Controller:
      Area = 2.0 mm^2
      Peak Dynamic = 0.5 W
      Subthreshold Leakage = 0.06 W
      Gate Leakage = 0.0002 W
      Runtime Dynamic = 1.0 W

      Front End Engine:
        Area = 0.02 mm^2
        Peak Dynamic = 0.05 W
        Subthreshold Leakage = 0.003 W
        Gate Leakage = 1e-05 W
        Runtime Dynamic = 0.1 W
*****************************************************************************************
NOC
      Area = 17.0 mm^2
      Peak Dynamic = 60 W
      Subthreshold Leakage = 11 W
      Gate Leakage = 0.05 W
      Runtime Dynamic = 4 W

      Router:
        Area = 0.6 mm^2
        Peak Dynamic = 2.0 W
        Subthreshold Leakage = 0.4 W
        Gate Leakage = 0.002 W
        Runtime Dynamic = 4 W

            Virtual Channel Buffer:
              Area = 0.16 mm^2
              Peak Dynamic = 0.4 W
              Subthreshold Leakage = 0.007 W
              Gate Leakage = 2e-05 W
              Runtime Dynamic = 0.9 W

            Crossbar:
              Area = 0.16 mm^2
              Peak Dynamic = 1.6 W
              Subthreshold Leakage = 0.38 W
              Gate Leakage = 0.0016 W
              Runtime Dynamic = 3.2 W

            Arbiter:
              Peak Dynamic = 0.006 W
              Subthreshold Leakage = 1e-06 W
              Gate Leakage = 4e-09 W
              Runtime Dynamic = 0.01 W
"""
    b = mcpat_tree.parse_blocks(text).set_index("line")
    assert b.loc["Memory Controller (one)", "area_mm2"] == 2.0
    assert b.loc["Front End Engine", "peak_dynamic_W"] == 0.05
    assert b.loc["Router (one)", "area_mm2"] == 0.6
    # the crossbar's share of the router: the router less its buffers, McPAT's rectangle
    assert b.loc["Crossbar + Arbiter", "area_mm2"] == pytest.approx(0.6 - 0.16)
    assert b.loc["Crossbar + Arbiter", "peak_dynamic_W"] == pytest.approx(1.606)


# Reached (results/power/mcpat_components.md), per (config, line, metric): |error| at most this many %.
REACHED_PCT = {
    ("xeon_e5_2697v2_socket", "Total MCs", "area_mm2"): 5.0,
    ("xeon_e5_2697v2_socket", "Total PCIes", "area_mm2"): 5.0,
    # -2% -> -11% with the caches' H-tree strip (issue 26 session 8: leave-one-template-out area 28% -> 13%): the
    # shared caches' area law is now set on the sweep's L2/L3s with the strip, whose lines and ports differ
    ("xeon_e5_2697v2_socket", "Total L3s", "area_mm2"): 12.0,
    ("xeon_e5_2697v2_socket", "Processor", "area_mm2"): 20.0,
    ("xeon_e5_2697v2_socket", "Processor", "peak_dynamic_W"): 8.0,           # +12% under the whole shared-cache
    #                                         law on the directory's 2-byte entries (session 6)
    ("xeon_e5_2697v2_socket", "Total Second Level Directory", "peak_dynamic_W"): 70.0,   # +691% before
    ("brps_target_socket", "Total Second Level Directory", "peak_dynamic_W"): 45.0,      # +494% before
    # -76% as a bare tag+data pair, +10% as a shared cache, -34% with the H-tree strip: its 2-byte entries carry
    # almost no strip while the shared caches' law it takes fell with the 64-byte lines' strip
    ("xeon_e5_2697v2_socket", "Total Second Level Directory", "area_mm2"): 35.0,
    ("brps_target_socket", "Total Second Level Directory", "area_mm2"): 25.0,     # -74% before
    # +70% before, -8% as a shared cache, -42% with the H-tree repeaters (issue 26 session 9): as for its area, its
    # 5-byte entries route few bits while the shared caches' leakage law fell with the 64-byte lines' repeaters
    ("brps_target_socket", "Total Second Level Directory", "leakage_W"): 45.0,
    ("brps_target_socket", "Total PCIes", "peak_dynamic_W"): 30.0,     # +330% before; the rest is gen 4's lane rate
    ("xeon_e5_2697v2_socket", "Total PCIes", "peak_dynamic_W"): 1.0,   # PCIe 2.0: McPAT's own lane rate
    ("xeon_e5_2697v2_socket", "Processor", "leakage_W"): 10.0,
    ("brps_target_socket", "Processor", "area_mm2"): 6.0,    # -0.5% -> -5.3% with the H-tree strip
    ("brps_target_socket", "Total NoCs (Network/Bus)", "area_mm2"): 10.0,      # -57% before McPAT's routers
    ("brps_target_socket", "Total NoCs (Network/Bus)", "leakage_W"): 20.0,     # -41% before
    ("xeon_e5_2697v2_socket", "Total NoCs (Network/Bus)", "leakage_W"): 10.0,  # +75% before
    ("brps_target_socket", "Total MCs", "area_mm2"): 5.0,
    ("brps_target_socket", "Total Cores", "area_mm2"): 9.0,  # -1.7% -> -8.0% with the H-tree strip
}


@pytest.mark.slow
@pytest.mark.parametrize("config", sorted({c for c, _, _ in REACHED_PCT}))
def test_export_against_mcpat_line_by_line(config):
    binary = _mcpat_or_skip()
    table = mcpat_check.check([config], binary)
    t = table[table.socket == 0].drop_duplicates("line").set_index("line")
    # McPAT's tree is read in full: totals, one core's units, and the uncore's blocks
    for line in ("Processor", "Total Cores", "Core", "Data Cache", "Memory Controller (one)", "Router (one)"):
        assert line in t.index, f"{config}: no {line!r} line compared"
    for (cfg, line, metric), tol in REACHED_PCT.items():
        if cfg != config:
            continue
        e = t.loc[line, f"error_{metric}_pct"]
        assert not math.isnan(e) and abs(e) <= tol, (
            f"{config} {line} {metric}: kvsim {t.loc[line, f'kvsim_{metric}']:.4g} vs McPAT "
            f"{t.loc[line, f'mcpat_{metric}']:.4g} ({e:+.1f}%, reached {tol:g}%)")


@pytest.mark.slow
def test_a_stack_export_runs_in_mcpat():
    """Before CACTI's smallest arrays were enforced, McPAT printed no Processor section for the stacks."""
    binary = _mcpat_or_skip()
    e = next(x for x in EXPORTS if x.config == "mercury")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = mcpat_check.run_mcpat(e.xml, binary)
    c = mcpat_check.compare_export(e.xml, out).set_index("line")
    assert c.loc["Processor", "mcpat_area_mm2"] > 0
    assert abs(c.loc["Processor", "error_area_mm2_pct"]) < 100
