//! Full-system mode's view of guest memory: physical memory is one DRAM range, devices sit in a physical window
//! below it, and loads, stores and fetches are translated by Sv39 page tables when satp says so and the effective
//! privilege is below M.
//!
//! The software TLBs of `Memory` (read and write: virtual page -> host page) and the decoded-block cache (virtual
//! PC -> block) keep working as in SE mode: they are filled only here, on the slow paths, after a walk allowed the
//! access, so the executor's fast paths are unchanged. Their contents hold for one translation context (satp, the
//! privilege of fetches and of data): two sets are kept (the kernel's and the user's, so a system call does not
//! flush them), and a change of satp or an sfence.vma empties both (a superset of what ASIDs require). Entries that
//! depend on mstatus.SUM or MXR (S mode touching a user page, a load from an execute-only page) are never cached,
//! so those bits are read at each such access. Decoded instruction pages are kept by physical page, so a store
//! through any alias invalidates them. LR/SC reservations hold physical addresses.

use super::*;
use crate::blocks::BlockCache;

/// What translation depends on (from the hart's privileged state, `privileged::Privileged::xlate_context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct XlateContext {
    /// satp when its mode is Sv39, else 0 (Bare).
    pub satp: u64,
    pub fetch_prv: u8,
    /// Privilege of loads and stores (differs from fetches under mstatus.MPRV).
    pub data_prv: u8,
    pub sum: bool,
    pub mxr: bool,
}

impl XlateContext {
    /// The part of the context the cached translations depend on.
    fn key(&self) -> (u64, u8, u8) {
        (self.satp, self.fetch_prv, self.data_prv)
    }
}

/// Counters of the translation machinery (statistics of an FS run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XlateStats {
    pub walks: u64,
    pub pte_reads: u64,
    pub page_faults: u64,
    pub flushes: u64,
}

struct CacheSet {
    key: (u64, u8, u8),
    rtlb: Box<[TlbEntry]>,
    wtlb: Box<[TlbEntry]>,
    blocks: BlockCache,
}

pub struct Xlate {
    ctx: XlateContext,
    /// The other context's caches, swapped in when it comes back.
    alt: Option<CacheSet>,
    /// Physical addresses [lo, hi] that are devices.
    device_lo: u64,
    device_hi: u64,
    /// The physical addresses of the page-table entries the last walk read, in order.
    pub last_walk: Vec<u64>,
    pub stats: XlateStats,
}

const PTE_V: u64 = 1;
const PTE_R: u64 = 2;
const PTE_W: u64 = 4;
const PTE_X: u64 = 8;
const PTE_U: u64 = 16;
const PTE_A: u64 = 64;
const PTE_D: u64 = 128;
const PPN_MASK: u64 = ((1 << 44) - 1) << 10;
/// Bits 63..54 of a PTE (PBMT, N and reserved): this machine implements neither Svpbmt nor Svnapot, so a PTE
/// with any of them set is invalid.
const PTE_RESERVED: u64 = !((1 << 54) - 1);
const PRV_M: u8 = 3;
const PRV_S: u8 = 1;

/// A walk's result.
pub struct Translation {
    pub pa: u64,
    /// May the software TLB keep it (independent of SUM and MXR; for stores, D is set)?
    pub cacheable: bool,
}

impl Memory {
    /// Make this memory a full-system machine's: physical DRAM is [dram_lo, dram_hi) (every page valid, allocated
    /// zeroed on touch, counted against the memory limit); physical addresses in [device_lo, device_hi] go to the
    /// device bus; translation starts off (M mode, satp Bare). Misaligned loads and stores are performed, as on
    /// qemu's virt machine (atomics still fault).
    pub fn enable_full_system(&mut self, dram_lo: u64, dram_hi: u64, device_lo: u64, device_hi: u64) {
        self.regions = Regions { elf: vec![(dram_lo, dram_hi)], ..Default::default() };
        self.allow_misaligned = true;
        self.xlate = Some(Box::new(Xlate {
            ctx: XlateContext { fetch_prv: PRV_M, data_prv: PRV_M, ..Default::default() },
            alt: None,
            device_lo,
            device_hi,
            last_walk: Vec::with_capacity(3),
            stats: XlateStats::default(),
        }));
        self.flush_translations();
    }

    pub fn full_system(&self) -> bool {
        self.xlate.is_some()
    }

    pub fn xlate_stats(&self) -> XlateStats {
        self.xlate.as_ref().map(|x| x.stats).unwrap_or_default()
    }

