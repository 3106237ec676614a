"""Parameters of the TLBs (models/tlb.py) and of the hardware prefetchers (models/prefetch.py): Ivy Bridge's figures
by default, and bad input stopped before a run with a ParamError that names the parameter."""

import json

import pytest

from configs import brps_target_socket, xeon_e5_2697v2_socket
from models.cache import Cache
from models.core import Core
from models.params import ParamError
from models.prefetch import Prefetcher
from models.tlb import Mmu, Tlb


@pytest.mark.parametrize("cls", [Mmu, Tlb, Prefetcher])
def test_defaults_validate_serialise_and_are_documented_and_ranged(cls):
    obj = cls()
    obj.validate()
    json.dumps(obj.to_dict())
    for name, param in cls._params.items():
        assert param.doc.strip(), f"{cls.__name__}.{name} has no doc"
        if param.kind in ("count", "size"):
            assert param.min is not None and param.max is not None, f"{cls.__name__}.{name} has no range"


def test_mmu_defaults_are_ivy_bridges_tlbs_and_off():
    m = Mmu()
    assert not m.enabled and m.levels == 4
    assert [(t.entries, t.assoc) for t in (m.itlb_4k, m.itlb_2m, m.dtlb_4k, m.dtlb_2m, m.stlb_4k, m.stlb_2m)] == [
        (128, 4), (8, 8), (64, 4), (32, 4), (512, 4), (0, 1)]
    assert not Core().mmu.enabled, "a core translates for free unless its platform turns the MMU on"


def test_platforms_turn_translation_and_prefetchers_on_where_they_say():
    xeon = xeon_e5_2697v2_socket.core().mmu
    assert xeon.enabled and xeon.huge_pages == "alloc"
    caches = xeon_e5_2697v2_socket.caches(1)
    assert caches.l1d.prefetch.next_line and caches.l1d.prefetch.ip_stride
    assert caches.l2.prefetch.streamer and caches.l2.prefetch.adjacent_line
    assert not caches.l2.prefetch.trained_by_non_temporal, "MICA's prefetchnta lines do not train the L2's (manual)"
    # The L1D prefetchers' issue conditions (Intel's manual, Sandy Bridge's "Data Prefetch to L1 Data Cache"): the
    # fence as stated, the store stream at its assumed run; the L2's prefetchers are not held by either.
    assert caches.l1d.prefetch.hold_during_fence and caches.l1d.prefetch.hold_after_stores == 4
    assert not caches.l1d.prefetch.trained_by_page_walks, "triggered by load operations: a PTE read is none"
    assert not caches.l2.prefetch.hold_during_fence and caches.l2.prefetch.hold_after_stores == 0
    assert brps_target_socket.core().mmu.enabled, "the target's TLBs: an assumption (Ivy Bridge's)"
    target = brps_target_socket.caches(2)
    assert not any(getattr(c.prefetch, k) for c in (target.l1d, target.llc)
                   for k in ("next_line", "ip_stride", "streamer", "adjacent_line", "hold_during_fence",
                             "hold_after_stores")), "no prefetchers (nor their conditions) on the target"


@pytest.mark.parametrize("make, message", [
    (lambda: Tlb(entries=64, assoc=3), "Tlb.assoc = 3 does not divide Tlb.entries = 64"),
    (lambda: Mmu(levels=5), "levels"),
    (lambda: Mmu(enabled=True, huge_pages="all", dtlb_2m=Tlb(entries=0, assoc=1)), "no TLB holds 2 MB pages"),
    (lambda: Mmu(enabled=True, dtlb_4k=Tlb(entries=0, assoc=1), stlb_4k=Tlb(entries=0, assoc=1)),
     "no TLB holds 4 KB pages"),
    (lambda: Mmu(enabled=True, huge_pages="area", huge_start=1 << 30, huge_end=1 << 20), "Mmu.huge_end"),
    (lambda: Prefetcher(streamer_degree=9), "streamer_degree"),
    (lambda: Prefetcher(ip_stride_degree=0), "ip_stride_degree"),
    (lambda: Prefetcher(streamer_distance=64), "streamer_distance"),
    (lambda: Prefetcher(hold_after_stores=-1), "hold_after_stores"),
    (lambda: Prefetcher(hold_after_stores=1025), "hold_after_stores"),
    (lambda: Cache(mshrs=10, prefetch=Prefetcher(next_line=True, max_misses_in_flight=11)),
     "max_misses_in_flight = 11 exceeds the cache's 10 MSHRs"),
])
def test_bad_input_is_a_param_error_naming_it(make, message):
    with pytest.raises(ParamError, match=message):
        make().validate()


def test_a_cache_carries_its_prefetchers():
    c = Cache(prefetch=Prefetcher(streamer=True, streamer_degree=2))
    assert c.to_dict()["prefetch"]["streamer"] is True


def test_the_core_window_bounds_are_the_xeons_and_off_on_the_target():
    """The scheduler and rename bounds: Sandy/Ivy Bridge's 54 entries and 160 - 16 integer registers on the Xeon,
    and the power model prices the same figures (declared once); the target has neither bound."""
    xeon, tech = xeon_e5_2697v2_socket.core(), xeon_e5_2697v2_socket.technology()
    assert (xeon.scheduler_entries, xeon.int_rename_registers, xeon.alias_4k_penalty) == (54, 144, 7)
    assert (tech.issue_queue, tech.phys_int_regs) == (xeon.scheduler_entries, xeon.int_rename_registers + 16)
    target = brps_target_socket.core()
    assert (target.scheduler_entries, target.int_rename_registers, target.alias_4k_penalty) == (0, 0, 0)
