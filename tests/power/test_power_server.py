"""The server around the sockets at the wall (power/server.py): the power supply's 80 PLUS curve, the board's chips
and regulators, the fans, the disks, each part's exact arithmetic, and bad input refused (ParamError)."""

import dataclasses

import pytest

from models.params import ParamError
from power import server, unmodelled

PLATINUM = server.EIGHTY_PLUS_230V_REDUNDANT["80 PLUS Platinum"]
TITANIUM = server.EIGHTY_PLUS_230V_REDUNDANT["80 PLUS Titanium"]
# A chassis with round figures, so each part's arithmetic is exact to read.
BOX = server.Chassis(psu="80 PLUS Platinum", psu_rated_W=500.0, psus_sharing=2, pch_W=8.0, bmc_W=2.0,
                     board_vr_efficiency=0.8, fans=4, fan_rated_W=16.0, fan_speed_share=0.5, disks=2, disk_W=3.0)


def _part(parts, words):
    return next(p for p in parts if words in p.name)


def test_the_80_plus_curve_is_its_published_points_linear_between_them():
    # 230 V internal redundant minimums: Platinum 90 / 94 / 91% at 20 / 50 / 100% load; Titanium 90% at 10% too
    assert [PLATINUM.efficiency(x) for x in (0.2, 0.5, 1.0)] == [0.90, 0.94, 0.91]
    assert PLATINUM.efficiency(0.35) == pytest.approx(0.92, abs=1e-15)          # halfway from 20 to 50%
    assert PLATINUM.efficiency(0.75) == pytest.approx(0.925, abs=1e-15)         # halfway from 50 to 100%
    assert TITANIUM.efficiency(0.15) == pytest.approx(0.92, abs=1e-15) and TITANIUM.efficiency(0.5) == 0.96
    # below the lowest certified load the class promises nothing: its lowest point is held (assumed)
    assert PLATINUM.efficiency(0.05) == 0.90 and TITANIUM.efficiency(0.05) == 0.90
    assert [c.efficiencies for c in server.EIGHTY_PLUS_230V_REDUNDANT.values()][:4] == [
        (0.81, 0.85, 0.81), (0.85, 0.89, 0.85), (0.88, 0.92, 0.88), (0.90, 0.94, 0.91)]


def test_the_board_fans_and_disks_are_each_their_figure():
    parts = server.board_parts(BOX, dram_W=30.0)
    assert _part(parts, "platform controller hub").watts == 8.0
    assert _part(parts, "management controller").watts == 2.0
    # the board's regulators feed the DRAM, PCH and BMC (40 W) at 80%: 50 W drawn, 10 W lost
    assert _part(parts, "board's regulators").watts == pytest.approx(10.0, abs=1e-12)
    # 4 fans rated 16 W at half speed: 16 x 0.5^3 = 2 W each (the cube of the speed)
    assert _part(parts, "fans").watts == 8.0 and "2.00 W each" in _part(parts, "fans").name
    assert _part(parts, "disk").watts == 6.0
    assert all(p.in_total for p in parts)


def test_the_supply_loses_the_dc_load_over_its_efficiency_at_each_supplys_share():
    # 300 W over two 500 W supplies: 30% load each, 90% + (10 / 30) x 4% = 91.333...% efficient
    point = server.at_wall(BOX, 300.0)
    assert point.load_share == pytest.approx(0.3) and point.efficiency == pytest.approx(0.90 + 0.04 / 3, abs=1e-15)
    assert point.wall_W == pytest.approx(300.0 / (0.90 + 0.04 / 3), rel=1e-15)
    assert point.psu_loss_W == pytest.approx(point.wall_W - 300.0)
    one = server.at_wall(dataclasses.replace(BOX, psus_sharing=1), 300.0)    # one supply: 60% load, 93.8%
    assert one.efficiency == pytest.approx(0.94 - 0.03 * 0.1 / 0.5, abs=1e-15)


def test_the_wall_is_every_part_through_the_supply():
    parts, point = server.wall_parts(BOX, cpu_W=200.0, nic_W=40.0, dram_W=30.0)
    dc = 200.0 + 40.0 + 30.0 + 8.0 + 2.0 + 10.0 + 8.0 + 6.0                   # 304 W
    assert point.dc_W == pytest.approx(dc) and point.load_share == pytest.approx(dc / 1000.0)
    assert sum(p.watts for p in parts) == pytest.approx(dc / PLATINUM.efficiency(dc / 1000.0), rel=1e-12)
    loss = _part(parts, "power supply losses")
    assert loss.watts == pytest.approx(point.psu_loss_W) and loss.assumed and "30.4% load" in loss.name
    assert [p.watts for p in parts[:3]] == [200.0, 40.0, 30.0]


def test_the_xeon_servers_chassis_is_declared_with_its_assumptions():
    box = server.SERVERS["xeon-e5-2697v2"]
    assert box.psu == "80 PLUS Platinum" and box.board_vr_efficiency == unmodelled.VR_EFFICIENCY
    assert box.disk_W == 3.74                    # Seagate Constellation ES 500 GB, average idle (published)
    parts = server.board_parts(box, 0.0)
    assert _part(parts, "fans").watts == pytest.approx(6 * 14.4 / 8)
    assert _part(parts, "platform controller hub").assumed and _part(parts, "fans").assumed


@pytest.mark.parametrize("field, value, words", [
    ("board_vr_efficiency", 0.0, "board_vr_efficiency"), ("board_vr_efficiency", 1.2, "board_vr_efficiency"),
    ("fan_speed_share", 1.5, "fan_speed_share"), ("fan_speed_share", -0.1, "fan_speed_share"),
    ("psu", "80 PLUS Unobtainium", "Chassis.psu"), ("psu_rated_W", 0.0, "psu_rated_W"),
    ("psus_sharing", 0, "psus_sharing"), ("psus_sharing", 1.5, "psus_sharing"), ("fans", -1, "fans"),
    ("disks", 0.5, "disks"), ("pch_W", -1.0, "pch_W"), ("disk_W", float("nan"), "disk_W"),
])
def test_a_bad_chassis_is_refused(field, value, words):
    with pytest.raises(ParamError, match=words):
        dataclasses.replace(BOX, **{field: value})


@pytest.mark.parametrize("points, effs, words", [
    ((0.2, 0.5, 1.0), (0.9, 0.0, 0.9), "efficiency 0.0 must be in"),
    ((0.2, 0.5, 1.0), (0.9, 1.01, 0.9), "efficiency 1.01 must be in"),
    ((0.5, 0.2, 1.0), (0.9, 0.9, 0.9), "must rise"),
    ((0.2, 0.5), (0.9, 0.9), "must rise"),
    ((0.2, 0.5, 1.0), (0.9, 0.9), "3 load points for 2"),
])
def test_a_bad_supply_curve_is_refused(points, effs, words):
    with pytest.raises(ParamError, match=words):
        server.PsuCurve("bad", points, effs)


def test_a_load_past_the_supplies_rating_or_negative_power_is_refused():
    with pytest.raises(ParamError, match="exceeds its supplies' rating"):
        server.at_wall(BOX, 1000.5)
    with pytest.raises(ParamError, match="DC load"):
        server.at_wall(BOX, 0.0)
    with pytest.raises(ParamError, match="at most its rating"):
        PLATINUM.efficiency(1.2)
    with pytest.raises(ParamError, match="DRAM"):
        server.wall_parts(BOX, 100.0, 10.0, -1.0)