    /// The physical addresses of the PTEs the last page-table walk read.
    pub fn last_walk(&self) -> &[u64] {
        self.xlate.as_ref().map(|x| &x.last_walk[..]).unwrap_or(&[])
    }

    /// The running hart's translation context may have changed (a CSR write, a trap, a return, another hart).
    pub fn set_context(&mut self, new: XlateContext) {
        let Some(x) = self.xlate.as_mut() else { return };
        let old = x.ctx;
        x.ctx = new;
        if old.key() == new.key() {
            return;
        }
        if old.satp != new.satp {
            self.flush_translations();
            return;
        }
        let alt_matches = x.alt.as_ref().is_some_and(|a| a.key == new.key());
        let mut set = x.alt.take().unwrap_or_else(|| CacheSet {
            key: new.key(),
            rtlb: vec![EMPTY; TLB_ENTRIES].into_boxed_slice(),
            wtlb: vec![EMPTY; TLB_ENTRIES].into_boxed_slice(),
            blocks: BlockCache::default(),
        });
        std::mem::swap(&mut set.rtlb, &mut self.rtlb);
        std::mem::swap(&mut set.wtlb, &mut self.wtlb);
        std::mem::swap(&mut set.blocks, &mut self.blocks);
        set.key = old.key();
        if !alt_matches {
            self.rtlb.fill(EMPTY);
            self.wtlb.fill(EMPTY);
            self.blocks.invalidate();
        }
        if let Some(x) = self.xlate.as_mut() {
            x.alt = Some(set);
        }
    }

    /// sfence.vma (any form), a satp change, a remote fence: forget every cached translation and decoded block.
    pub fn flush_translations(&mut self) {
        self.rtlb.fill(EMPTY);
        self.wtlb.fill(EMPTY);
        self.blocks.invalidate();
        if let Some(x) = self.xlate.as_mut() {
            x.alt = None;
            x.stats.flushes += 1;
        }
    }

    fn is_device_fs(&self, pa: u64) -> bool {
        let x = self.xlate.as_ref().expect("full-system memory");
        (x.device_lo..=x.device_hi).contains(&pa)
    }

    /// Translate `va` for `access` in the current context.
    pub fn translate(&mut self, va: u64, access: Access) -> Result<Translation, Trap> {
        let x = self.xlate.as_ref().expect("translate() needs full-system memory");
        let ctx = x.ctx;
        let prv = if access == Access::Fetch { ctx.fetch_prv } else { ctx.data_prv };
        if prv == PRV_M || ctx.satp == 0 {
            return Ok(Translation { pa: va, cacheable: true });
        }
        self.walk(ctx, prv, va, access)
    }

    /// The Sv39 walk (privileged spec 4.3.2), updating A and D in the leaf as hardware does.
    fn walk(&mut self, ctx: XlateContext, prv: u8, va: u64, access: Access) -> Result<Translation, Trap> {
        let fault = Trap::PageFault { addr: va, access };
        {
            let x = self.xlate.as_mut().expect("full-system memory");
            x.last_walk.clear();
            x.stats.walks += 1;
        }
        // Bits 63..39 must all equal bit 38.
        if ((va as i64) << 25 >> 25) as u64 != va {
            return Err(self.page_fault(fault));
        }
        let mut table = (ctx.satp & ((1 << 44) - 1)) << PAGE_SHIFT;
        for level in (0..3).rev() {
            let vpn = (va >> (PAGE_SHIFT + 9 * level)) & 0x1ff;
            let pte_addr = table + vpn * 8;
            let pte = self.read_pte(pte_addr, va, access)?;
            if pte & PTE_V == 0 || (pte & PTE_R == 0 && pte & PTE_W != 0) || pte & PTE_RESERVED != 0 {
                return Err(self.page_fault(fault));
            }
            if pte & (PTE_R | PTE_X) == 0 {
                if level == 0 || pte & (PTE_A | PTE_D | PTE_U) != 0 {
                    return Err(self.page_fault(fault));
                }
                table = ((pte & PPN_MASK) >> 10) << PAGE_SHIFT;
                continue;
            }
            // A leaf: check the access against its permissions.
            let user_page = pte & PTE_U != 0;
            let mut cacheable = true;
            if prv == PRV_S && user_page {
                if access == Access::Fetch || !ctx.sum {
                    return Err(self.page_fault(fault));
                }
                cacheable = false;
            } else if prv < PRV_S && !user_page {
                return Err(self.page_fault(fault));
            }
            let allowed = match access {
                Access::Fetch => pte & PTE_X != 0,
                Access::Load => {
                    if pte & PTE_R == 0 && ctx.mxr && pte & PTE_X != 0 {
                        cacheable = false;
                        true
                    } else {
                        pte & PTE_R != 0
                    }
                }
                Access::Store => pte & PTE_W != 0,
                Access::Atomic => pte & PTE_W != 0 && pte & PTE_R != 0,
            };
            if !allowed {
                return Err(self.page_fault(fault));
            }
            // A superpage's low PPN fields must be zero.
            let ppn = (pte & PPN_MASK) >> 10;
            let low_ppn_bits = 9 * level;
            if ppn & ((1 << low_ppn_bits) - 1) != 0 {
                return Err(self.page_fault(fault));
            }
            let write = matches!(access, Access::Store | Access::Atomic);
            let want = PTE_A | if write { PTE_D } else { 0 };
            if pte & want != want {
                self.write_pte(pte_addr, pte | want);
            }
            let page_mask = (1u64 << (PAGE_SHIFT + low_ppn_bits)) - 1;
            let pa = ((ppn << PAGE_SHIFT) & !page_mask) | (va & page_mask);
            return Ok(Translation { pa, cacheable });
        }
        unreachable!("the loop returns at level 0")
    }

