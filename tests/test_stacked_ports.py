"""The stacks' one-port-per-core map end to end (configs/mercury.py `memory()`: port_map 'requester'): every
request reaches the stack as the core that owns it, a writeback as the core whose data it is and the NIC's DMA as
its queue's core, so each memcached instance's traffic stays on its own port and no port carries the others'.
The exact routing is tested in models/timing/tests/port_owner.rs and the engine's `net::tests`.
"""

from __future__ import annotations

import pytest

import configs
from models.sim import simulate
from models.socket import socket_path

mercury = configs.load("mercury")
keyvault = configs.load("keyvault")

PORTS = 16
MEM = f"{socket_path(0)}.mem."              # the stack's statistics


def port_bytes(stats) -> list[float]:
    return [(stats[f"{MEM}port{p}.reads"] + stats[f"{MEM}port{p}.writes"]) * 64 for p in range(PORTS)]


@pytest.mark.parametrize("platform, cores", [("mercury", 32), ("keyvault", 16)])
def test_each_cores_traffic_stays_on_its_port_so_the_ports_are_balanced(engine, tmp_path, platform, cores):
    # KeyVault on the ring NIC, so that the NIC's DMA reaches memory (its zero-copy NIC writes into the cores'
    # caches, and its 2 MB L2s keep a short run's data: no writes would reach the stack).
    extra = {} if platform == "mercury" else {"nic": "rings", "switch": False}
    system = (mercury if platform == "mercury" else keyvault).system(cores=cores, items=4096, requests=3000, **extra)
    assert system.memory.kind == "dram3d" and system.memory.dram3d.port_map == "requester"
    stats = simulate(system, outdir=tmp_path).stats
    assert stats["client.requests"] == 3000
    per_port = port_bytes(stats)
    assert sum(per_port) == stats[f"{MEM}bytes"]
    mean = sum(per_port) / PORTS
    # Writebacks and the NIC's DMA go to their cores' ports: no port takes more than 1.6x the mean (before they
    # carried their core, port 0 took 56-60% of all bytes, 9-10x the mean).
    assert max(per_port) < 1.6 * mean and min(per_port) > 0.5 * mean, [round(b / mean, 2) for b in per_port]
    # Writes (dirty writebacks, received frames) are spread too: port 0 takes no more than its share.
    writes = [stats[f"{MEM}port{p}.writes"] for p in range(PORTS)]
    assert sum(writes) > 0 and writes[0] < 1.6 * sum(writes) / PORTS


def test_a_request_map_by_address_still_interleaves_lines(engine, tmp_path):
    system = mercury.system(cores=16, items=4096, requests=2000)
    system.memory.dram3d.port_map = "address"
    stats = simulate(system, outdir=tmp_path).stats
    assert stats["client.requests"] == 2000 and all(b > 0 for b in port_bytes(stats))
