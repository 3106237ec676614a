"""MICA's own server (Lim et al., NSDI 2014, Section 5 "Evaluation", platforms.md §4): a dual-socket Xeon E5-2680
(Sandy Bridge-EP) serving MICA in EREW mode, one partition per core, through eight 10 GbE ports.

| MICA's hardware table                                       | here                                              |
| ----------------------------------------------------------- | ------------------------------------------------- |
| 2 x Intel Xeon E5-2680, 8 cores each, 2.7 GHz               | SOCKETS, CORES_PER_SOCKET, CLOCK, `core()`        |
| 20 MB L3 per socket (shared)                                | `caches()`                                        |
| 4 channels of DDR3-1600 per socket, 32 GB per socket        | `memory()`, MEM_PER_SOCKET                        |
| 4 x dual-port Intel X520 (82599 controller), 2 per socket,   | `nic()`: each card is its 82599 controller on its |
|   PCIe 2.0 x8 each: 8 ports, 4 per socket                   |   own PCIe 2.0 x8 link, 2 ports                   |
| MICA, EREW, one partition per core, DPDK                    | `system()`: kvs-server mode=erew, one queue/core  |
| Tiny items (8 B / 8 B) over 192 Mi keys; uniform or Zipf    | `system(popularity=..., get_ratio=...)`           |
|   0.99; 50% or 95% GET                                      |                                                   |

Values the paper does not give are commented "assumed". The core, cache latencies and the 82599's PCIe behaviour are
those of the Ivy Bridge-EP baseline (configs/xeon_e5_2697v2_socket.py): Sandy Bridge-EP has the same out-of-order
window (ROB 168, load buffer 64, store buffer 36: Intel's optimization reference manual, Sandy Bridge) and the same
82599 NIC controller, so they are taken from there, not repeated.

What the model misses against the paper (not calibrated to its results; each is a cause, not a correction):
- The cores. The Sandy Bridge core is the baseline's out-of-order timing model running MICA's RV64 build: the
  paper's x86 binary (its instruction count and mix, SSE, its prefetch instructions) is not what is timed.
- The data set. The paper's 192 Mi keys need about 23.5 GiB of store here, log and index
  (drivers/studies/common.py guest_memory_bytes), on a 23 GiB host; the studies run 16 Mi at most (1/12), so
  fewer index and log lines miss the 2 x 20 MB LLC and the TLBs than at the paper's size.
- The network path. DPDK's ixgbe poll-mode driver, the 82599's descriptor handling and the client machines, their
  NICs and the switch are replaced by kvsim's runtime driver, its 82599 model and the ghost client at the port:
  latency has no wire or switch beyond the port, and the client never limits the load.
- Memory placement. The runtime's hugepage allocations are carved one below the other from each socket's heap of
  contiguous 2 MB pages, as DPDK's rte_malloc carves its heap (the engine's alloc_on, workloads/ABI.md "NUMA"), but
  without rte_malloc's 64-byte header line before each block, and the heap is grown page by page as blocks come
  rather than reserved whole when DPDK starts.
- The server's links and uncore: QPI as the link model's defaults, the ring's hop latency and the LLC slice
  latency as the Ivy Bridge baseline's (assumed), turbo off (assumed).

`system(cores_per_socket=N)` gives a reduced server with N active cores per socket and ceil(N / 2) ports per socket
(two cores per port, as the full server has: 16 cores over 8 ports); each socket keeps its whole LLC and memory.
The data set is `items` keys (default 65,536; the paper's 192 Mi do not fit a short simulation: a run reports
client.items).
"""

from models import System, Workload
from models.cache import Cache, CacheHierarchy
from models.client import Client
from models.core import Core
from models.dram import MemoryController
from models.link import SocketLink
from models.nic import Nic
from models.noc import Noc
from models.technology import Technology

from . import _multisocket
from . import xeon_e5_2697v2_socket as ivy

KVS_SERVER = ivy.KVS_SERVER

SOCKETS = 2                    # two Xeon E5-2680 (MICA, Section 5)
CORES_PER_SOCKET = 8           # 8 cores per socket (Intel ARK, E5-2680), 16 in all (MICA)
CLOCK = "2.7GHz"               # 2.7 GHz base clock (Intel ARK); turbo off: assumed
LLC_SIZE = "20MiB"             # 20 MB shared L3 per socket (Intel ARK)
NICS_PER_SOCKET = 2            # four dual-port cards, two per socket (MICA)
PORTS_PER_NIC = 2              # a dual-port X520 (82599ES: two 10 GbE MACs on one controller)
CORES_PER_PORT = 2             # 16 cores over 8 ports (MICA: each core polls its own queue on a port of its socket)
MEM_PER_SOCKET = "32GiB"       # 32 GB per socket (MICA); the simulation touches only what the run uses
QPI_LINKS = 2                  # E5-2680: two QPI links at 8 GT/s (Intel ARK); the rest is the link model's defaults
WORKLOADS = {                  # MICA's four workloads over Tiny items (Section 5)
    "uniform-50": ("uniform", 0.50), "uniform-95": ("uniform", 0.95),
    "zipf-50": ("zipf", 0.50), "zipf-95": ("zipf", 0.95),
}


def core() -> Core:
    # Sandy Bridge core = the Ivy Bridge baseline's core (see module doc), at the E5-2680's clock.
    c = ivy.core()
    c.clock = CLOCK
    return c


