//! Guest memory: sparse 4 KiB pages allocated zeroed on first touch inside the mapped regions, counted against
//! `System.mem_limit`; a direct-mapped software TLB for reads and one for writes so the common access is a tag
//! compare and a host load; the LR/SC reservations of every hart; and the decoded-instruction cache (one array of
//! `Decoded` per 4 KiB code page), which stores into code invalidate.
//!
//! Pages and code pages are heap blocks owned through raw pointers (freed in `Drop`) so the TLBs can point into
//! them without borrowing the maps. Data pages are freed only by munmap/brk shrinking, which flushes the TLBs.
//! Code pages are never freed (only cleared), so harts may keep pointers to them.

use std::collections::BTreeMap;

use crate::decode::Decoded;
use crate::trap::{Access, Trap};
use kvsim_base::abi::{DEVICE_BASE, DEVICE_END, PAGE_SHIFT, PAGE_SIZE};

pub use crate::page_map::{PageHasher, PageMap};
pub use sv39::{Translation, XlateContext, XlateStats};

#[path = "sv39.rs"]
mod sv39;

#[path = "packed.rs"]
mod packed;

#[path = "page_slabs.rs"]
mod page_slabs;
pub use packed::{pack, unpack, PackingCounts};

/// `repr(C)` so a checkpoint's page file can be mapped as an array of pages (`PAGE_RECORD` bytes each).
#[repr(C, align(8))]
struct Page {
    data: [u8; PAGE_SIZE as usize],
    /// Some instruction of this page sits in the decoded-instruction cache: stores must invalidate it, so the
    /// page is never entered in the write TLB.
    has_code: bool,
}

/// Slots of a code page: one per 2-byte instruction position.
pub const CODE_SLOTS: usize = (PAGE_SIZE / 2) as usize;
pub type CodePage = [Decoded; CODE_SLOTS];
/// Bytes of one page in a checkpoint's page file: its data, then zeros (`has_code` false, padding).
pub const PAGE_RECORD: usize = std::mem::size_of::<Page>();

// 4096 entries (64 KiB a table): a 60-hart server's stacks, partitions and rings conflicted in 512, and every miss
// is a page-map lookup (3.6% of a detailed target-socket run's host time).
const TLB_ENTRIES: usize = 4096;

/// The TLB slot of page `vpn` (direct mapped).
#[inline(always)]
fn tlb_slot(vpn: u64) -> usize {
    vpn as usize & (TLB_ENTRIES - 1)
}
const NO_PAGE: u64 = u64::MAX;

#[derive(Clone, Copy)]
struct TlbEntry {
    vpn: u64,
    ptr: *mut u8,
}
const EMPTY: TlbEntry = TlbEntry { vpn: NO_PAGE, ptr: std::ptr::null_mut() };

#[derive(Clone, Copy)]
struct ItlbEntry {
    vpn: u64,
    ptr: *mut Decoded,
}

/// The address ranges an access may touch: ELF segments, the brk heap, anonymous mmaps, stacks, devices.
#[derive(Debug, Default, Clone)]
pub struct Regions {
    /// [start, end), page aligned.
    pub elf: Vec<(u64, u64)>,
    pub heap_start: u64,
    /// Current program break; the heap is valid up to it rounded up to a page.
    pub brk: u64,
    /// start -> end of every anonymous mapping, page aligned.
    pub mmaps: BTreeMap<u64, u64>,
    /// [start, end) of every hart's stack.
    pub stacks: Vec<(u64, u64)>,
}

pub fn page_up(x: u64) -> u64 {
    x.wrapping_add(PAGE_SIZE - 1) & !(PAGE_SIZE - 1)
}

impl Regions {
    /// Is the page `vpn` (or any part of it) inside a mapped region?
    pub fn page_valid(&self, vpn: u64) -> bool {
        let lo = vpn << PAGE_SHIFT;
        let hi = lo.saturating_add(PAGE_SIZE); // exclusive
        let overlaps = |s: u64, e: u64| s < hi && lo < e;
        if self.elf.iter().any(|&(s, e)| overlaps(s, e)) {
            return true;
        }
        if overlaps(self.heap_start, page_up(self.brk)) {
            return true;
        }
        if let Some((_, &e)) = self.mmaps.range(..hi).next_back() {
            if lo < e {
                return true;
            }
        }
        self.stacks.iter().any(|&(s, e)| overlaps(s, e))
    }
}

pub struct Memory {
    pages: PageMap<*mut Page>,
    rtlb: Box<[TlbEntry]>,
    wtlb: Box<[TlbEntry]>,
    code: PageMap<*mut CodePage>,
    itlb: Box<[ItlbEntry]>,
    pub regions: Regions,
    /// Most pages resident at once (System.mem_limit / 4 KiB).
    limit_bytes: u64,
    resident: u64,
    /// Pages ever allocated (statistic).
    pub pages_touched: u64,
    pub allow_misaligned: bool,
    /// Reserved address of each hart's LR (NO_RESV if none).
    resv: Vec<u64>,
    resv_live: usize,
    /// Permissions (PROT_READ | PROT_WRITE | PROT_EXEC) of the pages that differ from anonymous memory's
    /// read-write: the ELF's pages (from their segments' flags) and pages given others by mmap or mprotect.
    /// Checked when a page enters a TLB (and by the slow paths), so the fast paths stay a tag compare.
    prot: PageMap<u8>,
    /// The device bus (NIC registers in the device range), when the system has devices. Device addresses never
    /// enter the TLBs, so every access to them takes the slow paths, which hand it to the bus.
    pub devices: Option<Box<dyn crate::mmio::Mmio>>,
    /// A restored checkpoint's page file, mapped privately (copy-on-write): pages pointing into it are not heap
    /// blocks and are never freed one by one.
    backing: Option<memmap2::MmapMut>,
    /// Pages of `pages` that point into `backing`.
    backed_pages: usize,
    /// Where every other page lives (page_slabs.rs).
    slabs: page_slabs::PageSlabs,
    /// System.unpacked_memory: the packed pages and the queue of unpacked ones (packed.rs). None: none are packed.
    packing: Option<Box<packed::Packing>>,
    /// Changes to decoded code so far (stores into it, fence.i, unmapping): the block cache's generation.
    code_generation: u64,
    blocks: crate::blocks::BlockCache,
    /// The L1I line (log2 bytes) the blocks judge which instructions warming does nothing for by
    /// (`Block::warm_quiet`); a warming hook sets its system's before it runs (`set_warm_fetch_shift`).
    warm_fetch_shift: u32,
    /// Full-system mode: physical DRAM and devices, Sv39 translation (sv39.rs). None in SE mode.
    xlate: Option<Box<sv39::Xlate>>,
}

