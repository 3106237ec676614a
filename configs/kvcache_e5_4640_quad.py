"""The KV-Cache server (Waddington et al., "KV-Cache: A Scalable High-Performance Web-Object Cache for Manycore",
platforms.md §4): four Xeon E5-4640 (Sandy Bridge-EP), one 10 GbE NIC per socket DMA-ing into its socket's LLC,
serving 64-byte GETs.

| KV-Cache's platform                                        | here                                                |
| ---------------------------------------------------------- | --------------------------------------------------- |
| 4 x Intel Xeon E5-4640, 8 cores each, 2.4 GHz              | SOCKETS, CORES_PER_SOCKET, CLOCK, `core()`          |
| 20 MB L3 per socket                                        | `caches()` (MICA's E5-2680 socket, same die)        |
| 4 channels of DDR3-1600 per socket                         | `memory()` (Intel ARK, E5-4640)                     |
| 1 x Intel X540 10 GbE NIC per socket, DMA into the LLC     | `nic()`: one port on PCIe 2.1 x8, DDIO              |
| KV-Cache: a memcached-protocol cache on a user-level stack | `system()`: the memcached-class server over UDP     |
| 64-byte GETs                                               | Client: 64-byte values, all GETs                    |

The workload is the nearest kvsim has: the memcached-class server (workloads/mcd), one single-threaded instance
per core on its own NIC queue, speaking the memcached binary protocol over UDP through a poll-mode driver. KV-Cache
itself differs: its own hash table and memory manager (not memcached's store), its own user-level TCP/UDP stack
and its request pipelining are not modelled; what is common is a memcached-protocol cache whose network path
bypasses the kernel. Values the paper does not give are commented "assumed".

What the model misses against the paper (not calibrated to its results):
- The software: KV-Cache's own store, memory manager, user-level TCP/UDP stack and request pipelining (above); the
  memcached-class server's instruction count per request is its own, not KV-Cache's.
- The cores run RV64 code on the Sandy Bridge timing model (configs/mica_e5_2680_dual.py says what that misses).
- The sockets: the E5-4600 platform's QPI ring, where the opposite socket is two hops away, is modelled fully
  connected with one hop (see `system()`); a request is served on its NIC's socket, so this matters only for
  memory and coherence traffic that crosses sockets.
- The NIC: the X540 is timed as the 82599 (same driver family; the X540's own 10GBASE-T PHY and its latency are
  not modelled); the clients, wire and switch are the ghost client at the port.
- Memory placement: the runtime's hugepage allocations are carved from each socket's heap of 2 MB pages as DPDK's
  rte_malloc carves its heap (see configs/mica_e5_2680_dual.py), not from a user-level stack's own buffer pools.

`system(cores_per_socket=N, sockets=S)` gives a reduced server (N active cores on each of S sockets, each socket
keeping its whole LLC and memory, one NIC each). `nic_sockets` lists the socket of each NIC (default: one per
socket, in order); a NIC on a socket that does not exist is refused when the System validates.
"""

from models import System, Workload
from models.client import Client
from models.core import Core
from models.link import SocketLink
from models.nic import Nic

from . import _multisocket, mercury
from . import mica_e5_2680_dual as sandy

MCD_SERVER = mercury.MCD_SERVER

SOCKETS = 4                    # four Xeon E5-4640 (KV-Cache)
CORES_PER_SOCKET = 8           # 8 cores per socket (Intel ARK, E5-4640)
CLOCK = "2.4GHz"               # 2.4 GHz base clock (Intel ARK); turbo off: assumed
VALUE_BYTES = 64               # 64-byte GETs (KV-Cache's measurement)
KEY_BYTES = 16                 # assumed: kvs-workload.md's Small keys (KV-Cache's key size is not in the spec)
QPI_LINKS = 1                  # one QPI link (8 GT/s) between each pair in the model: see `system()`


def core() -> Core:
    # The Sandy Bridge core (as MICA's E5-2680: configs/mica_e5_2680_dual.py) at the E5-4640's clock.
    c = sandy.core()
    c.clock = CLOCK
    return c


