"""One socket of the billion-RPS target platform (platforms.md §2): 60 out-of-order cores at 2.5 GHz, a 45 MB
shared LLC (768 KB per core) with wauDCA at 10%, DDR4-2400, and three 100 GbE NICs on PCIe 4.0 x8, running MICA
(EREW, one partition per core) against the STANDARD workload. Values the paper does not give are commented
"assumed".
"""

from models import System, Workload
from models.cache import Cache, CacheHierarchy
from models.client import Client
from models.core import Core
from models.dram import MemoryController
from models.nic import Nic
from models.technology import Technology

from . import WORKLOAD_BUILD

KVS_SERVER = WORKLOAD_BUILD / "kvs" / "kvs-server"

CORES = 60                     # 60 cores in 30 clusters of 2 (paper)
CLOCK = "2.5GHz"               # normal operating point (paper)
NICS = 3                       # 3 multiqueue 100 GbE NICs (paper)


def core() -> Core:
    # Out of order, 3-issue, 64-entry ROB (paper). LQ 32 / SQ 24, 3 ALUs, gshare: assumed (models/core.py).
    return Core(model="ooo", clock=CLOCK, issue_width=3, fetch_width=3, commit_width=3, rob_entries=64)


def caches(cores: int) -> CacheHierarchy:
    return CacheHierarchy(
        l1i=Cache(size="32KiB", assoc=8, hit_latency=4, mshrs=4),      # 32 KB I assumed, 8-way assumed
        l1d=Cache(size="32KiB", assoc=8, hit_latency=4, mshrs=10),     # 32 KB D (paper), 8-way assumed
        l2_enabled=False,                                              # the L2 is the shared LLC (paper)
        # 768 KB per core = 45 MB per socket (paper); 20-way assumed; 20 cycles with the crossbar/mesh trip
        # assumed; inclusive (holds the directory, assumed). A run with fewer cores keeps the whole LLC.
        llc=Cache(size=768 * 1024 * CORES, assoc=20, hit_latency=20, mshrs=64, inclusive=True),
        llc_slices=CORES // 2,                                         # one slice per 2-core cluster (paper)
        uncore_clock=CLOCK,                                            # assumed
    )


def memory() -> MemoryController:
    # 6 controllers of one DDR4-2400 channel each (paper). Assumed: the DRAM model takes a power-of-two channel
    # count, so 8 channels of one controller stand in for 6 (33% more peak bandwidth than the paper's ~115 GB/s);
    # 15 ns controller latency assumed.
    return MemoryController(preset="DDR4-2400", channels=8, ranks=1, ctrl_latency="15ns")


def nic(ports: int) -> Nic:
    # Each 100 GbE NIC on PCIe 4.0 x8 (paper). Assumed: the model has one NIC per socket, so the three NICs are
    # one NIC with one port each and their three x8 links modelled as one x24 link.
    return Nic(enabled=True, ports=ports, port_gbps=100.0, pcie_gen=4, pcie_lanes=8 * ports,
               pcie_max_payload=256, pcie_tlp_overhead=24,     # assumed
               pcie_latency="400ns", mmio_latency="100ns",     # assumed
               rx_fifo_frames=1024,                            # assumed
               ddio=True, ddio_ways=0.1)                       # wauDCA up to 10% of the LLC (paper)


def technology() -> Technology:
    # Power-only values (the power model's): a 22 nm high-performance process (paper's node); the rest assumed.
    return Technology(part="brps-target", node=22.0, device="hp",
                      temperature=360.0,          # assumed: 87 C junction (a McPAT-legal 10 K step)
                      pipeline_depth=14,          # assumed
                      fp_units=1,                 # assumed: one FP unit, as a McPAT-sized generic core has
                      phys_int_regs=96, phys_fp_regs=64,   # assumed: 32 architectural + ROB-sized rename pool
                      issue_queue=32,             # assumed: half the ROB
                      tlb_entries=64, llc_banks=4,           # assumed
                      noc="mesh", noc_x=6, noc_y=5,          # 30 clusters on a 2D mesh (paper); 6 x 5 assumed
                      noc_ports=7,                # 4 mesh + 2 cores + LLC slice (cluster crossbar merged): assumed
                      flit_bits=128,              # assumed
                      dram_device="micron-ddr4-8gb-x8", dram_ranks_per_channel=2,   # assumed DIMMs
                      nic_buffer="512KiB", nic_queues=64, nic_clock="400MHz",      # assumed NIC chip internals
                      tdp=200.0)                  # assumed socket power budget


def system(cores: int = CORES, requests: int = 60000, items: int = 1 << 16, offered_mpps: float = 0.0,
           **client) -> System:
    ports = min(NICS, cores)
    settings = dict(dataset="tiny", items=items, popularity="uniform", get_ratio=0.95, requests=requests,
                    offered_mpps=offered_mpps, window=32)
    settings.update(client)
    return System(
        harts=cores,
        clock=CLOCK,
        mem_limit="16GiB",
        mode="detailed",
        detailed_start="roi",
        warm_caches=True,
        quantum=200,                   # assumed
        core=core(),
        caches=caches(cores),
        memory=memory(),
        workload=Workload(binary=str(KVS_SERVER), argv=["mode=erew", "log_mib=16", "buckets=16384"]),
        nic=nic(ports),
        client=Client(enabled=True, mode="erew", **settings),
        technology=technology(),
    )