const NO_RESV: u64 = u64::MAX;

/// Page permissions, as Linux's PROT_* bits.
pub const PROT_READ: u8 = 1;
pub const PROT_WRITE: u8 = 2;
pub const PROT_EXEC: u8 = 4;
/// What the brk heap, anonymous mappings and stacks get (not executable, as for a static Linux program).
pub const PROT_DEFAULT: u8 = PROT_READ | PROT_WRITE;

impl Memory {
    /// System.mem_limit (bytes) and the bytes resident now (sysinfo reports them).
    pub fn usage(&self) -> (u64, u64) {
        (self.limit_bytes, self.resident * kvsim_base::abi::PAGE_SIZE)
    }
}
/// LR/SC reservation granule: a store by another hart to any byte of the reserved 8-byte block breaks it.
const RESV_GRANULE: u64 = 8;

impl Drop for Memory {
    fn drop(&mut self) {
        // The pages go with their slabs and the checkpoint's mapping.
        for (_, c) in self.code.drain() {
            // SAFETY: as above, for code pages (never freed elsewhere).
            unsafe { drop(Box::from_raw(c)) };
        }
    }
}

impl Memory {
    pub fn new(limit_bytes: u64, allow_misaligned: bool, harts: usize) -> Memory {
        Memory {
            pages: PageMap::default(),
            rtlb: vec![EMPTY; TLB_ENTRIES].into_boxed_slice(),
            wtlb: vec![EMPTY; TLB_ENTRIES].into_boxed_slice(),
            code: PageMap::default(),
            itlb: vec![ItlbEntry { vpn: NO_PAGE, ptr: std::ptr::null_mut() }; TLB_ENTRIES].into_boxed_slice(),
            regions: Regions::default(),
            limit_bytes,
            resident: 0,
            pages_touched: 0,
            allow_misaligned,
            resv: vec![NO_RESV; harts],
            resv_live: 0,
            prot: PageMap::default(),
            devices: None,
            backing: None,
            backed_pages: 0,
            slabs: Default::default(),
            packing: None,
            code_generation: 0,
            blocks: Default::default(),
            warm_fetch_shift: crate::blocks::DEFAULT_WARM_FETCH_SHIFT,
            xlate: None,
        }
    }

    /// Does page `p` live in the mapped page file of a checkpoint?
    fn backed(&self, p: *mut Page) -> bool {
        self.backing.as_ref().is_some_and(|m| {
            let (lo, a) = (m.as_ptr() as usize, p as usize);
            a >= lo && a < lo + m.len()
        })
    }

    /// The resident pages' numbers, packed ones included, in order (for a checkpoint).
    pub fn page_numbers(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.pages.keys().copied().chain(self.packed_numbers()).collect();
        v.sort_unstable();
        v
    }

    /// Replace every page by those of a checkpoint's page file: page `vpns[i]` is record i of `file` (mapped
    /// privately, so stores copy the host page and the file and other runs sharing it are untouched).
    pub fn restore_pages(&mut self, vpns: &[u64], file: memmap2::MmapMut) -> Result<(), String> {
        if file.len() != vpns.len() * PAGE_RECORD {
            return Err(format!("the page file has {} bytes, not {} pages of {PAGE_RECORD}", file.len(), vpns.len()));
        }
        if !(file.as_ptr() as usize).is_multiple_of(std::mem::align_of::<Page>()) {
            return Err("the page file's mapping is not aligned".into());
        }
        for vpn in self.page_numbers() {
            self.free_page(vpn);
        }
        self.flush_code();
        let base = file.as_ptr() as *mut Page;
        for (i, &vpn) in vpns.iter().enumerate() {
            // SAFETY: record i lies inside the mapping (length checked). Page is repr(C): data, then `has_code`,
            // written as 0 (false). Not read here: touching every page would fault the whole file in; the page
            // file's checksums (checked in the background) cover it.
            self.pages.insert(vpn, unsafe { base.add(i) });
        }
        self.resident = vpns.len() as u64;
        self.backed_pages = vpns.len();
        self.backing = Some(file);
        Ok(())
    }

    pub fn resident_pages(&self) -> u64 {
        self.resident
    }

    /// The permissions of page `vpn` (mremap keeps them when it moves pages).
    pub fn prot_of(&self, vpn: u64) -> u8 {
        self.prot.get(&vpn).copied().unwrap_or(PROT_DEFAULT)
    }

