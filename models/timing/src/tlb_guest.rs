//! FS mode's translation: the core's TLBs over the guest's own page tables (Sv39). SE mode's MMU (`tlb`) walks a
//! table of its own at addresses it makes up, and the caches see the guest's addresses as they are; in FS mode the
//! kernel builds the tables, so a walk reads the entries the guest's table holds, at their physical addresses, as
//! the core's loads through the cache hierarchy, and the caches see physical addresses: the frame a TLB entry holds
//! (what the walk found), until the guest flushes it (sfence.vma), as hardware keeps it.
//!
//! The table itself is read from guest memory by the caller (`PageTables`, which the executor's memory implements):
//! the timing model learns from it which entries a walk reads and what they map to; it charges the reads below the
//! deepest paging-structure cache hit, as in SE mode. A 1 GB page is held as the 2 MB page around the address
//! (this MMU's TLBs have 4 KB and 2 MB arrays). Entries are tagged with satp's ASID, global mappings included
//! (assumed: a global kernel mapping is looked up per address space; kvsim's guests run one process).

use crate::tlb::{Mmu, Side, EMPTY, PAGE_SHIFTS};

/// The guest's translation as the timing model needs it.
pub trait PageTables {
    /// Whether these are a guest's tables (FS mode); SE mode's `Untranslated` is not, and its MMU walks its own.
    const GUEST: bool = true;
    /// The ASID the translations of `side` are tagged with now, or None when `side` is not translated (M mode,
    /// satp Bare): its addresses are physical.
    fn asid(&self, side: Side) -> Option<u16>;
    /// Walk the table for `va` as `side` would: the physical addresses of the entries read, root first, in `ptes`;
    /// returns how many (3 for a 4 KB page, 2 for 2 MB, 1 for 1 GB) and the physical address `va` maps to. None
    /// when the walk faults (the functional model then took the fault; nothing to time).
    fn walk(&mut self, side: Side, va: u64, ptes: &mut [u64; 3]) -> Option<(usize, u64)>;
}

/// SE mode: no guest tables, addresses are physical as they are.
pub struct Untranslated;

impl PageTables for Untranslated {
    const GUEST: bool = false;
    #[inline(always)]
    fn asid(&self, _side: Side) -> Option<u16> {
        None
    }
    fn walk(&mut self, _side: Side, _va: u64, _ptes: &mut [u64; 3]) -> Option<(usize, u64)> {
        None
    }
}

/// Sv39's levels.
const SV39_LEVELS: u32 = 3;

impl Mmu {
    /// Translate `va` for `side` over the guest's tables, looked up at cycle `cycle`: the cycle the translation is
    /// ready and the physical address. `read(addr, cycle)` performs one page-table read (a physical address) at
    /// `cycle` and returns the cycle its data arrives.
    pub fn translate_guest<T: PageTables>(
        &mut self,
        side: Side,
        va: u64,
        cycle: u64,
        tables: &mut T,
        read: impl FnMut(u64, u64) -> u64,
    ) -> (u64, u64) {
        let Some(asid) = tables.asid(side) else { return (cycle, va) };
        if asid != self.asid {
            self.set_asid(asid);
        }
        let s = side as usize;
        let memo = (va >> 12) << 16 | asid as u64;
        let (last, size) = self.last[s];
        if last == memo {
            self.l1(side)[size].stats.accesses += 1;
            return (cycle, self.last_frame[s] | (va & 0xfff));
        }
        self.translate_guest_slow(side, va, memo, cycle, tables, read)
    }

    #[cold]
    fn translate_guest_slow<T: PageTables>(
        &mut self,
        side: Side,
        va: u64,
        memo: u64,
        cycle: u64,
        tables: &mut T,
        read: impl FnMut(u64, u64) -> u64,
    ) -> (u64, u64) {
        let (asid, s) = (self.asid, side as usize);
        // FS mode's lookups keep no `prev` (`translate`'s second memo): after one, it might not be its set's latest.
        self.prev[s] = (EMPTY, 0);
        // The physical 4 KB page of `va` in a page of size index `size` whose frame is `frame`.
        let page4k = |size: usize, frame: u64| {
            let within = (1u64 << PAGE_SHIFTS[size]) - 1;
            (frame << PAGE_SHIFTS[size]) | (va & within & !0xfff)
        };
        let l1 = self.l1(side);
        for size in 0..2 {
            if let Some(frame) = l1[size].lookup_frame(va >> PAGE_SHIFTS[size], asid) {
                l1[size].stats.accesses += 1;
                let base = page4k(size, frame);
                self.last[s] = (memo, size);
                self.last_frame[s] = base;
                return (cycle, base | (va & 0xfff));
            }
        }
        // An L1 miss: the guest's table says the page's size (and, on an STLB miss, which entries the walk reads).
        let mut ptes = [0u64; 3];
        let Some((n, pa)) = tables.walk(side, va, &mut ptes) else { return (cycle, va) };
        let leaf = SV39_LEVELS + 1 - n as u32;
        let size = (leaf as usize - 1).min(1);
        let (page, frame) = (va >> PAGE_SHIFTS[size], pa >> PAGE_SHIFTS[size]);
        let l1 = self.l1(side);
        l1[size].stats.accesses += 1;
        l1[size].stats.misses += 1;
        let mut ready = cycle + self.stlb_cycles;
        let stlb = &mut self.stlb[size];
        let stlb_frame = match stlb.is_empty() {
            true => None,
            false => {
                stlb.stats.accesses += 1;
                let f = stlb.lookup_frame(page, asid);
                stlb.stats.misses += f.is_none() as u64;
                f
            }
        };
        // An STLB hit holds the frame it was filled with (a stale one until the guest flushes).
        let frame = match stlb_frame {
            Some(f) => f,
            None => {
                // Level l's entry is the (SV39_LEVELS - l)-th read, root first.
                let (done, reads) =
                    self.walk(va, leaf, SV39_LEVELS, ready, |level| ptes[(SV39_LEVELS - level) as usize], read);
                let w = &mut self.walks[s][size];
                w.walks += 1;
                w.cycles += done - ready;
                w.pte_reads += reads;
                ready = done;
                self.stlb[size].insert_frame(page, asid, frame);
                frame
            }
        };
        let l1 = self.l1(side);
        if !l1[size].is_empty() {
            l1[size].insert_frame(page, asid, frame);
            self.last[s] = (memo, size);
            self.last_frame[s] = page4k(size, frame);
        }
        (ready, page4k(size, frame) | (va & 0xfff))
    }
}
