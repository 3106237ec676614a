"""The TILEPro64 node of the Tilera memcached study (Berezecki et al., "Many-Core Key-Value Store", IGCC 2011;
platforms.md §4): one TILEPro64 chip serving memcached, partitioned into shard processes over its tiles.

| TILEPro64 (Tilera product brief; Berezecki et al.)             | here                                          |
| -------------------------------------------------------------- | --------------------------------------------- |
| 64 tiles on an 8 x 8 mesh (iMesh), 866 MHz                     | TILES, MESH, CLOCK, `noc()`                   |
| 3-wide in-order VLIW tile: 2 ALU pipes + 1 load/store pipe     | `core()`: 3-issue in-order RV64 (approximate) |
| 16 KB L1I + 8 KB L1D per tile                                  | `caches()`                                    |
| 64 KB L2 per tile; together the L2s form a distributed shared  | `caches()`: one 64 KB LLC slice per tile, the |
|   L3 (dynamic distributed caching) with home-tile coherence    |   directory at each line's home slice         |
| 4 DDR2 controllers, up to DDR2-800                             | `memory()`: 4 channels, DDR2-800 timings      |
| on-chip 10 GbE XAUI MACs with direct cache injection           | `nic()`: Nic.attach = 'on_die', DMA into the  |
|                                                                |   L3 (Nic.ddio)                               |
| 90 nm                                                          | `technology()`                                |
| memcached in shard processes, each its own hash-table share    | `system(shards=N)`: one memcached-class       |
|                                                                |   instance per shard                          |

What the approximations miss (each also said where it is made):
- The core. A tile issues VLIW bundles of up to 3 instructions that the compiler formed; kvsim runs the RV64 binary
  of the memcached-class server on an in-order core that may issue up to 3 independent RV64 instructions per cycle
  in program order. It misses the Tile ISA (its instruction count and mix for the same C code, its SIMD and
  packet-handling instructions) and static bundling (the hardware here finds parallelism the compiler may not have
  packed, and never pays for empty bundle slots).
- The caches. On the TILEPro64 a line has a home tile (chosen per page: by hash-for-home or by the page's homing);
  a tile caches remote-homed lines in its own L2 as well as at the home, and the home tracks the sharers. Here each
  tile's 64 KB is an LLC slice, lines are homed by static line interleaving over the 64 slices, the directory sits
  at the home slice, and there is no private L2: a tile's reuse of a remote-homed line is served by the home slice
  across the mesh, not by its own L2, and the home is per line, not per page.
- The mesh. The chip has several physical networks of 32-bit links (memory, tile-to-tile cache, user, I/O); kvsim
  has one network, so the two that carry cache and memory traffic are merged into one of 8-byte links.
- The memory. kvsim's DRAM model implements DDR3/DDR4 command rules; the DDR2 controllers are that model with
  JEDEC DDR2-800 timings (no additive latency or DDR2-specific refresh and ODT rules).
- Memory placement. Each shard's allocations through the runtime (its server state, 4 MiB store, NIC queue and
  buffers) are carved one below the other from one heap of contiguous 2 MB pages (the engine's alloc_on, as DPDK's
  rte_malloc carves its heap; workloads/ABI.md "NUMA"), so where each shard's store begins is set by the sizes of
  everything allocated before it. memcached on the chip's Linux allocates with malloc in each shard process's own
  address space and pages, and the chip can spread a page's lines over the tiles (hash-for-home). (Until session 8
  a block of 2 MB or more took whole 2 MB pages of its own, so every shard's store began at offset 0 of a 2 MB page
  and the stores met in the same slices and sets: results/figures/seed_studies.md gives the study before and after.)
- The network stack. The paper ran memcached on Linux with its UDP/TCP stack; kvsim runs the memcached-class server
  (workloads/mcd) in SE mode over its own poll-mode driver and UDP, so the kernel's per-packet cost (interrupts,
  system calls, socket buffers) is absent.

`system(shards=N)`: N shard processes (default 64, one per tile: assumed, the paper's own count is not in the
spec). Each is one single-threaded instance on its own tile, serving its own UDP port; the client sends each
request to its key's shard. N must divide the 64 tiles (ParamError otherwise), so the shards spread evenly; a run
with fewer shards than tiles keeps the whole chip's mesh, L3 and memory, the other tiles idle (reduced scale).
"""

from models import System, Workload
from models.cache import Cache, CacheHierarchy
from models.core import Core
from models.dram import MemoryController
from models.nic import Nic
from models.noc import Noc
from models.params import ParamError
from models.technology import Technology

