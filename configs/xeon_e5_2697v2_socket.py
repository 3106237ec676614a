"""One socket of the measured baseline (platforms.md §1): a Xeon E5-2697 v2 (Ivy Bridge-EP) running MICA (EREW)
against the STANDARD workload through 10 GbE ports, two cores per port, one RX/TX queue per core. Values the spec
marks as assumed, and the simplifications of this model, are commented "assumed".

`system(cores=12)` gives a socket with `cores` active cores and ceil(cores / 2) ports (or `ports`); the client is open loop at
`offered_mpps` per port (0: closed loop) in the measured phase, which is timed in detailed mode.
"""

from models import System, Workload
from models.cache import Cache, CacheHierarchy
from models.client import Client, kvs_server_sizes
from models.core import Core
from models.dram import MemoryController
from models.nic import Nic
from models.noc import Noc
from models.prefetch import Prefetcher
from models.technology import Technology
from models.tlb import Mmu

from . import WORKLOAD_BUILD

KVS_SERVER = WORKLOAD_BUILD / "kvs" / "kvs-server"

CORES_PER_SOCKET = 12          # 12 cores per socket (spec)
CLOCK = "2.7GHz"               # 2.7 GHz, SMT off (spec)
CORES_PER_PORT = 2             # 2 cores per 10 GbE port, each core with one queue on one port (spec)


# Sandy Bridge's out-of-order buffers, which Ivy Bridge keeps (Intel's figures, as its Haswell disclosure lists
# them beside Sandy Bridge's: scheduler 54 entries, integer register file 160, FP register file 144; the spec's
# "scheduler 54"). Declared once here: the core's timing and the power model's structures both read them.
SCHEDULER_ENTRIES = 54
PHYS_INT_REGS = 160
PHYS_FP_REGS = 144
# x86-64's 16 general-purpose registers: the architectural state the integer register file holds besides the
# registers in flight, so 160 - 16 = 144 integer-writing instructions can be in flight (the guest's RV64 code has
# 31, but the machine measured renames x86's 16).
X86_GPRS = 16
# 4K aliasing: the memory-order buffer compares a load with older buffered stores on address bits 11:0 first, and a
# match that the full address contradicts blocks the load until it is reissued (Intel's VTune documentation, "4K
# Aliasing"; Sandy/Ivy Bridge count it as LD_BLOCKS_PARTIAL.ADDRESS_ALIAS, "false dependencies in MOB due to
# partial compare on address", Intel's SDM). Its cost, 7 cycles an event: Intel's top-down analysis constants for
# the Xeon E5 v2 (Ivy Bridge-EP; Mem_4K_Alias_Cost in the TMAM tables Intel publishes with its pmu-tools).
ALIAS_4K_PENALTY = 7
# The front end's two decode paths (Intel's optimization manual, Sandy Bridge microarchitecture, which Ivy Bridge
# keeps; models/timing/src/core/frontend.rs maps RV64 onto them): the legacy pipeline fetches and predecodes one
# aligned 16-byte block a cycle; the decoded ICache is 32 sets x 8 ways of 6 uops, each way holding uops of one
# aligned 32-byte window, at most 3 ways a window.
LEGACY_FETCH_BLOCK = 16
UOP_CACHE_SETS, UOP_CACHE_WAYS, UOP_CACHE_WAY_UOPS = 32, 8, 6
UOP_CACHE_WINDOW, UOP_CACHE_WINDOW_WAYS = 32, 3
# A mispredicted branch redirects fetch 14 cycles after it completes, which loses 15 fetch cycles against a right
# guess for a branch that issues at once (models/timing/tests/front_end.rs): Agner Fog's measured Sandy Bridge
# penalty, "15 clock cycles or more for branches inside the µop cache" (The microarchitecture of Intel, AMD and VIA
# CPUs); his "slightly more" for targets outside it has no number, so it is not added.
MISPREDICT_PENALTY = 14

# When the L1D's two prefetchers may send what they name. Intel's optimization manual, Sandy Bridge microarchitecture
# (Ivy Bridge keeps it), "Data Prefetching" > "Data Prefetch to L1 Data Cache": prefetching "is triggered by load
# operations when the following conditions are met: ... No fence is in progress in the pipeline. Not many other load
# misses are in progress. There is not a continuous stream of stores." The fence (hold_during_fence) is on as stated.
# How many stores in a row make "a continuous stream" is not published: 4, assumed (a 4-wide core's commit group of
# stores with no load among them), a value not chosen from the rows it moves. "Not many other load misses" stays off
# (max_misses_in_flight: no published number; session 18's sensitivity in results/validation/xeon_notes.md).
# The same sentence: prefetching "is triggered by load operations"; the page walker's reads of page-table entries go
# through the L1D but are no load operations, so they neither trigger nor train these two (trained_by_page_walks).
L1D_PREFETCH_HOLD_DURING_FENCE = True
L1D_PREFETCH_STORE_STREAM = 4
L1D_PREFETCH_TRAINED_BY_PAGE_WALKS = False


