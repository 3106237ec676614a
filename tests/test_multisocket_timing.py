"""Detailed timing of several sockets joined by inter-socket links (models/link.py; the exact-tick tests of the
link, the system network and the directory across sockets are in models/timing/tests/multisocket.rs): the
parameters and their errors, and a small two-socket KVS run end to end through the real driver."""

from __future__ import annotations

import pytest

from models.link import SocketLink
from models.nic import Nic
from models.params import ParamError
from models.sim import simulate
from models.socket import Socket

from conftest import make_system


def two_sockets(cores: int = 2, **params):
    """A detailed System of two sockets of `cores` cores each (the declared defaults otherwise)."""
    return make_system("/bin/true", harts=2 * cores, mode="detailed",
                       sockets=[Socket(cores=cores), Socket(cores=cores)], **params)


# ---- parameters -------------------------------------------------------------------------------------------------

def test_the_qpi_defaults_give_sixteen_gigabytes_per_second_per_direction():
    link = SocketLink()
    assert link.flit_ps() == pytest.approx(500.0)
    assert link.payload_bytes_per_second() == pytest.approx(16e9)


def test_several_sockets_in_detailed_mode_are_accepted():
    two_sockets().validate()
    s = two_sockets(socket_link=SocketLink(pairs=[[0, 1]]))
    s.validate()


def test_a_link_to_a_socket_that_does_not_exist_is_refused():
    with pytest.raises(ParamError, match=r"System\.socket_link\.pairs\[0\] = \(0, 2\) names socket 2, which does "
                                         r"not exist: the system has sockets 0\.\.1"):
        two_sockets(socket_link=SocketLink(pairs=[[0, 2]])).validate()


def test_a_pair_of_sockets_without_a_link_is_refused():
    s = make_system("/bin/true", harts=3, mode="detailed", sockets=[Socket(cores=1)] * 3,
                    socket_link=SocketLink(pairs=[[0, 1], [1, 2]]))
    with pytest.raises(ParamError, match=r"System\.socket_link\.pairs joins no link between sockets 0 and 2"):
        s.validate()


def test_a_nic_on_a_socket_that_does_not_exist_is_refused():
    s = two_sockets(nics=[Nic(enabled=True), Nic(enabled=True, socket=2)])
    with pytest.raises(ParamError, match=r"System\.nics\[1\]\.socket = 2: socket 2 does not exist, the system has "
                                         r"sockets 0\.\.1"):
        s.validate()
    s = make_system("/bin/true", nic=Nic(enabled=True, socket=1))
    with pytest.raises(ParamError, match=r"System\.nic\.socket = 1: socket 1 does not exist, the system has "
                                         r"sockets 0\.\.0"):
        s.validate()


def test_sockets_with_different_caches_are_refused_in_detailed_mode():
    s = two_sockets()
    s.sockets[1].caches.llc.size = "4MiB"
    with pytest.raises(ParamError, match=r"System\.sockets\[1\]\.caches differs from System\.sockets\[0\]\.caches"):
        s.validate()
    s.mode = "functional"
    s.validate()


def test_a_flit_carrying_more_than_its_width_is_refused():
    with pytest.raises(ParamError, match=r"SocketLink\.flit_payload_bits = 96 exceeds SocketLink\.flit_bits = 80"):
        two_sockets(socket_link=SocketLink(flit_payload_bits=96)).validate()


# ---- end to end -------------------------------------------------------------------------------------------------

def test_a_two_socket_kvs_run_is_deterministic_and_moves_lines_across_the_link(engine):
    from configs import kvs_default

    def build():
        s = kvs_default.system(harts=4, requests=1500, items=4096)
        sock = dict(cores=2, cores_per_cluster=2, core=s.core, caches=s.caches, memory=s.memory, noc=s.noc)
        s.sockets = [Socket(**sock), Socket(**sock)]
        # The flat fields now live in the sockets: back to their defaults.
        for name in s.FLAT_SOCKET_FIELDS:
            setattr(s, name, s._params[name].fresh_default())
        s.nic = Nic()
        s.nics = [Nic(enabled=True, socket=0, queues=2), Nic(enabled=True, socket=1, queues=2)]
        return s

    first = simulate(build())
    assert first.stop_reason == "client_done", (first.stop_reason, bytes(first.stderr))
    stats = first.stats
    # Every line is on socket 0's memory until the server places its partitions (NUMA allocation): socket 1's
    # cores and NIC reach it across the link, both ways.
    for name in ("system.link0_1.messages", "system.link1_0.messages", "system.link0_1.payload_bytes",
                 "system.link1_0.payload_bytes", "system.link0_1.utilization"):
        assert stats[name] > 0, name
    assert stats["system.link0_1.flits"] >= stats["system.link0_1.messages"]
    for k in (0, 1):
        assert stats[f"system.socket{k}.core1.cycles"] > 0 and stats[f"system.socket{k}.noc.messages"] > 0
        assert f"system.socket{k}.mem.channel0.reads" in stats
    assert stats["client.requests"] == 1500 and stats["client.misses"] == 0 and stats["client.loss"] == 0
    again = simulate(build())
    assert again.stats == stats
