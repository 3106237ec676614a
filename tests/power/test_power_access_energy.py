"""Issue 26, session 12: McPAT's energy per counted event, measured by raising one statistic of its input at a time
(power/access_energy.py, sim-scripts/mcpat_access_energy.py)."""

from __future__ import annotations

import pytest

from power import access_energy as ae

XML = """<component id="system.core0" name="core0">
  <stat name="total_cycles" value="1000" />
  <component id="system.core0.icache" name="icache">
    <stat name="read_accesses" value="10" />
  </component>
  <component id="system.core0.dcache" name="dcache">
    <stat name="read_accesses" value="6753859" />
    <stat name="write_misses" value="27522" />
  </component>
</component>"""


def test_raising_one_statistic_changes_that_statistic_of_that_component_only():
    out = ae.raised(XML, ae.parse_variation("system.core0.dcache:write_misses", 1e6))
    assert '<stat name="write_misses" value="1027522.0" />' in out
    assert out.replace('value="1027522.0"', 'value="27522"') == XML
    out = ae.raised(XML, ae.parse_variation("system.core0.icache:read_accesses", 5))
    assert '<stat name="read_accesses" value="15.0" />' in out and 'value="6753859"' in out


def test_a_missing_component_or_statistic_is_an_error_not_a_zero():
    with pytest.raises(KeyError, match="system.core0.l2"):
        ae.raised(XML, ae.Variation("system.core0.l2", "read_accesses", 1.0))
    with pytest.raises(KeyError, match="write_accesses"):
        ae.raised(XML, ae.Variation("system.core0.dcache", "write_accesses", 1.0))
    # a statistic of a sub-component is not the parent's
    with pytest.raises(KeyError, match="read_accesses"):
        ae.raised(XML.replace('<stat name="total_cycles" value="1000" />', ""),
                  ae.Variation("system.core0", "read_accesses", 1.0))
    with pytest.raises(ValueError, match="COMPONENT:STAT"):
        ae.parse_variation("system.core0.dcache", 1.0)


def test_energy_per_event_is_the_power_change_times_the_interval_over_the_count():
    # McPAT's exported Xeon L1: +1.2524 W over 0.5788 ms for 10^6 more reads
    assert ae.energy_per_event_nJ(14.5498, 15.8022, 0.5788285e-3, 1e6) == pytest.approx(0.7249, abs=1e-4)
