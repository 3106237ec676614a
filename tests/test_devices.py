"""Several NICs on the device bus, seen from a guest and from whole KVS runs: discovery (NIC_COUNT, NIC_QUEUE_NIC,
each NIC's register window), a hole between NICs' windows faulting with its address, and the KVS server on two
NICs. Range dispatch, steering per NIC and line rate per NIC are unit-tested in models/engine/src/bus.rs and
net.rs."""

from __future__ import annotations

import pytest

from models.errors import MemoryFault
from models.nic import Nic
from models.params import ParamError
from models.sim import simulate
from models.system import System, Workload

from conftest import cross_compile

NIC_WINDOW = 0x40_0000
DEVICE_BASE = 0x30_0000_0000

PROBE = r"""
#include "kvsim.h"
#include "kvsim_libc.h"

static long call(long nr, long a) { return kvsim_call2(nr, a, 0); }

static unsigned long hex(const char *s) {
    unsigned long v = 0;
    for (; *s; s++)
        v = v * 16 + (unsigned long)(*s <= '9' ? *s - '0' : *s - 'a' + 10);
    return v;
}

int main(int argc, char **argv) {
    long h = kvsim_hart_id();
    long nics = call(0x4b56000c, 0), q = call(0x4b560009, h);
    long nic = call(0x4b56000d, q), regs = call(0x4b56000a, q), port = call(0x4b56000b, q);
    volatile unsigned long *r = (volatile unsigned long *)regs;
    long qid = (long)r[0x48 / 8], pid = (long)r[0x50 / 8];
    printf("hart %ld nics %ld q %ld nic %ld regs %lx port %ld qid %ld pid %ld\n", h, nics, q, nic, regs, port, qid,
           pid);
    if (h == 0 && argc > 1)
        (void)*(volatile unsigned long *)hex(argv[1]);
    hart_exit(0);
    return 0;
}
"""


@pytest.fixture(scope="module")
def probe(engine, tmp_path_factory):
    d = tmp_path_factory.mktemp("devices")
    src = d / "devices_probe.c"
    src.write_text(PROBE)
    return cross_compile([src], d / "devices_probe", runtime=True)


def two_nic_system(binary, argv=()) -> System:
    # NIC 0: one port; NIC 1: two ports. Four harts: queues 0 and 1 on NIC 0, 2 on NIC 1 port 0, 3 on its port 1
    # (4 queues over 3 ports in contiguous blocks: q * 3 // 4).
    return System(harts=4, workload=Workload(binary=str(binary), argv=list(argv)),
                  nics=[Nic(enabled=True, ports=1), Nic(enabled=True, ports=2)])


def lines(result) -> dict[int, dict[str, str]]:
    out = {}
    for line in bytes(result.stdout).decode().splitlines():
        f = line.split()
        out[int(f[1])] = dict(zip(f[0::2], f[1::2]))
    return out


def test_the_guest_discovers_every_nic_and_its_window(probe):
    got = lines(simulate(two_nic_system(probe)))
    want = {0: (0, 0, 0, 0), 1: (0, 1, 0, 0), 2: (1, 0, 1, 0), 3: (1, 1, 2, 1)}  # nic, queue in it, port, its port
    for h, (nic, local, port, local_port) in want.items():
        f = got[h]
        assert (f["nics"], f["q"], f["nic"]) == ("2", str(h), str(nic))
        assert int(f["regs"], 16) == DEVICE_BASE + nic * NIC_WINDOW + local * 0x1000
        assert (f["port"], f["qid"], f["pid"]) == (str(port), str(local), str(local_port))


@pytest.mark.parametrize("addr", [DEVICE_BASE + 2 * 0x1000, DEVICE_BASE + NIC_WINDOW - 8,
                                  DEVICE_BASE + 2 * NIC_WINDOW])
def test_a_hole_between_devices_is_a_memory_fault_naming_the_address(probe, addr):
    with pytest.raises(MemoryFault, match=f"{addr:#x}.*no device at this address") as info:
        simulate(two_nic_system(probe, [f"{addr:x}"]))
    assert info.value.hart == 0


def test_nics_and_nic_are_one_description():
    with pytest.raises(ParamError, match="describe them in one place"):
        System(workload=Workload(binary="x"), nic=Nic(enabled=True), nics=[Nic(enabled=True)]).validate()
    # `--set nic.x=...` on a config that lists its NICs would change nothing: refused, naming the parameter.
    with pytest.raises(ParamError, match=r"System.nic.pcie_lanes is set but System.nics"):
        System(workload=Workload(binary="x"), nic=Nic(pcie_lanes=16), nics=[Nic(enabled=True)]).validate()
    with pytest.raises(ParamError, match="same ddio_ways"):
        System(workload=Workload(binary="x"), harts=2,
               nics=[Nic(enabled=True), Nic(enabled=True, ddio_ways=0.5)]).validate()
    with pytest.raises(ParamError, match="3 ports in all but only 2 harts"):
        System(workload=Workload(binary="x"), harts=2, nics=[Nic(enabled=True), Nic(enabled=True, ports=2)]).validate()


def test_the_kvs_server_on_two_nics(engine):
    """The Xeon socket with 4 cores on 2 ports: two NICs of one port each, each on its own PCIe link. Every
    response is checked by the client; each NIC's queues carry their own cores' requests."""
    from configs import xeon_e5_2697v2_socket as xeon

    system = xeon.system(cores=4, ports=2, items=4096, requests=2000)
    assert [n.ports for n in system.nics] == [1, 1]
    s = simulate(system).stats
    assert s["client.requests"] == 2000 and s["client.misses"] == 0
    for k in (0, 1):
        # Cores 2k and 2k+1 own queues 0 and 1 of NIC k.
        delivered = s[f"system.nic{k}.queue0.rx_frames"] + s[f"system.nic{k}.queue1.rx_frames"]
        parts = s[f"client.partition{2 * k}.requests"] + s[f"client.partition{2 * k + 1}.requests"]
        assert delivered == s[f"system.nic{k}.port0.rx_frames"] > 0
        assert parts > 0
        assert s[f"system.nic{k}.pcie.tlps"] > 0
    assert "system.nic2.port0.rx_frames" not in s
    # The memory system's messages, the NICs' DMA among them, cross the socket's ring: its counters are under the
    # tree's path, per directed link and per router, for the power model.
    noc = "system.socket0.noc."
    assert s[noc + "hops"] >= s[noc + "flits"] > 0
    links = [k for k in s if k.startswith(noc + "link") and k.endswith(".flits")]
    assert "system.socket0.noc.link0_1.flits" in links and "system.socket0.noc.link1_0.flits" in links
    assert sum(s[k] for k in links) > 0
    assert s[noc + "router0.flits"] > 0, "the NICs' stop"


def test_set_reaches_one_nic_of_the_list():
    from configs import xeon_e5_2697v2_socket as xeon
    from drivers.cli import run

    system = xeon.system(cores=12)
    before = [n.pcie_lanes for n in system.nics]
    run.apply_override(system, "nics.1.pcie_lanes=16")
    assert [n.pcie_lanes for n in system.nics] == [before[0], 16, *before[2:]]
