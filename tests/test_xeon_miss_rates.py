"""The miss rates the Xeon validation compares: each stated with the events it stands for and the counters forming
it, each the events' ratio where the counters allow, a missing counter an error, never a zero."""
import math

import pytest

from drivers.cli import validate_xeon as vx
from drivers.cli import xeon_miss_rates as mr

CORE = "system.socket0.core0"


def counters(**values: float) -> dict[str, float]:
    """One core's counters (`values` replace some; a value of None removes the counter)."""
    c = {"loads": 60.0, "prefetches": 30.0, "atomics": 10.0,
         "l1d.demand_misses": 4.0, "l1d.demand_accesses": 100.0, "l1d.misses": 12.0, "l1d.read_misses": 9.0,
         "l1d.page_walk_misses": 2.0,
         "l1d.prefetcher.issued": 8.0, "l1d.prefetcher.useful": 2.0,
         "dtlb.4k.pte_reads": 3.0, "dtlb.2m.pte_reads": 2.0, "itlb.4k.pte_reads": 1.0, "itlb.2m.pte_reads": 0.0,
         "dtlb.4k.accesses": 90.0,
         "l2.accesses": 40.0, "l2.misses": 10.0, "l2.mshr_merges": 2.0, "l2.demand_misses": 3.0,
         "l2.demand_accesses": 12.0, "l2.prefetcher.issued": 8.0}
    for k, v in values.items():
        k = k.replace("__", ".")
        if v is None:
            c.pop(k)
        else:
            c[k] = v
    return {f"{CORE}.{k}": v for k, v in c.items()}


def test_each_candidate_is_the_events_ratio_over_retired_load_uops():
    r = mr.rates(counters(), [CORE], has_l2=True)
    retired = 60 + 30 + 10              # MEM_UOPS_RETIRED.ALL_LOADS: loads, software prefetches, atomics
    assert r["l1d_miss_rate"] == 4 / 100
    assert r["l1d_fills_per_load"] == (12 + 8) / retired        # L1D.REPLACEMENT: misses and prefetcher fills
    assert r["l1d_load_miss_ivb"] == (9 - 2) / retired          # the walker's 2 read misses are no loads'
    assert r["l1d_walk_reads_per_load"] == (3 + 2 + 1 + 0) / retired
    assert r["l1d_walk_misses_per_load"] == 2 / retired
    assert r["l2_miss_rate"] == 3 / 12
    assert r["l2_rqsts_miss_rate"] == (10 + 2 + 8) / (40 + 8)


@pytest.mark.parametrize("missing", ["atomics", "prefetches", "l1d.read_misses", "l2.mshr_merges",
                                     "l1d.demand_accesses"])
def test_a_missing_counter_is_an_error_naming_it(missing):
    with pytest.raises(KeyError, match=missing.replace(".", r"\.")):
        mr.rates(counters(**{missing.replace(".", "__"): None}), [CORE], has_l2=True)


def test_a_prefetcher_is_absent_only_when_it_reports_nothing():
    # No L1D prefetcher at all: none of its counters, no prefetch fills.
    none = counters(l1d__prefetcher__issued=None, l1d__prefetcher__useful=None)
    assert mr.rates(none, [CORE], has_l2=True)["l1d_fills_per_load"] == 12 / 100
    # A prefetcher that reports some counters but not `issued`: an error, not a zero.
    with pytest.raises(KeyError, match="prefetcher.issued"):
        mr.rates(counters(l1d__prefetcher__issued=None), [CORE], has_l2=True)


def test_walk_reads_are_zero_only_for_a_core_without_tlbs():
    no_mmu = {k: v for k, v in counters().items() if ".dtlb." not in k and ".itlb." not in k}
    assert mr.rates(no_mmu, [CORE], has_l2=True)["l1d_walk_reads_per_load"] == 0.0
    tlbs_without_walks = {k: v for k, v in counters().items() if not k.endswith("pte_reads")}
    with pytest.raises(KeyError, match="pte_reads"):
        mr.rates(tlbs_without_walks, [CORE], has_l2=True)


def test_every_compared_rate_is_defined_in_the_printed_note():
    note = vx.MISS_RATES_NOTE
    assert set(vx.MISS_RATES) == {d.key for d in mr.DEFINITIONS}
    for d in mr.DEFINITIONS:
        assert d.key in note and d.counters in note and d.events in note
        assert (f"differs: {d.differs}" in note) if d.differs else True
        assert vx.MISS_RATES[d.key] == (0.015 if d.level == "l1d" else 0.32)
    # The bounds say what the model lacks; the IVB rate takes the walker's misses out (no longer a bound by them).
    assert "missing: its read part" in note and "PF_HIT" in note
    assert "l1d.read_misses - l1d.page_walk_misses" in note and "walk-read misses" not in note
    assert "NOT established" in note


def test_core_paths_the_run_does_not_have_are_left_out_but_a_core_it_has_reads_every_counter():
    # A dual-socket run's cores may be numbered on from socket to socket: the paths of the other numbering report
    # nothing and are left out; a core that reports some counters but not one a rate reads is an error.
    other = "system.socket1.core0"
    r = mr.rates(counters(), [CORE, other], has_l2=True)
    assert r == mr.rates(counters(), [CORE], has_l2=True)
    with pytest.raises(KeyError, match="socket1.core0.l1d.read_misses"):
        mr.rates({**counters(), **{k.replace(CORE, other): v for k, v in counters(l1d__read_misses=None).items()}},
                 [CORE, other], has_l2=True)


def test_a_tlb_that_reports_counters_but_not_its_walks_reads_is_an_error_even_beside_others_that_do():
    # The 2 MB DTLB reports its lookups but not the entries its walks read: an error naming it, not a zero beside
    # the other TLBs' reads (merge-s23 checked only that some TLB reported pte_reads).
    partial = counters(dtlb__2m__pte_reads=None, dtlb__2m__accesses=50.0)
    with pytest.raises(KeyError, match=r"dtlb\.2m\.pte_reads"):
        mr.rates(partial, [CORE], has_l2=True)
    # A page size the core has no TLB for (none of its counters) walks nothing.
    assert mr.rates(counters(dtlb__2m__pte_reads=None), [CORE], has_l2=True)["l1d_walk_reads_per_load"] == 4 / 100


def test_a_run_none_of_whose_cores_report_is_an_error_not_n_a_rates():
    # Every core path filtered out (a stats file of another platform's numbering, or none): no rate is n/a silently.
    with pytest.raises(KeyError, match="no core of the run"):
        mr.rates({"client.throughput_mrps": 1.0}, [CORE], has_l2=False)


def test_the_walkers_misses_are_zero_only_for_a_core_without_tlbs():
    # A core without TLBs walks nothing: no counter, nothing taken out.
    no_mmu = {k: v for k, v in counters().items() if ".dtlb." not in k and ".itlb." not in k
              and not k.endswith("page_walk_misses")}
    assert mr.rates(no_mmu, [CORE], has_l2=True)["l1d_load_miss_ivb"] == 9 / 100
    # A core with TLBs saved by an engine before the counter: those two rows n/a (the rest of the table stands), not
    # the read misses as if no walk had missed.
    old = mr.rates(counters(l1d__page_walk_misses=None), [CORE], has_l2=True)
    assert math.isnan(old["l1d_load_miss_ivb"]) and math.isnan(old["l1d_walk_misses_per_load"])
    assert old["l1d_fills_per_load"] == (12 + 8) / 100