    /// May `access` touch the page of `addr`?
    #[inline]
    fn check_prot(&self, addr: u64, access: Access) -> Result<(), Trap> {
        let need = match access {
            Access::Load => PROT_READ,
            Access::Store => PROT_WRITE,
            Access::Fetch => PROT_EXEC,
            Access::Atomic => PROT_READ | PROT_WRITE,
        };
        if self.prot.is_empty() || self.prot_of(addr >> PAGE_SHIFT) & need == need {
            Ok(())
        } else {
            Err(Trap::Protection { addr, access })
        }
    }

    /// Set the permissions of the pages of [start, end) (page aligned); accesses are checked against them from
    /// now on (the TLBs are flushed, and decoded instructions of pages that lose execute permission dropped).
    pub fn set_prot(&mut self, start: u64, end: u64, prot: u8) {
        for vpn in start >> PAGE_SHIFT..end >> PAGE_SHIFT {
            let old = self.prot_of(vpn);
            if prot == PROT_DEFAULT {
                self.prot.remove(&vpn);
            } else {
                self.prot.insert(vpn, prot);
            }
            if old & PROT_EXEC != 0 && prot & PROT_EXEC == 0 && self.code.contains_key(&vpn) {
                self.clear_code_page(vpn);
                self.clear_last_slot(vpn.wrapping_sub(1));
            }
        }
        self.rtlb.fill(EMPTY);
        self.wtlb.fill(EMPTY);
        for e in self.itlb.iter_mut() {
            e.vpn = NO_PAGE;
        }
    }

    /// The page holding `vpn`, allocated (zeroed) if it lies in a mapped region.
    #[cold]
    fn page(&mut self, addr: u64, access: Access) -> Result<*mut Page, Trap> {
        let vpn = addr >> PAGE_SHIFT;
        if let Some(&p) = self.pages.get(&vpn) {
            return Ok(p);
        }
        if let Some(p) = self.unpack_page(vpn) {
            return Ok(p);
        }
        if !self.regions.page_valid(vpn) {
            return Err(Trap::Unmapped { addr, access });
        }
        if (self.resident + 1) * PAGE_SIZE > self.limit_bytes {
            return Err(Trap::Limit { page: vpn << PAGE_SHIFT, limit: self.limit_bytes });
        }
        let p = self.slabs.alloc_zeroed();
        self.pages.insert(vpn, p);
        self.resident += 1;
        self.pages_touched += 1;
        self.now_unpacked(vpn);
        Ok(p)
    }

    /// Drop every page of [start, end) (page aligned) and its TLB entries. Code slots are cleared too.
    pub fn free_range(&mut self, start: u64, end: u64) {
        let (lo, hi) = (start >> PAGE_SHIFT, end >> PAGE_SHIFT);
        if hi.saturating_sub(lo) as usize <= self.pages.len() {
            for vpn in lo..hi {
                self.free_page(vpn);
            }
        } else {
            let victims: Vec<u64> =
                self.pages.keys().copied().chain(self.packed_numbers()).filter(|v| (lo..hi).contains(v)).collect();
            for vpn in victims {
                self.free_page(vpn);
            }
        }
    }

    fn free_page(&mut self, vpn: u64) {
        if let Some(p) = self.pages.remove(&vpn) {
            let slot = tlb_slot(vpn);
            self.rtlb[slot] = EMPTY;
            self.wtlb[slot] = EMPTY;
            // SAFETY: p is live; no TLB entry refers to it any more.
            let has_code = unsafe { (*p).has_code };
            if !self.backed(p) {
                self.slabs.release(p);
            } else {
                self.backed_pages -= 1;
            }
            if has_code {
                self.clear_code_page(vpn);
                self.clear_last_slot(vpn.wrapping_sub(1));
            }
            self.resident -= 1;
        } else if self.free_packed(vpn) {
            self.resident -= 1;
        }
    }

    // ---------------------------------------------------------------- loads and stores

    /// Load `N` (1, 2, 4, 8) bytes, zero-extended.
    #[inline(always)]
    pub fn load<const N: usize>(&mut self, addr: u64) -> Result<u64, Trap> {
        let vpn = addr >> PAGE_SHIFT;
        // SAFETY: the index is masked to the table size.
        let e = unsafe { *self.rtlb.get_unchecked(tlb_slot(vpn)) };
        if e.vpn == vpn && addr & (N as u64 - 1) == 0 {
            // SAFETY: a TLB entry points at a live page; the aligned access lies inside it.
            unsafe { Ok(read_n::<N>(e.ptr.add((addr & (PAGE_SIZE - 1)) as usize))) }
        } else {
            self.load_slow::<N>(addr, Access::Load)
        }
    }

    /// `load`'s fast path alone: the value if the read TLB holds the page and the access is aligned.
    #[inline(always)]
    pub fn load_fast<const N: usize>(&self, addr: u64) -> Option<u64> {
        let vpn = addr >> PAGE_SHIFT;
        // SAFETY: the index is masked to the table size.
        let e = unsafe { *self.rtlb.get_unchecked(tlb_slot(vpn)) };
        if e.vpn == vpn && addr & (N as u64 - 1) == 0 {
            // SAFETY: a TLB entry points at a live page; the aligned access lies inside it.
            unsafe { Some(read_n::<N>(e.ptr.add((addr & (PAGE_SIZE - 1)) as usize))) }
        } else {
            None
        }
    }

    /// `load`'s slow path (after `load_fast` declined).
    #[inline(always)]
    pub fn load_other<const N: usize>(&mut self, addr: u64) -> Result<u64, Trap> {
        self.load_slow::<N>(addr, Access::Load)
    }