def nic() -> Nic:
    """One X540: a single 10 GbE port used (KV-Cache: one 10 GbE NIC per socket) on a PCIe 2.1 x8 link (Intel X540
    datasheet: 5 GT/s x8; PCIe 2.1 has 2.0's signalling and framing). The X540's MAC and DMA engines are the
    82599's (the same ixgbe driver family), so its queue, write-back and TX-completion behaviour is the one of
    configs/xeon_e5_2697v2_socket.py (assumed for KV-Cache's own poll-mode driver); DDIO into 2 of 20 ways."""
    n = sandy.nic(ports=1)
    n.pcie_gen, n.pcie_lanes = 2, 8
    return n


def socket_system(cores: int, requests: int, items: int, offered_mpps: float, store_mem: str, **client) -> System:
    """One socket with `cores` active cores and its NIC, before it is repeated."""
    n = nic()
    settings = dict(protocol="memcached", transport="udp", items=items, key_size=KEY_BYTES, value_size=VALUE_BYTES,
                    get_ratio=1.0, popularity="uniform", requests=requests, offered_mpps=offered_mpps,
                    window=32)      # 8 queues x 32 frames = 256, inside the 512-frame RX FIFO (assumed)
    settings.update(client)
    tech = sandy.technology()
    tech.part, tech.tdp = "xeon-e5-4640", 95.0          # TDP 95 W (Intel ARK)
    return System(
        harts=cores,
        clock=CLOCK,
        mem_limit="8GiB",              # assumed: the run's touch limit per socket (the server's DRAM is larger)
        mode="detailed",
        detailed_start="roi",          # the client's measured phase is the region of interest
        warm_caches=True,
        quantum=200,                   # assumed: instructions per scheduling turn
        core=core(),
        caches=sandy.caches(),         # 32 KB L1s, 256 KB L2, 20 MB 20-way L3 in 8 slices (the same die)
        memory=sandy.memory(),         # 4 channels of DDR3-1600 (Intel ARK, E5-4640)
        cores_per_cluster=1,
        noc=sandy.noc(1),              # the ring, the NIC's PCIe root at stop 0
        # Instance i serves UDP port base + i; each instance's store: assumed, small to keep simulations short.
        workload=Workload(binary=str(MCD_SERVER), argv=[f"port={n.steering_base_port}", f"mem={store_mem}"]),
        nics=[n],
        client=Client(enabled=True, **settings),
        technology=tech,
    )


def system(cores_per_socket: int = CORES_PER_SOCKET, sockets: int = SOCKETS, requests: int = 0,
           items: int = 1 << 16, offered_mpps: float = 0.0, nic_sockets: list[int] | None = None,
           store_mem: str = "16MiB", **client) -> System:
    """The server (see the module doc). `requests` = 0: 500 measured requests per core."""
    if not 1 <= cores_per_socket <= CORES_PER_SOCKET:
        raise ValueError(f"cores_per_socket = {cores_per_socket}: an E5-4640 has 1 to {CORES_PER_SOCKET} cores")
    if not 1 <= sockets <= SOCKETS:
        raise ValueError(f"sockets = {sockets}: the server has 1 to {SOCKETS} sockets")
    mercury.check_store_mem("kvcache", store_mem)
    requests = requests or 500 * cores_per_socket * sockets
    single = socket_system(cores_per_socket, requests, items, offered_mpps, store_mem, **client)
    server = _multisocket.replicate(single, sockets)
    if nic_sockets is not None:
        # NICs in the order given; the NoC places each at the socket's PCIe root (stop 0) whatever their number.
        server.nics = [nic() for _ in nic_sockets]
        for n, k in zip(server.nics, nic_sockets):
            n.socket = k
        for s in server.sockets:
            s.noc.nic_routers = []
    # The E5-4600 platform joins four sockets by QPI at 8 GT/s (Intel ARK: 2 links per socket, so four sockets form
    # a ring and the opposite socket is two hops away); the link model is fully connected, one link per pair here:
    # a remote access pays one hop. Latency and flit format: the link model's defaults.
    server.socket_link = SocketLink(rate=8.0, links_per_pair=QPI_LINKS)
    return server