    #[cold]
    fn page_fault(&mut self, fault: Trap) -> Trap {
        if let Some(x) = self.xlate.as_mut() {
            x.stats.page_faults += 1;
        }
        fault
    }

    /// A PTE read: physical, from DRAM only (a PTE anywhere else is an access fault of the access that walked).
    fn read_pte(&mut self, pte_addr: u64, va: u64, access: Access) -> Result<u64, Trap> {
        if self.is_device_fs(pte_addr) {
            return Err(Trap::Unmapped { addr: va, access });
        }
        let p = self.page(pte_addr, Access::Load).map_err(|_| Trap::Unmapped { addr: va, access })?;
        let x = self.xlate.as_mut().expect("full-system memory");
        x.last_walk.push(pte_addr);
        x.stats.pte_reads += 1;
        // SAFETY: p is a live page; PTE addresses are 8-byte aligned inside it.
        Ok(unsafe { read_n::<8>((*p).data.as_ptr().add((pte_addr & (PAGE_SIZE - 1)) as usize)) })
    }

    fn write_pte(&mut self, pte_addr: u64, pte: u64) {
        if let Some(&p) = self.pages.get(&(pte_addr >> PAGE_SHIFT)) {
            // SAFETY: as in read_pte (the page was just read).
            unsafe { write_n::<8>((*p).data.as_mut_ptr().add((pte_addr & (PAGE_SIZE - 1)) as usize), pte) };
        }
    }

    /// A load that missed the read TLB, in FS mode.
    pub(super) fn load_slow_fs<const N: usize>(&mut self, va: u64, access: Access) -> Result<u64, Trap> {
        if va & (N as u64 - 1) != 0 {
            if access == Access::Atomic || access == Access::Fetch {
                return Err(Trap::Misaligned { addr: va, size: N as u8, access });
            }
            let mut v = 0u64;
            for i in 0..N as u64 {
                v |= self.load::<1>(va.wrapping_add(i))? << (8 * i);
            }
            return Ok(v);
        }
        let t = self.translate(va, access)?;
        if self.is_device_fs(t.pa) {
            return self.mmio_load(t.pa, N as u8, access);
        }
        let p = self.page(t.pa, access).map_err(|_| Trap::Unmapped { addr: va, access })?;
        // SAFETY: p is a live page owned by `pages`.
        let data = unsafe { (*p).data.as_mut_ptr() };
        if access == Access::Load && t.cacheable {
            let vpn = va >> PAGE_SHIFT;
            self.rtlb[vpn as usize % TLB_ENTRIES] = TlbEntry { vpn, ptr: data };
        }
        // SAFETY: aligned access inside the page.
        unsafe { Ok(read_n::<N>(data.add((t.pa & (PAGE_SIZE - 1)) as usize))) }
    }