from . import mercury

MCD_SERVER = mercury.MCD_SERVER

TILES = 64                     # 64 tiles (Tilera product brief)
MESH = (8, 8)                  # on an 8 x 8 mesh (product brief)
CLOCK = "866MHz"               # 866 MHz (product brief; the paper's part)
L2_PER_TILE = 64 * 1024        # 64 KB L2 per tile (product brief); 4 MB of distributed L3 in all
XAUI_PORTS = 2                 # two on-chip 10 GbE XAUI interfaces (product brief)
# Assumed placement (the block diagram has the DDR2 controllers on the north and south edges, two each, and the
# XAUI interfaces on the west edge): controllers at columns 1 and 6 of rows 0 and 7, the MACs at (0, 3).
MEM_CTRL_ROUTERS = [(1, 0), (6, 0), (1, 7), (6, 7)]
NIC_ROUTER = (0, 3)


def core() -> Core:
    """A tile's processor as a 3-issue in-order RV64 core (the approximation: see the module doc). Two integer
    pipelines and one load/store pipeline (product brief: three pipelines, two ALU and one memory). Multiply 2
    cycles, a 2-cycle branch-mispredict penalty with a small bimodal predictor (the TILEPro predicts statically from
    compiler hints; assumed), 8-entry window and queues (assumed, as the in-order A7-class core of mercury.py)."""
    return Core(model="inorder", clock=CLOCK, fetch_width=3, issue_width=3, commit_width=3, rob_entries=8,
                lq_entries=8, sq_entries=8, int_alus=2, load_ports=1, store_ports=1, mul_latency=2,
                bpred="bimodal", bpred_entries=512, bpred_history_bits=0, btb_entries=64, ras_entries=4,
                mispredict_penalty=2, fp_units=1)   # the timing model has at least one; priced with none (technology())


def caches() -> CacheHierarchy:
    """16 KB L1I and 8 KB L1D per tile (product brief), 2-way, 2 MSHRs for the L1D (assumed: a short in-order
    pipeline with a non-blocking load or two). The tiles' 64 KB L2s as one 64-slice LLC, one slice per tile
    (product brief: 64 KB, the L2s together form the distributed L3), 4-way (assumed), not inclusive (a tile's L1
    may hold remote-homed lines its home does not keep, as on the chip; assumed), 7-cycle slice lookup (assumed,
    with the L1 miss about 8 cycles to a local L2 hit; the mesh adds the trip to a remote home)."""
    return CacheHierarchy(
        l1i=Cache(size="16KiB", assoc=2, hit_latency=1, mshrs=2),
        l1d=Cache(size="8KiB", assoc=2, hit_latency=2, mshrs=2),
        l2_enabled=False,              # the L2 is the home-tile L3 slice (see the module doc)
        llc=Cache(size=L2_PER_TILE * TILES, assoc=4, hit_latency=7, mshrs=8, inclusive=False),
        llc_slices=TILES,
        uncore_clock=CLOCK,            # the caches and the mesh run at the tile clock (product brief)
    )


def noc() -> Noc:
    """The 8 x 8 iMesh: one tile (core and L2 slice) per router, XY routing, one cycle per hop (product brief: a
    single-cycle hop on each network). Links: 8 bytes, the two 32-bit networks that carry cache and memory traffic
    merged into one (see the module doc)."""
    return Noc(topology="mesh", mesh_x=MESH[0], mesh_y=MESH[1], clock=CLOCK, router_latency=0, link_latency=1,
               link_bytes="8B", crossbar_latency=1, mem_ctrl_routers=MEM_CTRL_ROUTERS, nic_routers=[NIC_ROUTER])


def memory() -> MemoryController:
    """4 DDR2 controllers of one 64-bit channel each, up to DDR2-800 (product brief), as one controller of 4
    interleaved channels. JEDEC DDR2-800D (5-5-5) timings over the DDR3-1600 model (the closest the DRAM model has:
    see the module doc): tCK 2.5 ns, CL 5, WL = CL - 1 = 4, tRCD 5, tRP 5, tRAS 45 ns = 18, tRRD 7.5 ns = 3,
    tFAW 35 ns = 14 (1 KB page), tCCD 2, tWR 15 ns = 6, tWTR 7.5 ns = 3, tRTP 7.5 ns = 3, tRFC 127.5 ns (1 Gb
    devices), tREFI 7.8 us, 8 banks, BL8. One rank per channel and 15 ns of controller latency: assumed."""
    return MemoryController(preset="DDR3-1600", channels=4, ranks=1, ctrl_latency="15ns", t_ck="2500ps",
                            t_cl=5, t_cwl=4, t_rcd=5, t_rp=5, t_ras=18, t_rrd_s=3, t_rrd_l=3, t_faw=14,
                            t_ccd_s=2, t_ccd_l=2, t_wr=6, t_wtr_s=3, t_wtr_l=3, t_rtp=3, t_rfc="127500ps",
                            t_refi="7800ns", burst_length=8)


