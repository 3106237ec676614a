"""Iridium (platforms.md section 3; Gutierrez et al., ASPLOS 2014): Mercury's logic die over 3D NAND flash
(19.8 GB, 16 controllers, read 10 or 20 us, write 200 us); every core needs its 2 MB L2 to hide flash latency.
96 stacks per 1.5U server. Same cores, client and wiring as configs/mercury.py (see its doc); the memory behind the
caches is the flash (MemoryController.kind = 'flash'). The integrated MAC keeps the driver's descriptor rings and
packet buffers in its buffer SRAM (SRAM_SIZE), so neither the cores nor the MAC go to the flash for them."""

from models import System
from models.dense_server import DenseServer
from models.stacked import NandFlash, Stack, StackedDram

from . import mercury

# The MAC's buffer SRAM: 2 MiB (assumed; the source gives the MAC 0.43 mm2 but no buffer size): 64 KiB per queue at
# 32 cores, room for both 256-entry rings and 28 packet buffers of 2 KiB per core, more than the client's window.
SRAM_SIZE = "2MiB"


def stack(cores: int = 16, read_latency: str = "20us") -> Stack:
    s = Stack(cores=cores, memory="flash", dram=StackedDram(), flash=NandFlash(read_latency=read_latency))
    s.validate()
    return s


def server(stacks: int = 96) -> DenseServer:
    return mercury.server(stacks)


def system(cores: int = 16, core_kind: str = "a7", clock: str | None = None, read_latency: str = "20us",
           store_mem: str = "64MiB", sram: str | int = SRAM_SIZE, **client_kw) -> System:
    """One Iridium stack; `sram`: the MAC's buffer SRAM (0: the rings and buffers live in the flash)."""
    stack(cores, read_latency)
    system = mercury.system(cores=cores, core_kind=core_kind, clock=clock, l2=True, store_mem=store_mem,
                            nic=mercury.integrated_mac(sram), **client_kw)
    system.mem_limit = "19GiB"                  # 19.8 GB of flash (source), rounded down to the GiB
    system.memory = mercury.memory("flash", read_latency=read_latency)
    return system
