"""KeyVault's network end to end: the zero-copy NIC (Nic.interface = 'zero_copy', models/engine/src/zcnic.rs) and
the KVD switch (Nic.switch, models/kvd.py, kvd.rs), with the memcached-class server's zero-copy driver
(workloads/mcd/main_riscv.c, chosen from the queue's INTERFACE register). The ghost client checks every response
against its model of the store (a wrong or lost response fails the run); these tests check the statistics on top.
Exact ticks of the RX and TX paths and of the switch are the Rust tests in zcnic_tests.rs and kvd.rs.
"""

from __future__ import annotations

import pytest

import configs
from models.kvd import KvdSwitch
from models.nic import Nic
from models.params import ParamError
from models.sim import simulate
from models.socket import Socket

from conftest import make_system

keyvault = configs.load("keyvault")
mercury = configs.load("mercury")


def run(tmp_path, cores, mode="detailed", requests=1000, **kw):
    kw.setdefault("items", 4096)
    system = keyvault.system(cores=cores, store_mem="4MiB", requests=requests, get_ratio=0.8, delete_ratio=0.05,
                             **kw)
    system.mode = mode
    return simulate(system, outdir=tmp_path).stats


def check_every_response(st, cores, requests, items=4096):
    assert st["client.requests"] == requests
    assert st["client.responses_checked"] == requests + items      # the bulk load's SETs are checked too
    assert st["client.loss"] == 0
    assert st["client.hits"] + st["client.misses"] == st["client.gets"] and st["client.hits"] > 0.7 * requests
    per_core = [st[f"client.core{c}.requests"] for c in range(cores)]
    assert sum(per_core) == requests and min(per_core) > 0


@pytest.mark.parametrize("cores", [2, 16])
def test_keyvault_answers_every_request_through_the_zero_copy_nic_deterministically(mcd_server, tmp_path, cores):
    a = run(tmp_path / "a", cores)
    check_every_response(a, cores, 1000)
    # Every frame went through the slots in the cores' caches: 100-byte class frames take the status line and two
    # frame lines each way; nothing crossed a PCIe link or touched a descriptor.
    frames = a["system.nic0.port0.rx_frames"]
    assert frames == 1000 and a["system.nic0.port0.tx_frames"] == 1000
    assert 2 * frames <= a["system.nic0.zc.rx_lines"] <= 4 * frames
    assert 2 * frames <= a["system.nic0.zc.tx_lines"] <= 4 * frames
    assert a["system.nic0.pcie.up_bytes"] == a["system.nic0.pcie.down_bytes"] == a["system.nic0.pcie.tlps"] == 0
    assert a["system.nic0.rx_writebacks"] == 0
    assert a["system.nic0.switch.down_frames"] == a["system.nic0.switch.up_frames"] == 1000
    b = run(tmp_path / "b", cores)
    assert a == b


def test_a_functional_run_checks_every_response_on_16_cores(mcd_server, tmp_path):
    st = run(tmp_path, 16, mode="functional", requests=3000)
    check_every_response(st, 16, 3000)


def test_the_ring_nic_still_serves_the_same_server_binary(mcd_server, tmp_path):
    """The server picks the ring driver when the INTERFACE register says rings; nothing zero-copy or switch-like is
    simulated or reported then."""
    st = run(tmp_path, 2, nic="rings", switch=False)
    check_every_response(st, 2, 1000)
    assert st["system.nic0.pcie.up_bytes"] > 0
    assert not [k for k in st if ".zc." in k or ".switch." in k]


def test_a_stack_behind_the_switch_gets_its_share_of_the_uplink(mcd_server, tmp_path):
    """Offered far more than its share, the stack's requests arrive no faster than 10 GbE / 12 carries them; alone
    behind the switch (stacks = 1) it gets the whole uplink and serves several times more."""
    def measure(stacks):
        system = keyvault.system(cores=4, store_mem="4MiB", items=4096, requests=1200, get_ratio=0.9,
                                 offered_mpps=6.0)
        system.nic.switch.stacks = stacks
        return simulate(system, outdir=tmp_path / f"s{stacks}").stats

    shared, alone = measure(12), measure(1)
    for st in (shared, alone):
        assert st["client.responses_checked"] == st["client.requests"] - st["client.lost_requests"] + 4096
    share = shared["system.nic0.switch.share_gbps"]
    assert share == pytest.approx(10 / 12)
    # Bytes per request frame on the wire (frame + 24), and the most frames per second the share carries.
    wire = shared["system.nic0.switch.down_wire_bytes"] / shared["system.nic0.switch.down_frames"]
    share_fps = share * 1e9 / 8 / wire
    assert shared["system.nic0.port0.rx_frames_per_s"] <= share_fps * 1.001
    assert shared["system.nic0.port0.rx_frames_per_s"] > 0.9 * share_fps     # and it is the bottleneck
    assert alone["system.nic0.port0.rx_frames_per_s"] > 3 * shared["system.nic0.port0.rx_frames_per_s"]


def test_the_kvd_switch_parameters_come_from_the_source():
    sw = KvdSwitch()
    assert (sw.ports, sw.power_w, sw.area_mm2, sw.uplink_gbps, sw.stacks) == (12, 0.819, 32.0, 10.0, 12)
    assert not sw.enabled
    assert sw.share_gbps() == pytest.approx(10 / 12)


def test_bad_zero_copy_and_switch_settings_are_refused_naming_the_parameter():
    with pytest.raises(ParamError, match=r"KvdSwitch.stacks = 13.*KvdSwitch.ports = 12"):
        KvdSwitch(stacks=13).validate()
    for name, value in (("tx_completion", "head_pointer"), ("rx_wb_threshold", 4)):
        nic = Nic(enabled=True, interface="zero_copy", rx_wb_timer="1us")
        setattr(nic, name, value)
        with pytest.raises(ParamError, match=r"Nic.interface = 'zero_copy' has no descriptors.*Nic." + name):
            nic.validate()
    # The NIC writes frames into a core's own caches: one socket only.
    s = make_system("/bin/true", harts=4, mode="detailed", sockets=[Socket(cores=2), Socket(cores=2)],
                    nic=Nic(enabled=True, interface="zero_copy"))
    with pytest.raises(ParamError, match=r"Nic.interface = 'zero_copy'.*one-socket system"):
        s.validate()


def test_the_capacity_search_starts_at_the_stacks_share_of_the_uplink():
    from drivers.capacity import MIN_WIRE_FRAME, line_rate_mpps

    assert line_rate_mpps(keyvault.system(cores=2)) == pytest.approx(10e9 / 12 / 8 / MIN_WIRE_FRAME / 1e6)
    assert line_rate_mpps(keyvault.system(cores=2, switch=False)) == pytest.approx(10e9 / 8 / MIN_WIRE_FRAME / 1e6)


def test_the_zero_copy_path_serves_memcached_over_tcp(mcd_server, tmp_path):
    """KeyVault's zero-copy driver serves the memcached server's TCP path too (the client checks every segment and
    every response); a 100-byte MSS splits the streams into more segments than the standard 1460."""
    def tcp(mss):
        st = run(tmp_path / str(mss), 2, mode="functional", requests=600, transport="tcp", tcp_mss=mss, items=512)
        check_every_response(st, 2, 600, items=512)
        return st["client.tcp.segments_received"]

    assert tcp(100) > 1.2 * tcp(1460)
