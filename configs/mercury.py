"""Mercury (platforms.md section 3; Gutierrez et al., ASPLOS 2014): a 3D stack of DRAM (4 GB, 16 ports x 128 bit,
6.25 GB/s per port, closed-page 10 ns, swept 10-100 ns) over a 28 nm logic die with 1-32 small cores, one
memcached-class instance per core on its own port, an integrated 10 GbE MAC; 96 stacks per 1.5U server.

Cores: Cortex-A7 class (in order, 1 GHz) or Cortex-A15 class (3-wide out of order, 1 or 1.5 GHz), 32 KB L1s, an
optional private 2 MB L2. Values the source does not give are commented "assumed".

What is wired: `stack()` and `server()` are the stack's memory (models.stacked) and the server
(models.dense_server). `system()` runs one memcached-class instance per core against the ghost client speaking the
memcached binary protocol over UDP (Client.protocol = 'memcached'), with the stack's cores and caches and its memory
behind them (`memory()`: System.memory.kind = 'dram3d', built by kvsim_timing::stacked::backing), and the
integrated 10 GbE MAC on the logic die (`integrated_mac()`: Nic.attach = 'on_die', no PCIe; one port per stack).
"""

from models import System, Workload
from models.cache import Cache, CacheHierarchy
from models.client import Client
from models.core import Core
from models.dense_server import DenseServer
from models.dram import ENGINE_BACKING_KINDS, MemoryController
from models.nic import Nic
from models.params import ParamError, parse_size
from models.stacked import NandFlash, Stack, StackedDram
from models.technology import Technology

from . import WORKLOAD_BUILD

MCD_SERVER = WORKLOAD_BUILD / "mcd" / "mcd-server"
CORE_KINDS = ("a7", "a15")


def check_store_mem(platform: str, store_mem: str | int) -> None:
    """Each memcached-class instance's store (the server's mem= argument) must be a size the server can hold:
    anything else would only show in the guest, as every instance failing to start."""
    try:
        size = parse_size(store_mem)
    except ValueError as e:
        raise ParamError(f"{platform} store_mem = {store_mem!r}: not a size ({e})") from None
    if size <= 0:
        raise ParamError(f"{platform} store_mem = {store_mem!r}: each instance's store needs at least one byte")


def a7_core() -> Core:
    # Cortex-A7 class: in order, 1 GHz (source). Partial dual issue modelled as 2-wide, an 8-entry window, one load
    # and one store port, a 512-entry bimodal predictor and an 8-cycle mispredict penalty (8-stage pipeline): assumed.
    return Core(model="inorder", clock="1GHz", fetch_width=2, issue_width=2, commit_width=2, rob_entries=8,
                lq_entries=8, sq_entries=8, int_alus=2, load_ports=1, store_ports=1, bpred="bimodal",
                bpred_entries=512, bpred_history_bits=0, btb_entries=256, ras_entries=8, mispredict_penalty=8)


def a15_core(clock: str = "1GHz") -> Core:
    # Cortex-A15 class: 3-wide out of order, 1 GHz or 1.5 GHz (source). ROB 60, LQ/SQ 16, two ALUs, one load and
    # one store port, gshare 4096 and a 15-cycle mispredict penalty (15-stage integer pipeline): assumed.
    return Core(model="ooo", clock=clock, fetch_width=3, issue_width=3, commit_width=3, rob_entries=60,
                lq_entries=16, sq_entries=16, int_alus=2, load_ports=1, store_ports=1, mispredict_penalty=15)


def core(kind: str = "a7", clock: str | None = None) -> Core:
    if kind not in CORE_KINDS:
        raise ValueError(f"core = {kind!r}: must be one of {', '.join(CORE_KINDS)}")
    if kind == "a7":
        if clock not in (None, "1GHz"):
            raise ValueError(f"the A7-class core runs at 1GHz (platforms.md), not {clock}")
        return a7_core()
    return a15_core(clock or "1GHz")


def caches(cores: int, l2: bool, clock: int | str) -> CacheHierarchy:
    # 32 KB L1I/L1D (source); 2-way / 4-way, 2-cycle hits, 4/8 MSHRs: assumed. Optional private 2 MB L2 (source),
    # 16-way, 12 cycles, 16 MSHRs: assumed.
    # The stacks have no shared cache, but the engine's hierarchy always ends in an LLC: a 256-byte, one-cycle
    # stand-in takes its place (assumed; it adds one cycle to every L1/L2 miss and almost never hits).
    return CacheHierarchy(
        l1i=Cache(size="32KiB", assoc=2, hit_latency=2, mshrs=4),
        l1d=Cache(size="32KiB", assoc=4, hit_latency=2, mshrs=8),
        l2_enabled=l2,
        l2=Cache(size="2MiB", assoc=16, hit_latency=12, mshrs=16),
        llc=Cache(size="256B", assoc=1, hit_latency=1, mshrs=64, inclusive=False),
        llc_slices=1,
        uncore_clock=clock,
    )


