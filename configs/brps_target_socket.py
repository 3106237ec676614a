"""One socket of the billion-RPS target platform (platforms.md §2), described once: every config that runs the
target (or a share of it: `detailed_default`, `kvs_default`) takes its parts from here.

| platforms.md §2            | here                                                                            |
| -------------------------- | ------------------------------------------------------------------------------- |
| cores: 60, 30 clusters of 2 | CORES, CORES_PER_CLUSTER; `noc()`: one cluster per router of a 6 x 5 mesh       |
| core: OoO, 3-issue, ROB 64 | `core()`                                                                        |
| L1: 32 KB D (32 KB I, 8-way assumed) | `caches()`                                                            |
| LLC: 768 KB per core, 45 MB, 20-way assumed | `caches()`: 30 slices, one per cluster                         |
| on-chip network: crossbar per cluster, 2D mesh | `noc()`                                                     |
| memory: 6 controllers, one DDR4-2400 channel each | `memory()`, and `noc()` places the 6 controllers         |
| NICs: 3 x 100 GbE, PCIe 4.0 x8, wauDCA 10% | `nic()`, and `noc()` places the NICs                            |
| clocks: 2.5 GHz normal     | CLOCK                                                                           |

It runs MICA (EREW, one partition per core) against the STANDARD workload. Values the paper does not give are
commented "assumed".
"""

from models import System, Workload
from models.cache import Cache, CacheHierarchy
from models.client import Client
from models.core import Core
from models.dram import MemoryController
from models.nic import Nic
from models.noc import Noc
from models.technology import Technology

from . import WORKLOAD_BUILD
from .xeon_e5_2697v2_socket import mmu as xeon_mmu

KVS_SERVER = WORKLOAD_BUILD / "kvs" / "kvs-server"

CORES = 60                     # 60 cores ... (paper)
CORES_PER_CLUSTER = 2          # ... in 30 clusters of 2 (paper)
CLOCK = "2.5GHz"               # normal operating point (paper)
NICS = 3                       # 3 multiqueue 100 GbE NICs (paper)
MESH = (6, 5)                  # 30 clusters on a 2D mesh (paper); 6 x 5 is the near-square grid that holds them
LLC_PER_CORE = 768 * 1024      # 768 KB of LLC per core = 45 MB per socket (paper)
# Assumed: 10 cycles for a slice's own lookup; the network adds the trip to the slice and back (on the 6 x 5 mesh
# with 2-cycle hops, about 3.5 hops each way, 14 cycles, on average), where the old constant "mesh trip" was
# folded into a 20-cycle LLC hit.
LLC_SLICE_LATENCY = 10
# Assumed placement (the paper gives none): the 6 memory controllers on the west and east edges, three each; the
# 3 NICs on the south and north edges, next to where their PCIe lanes would leave the die.
MEM_CTRL_ROUTERS = [(0, 0), (0, 2), (0, 4), (5, 0), (5, 2), (5, 4)]
NIC_ROUTERS = [(2, 0), (3, 4), (3, 0)]


def core() -> Core:
    # Out of order, 3-issue, 64-entry ROB (paper). LQ 32 / SQ 24, 3 ALUs, gshare with 4096 counters, 14-cycle
    # mispredict penalty: assumed (models/core.py). One FP unit: assumed (a KVS server does little FP; the power
    # model prices the units declared here).
    # Address translation: assumed Ivy Bridge's TLBs and x86-64's 4-level table with the server's memory in 2 MB
    # pages (the paper names none; configs/xeon_e5_2697v2_socket.py gives the figures and the huge-page area).
    # No scheduler or rename-register bound (scheduler_entries, int_rename_registers: 0, off): the paper sizes the
    # core by its ROB and issue width alone and its core-weight study varies the ROB as the window, so a second,
    # assumed bound on that window would change what the study measures (the power model's assumed 32-entry issue
    # queue and 96 integer registers, technology() below, price structures but bound nothing). No 4K aliasing
    # (alias_4k_penalty 0, off): it is a property of Intel's memory-order buffer, and the paper's core is not one.
    # No decode paths (fetch_block_bytes, uop_cache_sets: 0, off): the legacy decoders' byte blocks and the decoded
    # uop cache are an x86 front end's (they exist to decode variable-length instructions); the paper's core runs
    # the guest's fixed-size RISC instructions, and its fetch is `fetch_width` a cycle, a taken branch ending it.
    return Core(model="ooo", clock=CLOCK, issue_width=3, fetch_width=3, commit_width=3, rob_entries=64, fp_units=1,
                mmu=xeon_mmu())


def cluster_size(cores: int) -> int:
    """Clusters of 2 (paper); a share of the socket with an odd number of cores (one core, for microbenchmarks)
    cannot form them, so its cores are clusters of one."""
    return CORES_PER_CLUSTER if cores % CORES_PER_CLUSTER == 0 else 1


