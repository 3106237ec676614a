"""Detailed timing of kvmix on one core of the billion-RPS target (platforms.md §2): the 3-issue out-of-order core
with a 64-entry ROB at 2.5 GHz, 32 KB L1s, its 768 KB share of the LLC and one DDR4-2400 channel. Values the paper
does not give are marked "assumed"."""

from models import System, Workload
from models.cache import Cache, CacheHierarchy
from models.core import Core
from models.dram import MemoryController

from . import WORKLOAD_BUILD


def core() -> Core:
    # The models' Core defaults are the target core: out of order, 3-issue (paper), ROB 64 (paper), 2.5 GHz
    # normal operating point (paper); LQ 32 / SQ 24, 3 ALUs, gshare with 4096 counters, 14-cycle mispredict
    # penalty are assumed (see models/core.py).
    return Core(model="ooo", clock="2.5GHz", issue_width=3, fetch_width=3, commit_width=3, rob_entries=64)


def caches(cores: int = 1) -> CacheHierarchy:
    return CacheHierarchy(
        l1i=Cache(size="32KiB", assoc=8, hit_latency=4, mshrs=4),     # 32 KB I: assumed size; 8-way assumed
        l1d=Cache(size="32KiB", assoc=8, hit_latency=4, mshrs=10),    # 32 KB D (paper); 8-way, 4 cycles, 10 MSHRs
                                                                      # assumed (Ivy Bridge-like)
        l2_enabled=False,                                             # the L2 is the shared LLC (paper)
        # 768 KB per core (paper); 20-way assumed (rounds down to 614 sets per 768 KB); 20 cycles including the
        # crossbar/mesh trip, assumed; inclusive (it holds the directory's sharer vectors, assumed).
        llc=Cache(size=768 * 1024 * cores, assoc=20, hit_latency=20, mshrs=64, inclusive=True),
        llc_slices=max(1, cores // 2),                                # one slice per 2-core cluster (paper)
        uncore_clock="2.5GHz",                                        # assumed: the nominal core clock
    )


def memory() -> MemoryController:
    # One DDR4-2400 channel (the paper: 6 channels per 60-core socket; one serves this small slice of it).
    # Timings: the JEDEC DDR4-2400R preset (models/dram.py); 15 ns controller + PHY latency assumed.
    return MemoryController(preset="DDR4-2400", channels=1, ranks=1, ctrl_latency="15ns")


def system(rounds: int = 3, harts: int = 1) -> System:
    return System(
        harts=harts,
        mode="detailed",
        detailed_start="roi",         # kvmix marks its measured rounds with ROI_BEGIN: fast-forward its set-up ...
        warm_caches=True,             # ... warming the caches on the way
        quantum=100,                  # instructions per scheduling turn (the hart furthest behind in time goes next)
        mem_limit="512MiB",
        core=core(),
        caches=caches(harts),
        memory=memory(),
        workload=Workload(binary=str(WORKLOAD_BUILD / "bench" / "kvmix"), argv=[str(rounds)]),
    )
