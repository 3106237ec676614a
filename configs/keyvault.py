"""KeyVault (platforms.md section 3; Gutierrez et al., ASPLOS 2014): 2-16 A15-class cores at 1.5 GHz with 32 KB
L1s and a 2 MB L2 each, over Mercury's 3D DRAM; an integrated zero-copy NIC on the cache hierarchy; a 12-port
key-value distributor switch joins up to 12 stacks to one 10 GbE port, about 144 stacks per 1.5U on 12 switches.

Wired: the stack (models.stacked), the server with its switches (models.dense_server), and Mercury's system with
its memcached client and stacked-DRAM memory (configs/mercury.py). Not modelled in the engine: the zero-copy NIC and
the KVD switch (the NIC is the PCIe NIC model)."""

from models import System
from models.dense_server import DenseServer
from models.nic import Nic
from models.stacked import Stack

from . import mercury

MIN_CORES, MAX_CORES = 2, 16                    # 2-16 cores per stack (source)


def _check(cores: int) -> None:
    if not MIN_CORES <= cores <= MAX_CORES:
        raise ValueError(f"KeyVault cores = {cores}: must be in [{MIN_CORES}, {MAX_CORES}] (platforms.md)")


def stack(cores: int = 16, latency: str = "10ns") -> Stack:
    _check(cores)
    return mercury.stack(cores, latency)


def server(stacks: int = 144) -> DenseServer:
    # 12 stacks per switch and port, 12 switches (source).
    return DenseServer(stacks=stacks, stacks_per_port=12)


def system(cores: int = 16, latency: str = "10ns", store_mem: str = "64MiB", **client_kw) -> System:
    _check(cores)
    return mercury.system(cores=cores, core_kind="a15", clock="1.5GHz", l2=True, latency=latency,
                          store_mem=store_mem, nic=Nic(enabled=True, ports=1, port_gbps=10.0), **client_kw)