def core() -> Core:
    # 4-wide out of order, ROB 168, LQ 64, SQ 36 (spec: Ivy Bridge facts); the scheduler, the integer rename
    # registers, 4K aliasing and the decode paths as above. Its execution ports (Intel's optimization manual, Sandy Bridge microarchitecture, which
    # Ivy Bridge keeps): 3 integer ALUs (ports 0, 1, 5), branches on port 5 alone (one branch unit), two load
    # ports (2, 3) that also generate every store's address, store data on port 4. gshare 4096 / 12 bits: assumed
    # (the models' defaults); the mispredict penalty as above. The doorbells are x86 UC stores (DPDK 1.x maps the
    # 82599's registers through uio, uncached; ixgbe writes RDT with a plain store and TDT after rte_wmb(), an
    # SFENCE): sent only once committed and the oldest store (ordered_uncached_stores; Intel's SDM vol. 3A 11.3).
    return Core(model="ooo", clock=CLOCK, fetch_width=4, issue_width=4, commit_width=4, rob_entries=168,
                lq_entries=64, sq_entries=36, scheduler_entries=SCHEDULER_ENTRIES,
                int_rename_registers=PHYS_INT_REGS - X86_GPRS, alias_4k_penalty=ALIAS_4K_PENALTY, int_alus=3,
                branch_units=1, load_ports=2, store_ports=1, store_address_on_load_ports=True,
                fetch_block_bytes=LEGACY_FETCH_BLOCK, uop_cache_sets=UOP_CACHE_SETS, uop_cache_ways=UOP_CACHE_WAYS,
                uop_cache_way_uops=UOP_CACHE_WAY_UOPS, uop_cache_window_bytes=UOP_CACHE_WINDOW,
                uop_cache_window_ways=UOP_CACHE_WINDOW_WAYS, mispredict_penalty=MISPREDICT_PENALTY, mmu=mmu(),
                ordered_uncached_stores=True)


def mmu() -> Mmu:
    # Ivy Bridge's TLBs (models/tlb.py: Intel's optimization manual, "TLB Parameters"): ITLB 128 x 4-way (4 KB) and
    # 8 (2 MB), DTLB 64 x 4-way (4 KB) and 32 x 4-way (2 MB), STLB 512 x 4-way (4 KB only); x86-64's 4-level table.
    # The STLB's 7 cycles and 32 paging-structure-cache entries per level are assumed (the models' defaults).
    # MICA and DPDK take the log, index, descriptor rings and packet buffers from 2 MB hugepages: the runtime's
    # ALLOC_LOCAL / ALLOC_ON calls, which the engine maps with 2 MB pages ('alloc'); everything else is 4 KB.
    return Mmu(enabled=True, levels=4, huge_pages="alloc")


# Ivy Bridge's L3 replacement (caches() below).
LLC_REPLACEMENT = "dip"


def caches(cores: int) -> CacheHierarchy:
    return CacheHierarchy(
        l1i=Cache(size="32KiB", assoc=8, hit_latency=4, mshrs=4),      # 32 KB, 8-way (spec); 4 cycles, 4 MSHRs assumed
        l1d=Cache(size="32KiB", assoc=8, hit_latency=4, mshrs=10,      # 32 KB, 8-way (spec); 10 fill buffers (spec)
                  prefetch=Prefetcher(next_line=True, ip_stride=True,   # Ivy Bridge's two L1D prefetchers, with
                                      hold_during_fence=L1D_PREFETCH_HOLD_DURING_FENCE,  # their issue conditions
                                      hold_after_stores=L1D_PREFETCH_STORE_STREAM,       # (above)
                                      trained_by_page_walks=L1D_PREFETCH_TRAINED_BY_PAGE_WALKS)),
        l2_enabled=True,
        l2=Cache(size="256KiB", assoc=8, hit_latency=12, mshrs=16,     # 256 KB, 8-way (spec); 12 cycles, 16 MSHRs
                 prefetch=Prefetcher(streamer=True, adjacent_line=True)),  # assumed; its streamer and spatial
                                                                       # prefetcher (models/prefetch.py: Intel's
                                                                       # manual; all four on, the BIOS default).
                                                                       # MICA's prefetchnta lines skip the L2 and
                                                                       # do not train these two (the default,
                                                                       # trained_by_non_temporal=False)
        # 30 MB per socket, shared, inclusive (spec), 20-way (assumed); 2.5 MB per core slice on the ring: a run
        # with fewer cores keeps the whole socket's LLC. A slice's own lookup: 24 cycles, assumed (about 30 cycles
        # load-to-use once the ring's average trip, about 3 hops each way, is added by the network).
        # Replacement: Ivy Bridge's L3 adapts between two insertion policies by set dueling, where Sandy Bridge's
        # was pseudo-LRU (Henry Wong, "Intel Ivy Bridge Cache Replacement Policy", 2013: measured, "resembling"
        # DIP and RRIP); modelled as DIP (Qureshi et al., ISCA 2007) with that paper's parameters, assumed here
        # (models/timing/src/mem/replacement.rs). The Sandy Bridge-EP seeds build their own L3 (LRU).
        llc=Cache(size="30MiB", assoc=20, hit_latency=24, mshrs=64, inclusive=True, replacement=LLC_REPLACEMENT),
        llc_slices=CORES_PER_SOCKET,                                   # one slice per core, at its ring stop
        uncore_clock=CLOCK,                                            # assumed: the ring runs at the core clock
    )


