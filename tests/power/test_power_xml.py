"""McPAT XML interoperability: read McPAT's example files; a written XML re-reads to the same model."""

import pytest

import power
from power import mcpat_xml, platforms
from power_helpers import require_shared, synthetic_stats


@pytest.mark.parametrize("key", sorted(platforms.PLATFORMS))
def test_round_trip_same_model(tmp_path, key):
    p = platforms.PLATFORMS[key]()
    a = power.from_stats(synthetic_stats(p), p)
    path = mcpat_xml.write(tmp_path / f"{key}.xml", p, a)
    p2, a2 = mcpat_xml.read(path)
    assert p2 == p
    a.missing.clear()
    a2.missing.clear()
    # a homogeneous chip's per-core activity is written once (McPAT's homogeneous mode)
    assert a2.cores[0] == a.cores[0]
    assert a2.caches == a.caches and a2.directories == a.directories and a2.nocs == a.nocs
    assert a2.dram == a.dram and a2.nic == a.nic and a2.requests == a.requests
    assert a2.seconds == pytest.approx(a.seconds)
    r1 = power.build(p, a).evaluate()
    r2 = power.build(p2, a2).evaluate()
    for col in ("area_mm2", "peak_dynamic_W", "runtime_dynamic_W", "leakage_W"):
        assert r2.socket[col] == pytest.approx(r1.socket[col], rel=1e-9)


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
