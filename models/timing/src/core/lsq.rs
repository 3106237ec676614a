//! The core's memory ordering for loads: store-to-load forwarding from the store queue, loads blocked by a
//! partly overlapping store, and false dependences on stores a 4 KB multiple away (4K aliasing).

use super::{Core, PAGE_WORDS, SQ_FILTER};
use crate::inst::InstInfo;
use crate::tlb::Side;
use crate::tlb_guest::PageTables;
use crate::{AccessKind, MemPort, MemReq, ReqClass};

impl Core {
    /// Whether a load of bytes `start..end` issued at `i` is falsely blocked by 4K aliasing: the youngest older
    /// store still in the store buffer that matches it in address bits 11:0 does not overlap it (Intel's memory-order
    /// buffer compares those bits first; a store that does overlap forwards or blocks as `load` says instead).
    #[inline]
    fn aliased(&self, start: u64, end: u64, i: u64) -> bool {
        let in_page = |w: u64| self.alias_filter.get(w as usize % PAGE_WORDS).is_some_and(|&r| r > i);
        (in_page(start >> 3) || in_page((end - 1) >> 3)) && self.alias_search(start, end, i)
    }

    /// `aliased`'s search of the store queue, once the filter says a store to a word at the same page offset may
    /// be undrained (out of line: most loads never get here).
    #[inline(never)]
    fn alias_search(&self, start: u64, end: u64, i: u64) -> bool {
        let (n, page) = (self.sq.len(), 4096u64);
        let (lo, len) = (start % page, end - start);
        let mut k = self.sq_pos;
        for _ in 0..n {
            k = if k == 0 { n - 1 } else { k - 1 };
            let e = self.sq[k];
            if e.release <= i {
                return false;
            }
            let (s_start, s_end) = (e.addr, e.addr.wrapping_add(e.size as u64));
            if s_start < end && start < s_end {
                return false;
            }
            let s_lo = s_start % page;
            if s_lo < lo + len && lo < s_lo + e.size as u64 {
                return true;
            }
        }
        false
    }

    /// The SQ filter's bucket of 8-byte word `word`: nearby words (a stack frame, a record) in different buckets.
    #[inline]
    pub(super) fn word_hash(word: u64) -> usize {
        ((word ^ (word >> 10) ^ (word >> 20)) as usize) & (SQ_FILTER - 1)
    }

    /// A load issued at cycle `i`: forwarded from an older store still in the store queue, else from memory.
    /// The youngest undrained older store that overlaps the load decides: if the load's bytes lie wholly inside
    /// it, its data is forwarded; if they only partly overlap (a wider load over a narrower store, or straddling
    /// it), forwarding fails and the load waits until that store (and so every older one) has drained into the
    /// L1D, then reads it there (Intel's optimization manual, "Store Forwarding": Sandy Bridge and its successors
    /// forward only to a load fully contained in one store; a blocked load waits for the store to be written to
    /// the cache).
    /// Inlined into the pipeline's load copy (issue 24): it was a call a load, whose frame (the registers it saved
    /// and restored) cost about 19 host instructions of the target's 208 a load.
    #[inline(always)]
    pub(super) fn load<M: MemPort + ?Sized, T: PageTables>(
        &mut self,
        inst: &InstInfo,
        i: u64,
        mem: &mut M,
        tables: &mut T,
    ) -> u64 {
        let (i, pa) = self.translate(Side::Data, inst.mem_addr, i, mem, tables);
        let (start, end) = (inst.mem_addr, inst.mem_addr + inst.mem_size.max(1) as u64);
        // A false 4K alias blocks the load; it is reissued `alias_pen` cycles later and then searches as any load.
        let i = if self.alias_pen != 0 && self.aliased(start, end, i) {
            self.stats.aliased_loads += 1;
            i + self.alias_pen
        } else {
            i
        };
        // Search the SQ youngest first (only if the filter says a store to one of the load's words may be
        // undrained). A load within one word (most) asks the filter once.
        let undrained = |w: u64| self.sq_filter[Self::word_hash(w)] > i;
        let (first, last) = (start >> 3, (end - 1) >> 3);
        let n = if undrained(first) || (last != first && undrained(last)) { self.sq.len() } else { 0 };
        let mut k = self.sq_pos;
        for _ in 0..n {
            k = if k == 0 { n - 1 } else { k - 1 };
            // Stores leave the buffer in order (`last_store_release`), so releases only fall going back: once one
            // has left by `i`, every older one has too, and none of them can forward or block.
            let e = self.sq[k];
            if e.release <= i {
                break;
            }
            let (s_start, s_end) = (e.addr, e.addr.wrapping_add(e.size as u64));
            if s_start < end && start < s_end {
                if s_start <= start && end <= s_end {
                    self.stats.forwarded_loads += 1;
                    return i.max(e.done) + self.l1.l1d;
                }
                self.stats.forward_blocked_loads += 1;
                return e.release + self.l1.l1d;
            }
        }
        let fenced = i < self.fence_until;
        if fenced != self.fence_told {
            self.fence_told = fenced;
            mem.fence_in_flight(self.id, fenced);
        }
        mem.set_pc(self.id, inst.pc);
        let mut req = MemReq::new(pa, AccessKind::Read, self.id, self.clock.tick(i));
        req.non_temporal = inst.non_temporal;
        req.class = ReqClass::Core;
        self.mem_cycles(mem.access(&req)).max(i + 1)
    }
}
