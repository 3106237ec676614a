"""Parameters of the cache models (read by kvsim-timing's `mem/` components).

A `Cache` is one set-associative array; `CacheHierarchy` arranges them: private L1I/L1D (and an optional private
L2) per core, and a shared last-level cache split into slices with static address interleaving. Defaults describe
the billion-RPS target (32 KB L1s, no private L2, a 768 KB-per-core shared LLC); "assumed" marks guesses.
"""

from __future__ import annotations

import math

from .coherence import Directory
from .params import Param, ParamError, SimObject
from .prefetch import Prefetcher

# The fastest an SRAM array of a given capacity can be looked up (a floor, not a model of the latency): CACTI-class
# results put a 32 KiB L1's access at about 0.4-0.6 ns at 22-32 nm; once wires dominate, an array's access time grows
# about as the square root of its capacity (its side, which the word and bit lines cross, grows so). The floor
# takes half the low end, 0.2 ns at 32 KiB, and that square-root law (assumed rule), so only hit latencies far
# below what the capacity allows are refused: a 2 GiB LLC slice needs 51 ns, a 1.5 MiB one 1.4 ns, 32 KiB 0.2 ns.
FLOOR_REF_BYTES, FLOOR_REF_NS = 32 << 10, 0.2


def hit_latency_floor(size: int, clock_hz: int) -> int:
    """The fewest cycles of a `clock_hz` clock in which an array of `size` bytes can be looked up (at least 1)."""
    ns = FLOOR_REF_NS * math.sqrt(size / FLOOR_REF_BYTES)
    return max(1, math.ceil(ns * clock_hz * 1e-9 - 1e-9))


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


class Cache(SimObject):
    """One set-associative, write-back, write-allocate cache array with MSHRs."""

    size = Param.Size("32KiB", "capacity (for the LLC: of all slices together); rounds down to whole sets",
                      min="256B", max="4GiB")
    assoc = Param.Count(8, "ways per set (assumed 8 for the L1s)", min=1, max=64)
    line_size = Param.Size("64B", "line (block) size; a power of two, the same at every level",
                           min="16B", max="512B")
    hit_latency = Param.Count(4, "cycles of this cache's clock to look it up; a miss adds the next level's, so "
                              "load-to-use at a level is the sum down to it (assumed 4 for the L1D)",
                              min=1, max=1000)
    replacement = Param.Enum("lru", "replacement policy: 'lru', 'plru' (tree pseudo-LRU, power-of-two ways), "
                             "'random' (seeded, deterministic) or 'dip' (LRU eviction with dynamic insertion: "
                             "Qureshi et al., ISCA 2007; set dueling between MRU and bimodal insertion, as Ivy "
                             "Bridge's L3 adapts)", choices=("lru", "plru", "random", "dip"))
    mshrs = Param.Count(10, "miss-status holding registers: outstanding misses (and prefetches) to distinct lines; "
                        "for the L1D they bound the core's memory-level parallelism (Ivy Bridge: 10 fill buffers)",
                        min=1, max=1024)
    inclusive = Param.Bool(False, "evicting a line back-invalidates it in the levels above (used for the LLC)")
    # Hardware prefetchers (models/prefetch.py), composed into the cache like its replacement policy; all off.
    prefetch = Param.Child(Prefetcher, "this cache's hardware prefetchers (models/prefetch.py); all off by default")

    def validate(self) -> None:
        super().validate()
        if not _is_pow2(self.line_size):
            raise ParamError(f"Cache.line_size = {self.line_size}: must be a power of two")
        if self.size < self.assoc * self.line_size:
            raise ParamError(f"Cache.size = {self.size} is smaller than one set (assoc x line_size = "
                             f"{self.assoc * self.line_size} bytes)")
        if self.replacement == "plru" and not _is_pow2(self.assoc):
            raise ParamError(f"Cache.replacement = 'plru' needs a power-of-two assoc, not {self.assoc}")
        if self.prefetch.max_misses_in_flight > self.mshrs:
            raise ParamError(f"Cache.prefetch.max_misses_in_flight = {self.prefetch.max_misses_in_flight} exceeds "
                             f"the cache's {self.mshrs} MSHRs: it could never hold a prefetch back")


