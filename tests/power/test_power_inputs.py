"""Bad inputs give clear errors; activity counters from kvsim stats are never silently missing."""

import copy

import pytest

import power
from power import platforms
from power.blocks import array, cache_block
from power.tech import technology

from power_helpers import synthetic_stats


def test_unknown_node_names_parameter_and_range():
    with pytest.raises(ValueError, match=r"node_nm=3.*allowed 5 to 180 nm"):
        technology(3)
    with pytest.raises(ValueError, match=r"node_nm=250"):
        technology(250)
    p = platforms.brps_target_socket()
    p.node_nm = 2
    with pytest.raises(ValueError, match="node_nm"):
        power.build(p)


def test_unknown_device_and_temperature():
    with pytest.raises(ValueError, match=r"device type 'ulp'.*hp, lstp, lop"):
        technology(22, "ulp")
    with pytest.raises(ValueError, match=r"temperature_K=500.*200 to 450"):
        technology(22, "hp", 500)


def test_negative_sizes():
    t = technology(22)
    with pytest.raises(ValueError, match=r"icache.capacity_B=-1.*>= 1"):
        cache_block(t, -1, 64, 8, name="icache")
    with pytest.raises(ValueError, match=r"rob.entries=0"):
        array(t, 0, 64, name="rob")
    p = platforms.brps_target_socket()
    p.core.rob = -4
    with pytest.raises(ValueError, match=r"core.rob=-4.*>= 0"):
        power.build(p)
    p = platforms.brps_target_socket()
    p.caches[0].capacity_B = -5
    with pytest.raises(ValueError, match="capacity_B"):
        power.build(p)
    p = platforms.brps_target_socket()
    p.core.issue_width = 0
    with pytest.raises(ValueError, match=r"core.issue_width=0"):
        power.build(p)
    p = platforms.brps_target_socket()
    p.pcie.gen = 9
    with pytest.raises(ValueError, match=r"pcie.gen=9"):
        power.build(p)


def test_extrapolation_below_22nm_is_smooth():
    t22, t16, t10 = technology(22), technology(16), technology(10)
    assert t22.vdd > t16.vdd > t10.vdd >= 0.6
    p = platforms.brps_target_socket()
    a = {}
    for n in (22, 16, 10):
        q = copy.deepcopy(p)
        q.node_nm = n
        a[n] = power.build(q).evaluate().area_mm2
    assert a[22] > a[16] > a[10]
    assert a[16] == pytest.approx(a[22] * (16 / 22) ** 2, rel=0.2)


def test_interpolated_node_between_table_nodes():
    t45, t40, t32 = technology(45), technology(40), technology(32)
    assert t32.vdd < t40.vdd < t45.vdd
    assert min(t45.dev.ioff_um, t32.dev.ioff_um) <= t40.dev.ioff_um <= max(t45.dev.ioff_um, t32.dev.ioff_um)


def test_from_stats_missing_counters_are_an_error_naming_the_component():
    p = platforms.xeon_e5_2697v2_socket()
    stats = synthetic_stats(p)
    del stats["system.socket0.core2.rob_reads"]
    with pytest.raises(power.activity.MissingCounters, match=r"core 2 of socket 0 .*system\.socket0\.core2\.rob_reads"):
        power.from_stats(stats, p)
    stats = synthetic_stats(p)
    del stats["system.socket0.llc.writes"]
    with pytest.raises(KeyError, match=r"shared cache llc of socket 0 .*system\.socket0\.llc\.writes"):
        power.from_stats(stats, p)


def test_from_stats_complete_has_no_warnings():
    p = platforms.brps_target_socket()
    a = power.from_stats(synthetic_stats(p), p)
    assert a.missing == []
    assert len(a.cores) == 60 and a.cores[0].committed_insts > 0


def test_from_stats_needs_time():
    p = platforms.xeon_e5_2697v2_socket()
    stats = synthetic_stats(p)
    del stats["sim_seconds"]
    with pytest.raises(ValueError, match="sim_seconds"):
        power.from_stats(stats, p)


def test_from_stats_reads_only_the_declared_names():
    """The first timing models' names (`insts`, `mispredicts`) are not the engine's: the declared names are read."""
    p = platforms.xeon_e5_2697v2_socket()
    stats = synthetic_stats(p)
    stats["system.socket0.core1.insts"] = stats.pop("system.socket0.core1.committed_insts")
    with pytest.raises(power.activity.MissingCounters, match=r"system\.socket0\.core1\.committed_insts"):
        power.from_stats(stats, p)