    #[inline(never)]
    fn load_slow<const N: usize>(&mut self, addr: u64, access: Access) -> Result<u64, Trap> {
        if self.xlate.is_some() {
            return self.load_slow_fs::<N>(addr, access);
        }
        if (DEVICE_BASE..=DEVICE_END).contains(&addr) {
            return self.mmio_load(addr, N as u8, access);
        }
        if addr & (N as u64 - 1) != 0 {
            if !self.allow_misaligned || access == Access::Atomic {
                return Err(Trap::Misaligned { addr, size: N as u8, access });
            }
            let mut v = 0u64;
            for i in 0..N as u64 {
                v |= self.load::<1>(addr.wrapping_add(i))? << (8 * i);
            }
            return Ok(v);
        }
        let p = self.page(addr, access)?;
        self.check_prot(addr, access)?;
        let vpn = addr >> PAGE_SHIFT;
        // SAFETY: p is a live page owned by `pages`.
        let data = unsafe { (*p).data.as_mut_ptr() };
        if self.prot_of(vpn) & PROT_READ != 0 {
            self.rtlb[tlb_slot(vpn)] = TlbEntry { vpn, ptr: data };
        }
        // SAFETY: aligned access inside the page.
        unsafe { Ok(read_n::<N>(data.add((addr & (PAGE_SIZE - 1)) as usize))) }
    }

    /// Store the low `N` bytes of `val`, on behalf of `hart` (for LR/SC reservations).
    #[inline(always)]
    pub fn store<const N: usize>(&mut self, hart: usize, addr: u64, val: u64) -> Result<(), Trap> {
        let vpn = addr >> PAGE_SHIFT;
        // SAFETY: masked index.
        let e = unsafe { *self.wtlb.get_unchecked(tlb_slot(vpn)) };
        if e.vpn == vpn && addr & (N as u64 - 1) == 0 && self.resv_live == 0 {
            // SAFETY: as in `load`.
            unsafe { write_n::<N>(e.ptr.add((addr & (PAGE_SIZE - 1)) as usize), val) };
            Ok(())
        } else {
            self.store_slow::<N>(hart, addr, val, Access::Store)
        }
    }

    /// `store`'s fast path alone: true if the store was done. A store done here never changes decoded code (pages
    /// holding it never enter the write TLB), so only a store that is not done here can move `code_generation`.
    #[inline(always)]
    pub fn store_fast<const N: usize>(&mut self, addr: u64, val: u64) -> bool {
        let vpn = addr >> PAGE_SHIFT;
        // SAFETY: masked index.
        let e = unsafe { *self.wtlb.get_unchecked(tlb_slot(vpn)) };
        if e.vpn == vpn && addr & (N as u64 - 1) == 0 && self.resv_live == 0 {
            // SAFETY: as in `load`.
            unsafe { write_n::<N>(e.ptr.add((addr & (PAGE_SIZE - 1)) as usize), val) };
            true
        } else {
            false
        }
    }

    /// `store`'s slow path (after `store_fast` declined).
    #[inline(always)]
    pub fn store_other<const N: usize>(&mut self, hart: usize, addr: u64, val: u64) -> Result<(), Trap> {
        self.store_slow::<N>(hart, addr, val, Access::Store)
    }

    #[inline(never)]
    fn store_slow<const N: usize>(&mut self, hart: usize, addr: u64, val: u64, access: Access) -> Result<(), Trap> {
        if self.xlate.is_some() {
            return self.store_slow_fs::<N>(hart, addr, val, access);
        }
        if (DEVICE_BASE..=DEVICE_END).contains(&addr) {
            return self.mmio_store(addr, N as u8, val, access);
        }
        if addr & (N as u64 - 1) != 0 {
            if !self.allow_misaligned || access == Access::Atomic {
                return Err(Trap::Misaligned { addr, size: N as u8, access });
            }
            // Check every byte is writable before changing any, so a faulting store has no effect.
            for i in 0..N as u64 {
                self.page(addr.wrapping_add(i), access)?;
                self.check_prot(addr.wrapping_add(i), access)?;
            }
            for i in 0..N as u64 {
                self.store_slow::<1>(hart, addr.wrapping_add(i), val >> (8 * i), access)?;
            }
            return Ok(());
        }
        let p = self.page(addr, access)?;
        self.check_prot(addr, access)?;
        if self.resv_live != 0 {
            self.break_reservations(hart, addr, N as u64);
        }
        let vpn = addr >> PAGE_SHIFT;
        // SAFETY: p is a live page.
        let (data, has_code) = unsafe { ((*p).data.as_mut_ptr(), (*p).has_code) };
        if has_code {
            self.invalidate_code(addr, N as u64);
        } else {
            self.wtlb[tlb_slot(vpn)] = TlbEntry { vpn, ptr: data };
        }
        // SAFETY: aligned access inside the page.
        unsafe { write_n::<N>(data.add((addr & (PAGE_SIZE - 1)) as usize), val) };
        Ok(())
    }

    /// A load in the device range: the device bus answers, or a fault saying why not.
    #[cold]
    fn mmio_load(&mut self, addr: u64, size: u8, access: Access) -> Result<u64, Trap> {
        match self.devices.as_deref_mut() {
            Some(bus) => bus.load(addr, size, access),
            None => Err(Trap::Mmio { addr, size, access, why: "no device here (the system has no NIC)" }),
        }
    }

    #[cold]
    fn mmio_store(&mut self, addr: u64, size: u8, val: u64, access: Access) -> Result<(), Trap> {
        match self.devices.as_deref_mut() {
            Some(bus) => bus.store(addr, size, val, access),
            None => Err(Trap::Mmio { addr, size, access, why: "no device here (the system has no NIC)" }),
        }
    }

