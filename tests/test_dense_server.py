"""Server-level aggregation of 3D stacks (models/dense_server.py), checked against hand-computed cases."""

import warnings

import pytest

from models.dense_server import DenseServer, ServerBudgetWarning, StackFigures
from models.params import ParamError

GiB = 1 << 30


def mercury_like(logic_w=3.32, gbps=2.0, rps=1e6):
    return StackFigures(requests_per_s=rps, logic_power_w=logic_w, memory_gbps=gbps, capacity_bytes=4 * GiB)


def test_budget_is_the_published_472_w():
    assert DenseServer().power_budget_w() == pytest.approx(472.0)


def test_96_stack_server_by_hand():
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # within budget: no warning
        f = DenseServer().evaluate(mercury_like())
    # Stack: 3.32 W logic + 2 GB/s x 210 mW = 3.74 W; 96 stacks 359.04 W; 96 PHYs x 0.3 W = 28.8 W.
    assert f.stack_power_w == pytest.approx(3.74)
    assert (f.ports, f.switches) == (96, 0)
    assert f.phy_power_w == pytest.approx(28.8)
    assert f.power_w == pytest.approx(387.84)
    assert f.requests_per_s == pytest.approx(96e6)
    assert f.requests_per_s_per_w == pytest.approx(96e6 / 387.84)
    assert f.capacity_gb == pytest.approx(384.0)
    assert f.requests_per_s_per_gb == pytest.approx(250_000.0)
    assert f.area_mm2 == pytest.approx(96 * 441 + 48 * 441)   # stacks + 48 two-PHY packages
    assert f.within_budget


def test_flash_memory_power_is_6_mw_per_gbps():
    s = StackFigures(requests_per_s=1e5, logic_power_w=2.0, memory_gbps=10.0, capacity_bytes=int(19.8 * GiB),
                     memory="flash")
    f = DenseServer(stacks=10).evaluate(s)
    assert f.stack_power_w == pytest.approx(2.0 + 10 * 0.006)
    assert f.capacity_gb == pytest.approx(198.0, rel=1e-9)


def test_keyvault_switches_by_hand():
    f = DenseServer(stacks=144, stacks_per_port=12).evaluate(mercury_like(logic_w=2.0, gbps=1.0))
    # 12 ports, 12 switches: 144 x 2.21 W + 12 x 0.3 W + 12 x 0.819 W.
    assert (f.ports, f.switches) == (12, 12)
    assert f.power_w == pytest.approx(144 * 2.21 + 3.6 + 9.828)
    assert f.area_mm2 == pytest.approx((144 + 6 + 12) * 441)


def test_too_many_ports_is_an_error_naming_the_limit():
    with pytest.raises(ParamError, match="97 stacks at 1 per port need 97 Ethernet ports, over "
                                         "DenseServer.max_ports = 96"):
        DenseServer(stacks=97).evaluate(mercury_like())


def test_too_much_board_area_is_an_error_naming_the_limit():
    # 200 stacks, 17 ports: (200 + 9 PHY packages + 17 switches) x 441 = 99,666 mm2 > 0.75 x 109,032.
    with pytest.raises(ParamError, match=r"cover 99666 mm2, over DenseServer.board_area x board_fill = 81774 mm2"):
        DenseServer(stacks=200, stacks_per_port=12).evaluate(mercury_like())


def test_over_the_power_budget_warns_naming_it():
    with pytest.warns(ServerBudgetWarning, match=r"96 stacks draw 549.1 W, over the power budget .* = 472.0 W"):
        f = DenseServer().evaluate(mercury_like(logic_w=5.0))
    # 96 x 5.42 + 28.8
    assert f.power_w == pytest.approx(549.12) and not f.within_budget


def test_max_stacks_by_hand():
    # 5.42 W per stack + 0.3 W PHY: 82 stacks draw 469.04 W, 83 would draw 474.76 W.
    assert DenseServer().max_stacks(mercury_like(logic_w=5.0)) == 82
    assert DenseServer().max_stacks(mercury_like(logic_w=0.5)) == 96      # port-bound
    assert DenseServer().max_stacks(mercury_like(logic_w=500.0)) == 0


def test_bad_figures_are_refused():
    with pytest.raises(ParamError, match="StackFigures.logic_power_w = -1"):
        mercury_like(logic_w=-1)
    with pytest.raises(ParamError, match="DenseServer.other_power_w = 800.0 leaves nothing"):
        DenseServer(other_power_w=800).evaluate(mercury_like())
    with pytest.raises(ParamError, match=r"DenseServer.stacks_per_port = 13: must be in \[1, 12\]"):
        DenseServer(stacks_per_port=13)
