"""Parameters of a core's address translation (read by kvsim-timing's `tlb.rs`): L1 instruction and data TLBs, a
second-level TLB (STLB) shared by instructions and data, paging-structure caches and the page walker.

Defaults are Ivy Bridge's, from Intel's 64 and IA-32 Architectures Optimization Reference Manual (248966), the
Sandy Bridge chapter's "TLB Parameters" table, which Ivy Bridge keeps: ITLB 128 entries 4-way for 4 KB pages and
8 per thread (fully associative) for 2 MB pages; DTLB 64 entries 4-way for 4 KB and 32 entries 4-way for 2 MB;
STLB 512 entries 4-way, 4 KB pages only. (The same figures are Nehalem's, as the press of the time reported them.)
An SMT-off core owns all 128 ITLB entries. Values the manual does not give are marked "assumed".

What the model translates: in SE mode the engine maps guest virtual addresses one to one (identity), so the
timing model translates the addresses it is given; the page table it walks is its own, a radix table whose entries
sit at addresses of their own (`Mmu.table_base`) and are read through the caches like any load.
"""

from __future__ import annotations

from .params import Param, ParamError, SimObject

# The two page sizes the model knows: 4 KB base pages and 2 MB huge pages (x86-64 PDE pages, Sv39 megapages).
PAGE_4K = 4096
PAGE_2M = 2 << 20


class Tlb(SimObject):
    """One TLB array for one page size: `entries` translations in sets of `assoc` ways, LRU (0 entries: none)."""

    entries = Param.Count(64, "translations held (0: this TLB does not hold pages of this size)", min=0,
                          max=1 << 16)
    assoc = Param.Count(4, "ways per set (= entries: fully associative)", min=1, max=1 << 16)

    def validate(self) -> None:
        super().validate()
        if self.entries and self.entries % self.assoc:
            raise ParamError(f"Tlb.assoc = {self.assoc} does not divide Tlb.entries = {self.entries}")


class Mmu(SimObject):
    """A core's TLBs, paging-structure caches and page walker (off: every access translates for free)."""

    enabled = Param.Bool(False, "model address translation: TLB misses walk the page table through the caches")
    levels = Param.Count(4, "radix levels of the page table: 4 = x86-64 (48-bit addresses, the Xeon), 3 = RISC-V "
                         "Sv39; a 2 MB page ends the walk one level early", min=3, max=4)
    itlb_4k = Param.Child(Tlb, "L1 instruction TLB, 4 KB pages")
    itlb_2m = Param.Child(Tlb, "L1 instruction TLB, 2 MB pages")
    dtlb_4k = Param.Child(Tlb, "L1 data TLB, 4 KB pages")
    dtlb_2m = Param.Child(Tlb, "L1 data TLB, 2 MB pages")
    stlb_4k = Param.Child(Tlb, "second-level TLB (instructions and data), 4 KB pages")
    stlb_2m = Param.Child(Tlb, "second-level TLB (instructions and data), 2 MB pages (Ivy Bridge: none)")
    stlb_latency = Param.Count(7, "cycles an L1 TLB miss spends looking up the STLB before a hit's translation or a "
                               "walk (assumed: the 7 cycles commonly measured on Sandy Bridge)", min=0, max=100)
    pwc_entries = Param.Count(32, "paging-structure cache entries per upper level (entries pointing to a table: "
                              "PML4E, PDPTE, PDE on x86-64), fully associative, LRU; a hit skips the walk's reads "
                              "above it (assumed: Intel does not publish their sizes; 0 = none)", min=0, max=1024)
    huge_pages = Param.Enum("none", "which addresses use 2 MB pages: 'none' (every page 4 KB); 'alloc' = the "
                            "guest's hugepage allocations (the ALLOC_LOCAL and ALLOC_ON simulator calls, which hand "
                            "out whole 2 MB-aligned pages, as DPDK's and MICA's hugepage memory; the engine "
                            "registers each with TimingSystem::map_huge); 'area' = those and [huge_start, huge_end); "
                            "'all'", choices=("none", "alloc", "area", "all"))
    huge_start = Param.Size("0B", "start of the 2 MB-page area when huge_pages = 'area' (rounded down to 2 MB)",
                            min=0, max=1 << 46)
    huge_end = Param.Size("0B", "end of the 2 MB-page area when huge_pages = 'area' (rounded up to 2 MB)",
                          min=0, max=1 << 46)
    table_base = Param.Size(1 << 46, "where the model's page-table pages live: an address range no "
                            "guest address reaches (tables are placed by the address they map, one 2^40-byte "
                            "range per level below this base, so at least 2^43)", min=1 << 43, max=1 << 56)

    def __init__(self, **values):
        values.setdefault("itlb_4k", Tlb(entries=128, assoc=4))
        values.setdefault("itlb_2m", Tlb(entries=8, assoc=8))
        values.setdefault("dtlb_4k", Tlb(entries=64, assoc=4))
        values.setdefault("dtlb_2m", Tlb(entries=32, assoc=4))
        values.setdefault("stlb_4k", Tlb(entries=512, assoc=4))
        values.setdefault("stlb_2m", Tlb(entries=0, assoc=1))
        super().__init__(**values)

    def validate(self) -> None:
        super().validate()
        if not self.enabled:
            return
        for name in ("itlb_4k", "dtlb_4k"):
            if getattr(self, name).entries == 0 and self.stlb_4k.entries == 0:
                raise ParamError(f"Mmu.{name}: no TLB holds 4 KB pages (give it or Mmu.stlb_4k entries)")
        if self.huge_pages != "none":
            for l1 in ("itlb_2m", "dtlb_2m"):
                if getattr(self, l1).entries == 0 and self.stlb_2m.entries == 0:
                    raise ParamError(f"Mmu.huge_pages = {self.huge_pages!r}: no TLB holds 2 MB pages for "
                                     f"Mmu.{l1} (give it or Mmu.stlb_2m entries, or set huge_pages = 'none')")
        if self.huge_pages == "area" and self.huge_end <= self.huge_start:
            raise ParamError(f"Mmu.huge_end = {self.huge_end} must be above Mmu.huge_start = {self.huge_start} "
                             f"when huge_pages = 'area'")
        if self.huge_end > self.table_base:
            raise ParamError(f"Mmu.table_base = {self.table_base} lies inside the 2 MB-page area (ends at "
                             f"{self.huge_end}): page tables need addresses no guest address reaches")