    /// Atomic accesses: always aligned; they go through the slow paths (rare).
    pub fn load_atomic<const N: usize>(&mut self, addr: u64) -> Result<u64, Trap> {
        if addr & (N as u64 - 1) != 0 {
            return Err(Trap::Misaligned { addr, size: N as u8, access: Access::Atomic });
        }
        self.load_slow::<N>(addr, Access::Atomic)
    }

    pub fn store_atomic<const N: usize>(&mut self, hart: usize, addr: u64, val: u64) -> Result<(), Trap> {
        if addr & (N as u64 - 1) != 0 {
            return Err(Trap::Misaligned { addr, size: N as u8, access: Access::Atomic });
        }
        self.store_slow::<N>(hart, addr, val, Access::Atomic)
    }

    /// Copy guest bytes out (for system calls). Faults like loads, except misalignment (byte accesses).
    pub fn read_bytes(&mut self, addr: u64, len: u64) -> Result<Vec<u8>, Trap> {
        let mut out = Vec::with_capacity(len.min(1 << 20) as usize);
        let mut a = addr;
        let end = addr.checked_add(len).ok_or(Trap::Unmapped { addr, access: Access::Load })?;
        while a < end {
            let p = self.page(a, Access::Load)?;
            self.check_prot(a, Access::Load)?;
            let off = (a & (PAGE_SIZE - 1)) as usize;
            let n = ((PAGE_SIZE as usize - off) as u64).min(end - a) as usize;
            // SAFETY: p is live; [off, off + n) is inside the page.
            out.extend_from_slice(unsafe { &(&(*p).data)[off..off + n] });
            a += n as u64;
        }
        Ok(out)
    }

    /// Copy bytes into the guest (system calls, loader), with the effects of stores.
    pub fn write_bytes(&mut self, hart: usize, addr: u64, bytes: &[u8]) -> Result<(), Trap> {
        addr.checked_add(bytes.len() as u64).ok_or(Trap::Unmapped { addr, access: Access::Store })?;
        let mut done = 0usize;
        while done < bytes.len() {
            let a = addr + done as u64;
            let p = self.page(a, Access::Store)?;
            self.check_prot(a, Access::Store)?;
            let off = (a & (PAGE_SIZE - 1)) as usize;
            let n = (PAGE_SIZE as usize - off).min(bytes.len() - done);
            if self.resv_live != 0 {
                self.break_reservations(hart, a, n as u64);
            }
            // SAFETY: p is live; the range is inside the page.
            unsafe {
                (&mut (*p).data)[off..off + n].copy_from_slice(&bytes[done..done + n]);
                if (*p).has_code {
                    self.invalidate_code(a, n as u64);
                }
            }
            done += n;
        }
        Ok(())
    }

    // ---------------------------------------------------------------- checkpoints

    /// Every hart's LR reservation (u64::MAX: none) and the pages whose permissions differ from the default, in
    /// page order: the parts of memory's state a checkpoint saves besides the pages.
    pub fn saved_state(&self) -> (Vec<u64>, Vec<(u64, u8)>) {
        let mut prot: Vec<(u64, u8)> = self.prot.iter().map(|(&v, &p)| (v, p)).collect();
        prot.sort_unstable();
        (self.resv.clone(), prot)
    }

    /// Take a checkpoint's reservations and page permissions (from `saved_state`); the TLBs are flushed.
    pub fn restore_state(&mut self, resv: Vec<u64>, prot: Vec<(u64, u8)>) -> Result<(), String> {
        if resv.len() != self.resv.len() {
            return Err(format!("{} reservations for {} harts", resv.len(), self.resv.len()));
        }
        self.resv_live = resv.iter().filter(|&&r| r != NO_RESV).count();
        self.resv = resv;
        self.prot = prot.into_iter().collect();
        self.rtlb.fill(EMPTY);
        self.wtlb.fill(EMPTY);
        for e in self.itlb.iter_mut() {
            e.vpn = NO_PAGE;
        }
        Ok(())
    }

    // ---------------------------------------------------------------- LR/SC

    pub fn reserve(&mut self, hart: usize, addr: u64) {
        let addr = if self.xlate.is_some() { self.reservation_addr(addr) } else { addr };
        if self.resv[hart] == NO_RESV {
            self.resv_live += 1;
        }
        self.resv[hart] = addr;
    }

    /// Take `hart`'s reservation away; true if it was for `addr`.
    pub fn take_reservation(&mut self, hart: usize, addr: u64) -> bool {
        let addr = if self.xlate.is_some() { self.reservation_addr(addr) } else { addr };
        let r = self.resv[hart];
        if r == NO_RESV {
            return false;
        }
        self.resv[hart] = NO_RESV;
        self.resv_live -= 1;
        r == addr
    }

    /// A store by `hart` to [addr, addr+len) breaks other harts' reservations on the granules it touches.
    fn break_reservations(&mut self, hart: usize, addr: u64, len: u64) {
        let first = addr / RESV_GRANULE;
        let last = (addr + len - 1) / RESV_GRANULE;
        for h in 0..self.resv.len() {
            let r = self.resv[h];
            if h != hart && r != NO_RESV && (first..=last).contains(&(r / RESV_GRANULE)) {
                self.resv[h] = NO_RESV;
                self.resv_live -= 1;
            }
        }
    }

    // ---------------------------------------------------------------- decoded-instruction cache

