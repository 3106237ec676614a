"""Iridium (platforms.md section 3; Gutierrez et al., ASPLOS 2014): Mercury's logic die over 3D NAND flash
(19.8 GB, 16 controllers, read 10 or 20 us, write 200 us); every core needs its 2 MB L2 to hide flash latency.
96 stacks per 1.5U server. Same cores, client and wiring as configs/mercury.py (see its doc); the memory behind the
caches is the flash (MemoryController.kind = 'flash') once the engine builds it."""

from models import System
from models.dense_server import DenseServer
from models.stacked import NandFlash, Stack, StackedDram

from . import mercury


def stack(cores: int = 16, read_latency: str = "20us") -> Stack:
    s = Stack(cores=cores, memory="flash", dram=StackedDram(), flash=NandFlash(read_latency=read_latency))
    s.validate()
    return s


def server(stacks: int = 96) -> DenseServer:
    return mercury.server(stacks)


def system(cores: int = 16, core_kind: str = "a7", clock: str | None = None, read_latency: str = "20us",
           store_mem: str = "64MiB", **client_kw) -> System:
    stack(cores, read_latency)
    system = mercury.system(cores=cores, core_kind=core_kind, clock=clock, l2=True, store_mem=store_mem,
                            **client_kw)
    system.mem_limit = "19GiB"                  # 19.8 GB of flash (source), rounded down to the GiB
    system.memory = mercury.memory("flash", read_latency=read_latency)
    return system