def caches(cores: int = CORES) -> CacheHierarchy:
    """The caches of `cores` cores: the whole socket's by default, a share (768 KB of LLC per core, one slice per
    cluster) for a smaller run."""
    return CacheHierarchy(
        l1i=Cache(size="32KiB", assoc=8, hit_latency=4, mshrs=4),      # 32 KB I assumed, 8-way assumed
        l1d=Cache(size="32KiB", assoc=8, hit_latency=4, mshrs=10),     # 32 KB D (paper); 8-way, 4 cycles, 10 MSHRs
                                                                       # assumed (Ivy Bridge-like)
        l2_enabled=False,                                              # the L2 is the shared LLC (paper)
        # 768 KB per core (paper); 20-way assumed (rounds down to whole sets per slice); inclusive (it holds the
        # directory's sharer vectors, assumed).
        llc=Cache(size=LLC_PER_CORE * cores, assoc=20, hit_latency=LLC_SLICE_LATENCY, mshrs=64, inclusive=True),
        llc_slices=max(1, cores // cluster_size(cores)),               # one slice per cluster (paper)
        uncore_clock=CLOCK,                                            # assumed: the nominal core clock
    )


def memory(channels: int = 6) -> MemoryController:
    # 6 DDR4-2400 channels (paper: 6 controllers of one channel each, ~115 GB/s peak), modelled as one controller
    # whose 6 channels interleave lines modulo 6 (a share of the socket takes fewer). One rank per channel and
    # 15 ns controller latency: assumed.
    return MemoryController(preset="DDR4-2400", channels=channels, ranks=1, ctrl_latency="15ns")


def noc(nics: int = 1) -> Noc:
    """The 6 x 5 mesh of the 30 clusters, the 6 controllers and the first `nics` NICs on its edges. Assumed (the
    paper gives no figures): 1-cycle routers and links at the core clock (2 cycles per hop), 32-byte links, a
    1-cycle cluster crossbar."""
    return Noc(topology="mesh", mesh_x=MESH[0], mesh_y=MESH[1], clock=CLOCK,
               router_latency=1, link_latency=1, link_bytes="32B", crossbar_latency=1,     # assumed
               mem_ctrl_routers=MEM_CTRL_ROUTERS, nic_routers=NIC_ROUTERS[:nics])


def share_noc() -> Noc:
    """The network of a share of the socket (a smaller run): its clusters on the smallest near-square mesh, with
    the target's router, link and crossbar timing."""
    full = noc()
    return Noc(topology="mesh", clock=CLOCK, router_latency=full.router_latency, link_latency=full.link_latency,
               link_bytes=full.link_bytes, crossbar_latency=full.crossbar_latency)


def nic() -> Nic:
    # One 100 GbE port on its own PCIe 4.0 x8 link (paper).
    return Nic(enabled=True, ports=1, port_gbps=100.0, pcie_gen=4, pcie_lanes=8,
               pcie_max_payload=256,                           # assumed (PCIe protocol facts: the Nic defaults)
               # Assumed: 8-bit tags (the Extended Tag Field, PCIe base spec since 1.0), 256 reads outstanding per
               # port, not the Nic default's 32 (5-bit tags, extended tags off: the Xeon's 2012-era 82599). A
               # PCIe 4.0 NIC must accept 10-bit tags as a completer and may issue them (768 outstanding), but
               # 10-bit requesting is optional, so the 8-bit field is what every such NIC has. With 32 tags the
               # port, not the socket, bounded the LLC study (issue 28; 78.5% of reads waited at 105 M frames/s);
               # with 256 none waited there.
               pcie_read_tags=256,
               pcie_latency="400ns", mmio_latency="100ns",     # assumed
               rx_fifo_frames=1024,                            # assumed
               rx_wb_threshold=4, rx_wb_timer="1us",           # assumed: one 64-byte line of descriptors per
                                                               # write-back, flushed after at most 1 us
               ddio=True, ddio_ways=0.1)                       # wauDCA up to 10% of the LLC (paper)


def technology() -> Technology:
    # Power-only values (the power model's): a 22 nm high-performance process (paper's node); the rest assumed.
    return Technology(part="brps-target", node=22.0, device="hp",
                      temperature=360.0,          # assumed: 87 C junction (a McPAT-legal 10 K step)
                      pipeline_depth=14,          # assumed
                      phys_int_regs=96, phys_fp_regs=64,   # assumed: 32 architectural + ROB-sized rename pool
                      issue_queue=32,             # assumed: half the ROB
                      tlb_entries=64, llc_banks=4,           # assumed
                      noc_ports=7,                # 4 mesh + 2 cores + LLC slice (cluster crossbar merged): assumed
                      dram_device="micron-ddr4-8gb-x8", dram_ranks_per_channel=2,   # assumed DIMMs
                      nic_buffer="512KiB", nic_queues=64, nic_clock="400MHz",      # assumed NIC chip internals
                      tdp=200.0)                  # assumed socket power budget


def system(cores: int = CORES, requests: int = 60000, items: int = 1 << 16, offered_mpps: float = 0.0,
           **client) -> System:
    """The socket with `cores` active cores (even: clusters of 2); a run with fewer cores keeps the whole
    socket's LLC, mesh and memory."""
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
        caches=caches(CORES),
        memory=memory(),
        cores_per_cluster=CORES_PER_CLUSTER,
        noc=noc(nics=ports),           # each NIC on its own mesh-edge router
        workload=Workload(binary=str(KVS_SERVER), argv=["mode=erew"]),   # log and index sized from the items
        nics=[nic() for _ in range(ports)],   # 3 NICs of one port each (fewer when fewer cores)
        client=Client(enabled=True, mode="erew", **settings),
        technology=technology(),
    )