    /// The decoded-instruction array of code page `vpn` (created empty on first use).
    #[inline]
    pub fn code_page(&mut self, vpn: u64) -> *mut Decoded {
        let slot = tlb_slot(vpn);
        let e = self.itlb[slot];
        if e.vpn == vpn {
            return e.ptr;
        }
        let ptr = match self.code.get(&vpn) {
            Some(&c) => c as *mut Decoded,
            None => {
                let page: Box<CodePage> = vec![Decoded::UNDECODED; CODE_SLOTS]
                    .into_boxed_slice()
                    .try_into()
                    .unwrap_or_else(|_| unreachable!());
                let c = Box::into_raw(page);
                self.code.insert(vpn, c);
                c as *mut Decoded
            }
        };
        self.itlb[slot] = ItlbEntry { vpn, ptr };
        ptr
    }

    /// Fetch and decode the instruction at `pc`. Caches it in its code page unless it straddles two pages.
    #[cold]
    pub fn fetch_decode(&mut self, pc: u64) -> Result<Decoded, Trap> {
        if self.xlate.is_some() {
            return self.fetch_decode_fs(pc);
        }
        let low = self.load_slow::<2>(pc, Access::Fetch)? as u32;
        let raw = if low & 3 == 3 {
            let high = self.load_slow::<2>(pc.wrapping_add(2), Access::Fetch)? as u32;
            low | (high << 16)
        } else {
            low
        };
        let d = crate::decode::decode(raw);
        let vpn = pc >> PAGE_SHIFT;
        self.mark_code(vpn)?;
        if (pc & (PAGE_SIZE - 1)) + d.len as u64 > PAGE_SIZE {
            // Straddles two pages: a store to the start of the next page must invalidate it too.
            self.mark_code(vpn + 1)?;
        }
        let slot = self.code_page(vpn).wrapping_add(((pc & (PAGE_SIZE - 1)) >> 1) as usize);
        // SAFETY: slot is inside a live code page (index < CODE_SLOTS).
        unsafe { *slot = d };
        Ok(d)
    }

    /// Note that page `vpn` (already allocated) holds decoded instructions: keep it out of the write TLB.
    fn mark_code(&mut self, vpn: u64) -> Result<(), Trap> {
        let p = self.page(vpn << PAGE_SHIFT, Access::Fetch)?;
        // SAFETY: p is a live page.
        unsafe {
            if !(*p).has_code {
                (*p).has_code = true;
                let s = tlb_slot(vpn);
                if self.wtlb[s].vpn == vpn {
                    self.wtlb[s] = EMPTY;
                }
            }
        }
        Ok(())
    }

    /// How many times decoded code has changed: the executor leaves a block when a store changes it.
    #[inline(always)]
    pub fn code_generation(&self) -> u64 {
        self.code_generation
    }

    /// Build blocks for a warming system whose L1I lines are 2^`shift` bytes (`TimingSystem::warm_fetch_shift`):
    /// their `warm_quiet` bits skip an instruction only when it fetches from its predecessor's line of that size.
    /// Blocks built for another line are forgotten (as after a change of decoded code), so none is run with bits
    /// for a longer line, which would leave the L1I under-warmed. Call it between runs, not from a hook.
    pub fn set_warm_fetch_shift(&mut self, shift: u32) {
        if shift != self.warm_fetch_shift {
            self.warm_fetch_shift = shift;
            self.code_generation += 1;
        }
    }

    /// The pre-decoded block at `pc` (decoded now if it is not cached). A fault decoding its first instruction is
    /// the fetch fault of `pc`; a later instruction that cannot be fetched ends the block before it, so that its
    /// fault comes when it is reached.
    #[inline(always)]
    pub fn block(&mut self, pc: u64) -> Result<*const crate::blocks::Block, Trap> {
        match self.blocks.get(pc, self.code_generation) {
            Some(b) => Ok(b),
            None => self.decode_block(pc),
        }
    }

    #[cold]
    fn decode_block(&mut self, pc: u64) -> Result<*const crate::blocks::Block, Trap> {
        use crate::blocks::{ends_block, Block, MAX_INSTS};
        let mut insts = Vec::with_capacity(8);
        let mut at = pc;
        // FS mode: decoded instructions are kept by physical page (a block never leaves its first page).
        let phys_page = match self.xlate.is_some() {
            true => Some(self.fetch_phys(pc)? & !(PAGE_SIZE - 1)),
            false => None,
        };
        loop {
            let key = phys_page.map_or(at, |p| p | (at & (PAGE_SIZE - 1)));
            // SAFETY: code_page returns a live code page; the slot index is < CODE_SLOTS.
            let cached = unsafe { *self.code_page(key >> PAGE_SHIFT).add(((key & (PAGE_SIZE - 1)) >> 1) as usize) };
            let d = if cached.op != crate::decode::Op::Undecoded {
                cached
            } else {
                match self.fetch_decode(at) {
                    Ok(d) => d,
                    Err(t) if insts.is_empty() => return Err(t),
                    Err(_) => break,
                }
            };
            insts.push(crate::decode::Decoded { at: (at.wrapping_sub(pc) >> 1) as u8, ..d });
            at = at.wrapping_add(d.len as u64);
            // A control transfer, the longest block, or the next instruction on another page ends it.
            if ends_block(d.op) || insts.len() == MAX_INSTS || at & (PAGE_SIZE - 1) < d.len as u64 {
                break;
            }
        }
        let generation = self.code_generation;
        let _ = self.blocks.get(pc, generation); // empties the cache if decoded code changed since its last use
        Ok(self.blocks.insert(pc, Block::new(pc, insts, (at.wrapping_sub(pc) >> 1) as u8, self.warm_fetch_shift)))
    }

