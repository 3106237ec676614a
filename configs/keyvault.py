"""KeyVault (platforms.md section 3; Gutierrez et al., ASPLOS 2014): 2-16 A15-class cores at 1.5 GHz with 32 KB
L1s and a 2 MB L2 each, over Mercury's 3D DRAM; an integrated zero-copy NIC on the cache hierarchy; a 12-port
key-value distributor switch joins up to 12 stacks to one 10 GbE port, about 144 stacks per 1.5U on 12 switches.

Wired: the stack (models.stacked), the server with its switches (models.dense_server), and Mercury's system with
its memcached client and stacked-DRAM memory (configs/mercury.py), with KeyVault's own network: the zero-copy NIC
(Nic.interface = 'zero_copy', models/engine/src/zcnic.rs: per-queue registers, receive and send slots in the cores'
caches, no descriptor rings, no PCIe) behind the KVD switch (Nic.switch, models/kvd.py: the stack gets 1/12 of the
switch's 10 GbE uplink, plus the switch's forwarding latency). One stack is simulated; the cluster's other 11
stacks are the shares of the uplink they take. `system(nic='rings', switch=False)` gives the stack as it was
before (the PCIe NIC on its own 10 GbE port), for comparison."""

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


# The on-die trip between the zero-copy NIC and a core's cache controller, each way (Nic.mmio_latency: doorbells,
# and the start of a frame's write into the caches): assumed 10 ns, 15 cycles at 1.5 GHz over the logic die.
NIC_CORE_LATENCY = "10ns"


def system(cores: int = 16, latency: str = "10ns", store_mem: str = "64MiB", nic: str = "zero_copy",
           switch: bool = True, **client_kw) -> System:
    """One KeyVault stack; `nic` is Nic.interface ('zero_copy', or 'rings' for the PCIe NIC), `switch` puts the
    stack behind its KVD switch (off: on its own 10 GbE port)."""
    _check(cores)
    # The stack's NIC is its own (not Mercury's integrated MAC): the zero-copy NIC on the cache hierarchy, or for
    # comparison (nic = 'rings') the PCIe NIC with descriptor rings on one 10 GbE port.
    s = mercury.system(cores=cores, core_kind="a15", clock="1.5GHz", l2=True, latency=latency,
                       store_mem=store_mem, nic=Nic(enabled=True, ports=1, port_gbps=10.0), **client_kw)
    s.nic.interface = nic
    if nic == "zero_copy":
        s.nic.mmio_latency = NIC_CORE_LATENCY
    s.nic.switch.enabled = switch
    s.validate()
    return s
