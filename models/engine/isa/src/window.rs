//! SE mode's flat view of guest memory: one host mapping covering the whole guest address range, guest address `a`
//! at host address `base + a`, so an ordinary load or store is a check of one byte and a host access at a fixed
//! offset (as qemu-user does), with no TLB entry to read first.
//!
//! The mapping is reserved without swap accounting (MAP_NORESERVE) and the host gives a page memory only when the
//! guest writes it, so the window costs no more host memory than the pages the guest uses. Which pages are resident,
//! their permissions and the memory limit stay `Memory`'s business: the window only holds the bytes of the pages
//! `Memory` allocated there, and a byte per guest page says whether loads (`FAST_READ`) and stores (`FAST_WRITE`)
//! may go straight to it. That byte is set where the software TLBs would be filled and cleared wherever they would
//! be emptied, so the window is exactly as permissive as the TLBs it stands in for. Every other access (a page not
//! yet touched, a device address, a page of a restored checkpoint's file, a page holding decoded code for stores,
//! a misaligned access, anything in full-system mode) takes the existing paths.

use kvsim_base::abi::{PAGE_SHIFT, PAGE_SIZE, STACK_TOP};

/// Guest addresses the window covers: [0, SPAN). Every region of the SE memory map lies below it (the stacks end at
/// `STACK_TOP`, the devices and mmaps below them); an address above takes the TLB path.
pub const SPAN: u64 = (STACK_TOP + PAGE_SIZE).next_power_of_two();
/// Guest pages the window covers.
pub const PAGES: u64 = SPAN >> PAGE_SHIFT;

/// Loads of this page may read the window.
pub const FAST_READ: u8 = 1;
/// Stores to this page may write the window.
pub const FAST_WRITE: u8 = 2;

/// The two mappings: the guest's bytes and one permission byte per guest page. Dropping it unmaps both.
pub struct Window {
    bytes: memmap2::MmapMut,
    fast: memmap2::MmapMut,
}

impl Window {
    /// Reserve the window; None if the host refuses (the memory then lives in heap pages, as before: the same
    /// results, only slower).
    pub fn reserve() -> Option<Window> {
        let map = |len: u64| memmap2::MmapOptions::new().len(len as usize).no_reserve_swap().map_anon().ok();
        Some(Window { bytes: map(SPAN)?, fast: map(PAGES)? })
    }

    /// Host address of guest address 0.
    pub fn base(&mut self) -> *mut u8 {
        self.bytes.as_mut_ptr()
    }

    /// The permission bytes, one per guest page.
    pub fn fast(&mut self) -> *mut u8 {
        self.fast.as_mut_ptr()
    }

    /// Give the host memory of guest pages [lo, hi) back (clipped to the window): they read as zeros when next
    /// allocated, as a fresh page must.
    pub fn release(&mut self, lo: u64, hi: u64) {
        let (lo, hi) = (lo.min(PAGES), hi.min(PAGES));
        if lo < hi {
            let (off, len) = ((lo << PAGE_SHIFT) as usize, ((hi - lo) << PAGE_SHIFT) as usize);
            // SAFETY: MADV_DONTNEED on a private anonymous mapping only drops its contents (zero-fill on next
            // touch); no reference into the range outlives this (the pages were freed and their flags cleared).
            let dropped = unsafe { self.bytes.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, off, len) };
            // Without it the next allocation would see the old bytes: refuse to go on rather than corrupt memory.
            dropped.expect("madvise(MADV_DONTNEED) on the guest memory window failed");
        }
    }
}

/// The window as `Memory` uses it (memory.rs): where a page's bytes live, and the permission bytes.
impl super::Memory {
    /// Does the page whose bytes are at `data` live in the window?
    pub(super) fn in_window(&self, data: *mut u8) -> bool {
        let (lo, a) = (self.win_base as usize, data as usize);
        self.window.is_some() && a >= lo && a < lo + SPAN as usize
    }