def caches() -> CacheHierarchy:
    # 32 KB L1I / 32 KB L1D, 8-way, and a private 256 KB 8-way L2 per core (Intel optimization manual, Sandy Bridge);
    # latencies and MSHRs as the Ivy Bridge baseline's (assumed). The 20 MB L3 is 20-way and inclusive, one 2.5 MB
    # slice per core on the ring (Sandy Bridge-EP); slice lookup latency as the baseline's (assumed).
    h = ivy.caches(CORES_PER_SOCKET)
    h.llc = Cache(size=LLC_SIZE, assoc=20, hit_latency=h.llc.hit_latency, mshrs=64, inclusive=True)
    h.llc_slices = CORES_PER_SOCKET
    h.uncore_clock = CLOCK                       # assumed: the ring at the core clock, as the baseline
    return h


def noc(nics: int) -> Noc:
    # The ring of Sandy Bridge-EP: one stop per core and its LLC slice. As the baseline (assumed): 1 cycle per hop,
    # 32-byte links; the home agent with its 4 channels at stop 0 and the PCIe root (all NICs) at stop 0.
    return Noc(topology="ring", mesh_x=CORES_PER_SOCKET, mesh_y=1, clock=CLOCK, router_latency=0, link_latency=1,
               link_bytes="32B", crossbar_latency=1, mem_ctrl_routers=[(0, 0)], nic_routers=[(0, 0)] * nics)


def memory() -> MemoryController:
    # 4 channels of DDR3-1600 per socket (MICA; Intel ARK: 4 channels, DDR3 up to 1600). One rank per channel in the
    # timing model and 15 ns of controller latency: assumed, as the baseline.
    return MemoryController(preset="DDR3-1600", channels=4, ranks=1, ctrl_latency="15ns")


def nic(ports: int = PORTS_PER_NIC) -> Nic:
    """One dual-port X520 card: its 82599ES controller (two 10 GbE ports) on the card's own PCIe 2.0 x8 link (Intel X520
    product brief: PCIe 2.0 x8, 5 GT/s). The 82599's DMA, write-back and TX-completion behaviour under DPDK is the
    baseline's (`xeon_e5_2697v2_socket.nic`); DDIO in 2 of 20 ways (Sandy Bridge-EP introduced DDIO)."""
    return ivy.nic(ports)


def nics(ports: int) -> list[Nic]:
    """The cards of one socket carrying `ports` ports: two cards of two ports at full size; a reduced socket fills
    card 0 first, then card 1 (assumed)."""
    count = min(NICS_PER_SOCKET, -(-ports // PORTS_PER_NIC))
    return [nic(ports // count + (k < ports % count)) for k in range(count)]


def technology() -> Technology:
    # Power-only values. Sandy Bridge-EP is Intel's 32 nm high-performance process; TDP 130 W (Intel ARK). The
    # rest as the baseline's (assumed there), with DDR3 devices.
    t = ivy.technology()
    t.part, t.node, t.tdp = "xeon-e5-2680", 32.0, 130.0
    return t


def socket_system(cores: int, requests: int, items: int, offered_mpps: float, popularity: str,
                  get_ratio: float, partitions: int = 0, **client) -> System:
    """One socket with `cores` active cores, before it is repeated; `partitions`: the server's in all (0: `cores`),
    which each partition's store is sized for."""
    ports = -(-cores // CORES_PER_PORT)
    settings = dict(dataset="tiny", items=items, popularity=popularity, zipf_theta=0.99, get_ratio=get_ratio,
                    requests=requests, offered_mpps=offered_mpps, window=32)
    settings.update(client)
    socket_nics = nics(ports)
    return System(
        harts=cores,
        clock=CLOCK,
        mem_limit=MEM_PER_SOCKET,
        mode="detailed",
        detailed_start="roi",          # the client's measured phase is the region of interest
        warm_caches=True,              # warm the caches through the bulk load
        quantum=200,                   # assumed: instructions per scheduling turn
        core=core(),
        caches=caches(),
        memory=memory(),
        cores_per_cluster=1,           # a ring stop per core
        noc=noc(len(socket_nics)),
        # EREW, one partition per core (MICA). Per partition at least 32 MiB of log and 65,536 buckets (assumed), or
        # what holds its share of the data set without eviction (models/client.py kvs_server_sizes).
        workload=Workload(binary=str(KVS_SERVER), argv=ivy.server_argv(settings, partitions or cores)),
        nics=socket_nics,
        client=Client(enabled=True, mode="erew", **settings),
        technology=technology(),
    )


def system(cores_per_socket: int = CORES_PER_SOCKET, requests: int = 0, items: int = 1 << 16,
           offered_mpps: float = 0.0, workload: str = "uniform-95", **client) -> System:
    """The dual-socket server under one of MICA's workloads (WORKLOADS: 'uniform-95', 'uniform-50', 'zipf-95',
    'zipf-50'). `requests` = 0: 1,000 measured requests per core."""
    if workload not in WORKLOADS:
        raise ValueError(f"workload = {workload!r}: must be one of {', '.join(WORKLOADS)}")
    if not 1 <= cores_per_socket <= CORES_PER_SOCKET:
        raise ValueError(f"cores_per_socket = {cores_per_socket}: an E5-2680 has 1 to {CORES_PER_SOCKET} cores")
    popularity, get_ratio = WORKLOADS[workload]
    requests = requests or 1000 * cores_per_socket * SOCKETS
    single = socket_system(cores_per_socket, requests, items, offered_mpps, popularity, get_ratio,
                           partitions=cores_per_socket * SOCKETS, **client)
    server = _multisocket.replicate(single, SOCKETS)
    server.socket_link = SocketLink(rate=8.0, links_per_pair=QPI_LINKS)
    return server
