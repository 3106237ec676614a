"""The miss rates validate_xeon compares with the published "L1D about 1.5%, L2 about 32%" (4-24 cores), each with
its definition: the hardware events' ratio it stands for, the kvsim counters that form it, and where the two differ
(a counter the model lacks is named, never read as a zero).

Which events the published rates used is not established: no source reachable here names them (the paper's text
beyond its opening was not available; MICA's public source counts only Linux perf's generic events, in its
microbenchmark, not in the netbench server measured; perf has no generic L2 event, so a published L2 rate came from
raw events or a profiler's own metric, unnamed). So each published rate is compared under every candidate below, and
no row is marked as the measurement's (results/validation/xeon_miss_rate_definitions.txt).

Retired load uops on Ivy Bridge (MEM_UOPS_RETIRED.ALL_LOADS, Intel's SDM vol. 3B, event D0H) are the loads, the
software prefetches (PREFETCHh is a load uop) and the locked read-modify-writes (LOCK_LOADS): kvsim's core counters
`loads + prefetches + atomics` (a store-forwarded load among the loads: it retires as a load without an L1D lookup).
"""
from __future__ import annotations

import dataclasses
from typing import Callable

Stats = dict[str, float]

# ../shared/spec/validation.md: "miss rates, 4-24 cores: L1D about 1.5%, L2 about 32%".
PUBLISHED_L1D = 0.015
PUBLISHED_L2 = 0.32


@dataclasses.dataclass(frozen=True)
class MissRate:
    key: str            # the figure's name in validate_xeon (its METRICS row)
    level: str          # "l1d" or "l2"
    events: str         # the hardware events' ratio this candidate stands for
    counters: str       # kvsim's counters (per core, averaged over the cores) forming it
    differs: str        # where kvsim's ratio is not the events' ratio (a missing counter named), or "" where equal

    @property
    def published(self) -> float:
        return PUBLISHED_L1D if self.level == "l1d" else PUBLISHED_L2


RETIRED_LOADS = "loads + prefetches + atomics"
DEFINITIONS = [
    MissRate("l1d_miss_rate", "l1d", "none: a simulator's demand ratio (no Intel event counts stores and loads "
             "together per lookup)", "l1d.demand_misses / l1d.demand_accesses (the cores' loads, stores, atomics and "
             "page-walk reads; prefetches of either kind left out; in-flight hits neither misses nor left out)", ""),
    MissRate("l1d_fills_per_load", "l1d", "Linux perf's L1-dcache-load-misses / L1-dcache-loads on Sandy and Ivy "
             "Bridge: L1D.REPLACEMENT (51H/01H: every line filled into the L1D) / MEM_UOPS_RETIRED.ALL_LOADS",
             f"(l1d.misses + l1d.prefetcher.issued) / ({RETIRED_LOADS}) (page-walk reads' fills in both: Intel's "
             "walker reads through the L1D, as the model's)", ""),
    MissRate("l1d_load_miss_ivb", "l1d", "MEM_LOAD_UOPS_RETIRED.L1_MISS / MEM_UOPS_RETIRED.ALL_LOADS (D1H/08H over "
             "D0H/81H: retired loads that missed the L1D per retired load; a load finding its line in flight is "
             "HIT_LFB, not a miss)", f"(l1d.read_misses - l1d.page_walk_misses) / ({RETIRED_LOADS}) (the page "
             "walker's PTE reads, which are no retired loads, taken out of the read misses)",
             "a lower bound by the atomics' misses only: an atomic's miss is a write miss in the model (missing: its "
             "read part), a LOCK_LOADS miss on Ivy Bridge"),
    MissRate("l2_miss_rate", "l2", "none: a simulator's demand ratio", "l2.demand_misses / l2.demand_accesses "
             "(the L1D's and L1I's demand misses and page-walk reads reaching the L2; prefetches left out)", ""),
    MissRate("l2_rqsts_miss_rate", "l2", "L2_RQSTS misses / references (24H: demand data reads incl. L1D hardware "
             "and software prefetches, RFOs, code reads and the L2 prefetchers' requests; a request finding its line "
             "in flight to the L2 is a miss)", "(l2.misses + l2.mshr_merges + l2.prefetcher.issued) / (l2.accesses + "
             "l2.prefetcher.issued)", "an upper bound: the model's L2 prefetcher asks only for lines the core does "
             "not hold, so each of its requests is a miss (Ivy Bridge's PF_HIT has no counterpart: 0 here)"),
]
BY_KEY = {d.key: d for d in DEFINITIONS}


Getter = Callable[[str], float]


def _core_ratio(s: Stats, cores: list[str], num: Callable[[Getter, str], float],
                den: Callable[[Getter, str], float]) -> float:
    """Mean over `cores` of num / den, each formed from one core's counters (a getter of them by name, and the
    core's path); a missing counter is an error, a core whose denominator is 0 is left out."""
    vals = []
    for c in cores:
        def get(name: str, c: str = c) -> float:
            key = f"{c}.{name}"
            if key not in s:
                raise KeyError(f"{key!r} is missing: a missing counter is an error, not a zero")
            return s[key]
        d = den(get, c)
        if d:
            vals.append(num(get, c) / d)
    return sum(vals) / len(vals) if vals else float("nan")