def noc(nics: int = 1) -> Noc:
    # The ring (spec): one stop per core and its LLC slice (clusters of one core), joined at both ends, each message
    # taking the shorter way round. Assumed: one cycle per hop at the core clock (a ring stop forwards in the same
    # cycle: router latency 0), 32-byte links; the two memory controllers at stops 0 and 6 (opposite sides of the
    # ring, two of the 4 channels each) and the PCIe root (all `nics` NICs) at stop 0.
    return Noc(topology="ring", mesh_x=CORES_PER_SOCKET, mesh_y=1, clock=CLOCK, router_latency=0, link_latency=1,
               link_bytes="32B", crossbar_latency=1, mem_ctrl_routers=[(0, 0), (6, 0)], nic_routers=[(0, 0)] * nics)


def memory() -> MemoryController:
    # 4 channels of DDR3-1600 per socket and 128 GB per system (spec): 16 GB per channel. From 4 Gb devices (the
    # densest DDR3 parts of the day) a 16 GB channel has at least 2 ranks (2 x 16 x4 devices; x8 devices take 4),
    # each with its own 8 banks and its own activate window (tRRD, tFAW): 2 ranks, the fewest the capacity allows.
    # 15 ns of controller latency: assumed.
    return MemoryController(preset="DDR3-1600", channels=4, ranks=2, ctrl_latency="15ns")


CARDS_PER_SOCKET = 2           # two of the four X520-QDA1 cards per socket (spec)
PORTS_PER_CONTROLLER = 2       # the 82599 is a dual-port 10 GbE controller (Intel's 82599 datasheet)