    /// The instruction word at `pc` (16 bits if compressed), read without touching pages; 0 if unreadable.
    /// For error reports: the executor does not carry the word on its hot path.
    pub fn insn_word(&self, pc: u64) -> u32 {
        let byte =
            |a: u64| -> Option<u32> { Some(self.page_data(a >> PAGE_SHIFT)?[(a & (PAGE_SIZE - 1)) as usize] as u32) };
        let word = |k: u64| (0..k).try_fold(0u32, |w, i| Some(w | (byte(pc.wrapping_add(i))? << (8 * i))));
        match word(2) {
            Some(low) if low & 3 == 3 => word(4).unwrap_or(0),
            Some(low) => low,
            None => 0,
        }
    }

    /// A store hit a page holding decoded code: forget the instructions the bytes [addr, addr+len) may be part of.
    fn invalidate_code(&mut self, addr: u64, len: u64) {
        self.code_generation += 1;
        let vpn = addr >> PAGE_SHIFT;
        let off = addr & (PAGE_SIZE - 1);
        if off < 2 {
            // The previous page's last instruction may straddle into this page.
            self.clear_last_slot(vpn.wrapping_sub(1));
        }
        if let Some(&c) = self.code.get(&vpn) {
            let lo = (off.saturating_sub(2) / 2) as usize;
            let hi = (((off + len - 1) / 2) as usize).min(CODE_SLOTS - 1);
            for i in lo..=hi {
                // SAFETY: c is a live code page; i < CODE_SLOTS.
                unsafe { (*c)[i] = Decoded::UNDECODED };
            }
        }
    }

    fn clear_last_slot(&mut self, vpn: u64) {
        self.code_generation += 1;
        if let Some(&c) = self.code.get(&vpn) {
            // SAFETY: live code page.
            unsafe { (*c)[CODE_SLOTS - 1] = Decoded::UNDECODED };
        }
    }

    fn clear_code_page(&mut self, vpn: u64) {
        self.code_generation += 1;
        if let Some(&c) = self.code.get(&vpn) {
            // SAFETY: live code page.
            unsafe { (*c).fill(Decoded::UNDECODED) };
        }
    }

    /// fence.i: forget every decoded instruction.
    pub fn flush_code(&mut self) {
        self.code_generation += 1;
        for &c in self.code.values() {
            // SAFETY: live code pages.
            unsafe { (*c).fill(Decoded::UNDECODED) };
        }
    }
}

#[inline(always)]
unsafe fn read_n<const N: usize>(p: *const u8) -> u64 {
    match N {
        1 => *p as u64,
        2 => u16::from_le((p as *const u16).read_unaligned()) as u64,
        4 => u32::from_le((p as *const u32).read_unaligned()) as u64,
        _ => u64::from_le((p as *const u64).read_unaligned()),
    }
}