def prefetcher_issued(s: Stats, core: str, level: str) -> float:
    """The hardware prefetches `level` of `core` sent: 0 only where the cache has no prefetcher, which the engine
    shows by writing none of its `prefetcher.` counters; a prefetcher that reports some counters but not `issued` is
    an error."""
    family = f"{core}.{level}.prefetcher."
    key = family + "issued"
    if key in s:
        return s[key]
    if any(k.startswith(family) for k in s):
        raise KeyError(f"{key!r} is missing while the prefetcher reports other counters: a missing counter is an "
                       "error, not a zero")
    return 0.0


def retired_loads(get: Getter, _core: str = "") -> float:
    """MEM_UOPS_RETIRED.ALL_LOADS in kvsim's counters: loads, software prefetches and atomics."""
    return get("loads") + get("prefetches") + get("atomics")


def walk_reads(s: Stats, get: Getter, core: str) -> float:
    """The page-table entries the core's walks read through its L1D, over every TLB and page size the core reports:
    a TLB that reports any counter must report its `pte_reads` (`get` refuses a missing one), and one that reports
    none is absent (no MMU, or no TLB of that page size: nothing walked)."""
    tlbs = [f"{tlb}.{page}" for tlb in ("dtlb", "itlb") for page in ("4k", "2m")
            if any(k.startswith(f"{core}.{tlb}.{page}.") for k in s)]
    return sum(get(f"{tlb}.pte_reads") for tlb in tlbs)


def walk_misses(s: Stats, core: str) -> float:
    """The L1D misses of the core's page-walk reads (`l1d.page_walk_misses`): 0 only for a core that reports no TLB
    (nothing walked); NaN for a core with TLBs whose run lacks the counter (a run saved by an engine from before it:
    the rates that need it print n/a, never the read misses as if no walk had missed)."""
    key = f"{core}.l1d.page_walk_misses"
    if key in s:
        return s[key]
    if any(k.startswith(f"{core}.{tlb}.") for k in s for tlb in ("dtlb", "itlb")):
        return float("nan")
    return 0.0


def rates(s: Stats, cores: list[str], has_l2: bool) -> dict[str, float]:
    """Every candidate of DEFINITIONS, averaged over `cores` (the L2's n/a where the cores have no L2), and the page
    walker's L1D traffic per retired load beside them: its reads (`l1d_walk_reads_per_load`) and their misses, which
    the IVB rate leaves out (`l1d_walk_misses_per_load`)."""
    nan = float("nan")
    # The cores the run has: `cores` may name paths of both numberings (restarting on each socket, or running on);
    # a core that reports anything must report every counter a rate reads.
    cores = [c for c in cores if any(k.startswith(c + ".") for k in s)]
    if not cores:
        raise KeyError("no core of the run reports any counter: a missing counter is an error, not an n/a rate")
    out = {
        "l1d_miss_rate": _core_ratio(s, cores, lambda g, c: g("l1d.demand_misses"),
                                     lambda g, c: g("l1d.demand_accesses")),
        "l1d_fills_per_load": _core_ratio(s, cores, lambda g, c: g("l1d.misses") + prefetcher_issued(s, c, "l1d"),
                                          retired_loads),
        "l1d_load_miss_ivb": _core_ratio(s, cores, lambda g, c: g("l1d.read_misses") - walk_misses(s, c),
                                         retired_loads),
        "l1d_walk_reads_per_load": _core_ratio(s, cores, lambda g, c: walk_reads(s, g, c), retired_loads),
        "l1d_walk_misses_per_load": _core_ratio(s, cores, lambda g, c: walk_misses(s, c), retired_loads),
        "l2_miss_rate": nan, "l2_rqsts_miss_rate": nan,
    }
    if has_l2:
        l2_cores = [c for c in cores if f"{c}.l2.accesses" in s]
        if not l2_cores:
            raise KeyError("no core of the run reports 'l2.accesses': a missing counter is an error, not a figure")

        def rqsts(get: Getter, core: str, refs: bool) -> float:
            found = get("l2.accesses") if refs else get("l2.misses") + get("l2.mshr_merges")
            return found + prefetcher_issued(s, core, "l2")
        out["l2_miss_rate"] = _core_ratio(s, l2_cores, lambda g, c: g("l2.demand_misses"),
                                          lambda g, c: g("l2.demand_accesses"))
        out["l2_rqsts_miss_rate"] = _core_ratio(s, l2_cores, lambda g, c: rqsts(g, c, False),
                                                lambda g, c: rqsts(g, c, True))
    return out


def note() -> str:
    """The definitions, printed with every table that compares the rates."""
    lines = ["Miss rates compared (each published rate under every candidate; which events the measurement used is "
             "NOT established: no source found names them, so no row is marked as the measurement's; kvsim's "
             "counters per core, averaged over the cores):"]
    for d in DEFINITIONS:
        if d.differs:
            same = f"differs: {d.differs}"
        else:
            same = "no event to match" if d.events.startswith("none") else "the same ratio"
        lines.append(f"  - {d.key} (published {d.level.upper()} {d.published:.3g}): {d.events}; kvsim: "
                     f"{d.counters}; {same}.")
    lines.append(f"  Retired loads (MEM_UOPS_RETIRED.ALL_LOADS) are kvsim's {RETIRED_LOADS}. '+ prefetches' rows "
                 "(every lookup of the cache) are not compared.")
    return "\n".join(lines)