def nic(ports: int = XAUI_PORTS) -> Nic:
    """The on-chip 10 GbE MACs (product brief: two XAUI interfaces) as one on-die NIC of `ports` ports: no PCIe,
    its DMA enters the mesh at NIC_ROUTER (the on-die bus latency and bandwidth are Nic.on_die_* defaults,
    assumed). Direct cache injection: frames are written into the L3 (Nic.ddio); no way limit is published, so
    injection may use any way (ddio_ways = 1.0, assumed). RX buffer 512 frames: assumed."""
    return Nic(enabled=True, ports=ports, port_gbps=10.0, attach="on_die", rx_fifo_frames=512, ddio=True,
               ddio_ways=1.0)


def technology() -> Technology:
    # Power-only values. 90 nm (product brief), general-purpose (hp) devices at 85 C: assumed. Pipeline depth 5
    # (assumed for a short in-order VLIW pipeline). The tile as it is, not as the RV64 harts that simulate it: a
    # 32-bit datapath with 32-bit virtual addresses and no floating-point unit (the Tile Processor ISA is a 32-bit
    # integer ISA; FP is done in software), so the power model prices 32-bit register files, bypass and queues and
    # no FPU, FP register file or FP queue (a run that executed FP instructions is refused when priced). No TDP is used (the brief gives 19-23 W typical at 700-866 MHz,
    # which is a result to compare with, not an input). DRAM devices: the power model has DDR3 and DDR4 current
    # sets only; Micron's 4 Gb DDR3 x8 stands in for the node's DDR2 (its currents and 1.5 V, not DDR2's 1.8 V).
    return Technology(part="tilepro64", node=90.0, device="hp", temperature=360.0, pipeline_depth=5,
                      datapath_bits=32, virtual_address_bits=32, fpu=False,
                      tlb_entries=16, llc_banks=1, noc_ports=5,
                      dram_device="micron-ddr3-4gb-x8", dram_ranks_per_channel=1,
                      nic_buffer="128KiB", nic_queues=64, nic_clock=CLOCK)


def check_shards(shards: int, tiles: int = TILES) -> None:
    """The shard processes spread evenly over the tiles: their count must divide the tiles."""
    if not 1 <= shards <= tiles or tiles % shards:
        divisors = [d for d in range(1, tiles + 1) if tiles % d == 0]
        raise ParamError(f"tilepro64 shards = {shards}: the shard processes must divide the {tiles} tiles evenly "
                         f"(allowed: {', '.join(map(str, divisors))})")


def system(shards: int = TILES, items: int = 65536, requests: int = 0, get_ratio: float = 0.9,
           store_mem: str = "16MiB", **client_kw) -> System:
    """The node with `shards` memcached shard processes (see the module doc); `client_kw` go to the memcached
    client (mercury.client: items, requests, get_ratio, and any Client parameter). `requests` = 0: 200 measured
    requests per shard. `store_mem`: each shard's store (assumed, small to keep simulations short)."""
    check_shards(shards)
    mercury.check_store_mem("tilepro64", store_mem)
    nic_ = nic(min(XAUI_PORTS, shards))         # one queue per shard: a single shard uses one port
    return System(
        harts=shards,
        clock=CLOCK,
        mem_limit="8GiB",                       # assumed: the touch limit of the run (the node's DRAM is larger)
        mode="detailed",
        quantum=200,                            # assumed: instructions per scheduling turn
        core=core(),
        caches=caches(),
        memory=memory(),
        cores_per_cluster=1,                    # a tile per router
        noc=noc(),
        # Shard i serves UDP port base + i, the port the MAC steers to tile i's queue.
        workload=Workload(binary=str(MCD_SERVER), argv=[f"port={nic_.steering_base_port}", f"mem={store_mem}"]),
        nic=nic_,
        client=mercury.client(shards, items=items, requests=requests or 200 * shards, get_ratio=get_ratio,
                              **client_kw),
        technology=technology(),
    )