    /// Free a page's bytes if they are a heap block (window pages are given back by range, file pages with the file).
    pub(super) fn drop_page_data(&self, data: *mut u8) {
        if !self.backed(data) && !self.in_window(data) {
            // SAFETY: every other page's bytes came from Box::into_raw of a PAGE_SIZE slice (`page`), and a page is
            // removed from the map when freed.
            unsafe { drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(data, PAGE_SIZE as usize))) };
        }
    }

    /// Loads and stores of page `vpn` may no longer use the window (it is freed, or its permissions change).
    #[inline]
    pub(super) fn forget_fast(&mut self, vpn: u64, flags: u8) {
        if vpn < self.win_pages {
            // SAFETY: vpn is inside the permission table.
            unsafe { *self.win_fast.add(vpn as usize) &= !flags };
        }
    }

    /// Let loads (FAST_READ) or stores (FAST_WRITE) of page `vpn` use the window, if its bytes live there. Called
    /// where a software TLB would be filled, after the same checks.
    #[inline]
    pub(super) fn allow_fast(&mut self, vpn: u64, data: *mut u8, flags: u8) -> bool {
        if vpn < self.win_pages && data == self.win_base.wrapping_add((vpn << PAGE_SHIFT) as usize) {
            // SAFETY: vpn is inside the permission table.
            unsafe { *self.win_fast.add(vpn as usize) |= flags };
            true
        } else {
            false
        }
    }

    /// May an access of `N` bytes at `addr` use the window: aligned, below `limit` (`win_pages` for loads,
    /// `win_store_pages` for stores) and its page marked `flag` (FAST_READ or FAST_WRITE)?
    #[inline(always)]
    pub(super) fn window_allows<const N: usize>(&self, addr: u64, limit: u64, flag: u8) -> bool {
        let vpn = addr >> PAGE_SHIFT;
        if addr & (N as u64 - 1) != 0 || vpn >= limit {
            return false;
        }
        // SAFETY: vpn < limit <= win_pages: inside the permission table.
        unsafe { *self.win_fast.add(vpn as usize) & flag != 0 }
    }

    /// The number of live LR reservations changed: stores may use the window only while there are none.
    pub(super) fn reservations_changed(&mut self) {
        self.win_store_pages = if self.resv_live == 0 { self.win_pages } else { 0 };
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

    fn heap(pages: u64) -> Memory {
        let mut m = Memory::new(1 << 30, false, 2);
        m.regions.heap_start = 0x10_0000;
        m.regions.brk = 0x10_0000 + pages * PAGE_SIZE;
        m
    }

    fn fast(m: &Memory, addr: u64) -> u8 {
        // SAFETY: the test's addresses lie inside the window.
        unsafe { *m.win_fast.add((addr >> PAGE_SHIFT) as usize) }
    }

    #[test]
    fn ordinary_pages_live_in_the_window_and_are_read_and_written_there() {
        let mut m = heap(4);
        assert!(m.win_pages > 0, "the host refused the window");
        m.store::<8>(0, 0x10_0008, 0x1122_3344_5566_7788).unwrap();
        m.load::<4>(0x10_0008).unwrap();
        assert_eq!(fast(&m, 0x10_0008), FAST_READ | FAST_WRITE);
        // The bytes are at the fixed offset, and a fast store changes what the page's data shows.
        assert_eq!(unsafe { *m.win_base.add(0x10_0008) }, 0x88);
        assert!(m.store_fast::<2>(0x10_000a, 0xabcd));
        assert_eq!(m.load_fast::<8>(0x10_0008), Some(0x1122_3344_abcd_7788));
        assert_eq!(&m.page_data(0x100).unwrap()[8..16], &0x1122_3344_abcd_7788u64.to_le_bytes());
        // Misaligned accesses still take the slow path (and fault), as with the TLBs.
        assert_eq!(m.load_fast::<8>(0x10_0004), None);
        assert!(matches!(m.load::<8>(0x10_0004), Err(Trap::Misaligned { .. })));
    }

    #[test]
    fn a_freed_page_is_no_longer_fast_and_comes_back_zeroed() {
        let mut m = heap(4);
        m.store::<8>(0, 0x10_1000, 7).unwrap();
        m.free_range(0x10_1000, 0x10_2000);
        assert_eq!(fast(&m, 0x10_1000), 0);
        assert_eq!(m.load_fast::<8>(0x10_1000), None);
        assert_eq!(m.load::<8>(0x10_1000).unwrap(), 0, "a new page is zero");
        assert_eq!(m.pages_touched, 2);
        // Outside every region after the heap shrinks: a fault, not the old bytes.
        m.store::<8>(0, 0x10_3000, 9).unwrap();
        m.regions.brk = 0x10_3000;
        m.free_range(0x10_3000, 0x10_4000);
        assert_eq!(m.load::<8>(0x10_3000), Err(Trap::Unmapped { addr: 0x10_3000, access: Access::Load }));
    }

    #[test]
    fn permission_changes_and_decoded_code_take_pages_off_the_fast_paths() {
        let mut m = heap(4);
        m.store::<8>(0, 0x10_0000, 1).unwrap();
        m.set_prot(0x10_0000, 0x10_1000, PROT_READ);
        assert_eq!(m.store::<8>(0, 0x10_0000, 2), Err(Trap::Protection { addr: 0x10_0000, access: Access::Store }));
        assert_eq!(m.load::<8>(0x10_0000).unwrap(), 1);
        assert_eq!(fast(&m, 0x10_0000), FAST_READ);
        // A page holding decoded instructions is never written on the fast path: the store must invalidate them.
        let mut m = heap(4);
        m.store::<4>(0, 0x10_1000, 0x0010_0093).unwrap(); // addi x1, x0, 1
        assert_eq!(fast(&m, 0x10_1000), FAST_WRITE);
        m.fetch_decode(0x10_1000).unwrap();
        assert_eq!(fast(&m, 0x10_1000) & FAST_WRITE, 0);
        let g = m.code_generation();
        assert!(!m.store_fast::<4>(0x10_1000, 0x0020_0093));
        m.store::<4>(0, 0x10_1000, 0x0020_0093).unwrap();
        assert!(m.code_generation() > g);
    }

    #[test]
    fn full_system_mode_never_uses_the_window() {
        let mut m = Memory::new(1 << 30, false, 1);
        m.enable_full_system(0x8000_0000, 0x8100_0000, 0x1000_0000, 0x1000_ffff);
        assert_eq!(m.win_pages, 0);
        m.store::<8>(0, 0x8000_0000, 5).unwrap();
        assert_eq!(m.load::<8>(0x8000_0000).unwrap(), 5);
    }
}
