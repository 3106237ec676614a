"""The parts a McPAT-class model leaves out of a measured socket (power.unmodelled): each sized from its cause."""

import warnings

import pytest

import power
from power import links, mcpat_xml, platforms, unmodelled


@pytest.fixture(scope="module")
def xeon_result():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, a = mcpat_xml.read(mcpat_xml.to_xml(platforms.xeon_e5_2697v2_socket()))
    return power.build(p, a).evaluate()


def test_parts_start_from_the_model_and_each_adds_power(xeon_result):
    parts = unmodelled.parts(xeon_result)
    assert parts[0].watts == pytest.approx(float(xeon_result.die.runtime_dynamic_W + xeon_result.die.leakage_W))
    assert all(p.watts > 0 for p in parts)
    assert [p.assumed for p in parts][-2:] == [True, True]


def test_clock_distribution_is_its_published_share_of_the_chip(xeon_result):
    parts = unmodelled.parts(xeon_result)
    before = sum(p.watts for p in parts[:3])
    clock = next(p for p in parts if "clock distribution" in p.name)
    assert clock.watts / (before + clock.watts) == pytest.approx(unmodelled.CLOCK_SHARE)


def test_qpi_is_two_link_ends_of_qpi_1_1():
    per_link = 2 * links.QPI_LANES * links.QPI_RATE_GT * 1e9 * links.ENERGY_PER_BIT_J
    parts = unmodelled.parts(power.build(platforms.xeon_e5_2697v2_socket()).evaluate())
    assert parts[-1].watts == pytest.approx(2 * per_link / 2)


def test_turbo_raises_the_cores_clock_and_supply(xeon_result):
    turbo = unmodelled.parts(xeon_result)[1]
    assert "3000 MHz" in turbo.name and not turbo.assumed
