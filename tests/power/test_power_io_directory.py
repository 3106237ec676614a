"""PCIe priced from its published per-lane figures, and a directory cache built as the shared cache McPAT builds
(power.model): against McPAT 1.3's sweep where it is present, and by construction."""

import dataclasses
import warnings

import pandas as pd
import pytest

import power
from power import fit, model, platforms
from power.activity import Activity, CacheActivity
from power.config import DirectoryConfig
from power.mcpat_xml import read


def _sweep_or_skip():
    try:
        return fit.sweep_dir()
    except (FileNotFoundError, OSError) as e:
        pytest.skip(f"McPAT sweep absent: {e}")


def _pcie(result):
    s = result.structures
    return s[s.component == "pcie"].iloc[0]


def test_pcie_peak_is_mcpat_s_on_every_sweep_point_with_pcie():
    """Every sweep point with PCIe (Niagara 2 at 22-90 nm and hp/lstp/lop devices, the target-like sockets): the
    controller's and SerDes' published per-lane figures give McPAT's peak (the assumed 6 pJ/bit per direction
    missed it by up to 330%)."""
    d = _sweep_or_skip()
    index = pd.read_csv(d / "index.csv")
    rows = index[index.pcie_peak_dyn_W.notna()]
    assert len(rows) >= 10
    for _, r in rows.iterrows():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p, _ = read((d / f"{r['name']}.xml").read_text())
        ours = float(_pcie(power.build(p).evaluate()).peak_dynamic_W)
        assert ours == pytest.approx(r.pcie_peak_dyn_W, rel=0.01), r["name"]


def test_pcie_serdes_runs_at_its_generation_s_lane_rate():
    p = platforms.brps_target_socket()
    p2 = dataclasses.replace(p, pcie=dataclasses.replace(p.pcie, gen=2))
    p4 = dataclasses.replace(p, pcie=dataclasses.replace(p.pcie, gen=4))
    ctl2, serdes2, e2 = model.pcie_lane_power(p2.pcie, p.node_nm, 0.8)
    ctl4, serdes4, e4 = model.pcie_lane_power(p4.pcie, p.node_nm, 0.8)
    assert ctl2 == ctl4 and e2 == e4                       # same controller, same energy per bit
    assert serdes4 / serdes2 == pytest.approx((16.0 * 128 / 130) / (5.0 * 0.8))
    peak2, peak4 = (float(_pcie(power.build(q).evaluate()).peak_dynamic_W) for q in (p2, p4))
    lanes = p.pcie.count * p.pcie.lanes
    assert peak4 - peak2 == pytest.approx(lanes * (serdes4 - serdes2))
    with pytest.raises(ValueError, match="pcie.gen"):
        power.build(dataclasses.replace(p, pcie=dataclasses.replace(p.pcie, gen=6)))


def test_pcie_runtime_moves_every_counted_bit_through_the_serdes():
    p = platforms.brps_target_socket()
    _, _, e_bit = model.pcie_lane_power(p.pcie, p.node_nm, power.build(p).tech.vdd)
    structs = {}
    for nbytes in (0.0, 1.0e9):
        a = Activity(seconds=1.0)
        a.nic.pcie_bytes = nbytes
        m = power.build(p, a)
        structs[nbytes] = next(s for s in m.structs if s.component == "pcie")
    assert structs[1.0e9].fixed_runtime_J - structs[0.0].fixed_runtime_J == pytest.approx(8.0e9 * e_bit)


def _directory_struct(p, **changes):
    d = dataclasses.replace(p.directories[0], **changes)
    m = power.build(dataclasses.replace(p, directories=[d]))
    return next(s for s in m.structs if s.path == d.name)


def test_a_directory_cache_is_a_shared_cache_with_its_buffers():
    """McPAT builds a directory cache (type 1) as a shared cache: tag and data arrays read in sequence, with miss,
    fill, prefetch and write-back buffers. Priced as a bare tag+data pair under the CAM directories' law, the
    target's directory slice was a quarter of McPAT's area."""
    p = platforms.brps_target_socket()
    assert p.directories[0].kind == "cache"
    with_buffers = _directory_struct(p)
    without = _directory_struct(p, buffers=(0, 0, 0, 0))
    assert with_buffers.group == "cache" and with_buffers.component == "l2dir"
    assert with_buffers.block.area_mm2 > without.block.area_mm2
    # a CAM directory (McPAT's type 0, the sweep's) keeps the directories' own law
    cam = _directory_struct(p, kind="cam")
    assert cam.group == "dir"


def test_a_directory_entry_carries_the_shared_caches_dynamic_law_in_proportion_to_its_width(monkeypatch):
    """The shared caches' dynamic law stands for the data path of 64-byte lines; a directory of 5-byte entries
    under the whole law was priced at 5.9x McPAT's peak (the target), 7.9x for the Xeon's 2-byte entries."""
    from power import calibration as cal
    p = platforms.brps_target_socket()
    narrow, wide = _directory_struct(p), _directory_struct(p, block_B=64)
    k_narrow, k_wide = cal.factor("cache", "dyn", narrow.x), cal.factor("cache", "dyn", wide.x)
    assert k_narrow > 4                                 # the law's level at this capacity
    # the circuit estimates: the same directories with the shared caches' dynamic law at 1
    flat = {**cal.LAWS["dyn"], "cache": {f: 0.0 for f in cal.LAWS["dyn"]["cache"]}}
    monkeypatch.setitem(cal.LAWS, "dyn", flat)
    c_narrow, c_wide = _directory_struct(p).peak_c, _directory_struct(p, block_B=64).peak_c
    assert narrow.peak_c == pytest.approx(c_narrow * (1 + (k_narrow - 1) * 5 * 8 / 512))
    assert wide.peak_c == pytest.approx(c_wide * k_wide)    # a 64-byte entry takes the whole law


def test_a_directory_without_its_counters_is_reported_missing():
    p = platforms.brps_target_socket()
    a = Activity(seconds=1.0)
    a.directories = {}
    power.build(p, a)
    assert f"directory {p.directories[0].name}" in a.missing


def test_directory_buffer_sizes_round_trip_through_mcpat_xml():
    from power.mcpat_xml import to_xml
    p = platforms.brps_target_socket()
    p.directories[0] = DirectoryConfig(**{**dataclasses.asdict(p.directories[0]), "buffers": (4, 2, 0, 6)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q, a = read(to_xml(p))
    assert q.directories[0].buffers == (4, 2, 0, 6)
    assert isinstance(a.directories[q.directories[0].name], CacheActivity)