def nics(ports: int) -> list[Nic]:
    # The card as built: an X520-QDA1's four 10 GbE ports cannot come from one 82599, a dual-port controller, so
    # each card is two 82599s, each with its own PCIe 2.0 x8 link (the 82599's host interface) to a PCIe switch on
    # the card. Assumed (no product brief was at hand): the switch's uplink to the host is PCIe 3.0 x8 (7.88 GB/s
    # each way), which is not modelled: it carries what the two controllers' links carry (4 GB/s each) to within
    # 2%. A run uses up to 6 ports per socket; assumed: spread evenly over the socket's two cards (3 + 3 for 6),
    # each card's over its controllers two by two (2 + 1 for 3): one `Nic` per controller.
    cards = [ports // CARDS_PER_SOCKET + (k < ports % CARDS_PER_SOCKET) for k in range(min(CARDS_PER_SOCKET, ports))]
    per_controller = [min(PORTS_PER_CONTROLLER, left - used) for left in cards
                      for used in range(0, left, PORTS_PER_CONTROLLER)]
    return [nic(n) for n in per_controller]


def nic(ports: int) -> Nic:
    # One 82599 controller (PCIe 2.0 x8, 5 GT/s: Intel's 82599 datasheet).
    return Nic(enabled=True, ports=ports, port_gbps=10.0, pcie_gen=2, pcie_lanes=8,
               pcie_max_payload=256,           # assumed: the common max payload size
               # The PCIe protocol: 4-DW request headers (64-bit addresses), MaxReadRequestSize 512 (the spec's
               # default), 64-byte completions (the root port's RCB), 32 read tags, an Ack window of 240 ns: the
               # Nic defaults (models/nic.py says which are assumed).
               pcie_latency="400ns",           # assumed
               # A UC store holds the core's store buffer for a round trip to the uncore that orders it (John
               # McCalpin, Intel's forum, "Why do MemReq TLPs take 100s nanoseconds to be generated after MMIO
               # writes?": UC writes leave one at a time, each after a round-trip signal; the poster's PCIe
               # analyser saw consecutive 8-byte UC writes 50-300 ns apart, processor unnamed). Its length on Ivy
               # Bridge-EP is unpublished: 100 ns, inside that range, is assumed.
               mmio_latency="100ns",           # assumed
               rx_fifo_frames=512,             # assumed: 512 KB RX packet buffer / ~1 KB per small frame
               # 82598/82599 datasheets: RX descriptors are packed and written back as whole 64-byte cache lines
               # (4 x 16-byte descriptors) when possible, or when the interrupt-throttle timer forces a flush.
               # Timer: assumed 2 us (the EITR interval step; a polling driver publishes none).
               rx_wb_threshold=4, rx_wb_timer="2us",
               # MICA runs on DPDK's ixgbe driver: RS on every 32nd TX descriptor (tx_rs_thresh = 32) and
               # TXDCTL.WTHRESH = 0, so the 82599 writes back only those descriptors.
               tx_completion="report_status",
               ddio=True, ddio_ways=0.1)       # DDIO in 2 of 20 ways (spec)


def technology() -> Technology:
    # Power-only values (the power model's). Ivy Bridge-EP is a 22 nm high-performance process (Intel); the rest
    # is as the spec gives the core, or assumed where commented.
    return Technology(part="xeon-e5-2697v2", node=22.0, device="hp",
                      temperature=360.0,          # assumed: 87 C junction (a McPAT-legal 10 K step)
                      x86=True,                   # an x86 front end (decoders, uop cache) is what the part has
                      pipeline_depth=14,          # assumed: Ivy Bridge has ~14-19 stages
                      phys_int_regs=PHYS_INT_REGS, phys_fp_regs=PHYS_FP_REGS,   # Sandy/Ivy Bridge (above)
                      issue_queue=SCHEDULER_ENTRIES,
                      tlb_entries=64,             # 64-entry L1 DTLB (ITLB 128 is priced as 64: assumed)
                      llc_banks=4,                # assumed
                      # The DIMMs as priced: 128 GB per system over 2 x 4 channels of DDR3-1600 (spec) is 16 GB a
                      # channel. Assumed (the server's DIMMs are not named): two 8 GB dual-rank registered ECC DIMMs
                      # per channel, each 2 ranks of 8 data + 1 ECC 4 Gb x8 devices (Micron MT41J512M8, whose
                      # datasheet currents models/technology.py holds, as Micron's 8 GB x72 ECC dual-rank modules
                      # use them): 4 ranks x 8 x 4 Gb = 16 GB a channel, 64 GB a socket. (memory() times 2 ranks
                      # a channel, its x4 reading of the same capacity; a 4 Gb x4 current set is not in the engine's
                      # device list, and the timing is not changed here.) The registers: power/server.py.
                      dram_device="micron-ddr3-4gb-x8", dram_ranks_per_channel=4, dram_devices_per_rank=9,
                      nic_buffer="512KiB", nic_queues=64, nic_clock="250MHz",      # assumed NIC chip internals
                      tdp=130.0)                  # Intel's TDP for the E5-2697 v2


def server_argv(settings: dict, cores: int) -> list[str]:
    """MICA in EREW mode with a 32 MiB log and 65,536 buckets per partition (assumed), or the sizes that hold the
    whole data set without eviction where those cannot (models/client.py kvs_server_sizes)."""
    log, buckets = kvs_server_sizes(Client(enabled=True, **settings), cores)
    return ["mode=erew", f"log_mib={max(32, log >> 20)}", f"buckets={max(65536, buckets)}"]


def system(cores: int = CORES_PER_SOCKET, requests: int = 20000, items: int = 1 << 16, offered_mpps: float = 0.0,
           ports: int = 0, **client) -> System:
    """`ports` = 0: two cores per port (spec)."""
    ports = ports or (cores + CORES_PER_PORT - 1) // CORES_PER_PORT
    # STANDARD workload: Tiny items (8 B keys and values), uniform popularity, 95% GET (kvs-workload.md). The item
    # count is far below the spec's (a run reports client.items); the server's log and index hold it all.
    settings = dict(dataset="tiny", items=items, popularity="uniform", get_ratio=0.95, requests=requests,
                    offered_mpps=offered_mpps, window=32)
    settings.update(client)
    return System(
        harts=cores,
        clock=CLOCK,
        mem_limit="8GiB",
        mode="detailed",
        detailed_start="roi",          # the client's measured phase is the region of interest
        warm_caches=True,              # warm the caches through the bulk load
        quantum=200,                   # assumed: instructions per scheduling turn
        core=core(),
        caches=caches(cores),
        memory=memory(),
        cores_per_cluster=1,           # a ring stop per core (spec: ring interconnect)
        noc=noc(nics=len(nics(ports))),
        workload=Workload(binary=str(KVS_SERVER), argv=server_argv(settings, cores)),
        nics=nics(ports),
        client=Client(enabled=True, mode="erew", **settings),
        technology=technology(),
    )
