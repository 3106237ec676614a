//! Where guest pages live on the host: in large anonymous mappings (slabs) the kernel may back with 2 MiB pages
//! (`madvise(MADV_HUGEPAGE)`; this host's transparent huge pages are "madvise"), not one heap block each.
//!
//! A loaded data set's pages are touched at random (a hash index over gigabytes). With a 4 KiB host page each,
//! nearly every guest access missed the host's TLB too; with 2 MiB pages the host TLB covers a few GB. Fresh slab
//! memory comes zeroed from the kernel, so a first touch also skips the 4 KiB memset a heap block needed.
//! Where pages sit on the host never changes what the guest sees: the same page map, TLBs and page contents.
//!
//! Pages given back (munmap, brk shrinking, packing) go to a free list and are reused; slabs are unmapped only
//! when the memory is dropped.

use super::Page;

/// Bytes of one slab: 32 huge pages (16,351 guest pages). Assumed: large enough that a slab's unaligned ends
/// (which stay 4 KiB pages) are a small part of it, small enough that a small run maps little it does not use
/// (the kernel makes untouched parts resident only when touched).
const SLAB_BYTES: usize = 64 << 20;
const PAGES_PER_SLAB: usize = SLAB_BYTES / std::mem::size_of::<Page>();

#[derive(Default)]
pub(super) struct PageSlabs {
    slabs: Vec<memmap2::MmapMut>,
    /// Pages of the last slab handed out so far.
    used: usize,
    /// Pages given back, to hand out again.
    free: Vec<*mut Page>,
}

impl PageSlabs {
    /// A page of zeros (`has_code` false).
    pub fn alloc_zeroed(&mut self) -> *mut Page {
        match self.free.pop() {
            Some(p) => {
                // SAFETY: a page of a live slab, given back and owned by no map: every byte may be written, and
                // all zeros is a valid Page.
                unsafe { p.write_bytes(0, 1) };
                p
            }
            None => self.fresh(),
        }
    }

    /// A page whose data the caller overwrites whole (its `has_code` is false).
    pub fn alloc_any(&mut self) -> *mut Page {
        match self.free.pop() {
            Some(p) => {
                // SAFETY: as in `alloc_zeroed`.
                unsafe { (*p).has_code = false };
                p
            }
            None => self.fresh(),
        }
    }

    /// Page `p` (from this allocator) is no longer used.
    pub fn release(&mut self, p: *mut Page) {
        self.free.push(p);
    }

    fn fresh(&mut self) -> *mut Page {
        if self.slabs.is_empty() || self.used == PAGES_PER_SLAB {
            let slab = memmap2::MmapMut::map_anon(SLAB_BYTES)
                .unwrap_or_else(|e| panic!("cannot map {SLAB_BYTES} bytes for guest pages: {e}"));
            // Only a hint: without huge pages the slab works as well, more slowly.
            #[cfg(target_os = "linux")]
            let _ = slab.advise(memmap2::Advice::HugePage);
            self.slabs.push(slab);
            self.used = 0;
        }
        let slab = self.slabs.last_mut().expect("a slab was just mapped");
        // SAFETY: `used` < PAGES_PER_SLAB pages of size_of::<Page>() fit in the slab; the mapping is page aligned
        // (more than Page's alignment) and zero-filled, and all zeros is a valid Page.
        let p = unsafe { (slab.as_mut_ptr() as *mut Page).add(self.used) };
        self.used += 1;
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_come_zeroed_apart_and_given_back_pages_are_reused_zeroed() {
        let mut s = PageSlabs::default();
        let a = s.alloc_zeroed();
        let b = s.alloc_zeroed();
        assert_ne!(a, b);
        // SAFETY: live pages of the allocator.
        unsafe {
            assert!((*a).data.iter().all(|&x| x == 0) && !(*a).has_code);
            (*a).data[100] = 7;
            (*a).has_code = true;
        }
        s.release(a);
        let c = s.alloc_zeroed();
        assert_eq!(c, a, "a page given back is handed out again");
        // SAFETY: as above.
        unsafe { assert!((*c).data.iter().all(|&x| x == 0) && !(*c).has_code) };
        s.release(c);
        let d = s.alloc_any();
        // SAFETY: as above.
        unsafe { assert!(!(*d).has_code) };
        // A second slab once the first is used up.
        for _ in 0..PAGES_PER_SLAB {
            s.alloc_zeroed();
        }
        assert_eq!(s.slabs.len(), 2);
    }
}