class CacheHierarchy(SimObject):
    """The caches of one socket: private L1I/L1D (+ optional L2) per core and a sliced, shared LLC."""

    l1i = Param.Child(Cache, "private instruction cache of each core (its clock is the core's)")
    l1d = Param.Child(Cache, "private data cache of each core (its clock is the core's)")
    l2_enabled = Param.Bool(False, "give each core a private mid-level cache (the Xeon baseline has one; the "
                            "target does not: its L2 is the shared LLC)")
    l2 = Param.Child(Cache, "private mid-level cache of each core, if l2_enabled (its clock is the core's)")
    llc = Param.Child(Cache, "shared last-level cache, all slices together")
    llc_slices = Param.Count(1, "LLC slices; consecutive lines go to consecutive slices (static interleaving)",
                             min=1, max=1024)
    directory = Param.Child(Directory, "the two-level MOESI directory that keeps the private caches coherent")
    uncore_clock = Param.Freq("2.5GHz", "clock of the LLC slices (assumed equal to the nominal core clock)",
                              min="100MHz", max="10GHz")

    def __init__(self, **values):
        # Each level gets its own defaults; a user may still pass any Cache.
        values.setdefault("l1i", Cache(size="32KiB", assoc=8, hit_latency=4, mshrs=4))
        values.setdefault("l1d", Cache(size="32KiB", assoc=8, hit_latency=4, mshrs=10))
        values.setdefault("l2", Cache(size="256KiB", assoc=8, hit_latency=8, mshrs=16))
        # 768 KB per core x 60 cores; 20 ways and 20 cycles (crossbar/mesh traversal included) are assumed.
        values.setdefault("llc", Cache(size="45MiB", assoc=20, hit_latency=20, mshrs=64, inclusive=True))
        super().__init__(**values)

    def validate(self) -> None:
        super().validate()
        self._validate_inclusion()
        lines = {c.line_size for c in (self.l1i, self.l1d, self.l2, self.llc)}
        if len(lines) != 1:
            raise ParamError(f"CacheHierarchy: every level must use one line_size, not {sorted(lines)}")
        per_slice = self.llc.size // self.llc_slices
        if per_slice < self.llc.assoc * self.llc.line_size:
            raise ParamError(f"CacheHierarchy.llc_slices = {self.llc_slices}: a slice of {per_slice} bytes is "
                             f"smaller than one set")

    def private_levels(self) -> list[tuple[str, Cache]]:
        """(name, cache) of each core's private levels."""
        return [("l1i", self.l1i), ("l1d", self.l1d)] + ([("l2", self.l2)] if self.l2_enabled else [])

    def _validate_inclusion(self) -> None:
        """An inclusive LLC holds every line of the private caches, so none of them can be larger than it."""
        if not self.llc.inclusive:
            return
        for name, cache in self.private_levels():
            if cache.size > self.llc.size:
                raise ParamError(f"CacheHierarchy.{name}.size = {cache.size} bytes exceeds CacheHierarchy.llc.size = "
                                 f"{self.llc.size} bytes: the inclusive LLC must hold every line of the caches "
                                 "above it (make the LLC larger, the private cache smaller, or llc.inclusive False)")

    def check_latencies(self, where: str, core_clock: int) -> None:
        """Refuse a hit latency below what the array's capacity allows (hit_latency_floor): the private caches in
        cycles of the (fastest) core clock, the LLC per slice in cycles of the uncore clock."""
        arrays = [(name, cache, cache.size, core_clock) for name, cache in self.private_levels()]
        arrays.append(("llc", self.llc, self.llc.size // self.llc_slices, self.uncore_clock))
        for name, cache, array, clock in arrays:
            floor = hit_latency_floor(array, clock)
            if cache.hit_latency < floor:
                slices = f" in {self.llc_slices} slices of {array} bytes" if name == "llc" else ""
                raise ParamError(
                    f"{where}.caches.{name}.hit_latency = {cache.hit_latency} cycles is below the {floor} cycles an "
                    f"array of {where}.caches.{name}.size = {cache.size} bytes{slices} needs at {clock / 1e9:g} GHz "
                    f"(assumed floor: {FLOOR_REF_NS} ns at 32 KiB, growing as the square root of the capacity; "
                    f"models/cache.py): raise hit_latency to at least {floor} or shrink the cache")
