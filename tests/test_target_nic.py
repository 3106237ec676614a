"""The billion-RPS target's NICs can keep their line rate's PCIe reads outstanding (issue 28 item 2).

Little's law, as a lower bound: a port transmitting at line rate with the smallest frames reads each frame's data
once, and a read holds its tag for at least the link's round trip (2 x Nic.pcie_latency; the memory's time and the
descriptor reads left out). Fewer tags than that cap the port below its line rate whatever the cores do, which is
what bounded the session-9 LLC study with the Nic default's 32 (5-bit) tags."""

import pytest

from configs import brps_target_dual, brps_target_quad, brps_target_socket
from drivers.capacity import line_rate_mpps
from models.nic import Nic

PS = 1e-12


def reads_outstanding_at_line_rate(system) -> float:
    nic = system.active_nics()[0]
    round_trip_s = 2 * nic.pcie_latency * PS
    return line_rate_mpps(system) * 1e6 * round_trip_s


@pytest.mark.parametrize("make", [brps_target_socket.system, brps_target_dual.system, brps_target_quad.system])
def test_every_target_port_has_tags_for_its_line_rate(make):
    system = make()
    need = reads_outstanding_at_line_rate(system)
    for nic in system.active_nics():
        assert nic.pcie_read_tags >= need, (nic.pcie_read_tags, need)
        assert nic.pcie_read_tags <= 256   # 8-bit tags (the assumption): not the optional 10-bit requester's 768


def test_the_5_bit_default_could_not_reach_the_target_s_line_rate():
    # Why the target sets its own: the Nic default (32 tags, extended tags off) is below the bound.
    assert Nic().pcie_read_tags == 32
    assert reads_outstanding_at_line_rate(brps_target_socket.system()) > 32
