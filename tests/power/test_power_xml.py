"""McPAT XML interoperability: read McPAT's example files; a written XML re-reads to the same model and follows
McPAT's input rules (power.mcpat_rules)."""

import dataclasses
import warnings
import xml.etree.ElementTree as ET

import pytest

import power
from power import mcpat_rules, mcpat_xml, platforms

from power_helpers import require_shared, synthetic_stats


@pytest.mark.parametrize("key", sorted(platforms.PLATFORMS))
def test_round_trip_same_model(tmp_path, key):
    p = mcpat_rules.legalize(platforms.PLATFORMS[key](), "round")   # what McPAT accepts (LLC 20-way -> 16)
    a = power.from_stats(synthetic_stats(p), p)
    path = mcpat_xml.write(tmp_path / f"{key}.xml", p, a)
    p2, a2 = mcpat_xml.read(path)
    # the XML is McPAT's input: the product's die beyond the structures (power.die) is not in it
    p = dataclasses.replace(p, die=None)
    assert p2 == p
    a.missing.clear()
    a2.missing.clear()
    # a homogeneous chip's activity is written once, as chip totals (McPAT's homogeneous mode), and read back
    # as one core's share
    for f in dataclasses.fields(a.cores[0]):
        assert getattr(a2.cores[0], f.name) == pytest.approx(getattr(a.cores[0], f.name), rel=1e-12)
    assert a2.caches == a.caches and a2.directories == a.directories and a2.nocs == a.nocs
    assert a2.dram == a.dram and a2.nic == a.nic and a2.requests == a.requests
    assert a2.seconds == pytest.approx(a.seconds)
    r1 = power.build(p, a).evaluate()
    r2 = power.build(p2, a2).evaluate()
    for col in ("area_mm2", "peak_dynamic_W", "runtime_dynamic_W", "leakage_W"):
        assert r2.socket[col] == pytest.approx(r1.socket[col], rel=1e-9)


def _core_stats(xml: str) -> dict:
    root = ET.fromstring(xml)
    core = next(c for c in root.iter("component") if c.get("id") == "system.core0")
    return {s.get("name"): float(s.get("value")) for s in core.findall("stat")}


def test_homogeneous_cores_write_chip_totals():
    """McPAT's convention: one core component for all cores, with counts summed over the cores."""
    p = platforms.xeon_e5_2697v2_socket()
    a = power.from_stats(synthetic_stats(p), p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcpat_rules.McpatExportWarning)
        st = _core_stats(mcpat_xml.to_xml(p, a))
    assert st["total_instructions"] == pytest.approx(p.cores * a.cores[0].committed_insts)
    assert st["ROB_reads"] == pytest.approx(p.cores * a.cores[0].rob_reads)
    assert st["total_cycles"] == pytest.approx(a.cores[0].cycles)        # elapsed cycles are not summed


def test_reader_divides_chip_totals_over_homogeneous_cores():
    d = require_shared()
    text = (d / "Niagara1.xml").read_text()
    p, a = mcpat_xml.read(text)
    assert p.cores == 8
    st = _core_stats(text)
    assert a.cores[0].committed_insts == pytest.approx(st["total_instructions"] / 8)
    assert a.cores[0].cycles == pytest.approx(st["total_cycles"])


@pytest.mark.parametrize("key", sorted(platforms.PLATFORMS))
def test_exported_sockets_pass_the_mcpat_schema_check(key):
    p = platforms.PLATFORMS[key]()
    a = power.from_stats(synthetic_stats(p), p)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        xml = mcpat_xml.to_xml(p, a)
    assert mcpat_rules.check(xml) == []
    root = ET.fromstring(xml)
    core = next(c for c in root.iter("component") if c.get("id") == "system.core0")
    assert {e.get("name") for e in core.findall("param")} >= {"prediction_width"}
    # both configs declare a 20-way LLC: the export says it rounded it
    assert any("assoc=20 -> 16" in str(x.message) for x in w if issubclass(x.category,
                                                                            mcpat_rules.McpatExportWarning))


def test_export_rounds_with_a_warning_or_refuses():
    p = platforms.brps_target_socket()
    p = dataclasses.replace(p, temperature_K=358.0)
    with pytest.warns(mcpat_rules.McpatExportWarning, match=r"temperature_K=358 -> 360.*assoc=20 -> 16"):
        xml = mcpat_xml.to_xml(p)
    assert mcpat_rules.check(xml) == []
    with pytest.raises(mcpat_rules.McpatExportError, match=r"temperature_K=358 -> 360"):
        mcpat_xml.to_xml(p, policy="refuse")
    with pytest.raises(ValueError, match="policy"):
        mcpat_xml.to_xml(p, policy="ignore")
    assert mcpat_rules.legal_temperature(412) == 400 and mcpat_rules.legal_temperature(290) == 300
    assert [mcpat_rules.nearest_power_of_two(n) for n in (1, 3, 5, 6, 12, 20, 24)] == [1, 4, 4, 8, 16, 16, 32]