#[inline(always)]
unsafe fn write_n<const N: usize>(p: *mut u8, v: u64) {
    match N {
        1 => *p = v as u8,
        2 => (p as *mut u16).write_unaligned((v as u16).to_le()),
        4 => (p as *mut u32).write_unaligned((v as u32).to_le()),
        _ => (p as *mut u64).write_unaligned(v.to_le()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem_with_heap(limit: u64) -> Memory {
        let mut m = Memory::new(limit, false, 2);
        m.regions.heap_start = 0x10_0000;
        m.regions.brk = 0x10_0000 + 16 * PAGE_SIZE;
        m
    }

    #[test]
    fn pages_allocated_on_touch_and_zeroed() {
        let mut m = mem_with_heap(1 << 20);
        assert_eq!(m.resident_pages(), 0);
        assert_eq!(m.load::<8>(0x10_0008).unwrap(), 0);
        assert_eq!(m.resident_pages(), 1);
        m.store::<4>(0, 0x10_0010, 0xdead_beef_1234).unwrap();
        assert_eq!(m.load::<4>(0x10_0010).unwrap(), 0xbeef_1234);
        assert_eq!(m.load::<2>(0x10_0012).unwrap(), 0xbeef);
        assert_eq!(m.load::<1>(0x10_0013).unwrap(), 0xbe);
        m.store::<8>(0, 0x10_1000, 1).unwrap();
        assert_eq!(m.resident_pages(), 2);
        assert_eq!(m.pages_touched, 2);
    }

    #[test]
    fn unmapped_access_faults_without_allocating() {
        let mut m = mem_with_heap(1 << 20);
        assert_eq!(m.load::<8>(0x5000), Err(Trap::Unmapped { addr: 0x5000, access: Access::Load }));
        assert_eq!(
            m.store::<1>(0, 0x10_0000 + 16 * PAGE_SIZE, 1),
            Err(Trap::Unmapped { addr: 0x10_0000 + 16 * PAGE_SIZE, access: Access::Store })
        );
        assert_eq!(m.resident_pages(), 0);
    }

    #[test]
    fn memory_limit_enforced() {
        let mut m = mem_with_heap(3 * PAGE_SIZE);
        for i in 0..3 {
            m.store::<8>(0, 0x10_0000 + i * PAGE_SIZE, 7).unwrap();
        }
        let err = m.store::<8>(0, 0x10_0000 + 3 * PAGE_SIZE, 7).unwrap_err();
        assert_eq!(err, Trap::Limit { page: 0x10_3000, limit: 3 * PAGE_SIZE });
        assert!(err.reason().contains("would exceed mem_limit of 12288 bytes"));
        // Freeing a page makes room again.
        m.free_range(0x10_0000, 0x10_1000);
        m.store::<8>(0, 0x10_0000 + 3 * PAGE_SIZE, 7).unwrap();
        assert_eq!(m.load::<8>(0x10_1000).unwrap(), 7);
    }

    #[test]
    fn misaligned_fault_or_allow() {
        let mut m = mem_with_heap(1 << 20);
        assert!(matches!(m.load::<4>(0x10_0002), Err(Trap::Misaligned { size: 4, .. })));
        assert!(matches!(m.store::<8>(0, 0x10_0001, 0), Err(Trap::Misaligned { size: 8, .. })));
        m.allow_misaligned = true;
        m.store::<8>(0, 0x10_0ffd, 0x0102_0304_0506_0708).unwrap(); // crosses a page boundary
        assert_eq!(m.load::<8>(0x10_0ffd).unwrap(), 0x0102_0304_0506_0708);
        assert_eq!(m.load::<2>(0x10_0fff).unwrap(), 0x0506);
        // Atomics fault even when ordinary accesses may be misaligned.
        assert!(matches!(m.load_atomic::<4>(0x10_0002), Err(Trap::Misaligned { access: Access::Atomic, .. })));
    }

    #[test]
    fn reservations_broken_by_other_harts_only() {
        let mut m = mem_with_heap(1 << 20);
        m.reserve(0, 0x10_0040);
        m.store::<4>(0, 0x10_0044, 1).unwrap(); // own store: reservation kept
        m.store::<4>(1, 0x10_0048, 1).unwrap(); // other granule
        assert!(m.take_reservation(0, 0x10_0040));
        m.reserve(0, 0x10_0040);
        m.store::<1>(1, 0x10_0047, 1).unwrap(); // same granule, other hart
        assert!(!m.take_reservation(0, 0x10_0040));
        assert!(!m.take_reservation(0, 0x10_0040));
    }

    #[test]
    fn blocks_end_at_unconditional_transfers_and_are_invalidated_by_stores_and_fence_i() {
        use crate::asm::*;
        use crate::decode::Op;
        let mut m = mem_with_heap(1 << 20);
        let base = 0x10_0000;
        // addi a0, a0, 1; addi a1, a1, 2; beq x0, x0, -8 (a side exit: the block goes on); addi a2, a2, 3;
        // jalr x0, 0(ra) (ends the block); addi a3, a3, 4 (another block)
        let words =
            [addi(10, 10, 1), addi(11, 11, 2), b(-8, 0, 0, 0), addi(12, 12, 3), i(0, 1, 0, 0, 0x67), addi(13, 13, 4)];
        for (i, w) in words.iter().enumerate() {
            m.store::<4>(0, base + 4 * i as u64, *w as u64).unwrap();
        }
        let ops = |m: &mut Memory, pc| unsafe {
            (*m.block(pc).unwrap()).instructions().iter().map(|d| d.op).collect::<Vec<_>>()
        };
        assert_eq!(ops(&mut m, base), [Op::Addi, Op::Addi, Op::Beq, Op::Addi, Op::Jalr]);
        // Each instruction knows its distance from the block's start (half-words), from which its PC is derived.
        let at = unsafe { (*m.block(base).unwrap()).instructions().iter().map(|d| d.at).collect::<Vec<_>>() };
        assert_eq!(at, [0, 2, 4, 6, 8]);
        // After the jump, zeros: the all-zero instruction is illegal, which ends a block too.
        assert_eq!(ops(&mut m, base + 20), [Op::Addi, Op::Illegal]);
        let first = m.block(base).unwrap();
        assert_eq!(m.block(base).unwrap(), first, "cached");
        // A store into the block (the second instruction becomes an xori) changes decoded code: decoded again.
        let g = m.code_generation();
        m.store::<4>(0, base + 4, i(7, 11, 4, 11, 0x13) as u64).unwrap();
        assert!(m.code_generation() > g);
        assert_eq!(ops(&mut m, base), [Op::Addi, Op::Xori, Op::Beq, Op::Addi, Op::Jalr]);
        // A store to a page without decoded code changes nothing.
        let g = m.code_generation();
        m.store::<8>(0, base + 0x2000, 7).unwrap();
        assert_eq!(m.code_generation(), g);
        // fence.i forgets every block.
        m.flush_code();
        assert!(m.code_generation() > g);
        assert_eq!(ops(&mut m, base), [Op::Addi, Op::Xori, Op::Beq, Op::Addi, Op::Jalr]);
        // A fetch fault at the block's start is its fault; a page end ends a block.
        assert!(m.block(0x5000).is_err());
        m.store::<4>(0, base + PAGE_SIZE - 4, addi(10, 10, 1) as u64).unwrap();
        m.store::<4>(0, base + PAGE_SIZE, addi(10, 10, 1) as u64).unwrap();
        assert_eq!(ops(&mut m, base + PAGE_SIZE - 4), [Op::Addi]);
    }

    #[test]
    fn stores_invalidate_decoded_code() {
        let mut m = mem_with_heap(1 << 20);
        m.store::<4>(0, 0x10_0000, 0x0010_0093).unwrap(); // addi x1, x0, 1
        let page = m.code_page(0x100);
        let d = m.fetch_decode(0x10_0000).unwrap();
        assert_eq!(d.op, crate::decode::Op::Addi);
        assert_eq!(unsafe { (*page).op }, crate::decode::Op::Addi);
        m.store::<2>(0, 0x10_0002, 0x0020).unwrap();
        assert_eq!(unsafe { (*page).op }, crate::decode::Op::Undecoded);
    }
}