def stack(cores: int = 16, latency: str = "10ns", memory: str = "dram3d") -> Stack:
    """The stack's cores over its memory; validation refuses more cores than the ports allow (two per port)."""
    s = Stack(cores=cores, memory=memory, dram=StackedDram(access_latency=latency), flash=NandFlash())
    s.validate()
    return s


def memory(kind: str = "dram3d", latency: str = "10ns", read_latency: str = "20us") -> MemoryController:
    """The stack's memory behind the caches (MemoryController.kind 'dram3d' or 'flash'). A kind the engine cannot
    build yet (models.dram.ENGINE_BACKING_KINDS; today it builds all) gets one DDR4 channel as a stand-in, and
    `stacked_memory(system)` is then False, so results say which memory they ran on."""
    if kind not in ENGINE_BACKING_KINDS:
        return MemoryController(preset="DDR4-2400", channels=1)
    # One port per core, two cores per port beyond 16 (port_map 'requester', the source's organisation): every
    # request reaches memory as the core that owns it (its own misses, its writebacks, the LLC's evictions of its
    # lines, and the NIC's DMA for its queue), so each instance's traffic stays on its port. Measured on Mercury-32
    # and KeyVault-16: the busiest port moves 1.29x and 1.21x the mean bytes. Before writebacks and DMA carried
    # their core, port 0 moved 60% and 56% of all bytes; interleaving lines over the ports put 56% and 76% on
    # ports 0 and 1 (short frames in 2 KiB buffers touch only the first lines of each).
    return MemoryController(kind=kind, dram3d=StackedDram(access_latency=latency, port_map="requester"),
                            flash=NandFlash(read_latency=read_latency, port_map="requester"))


def stacked_memory(system: System) -> bool:
    """Whether the run's memory is the stack's (not the DDR stand-in)."""
    return system.memory.kind != "ddr"


def technology(core_kind: str) -> Technology:
    # The logic die is 28 nm (source). Device type, temperature and pipeline depths (A7 8 stages, A15 15) for the
    # power model: assumed.
    return Technology(part=f"mercury-{core_kind}", node=28.0, device="hp", temperature=340.0,
                      pipeline_depth=8 if core_kind == "a7" else 15)


def server(stacks: int = 96) -> DenseServer:
    # One stack per Ethernet port, at most 96 ports per 1.5U (source).
    return DenseServer(stacks=stacks, stacks_per_port=1)


def integrated_mac(sram: str | int = 0) -> Nic:
    """The integrated 10 GbE MAC with its buffers on the logic die (source: one Ethernet port per stack, 120 mW,
    0.43 mm2, PHY off-stack). It forwards a frame to the core whose UDP port it names (perfect-match steering). Its
    receive buffer is the RX FIFO: 512 frames (assumed). DMA and register latencies and the on-die bus are the
    Nic.on_die_* defaults (assumed, commented in models/nic.py). `sram`: its buffer SRAM for the driver's rings and
    packet buffers (0: none; Iridium's)."""
    return Nic(enabled=True, ports=1, port_gbps=10.0, attach="on_die", rx_fifo_frames=512, sram_size=sram)


def client(cores: int, items: int = 65536, requests: int = 10000, get_ratio: float = 0.9,
           delete_ratio: float = 0.0, **kw) -> Client:
    """The ghost client speaking memcached. At most 512 frames are outstanding in all (the MAC's receive buffer, its
    RX FIFO, holds 512 frames: beyond that, a functional run would drop frames and stall)."""
    return Client(enabled=True, protocol="memcached", items=items, requests=requests, get_ratio=get_ratio,
                  delete_ratio=delete_ratio, window=max(1, min(32, 512 // cores)), **kw)


def system(cores: int = 16, core_kind: str = "a7", clock: str | None = None, l2: bool = False,
           latency: str = "10ns", store_mem: str = "64MiB", nic: Nic | None = None, **client_kw) -> System:
    """One Mercury stack with `cores` cores running one memcached-class instance each; `client_kw` go to
    `client()` (items, requests, get_ratio, delete_ratio, and any Client parameter). `nic`: the stack's NIC
    (default: the integrated MAC, `integrated_mac()`)."""
    stack(cores, latency)                       # the port-sharing check (ParamError beyond 32 cores)
    c = core(core_kind, clock)
    nic = nic or integrated_mac()               # the integrated 10 GbE MAC, one port per stack (source)
    return System(
        harts=cores,
        clock=c.clock,
        mem_limit="4GiB",                       # the stack's 4 GB (source)
        mode="detailed",
        quantum=200,                            # assumed: instructions per scheduling turn
        core=c,
        caches=caches(cores, l2, c.clock),
        memory=memory("dram3d", latency),
        # Instance i serves UDP port base + i, the port the NIC steers to hart i's queue. store_mem per instance:
        # assumed far below the stack's 256 MB per port, to keep simulations small.
        workload=Workload(binary=str(MCD_SERVER), argv=[f"port={nic.steering_base_port}", f"mem={store_mem}"]),
        nic=nic,
        client=client(cores, **client_kw),
        technology=technology(core_kind),
    )