def test_schema_check_catches_each_rule():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcpat_rules.McpatExportWarning)
        good = mcpat_xml.to_xml(platforms.brps_target_socket())
    assert mcpat_rules.check(good) == []
    bad_temp = good.replace('name="temperature" value="360"', 'name="temperature" value="358"')
    assert any("temperature" in m for m in mcpat_rules.check(bad_temp))
    bad_assoc = good.replace('name="L2_config" value="1572864,64,16,', 'name="L2_config" value="1572864,64,20,')
    assert bad_assoc != good
    assert any("L2_config: associativity 20" in m for m in mcpat_rules.check(bad_assoc))
    no_pred = good.replace('<param name="prediction_width" value="1" />', "")
    assert no_pred != good
    assert any("prediction_width is missing" in m for m in mcpat_rules.check(no_pred))
    assert mcpat_rules.check("<oops") and mcpat_rules.check("<component id='x'/>")


def test_mcpat_examples_follow_the_rules():
    """McPAT's own example inputs pass the check (the rules are McPAT's, not stricter)."""
    d = require_shared()
    for f in sorted(d.glob("*.xml")):
        assert mcpat_rules.check(f.read_text()) == [], f.name


def test_round_trip_heterogeneous_activity(tmp_path):
    p = platforms.xeon_e5_2697v2_socket()
    stats = synthetic_stats(p)
    stats["system.socket0.core3.committed_insts"] *= 3
    a = power.from_stats(stats, p)
    p2, a2 = mcpat_xml.read(mcpat_xml.to_xml(p, a))
    assert len(a2.cores) == p.cores
    assert [c.committed_insts for c in a2.cores] == [c.committed_insts for c in a.cores]


def test_written_file_has_mcpat_structure():
    import xml.etree.ElementTree as ET
    p = platforms.brps_target_socket()
    root = ET.fromstring(mcpat_xml.to_xml(p))
    ids = {c.get("id") for c in root.iter("component")}
    for cid in ("root", "system", "system.core0", "system.core0.icache", "system.core0.dcache",
                "system.core0.BTB", "system.core0.itlb", "system.core0.dtlb", "system.core0.predictor",
                "system.L1Directory0", "system.L2Directory0", "system.L20", "system.L30", "system.NoC0",
                "system.mc", "system.niu", "system.pcie", "system.flashc"):
        assert cid in ids
    sysp = {e.get("name"): e.get("value") for e in root.find("component").findall("param")}
    assert sysp["number_of_cores"] == "60" and sysp["core_tech_node"] == "22"
    assert sysp["number_of_L2s"] == "30"


def test_reads_every_mcpat_example():
    d = require_shared()
    files = sorted(d.glob("*.xml"))
    assert len(files) >= 6
    for f in files:
        p, a = mcpat_xml.read(f)
        assert p.cores >= 1 and p.node_nm > 0
        r = power.build(p, a).evaluate()
        assert r.area_mm2 > 0 and r.peak_dynamic_W > 0 and r.leakage_W > 0
        assert r.die.runtime_dynamic_W > 0  # McPAT inputs carry activity stats


def test_reader_parses_mcpat_values():
    d = require_shared()
    p, a = mcpat_xml.read(d / "Penryn.xml")
    # "32768,32,8,1, 4,6, 32,1 " with stray spaces
    assert (p.core.dcache.capacity_B, p.core.dcache.block_B, p.core.dcache.assoc) == (32768, 32, 8)
    assert p.core.dcache.latency_cycles == 6
    assert p.node_nm == 45 and p.clock_MHz == 2600 and p.temperature_K == 360
    assert p.caches[0].capacity_B == 6291456 and p.caches[0].count == 1
    x, _ = mcpat_xml.read(d / "Xeon.xml")
    assert x.core.l2 is not None and x.core.l2.capacity_B == 1048576  # Private_L2 = 1
    assert x.vdd == 1.25 and x.core.x86
    arm, _ = mcpat_xml.read(d / "ARM_A9_2GHz.xml")
    assert arm.device == "lop"


def test_reader_rejects_bad_input():
    with pytest.raises(mcpat_xml.McpatXmlError):
        mcpat_xml.read("<component id='root' name='root'></component>")
    with pytest.raises(mcpat_xml.McpatXmlError):
        mcpat_xml.read("<component id='root'><oops")
    with pytest.raises(FileNotFoundError):
        mcpat_xml.read("/nonexistent/file.xml")
