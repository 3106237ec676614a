"""The Xeon's NICs as built and the PCIe protocol's parameters (models/nic.py): the X520-QDA1 as two 82599
controllers per card, each on its own link; bad ring and PCIe sizes stopped before the run with a ParamError that
names them; and, end to end, the upstream PCIe bytes per request by TLP kind with DLLPs counted."""

from __future__ import annotations

import pytest

from configs import xeon_e5_2697v2_socket as xeon
from models.nic import Nic
from models.params import ParamError


@pytest.mark.parametrize(("ports", "controllers"), [(1, [1]), (2, [1, 1]), (3, [2, 1]), (4, [2, 2]),
                                                    (6, [2, 1, 2, 1])])
def test_ports_spread_over_two_cards_of_two_dual_port_controllers(ports, controllers):
    nics = xeon.nics(ports)
    assert [n.ports for n in nics] == controllers
    assert all((n.pcie_gen, n.pcie_lanes) == (2, 8) for n in nics), "each 82599 has its own PCIe 2.0 x8 link"
    s = xeon.system(cores=2 * ports, ports=ports)
    s.validate()
    assert len(s.noc.nic_routers) == len(controllers)


@pytest.mark.parametrize(("arg", "words"), [
    ("rx_ring=8192", ["rx_ring=8192", "power of two in [8, 4096]"]),
    ("tx_ring=100", ["tx_ring=100", "power of two"]),
    ("rx_ring=4", ["rx_ring=4", "power of two in [8, 4096]"]),
])
def test_a_ring_the_nic_cannot_hold_is_refused_before_the_run(arg, words):
    s = xeon.system(cores=1)
    s.workload.argv = [*s.workload.argv, arg]
    with pytest.raises(ParamError) as e:
        s.validate()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_a_ring_within_a_smaller_nic_limit_only():
    s = xeon.system(cores=1)
    s.workload.argv = [*s.workload.argv, "tx_ring=1024"]
    s.validate()
    s.nics[0].max_ring_descriptors = 512
    with pytest.raises(ParamError, match=r"tx_ring=1024 exceeds NIC 0's ring limit"):
        s.validate()


@pytest.mark.parametrize(("field", "value"), [("pcie_max_payload", 384), ("pcie_max_read_request", 768),
                                              ("pcie_read_completion_boundary", 96), ("rx_desc_fetch", 6),
                                              ("pcie_max_payload", 64)])
def test_pcie_sizes_are_powers_of_two_in_range(field, value):
    n = Nic(enabled=True)
    with pytest.raises(ParamError, match=field):
        setattr(n, field, value)
        n.validate()


def test_upstream_bytes_per_request_by_tlp_kind(engine):
    """One core, one port: every RX frame is one memory write (80 bytes + 24), the descriptors' write-backs and
    fetches, the TX reads' requests (24 each), the completions' write-backs; Acks and UpdateFCs travel besides."""
    from models.sim import simulate

    r = simulate(xeon.system(cores=1, requests=1500, offered_mpps=4.0))
    s = r.stats
    assert r.stop_reason == "client_done"
    p = "system.nic0.pcie."
    frames = s["system.nic0.port0.rx_frames"]
    # One memory write per frame, two where its buffer crosses a 4 KB boundary (a request may not cross one), each
    # its payload plus 8 bytes of framing and a 16-byte header: exactly the frames' bytes + 24 per TLP.
    writes = s[p + "up_tlps.rx_data"]
    assert frames < writes < 1.1 * frames
    assert s[p + "up_bytes.rx_data"] - 24 * writes == s["system.nic0.port0.rx_bytes"]
    assert s[p + "tlps.mem_write"] == sum(s[p + f"up_tlps.{k}"] for k in ("rx_data", "rx_writeback",
                                                                          "tx_completion"))
    assert s[p + "tlps.mem_read"] == sum(s[p + f"up_tlps.{k}"] for k in ("rx_desc_fetch", "tx_desc_fetch",
                                                                         "tx_data"))
    # Every read request is a header-only 24-byte TLP; DLLPs are the rest of the link's bytes.
    reads = s[p + "tlps.mem_read"]
    assert s[p + "up_bytes.tx_data"] == 24 * s[p + "up_tlps.tx_data"]
    kinds = sum(s[p + f"up_bytes.{k}"] for k in ("rx_data", "rx_writeback", "rx_desc_fetch", "tx_desc_fetch",
                                                  "tx_data", "tx_completion"))
    assert s[p + "up_bytes"] == kinds + 8 * s[p + "up_dllps"]
    assert s[p + "down_dllps"] > 0 and s[p + "up_dllps"] > 0 and reads > 0
    # The queue's I/O footprint is counted: at least the RX ring's 128 descriptors (32 lines).
    assert s["system.nic0.queue0.io_lines"] >= 32