    /// A store that missed the write TLB (or met a live reservation), in FS mode.
    pub(super) fn store_slow_fs<const N: usize>(
        &mut self,
        hart: usize,
        va: u64,
        val: u64,
        access: Access,
    ) -> Result<(), Trap> {
        if va & (N as u64 - 1) != 0 {
            if access == Access::Atomic {
                return Err(Trap::Misaligned { addr: va, size: N as u8, access });
            }
            // Translate every byte first, so a faulting store has no effect.
            for i in 0..N as u64 {
                let t = self.translate(va.wrapping_add(i), access)?;
                if !self.is_device_fs(t.pa) {
                    self.page(t.pa, access).map_err(|_| Trap::Unmapped { addr: va, access })?;
                }
            }
            for i in 0..N as u64 {
                self.store_slow_fs::<1>(hart, va.wrapping_add(i), val >> (8 * i), access)?;
            }
            return Ok(());
        }
        let t = self.translate(va, access)?;
        if self.is_device_fs(t.pa) {
            return self.mmio_store(t.pa, N as u8, val, access);
        }
        let p = self.page(t.pa, access).map_err(|_| Trap::Unmapped { addr: va, access })?;
        if self.resv_live != 0 {
            self.break_reservations(hart, t.pa, N as u64);
        }
        // SAFETY: p is a live page.
        let (data, has_code) = unsafe { ((*p).data.as_mut_ptr(), (*p).has_code) };
        if has_code {
            self.invalidate_code(t.pa, N as u64);
        } else if t.cacheable && access == Access::Store {
            let vpn = va >> PAGE_SHIFT;
            self.wtlb[vpn as usize % TLB_ENTRIES] = TlbEntry { vpn, ptr: data };
        }
        // SAFETY: aligned access inside the page.
        unsafe { write_n::<N>(data.add((t.pa & (PAGE_SIZE - 1)) as usize), val) };
        Ok(())
    }

    /// The physical address of the instruction at `va`, with fetch permission checked.
    pub(super) fn fetch_phys(&mut self, va: u64) -> Result<u64, Trap> {
        let t = self.translate(va, Access::Fetch)?;
        if self.is_device_fs(t.pa) || !self.regions.page_valid(t.pa >> PAGE_SHIFT) {
            return Err(Trap::Unmapped { addr: va, access: Access::Fetch });
        }
        Ok(t.pa)
    }

    /// Fetch and decode the instruction at `va` in FS mode; cached in its physical code page unless it straddles
    /// two pages (the second page may be mapped differently by another address space).
    pub(super) fn fetch_decode_fs(&mut self, va: u64) -> Result<Decoded, Trap> {
        let pa = self.fetch_phys(va)?;
        let low = self.phys_u16(pa, va)?;
        let straddles = (va & (PAGE_SIZE - 1)) == PAGE_SIZE - 2 && low & 3 == 3;
        let raw = if low & 3 == 3 {
            let pa_high = if straddles { self.fetch_phys(va.wrapping_add(2))? } else { pa + 2 };
            low | (self.phys_u16(pa_high, va.wrapping_add(2))? << 16)
        } else {
            low
        };
        let d = crate::decode::decode(raw);
        if straddles {
            return Ok(d);
        }
        let ppn = pa >> PAGE_SHIFT;
        self.mark_code(ppn)?;
        let slot = self.code_page(ppn).wrapping_add(((pa & (PAGE_SIZE - 1)) >> 1) as usize);
        // SAFETY: slot is inside a live code page (index < CODE_SLOTS).
        unsafe { *slot = d };
        Ok(d)
    }

    fn phys_u16(&mut self, pa: u64, va: u64) -> Result<u32, Trap> {
        let p = self.page(pa, Access::Fetch).map_err(|_| Trap::Unmapped { addr: va, access: Access::Fetch })?;
        // SAFETY: live page; a 2-byte-aligned halfword inside it.
        Ok(unsafe { read_n::<2>((*p).data.as_ptr().add((pa & (PAGE_SIZE - 1)) as usize)) } as u32)
    }

    /// The instruction word at `va` (for an illegal-instruction trap's tval and the system instructions the
    /// executor stops on): 16 bits if compressed.
    pub fn fetch_word(&mut self, va: u64) -> Result<u32, Trap> {
        if self.xlate.is_none() {
            return Ok(self.insn_word(va));
        }
        let pa = self.fetch_phys(va)?;
        let low = self.phys_u16(pa, va)?;
        if low & 3 != 3 {
            return Ok(low);
        }
        let pa_high = if va & (PAGE_SIZE - 1) == PAGE_SIZE - 2 { self.fetch_phys(va + 2)? } else { pa + 2 };
        Ok(low | (self.phys_u16(pa_high, va + 2)? << 16))
    }

    /// The physical address a reservation or its check uses (FS mode: the translated address of `va`).
    pub(super) fn reservation_addr(&mut self, va: u64) -> u64 {
        match self.translate(va, Access::Load) {
            Ok(t) => t.pa,
            Err(_) => u64::MAX - 1,
        }
    }
}

#[cfg(test)]
#[path = "sv39_tests.rs"]
mod tests;
