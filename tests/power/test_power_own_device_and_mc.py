"""A shared cache priced with its own device type, and a memory controller's transaction engine and PHY priced from
the published figures McPAT cites (power.model): by construction, and against McPAT 1.3's printout where the sweep
is present."""

import dataclasses
import warnings

import pytest

import power
from power import fit, mcpat_tree, model
from power.config import CacheConfig, MemCtrlConfig, Platform
from power.mcpat_xml import read, to_xml


def _sweep_or_skip():
    try:
        return fit.sweep_dir()
    except (FileNotFoundError, OSError) as e:
        pytest.skip(f"McPAT sweep absent: {e}")


def _chip(device: str, l2_device: str | None) -> Platform:
    return Platform(name="t", node_nm=40.0, device=device, cores=2, clock_MHz=2000.0,
                    caches=[CacheConfig("l2", 1 << 20, 64, 8, level=2, device=l2_device)])


def _l2(p: Platform):
    s = power.build(p).evaluate().structures
    return s[s.component == "l2"].iloc[0]


def test_a_shared_cache_of_its_own_device_is_priced_as_on_a_chip_of_that_device():
    """McPAT builds a shared cache with its own device_type (its Cortex-A9's L2 is high-performance on a low-power
    chip): the same L2 on a low-power chip with its own device 'hp' costs what it costs on a high-performance chip,
    at the HP supply; before, it took the chip's LOP devices and leaked a fifth of McPAT's (arma9_l2_1m)."""
    own, hp_chip, lop = _l2(_chip("lop", "hp")), _l2(_chip("hp", None)), _l2(_chip("lop", None))
    for col in ("area_mm2", "peak_dynamic_W", "subthreshold_leakage_W", "gate_leakage_W"):
        assert own[col] == pytest.approx(hp_chip[col], rel=1e-9), col
    assert own.subthreshold_leakage_W > 3 * lop.subthreshold_leakage_W
    # the chip's own device is no own device; an unknown one is refused before pricing
    assert _l2(_chip("lop", "lop")).subthreshold_leakage_W == pytest.approx(lop.subthreshold_leakage_W)
    with pytest.raises(ValueError, match="device"):
        power.build(_chip("lop", "fast"))


def test_a_cache_s_own_device_survives_the_mcpat_export():
    p = _chip("lop", "hp")
    p.core.l2 = None
    back, _ = read(to_xml(p))
    assert [c.device for c in back.caches] == ["hp"]
    same, _ = read(to_xml(_chip("lop", None)))
    assert [c.device for c in same.caches] == [None]


def test_the_sweep_s_a9_l2_takes_its_hp_devices_and_leaks_near_mcpat():
    d = _sweep_or_skip()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, a = read((d / "arma9_l2_1m.xml").read_text())
    assert p.device == "lop" and [c.device for c in p.caches] == ["hp"]
    cmp = mcpat_tree.compare(power.build(p, a).evaluate(), (d / "arma9_l2_1m.out").read_text()).set_index("line")
    leak = cmp.kvsim_subthreshold_leakage_W + cmp.kvsim_gate_leakage_W
    mcpat = cmp.mcpat_subthreshold_leakage_W + cmp.mcpat_gate_leakage_W
    # McPAT: 0.251 W (0.076 W with the L2 set to the chip's LOP); priced with the chip's devices it was 0.038 W
    assert leak["Total L2s"] / mcpat["Total L2s"] > 0.6


def _mc(low_power: bool, **kw) -> MemCtrlConfig:
    return MemCtrlConfig(count=1, channels_per_mc=1, io_clock_MHz=1200.0, peak_MBps=19200.0, databus_bits=64,
                         low_power=low_power, with_phy=True, **kw)


def test_the_transaction_engine_s_energy_per_access_is_the_published_figure():
    """McPAT's figures from Cadence ChipEstimate: a high-performance engine 0.432 nJ an access per 72 bits at 65 nm
    and 1.1 V; a low-power one 0.9 nJ at 800 MHz and 12.8 GB/s, growing with clock and transfer rate (so at
    DDR3-2400 it costs 9.4x the high-performance one: the low-power controllers' peak McPAT prints)."""
    hp = model.mc_engine_access_J(_mc(False), 65.0, 1.1)
    lp = model.mc_engine_access_J(_mc(True), 65.0, 1.1)
    assert hp == pytest.approx(0.432e-9)
    assert lp == pytest.approx(0.9e-9 * (2400 / 800) * (19200 / 12800))
    assert model.mc_engine_access_J(_mc(True), 32.0, 0.9) == pytest.approx(lp * 32 / 65 * (0.9 / 1.1) ** 2)


def test_mc_phy_power_per_gbps_follows_its_signalling_and_node():
    assert model.mc_phy_W_per_gbps(_mc(False), 90.0, 1.2) == pytest.approx(0.01)
    assert model.mc_phy_W_per_gbps(_mc(False, lvds=False), 90.0, 1.2) == pytest.approx(0.04)
    assert model.mc_phy_W_per_gbps(_mc(False), 22.5, 1.2) == pytest.approx(0.005)     # sqrt of the node
    assert model.mc_phy_W_per_gbps(_mc(True), 45.0, 1.2) == pytest.approx(0.005)      # linear in the node
    assert model.mc_phy_W_per_gbps(dataclasses.replace(_mc(True), with_phy=False), 45.0, 1.2) == 0.0


@pytest.mark.parametrize("point", ["combo04_arm_n32_c1", "neartgt18_core_cores_l2", "niagara2_base"])
def test_mc_engine_and_phy_peak_and_runtime_are_mcpat_s(point):
    """The engine and PHY lines of McPAT's printout, peak and runtime, on a low-power controller at DDR3-2400
    (combo04: McPAT 3.20 W an engine; the fitted law gave the whole controller 1.2 W) and high-performance ones
    (the PHY was priced at 0 W peak). Runtime: McPAT's, also where its counts exceed the peak rate (combo04 and
    niagara2_base; until session 11 ours was capped at the peak there). McPAT prints one controller's peak and all
    controllers' runtime."""
    d = _sweep_or_skip()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, a = read((d / f"{point}.xml").read_text())
    cmp = mcpat_tree.compare(power.build(p, a).evaluate(), (d / f"{point}.out").read_text()).set_index("line")
    for line in ("Transaction Engine", "PHY"):
        peak = cmp.loc[line, "mcpat_peak_dynamic_W"]
        assert cmp.loc[line, "kvsim_peak_dynamic_W"] == pytest.approx(peak, rel=0.01), line
        runtime = cmp.loc[line, "mcpat_runtime_dynamic_W"]
        assert cmp.loc[line, "kvsim_runtime_dynamic_W"] == pytest.approx(runtime, rel=0.01), line
