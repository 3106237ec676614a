//! mremap, madvise and file mappings: the memory calls beyond anonymous mmap/munmap/brk.

use kvsim_base::abi::{self, errno, PAGE_SHIFT, PAGE_SIZE};
use kvsim_isa::memory::{page_up, PROT_DEFAULT};
use kvsim_isa::trap::Trap;

use crate::numbers::{neg, MAP_SHARED};
use crate::process::Linux;

const MREMAP_MAYMOVE: u64 = 1;
const MREMAP_FIXED: u64 = 2;
const MREMAP_DONTUNMAP: u64 = 4;
pub const MAP_FIXED_NOREPLACE: u64 = 0x10_0000;
const MADV_DONTNEED: u64 = 4;
/// The advice values Linux knows (MADV_NORMAL .. MADV_COLLAPSE, MADV_HWPOISON); others are EINVAL.
const MADV_KNOWN: &[u64] = &[0, 1, 2, 3, 4, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 25, 100];

impl Linux<'_> {
    /// Is all of [start, end) inside anonymous or file mappings?
    fn fully_mapped(&self, start: u64, end: u64) -> bool {
        let mut at = start;
        for (&s, &e) in self.mem.regions.mmaps.range(..end) {
            if e <= at {
                continue;
            }
            if s > at {
                return false;
            }
            at = e;
            if at >= end {
                return true;
            }
        }
        at >= end
    }

    /// Move the resident pages of [from, from + len) to `to` (already mapped, empty), keeping their protection.
    fn move_pages(&mut self, hid: usize, from: u64, to: u64, len: u64) -> Result<(), Trap> {
        for i in 0..len / PAGE_SIZE {
            let (src, dst) = (from + i * PAGE_SIZE, to + i * PAGE_SIZE);
            let prot = self.mem.prot_of(src >> PAGE_SHIFT);
            if let Some(data) = self.mem.page_data(src >> PAGE_SHIFT).map(|d| d.to_vec()) {
                self.mem.write_bytes(hid, dst, &data)?;
            }
            if prot != PROT_DEFAULT {
                self.mem.set_prot(dst, dst + PAGE_SIZE, prot);
            }
        }
        Ok(())
    }

    /// mremap(old, old_len, new_len, flags, new_addr) for private anonymous (and copied file) mappings.
    pub(crate) fn mremap(
        &mut self,
        hid: usize,
        old: u64,
        old_len: u64,
        new_len: u64,
        flags: u64,
        new_addr: u64,
    ) -> Result<u64, Trap> {
        let fail = |e: i64| Ok(neg(e));
        if old & (PAGE_SIZE - 1) != 0 || flags & !(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP) != 0 {
            return fail(errno::EINVAL);
        }
        if flags & MREMAP_FIXED != 0 && flags & MREMAP_MAYMOVE == 0 || flags & MREMAP_DONTUNMAP != 0 {
            return fail(errno::EINVAL);
        }
        let (old_len, new_len) = (page_up(old_len), page_up(new_len));
        if new_len == 0 || old_len == 0 {
            return fail(errno::EINVAL);
        }
        let Some(old_end) = old.checked_add(old_len) else { return fail(errno::EINVAL) };
        if !self.fully_mapped(old, old_end) {
            return fail(errno::EFAULT);
        }
        if flags & MREMAP_FIXED != 0 {
            let Some(new_end) = new_addr.checked_add(new_len) else { return fail(errno::EINVAL) };
            if new_addr & (PAGE_SIZE - 1) != 0 || (new_addr < old_end && old < new_end) || new_end > abi::MMAP_TOP {
                return fail(errno::EINVAL);
            }
            self.unmap_range(new_addr, new_end);
            self.map_range(new_addr, new_end);
            self.move_pages(hid, old, new_addr, old_len.min(new_len))?;
            self.unmap_range(old, old_end);
            return Ok(new_addr);
        }
        if new_len <= old_len {
            self.unmap_range(old + new_len, old_end);
            return Ok(old);
        }
        let grown_end = old.checked_add(new_len).filter(|&e| e <= abi::MMAP_TOP);
        if let Some(end) = grown_end.filter(|&e| self.mmap_overlap(old_end, e).is_none()) {
            // In place: the new pages take the protection of the mapping's last page.
            let prot = self.mem.prot_of((old_end - 1) >> PAGE_SHIFT);
            self.map_range(old_end, end);
            if prot != PROT_DEFAULT {
                self.mem.set_prot(old_end, end, prot);
            }
            return Ok(old);
        }
        if flags & MREMAP_MAYMOVE == 0 {
            return fail(errno::ENOMEM);
        }
        let Some(new) = self.mmap_alloc(new_len, PAGE_SIZE) else { return fail(errno::ENOMEM) };
        let prot = self.mem.prot_of((old_end - 1) >> PAGE_SHIFT);
        self.move_pages(hid, old, new, old_len)?;
        if prot != PROT_DEFAULT {
            self.mem.set_prot(new + old_len, new + new_len, prot);
        }
        self.unmap_range(old, old_end);
        Ok(new)
    }

    /// Record [start, end) as mapped.
    fn map_range(&mut self, start: u64, end: u64) {
        self.mem.regions.mmaps.insert(start, end);
        self.process.mmap_low = self.process.mmap_low.min(start);
    }

    /// madvise: advice is checked and ignored, except that MADV_DONTNEED drops the pages of mmap'd memory (they
    /// read as zeros after, as Linux gives for private anonymous memory; the ELF image and the heap keep theirs).
    pub(crate) fn madvise(&mut self, addr: u64, len: u64, advice: u64) -> u64 {
        if addr & (PAGE_SIZE - 1) != 0 || !MADV_KNOWN.contains(&advice) {
            return neg(errno::EINVAL);
        }
        let Some(end) = addr.checked_add(len).map(page_up).filter(|&e| e >= addr) else { return neg(errno::EINVAL) };
        if end == addr {
            return 0;
        }
        if (addr >> PAGE_SHIFT..end >> PAGE_SHIFT).any(|vpn| !self.mem.regions.page_valid(vpn)) {
            return neg(errno::ENOMEM);
        }
        if advice == MADV_DONTNEED && self.fully_mapped(addr, end) {
            self.mem.free_range(addr, end);
        }
        0
    }

    /// The bytes a file mapping of `len` bytes at `offset` of descriptor `fd` starts with (private copy; zeros after
    /// the end of the file). Shared writable mappings fail (ENODEV): writes would have to reach the file.
    pub(crate) fn file_mapping(
        &mut self,
        fd: i64,
        offset: u64,
        len: u64,
        prot: u64,
        flags: u64,
    ) -> Result<Vec<u8>, i64> {
        if offset & (PAGE_SIZE - 1) != 0 {
            return Err(errno::EINVAL);
        }
        if flags & MAP_SHARED != 0 && prot & 2 != 0 {
            return Err(errno::ENODEV);
        }
        let data = self.process.fs.mappable(fd)?;
        let start = (offset as usize).min(data.len());
        let end = (offset.saturating_add(len) as usize).min(data.len());
        Ok(data[start..end].to_vec())
    }
}

/// Linux's answers where qemu-riscv64 7.2 differs from it (workloads/glibc/memcalls.c checks the rest against qemu).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::FsConfig;
    use crate::test_support::Fixture;

    const MMAP: u64 = 222;
    const ANON_RW: [u64; 2] = [3, 0x22];

    #[test]
    fn mremap_to_size_zero_and_noreplace_over_a_mapping_fail_as_on_linux() {
        let mut m = Fixture::new(&FsConfig::default());
        let a = m.call(MMAP, [0, 2 * PAGE_SIZE, ANON_RW[0], ANON_RW[1], u64::MAX, 0]);
        assert_eq!(m.call(216, [a, PAGE_SIZE, 0, MREMAP_MAYMOVE, 0, 0]), neg(errno::EINVAL));
        let dontunmap = MREMAP_DONTUNMAP | MREMAP_MAYMOVE;
        assert_eq!(m.call(216, [a, PAGE_SIZE, PAGE_SIZE, dontunmap, 0, 0]), neg(errno::EINVAL));
        let noreplace = ANON_RW[1] | MAP_FIXED_NOREPLACE;
        assert_eq!(m.call(MMAP, [a + PAGE_SIZE, PAGE_SIZE, 3, noreplace, u64::MAX, 0]), neg(crate::fs::errno::EEXIST));
        let free = a - 4 * PAGE_SIZE;
        assert_eq!(m.call(MMAP, [free, PAGE_SIZE, 3, noreplace, u64::MAX, 0]), free, "a free range is taken");
        // Not mapped at all: EFAULT.
        assert_eq!(m.call(216, [0x7000_0000, PAGE_SIZE, 2 * PAGE_SIZE, MREMAP_MAYMOVE, 0, 0]), neg(errno::EFAULT));
    }

    #[test]
    fn mremap_grows_in_place_moves_and_keeps_data_and_protection() {
        let mut m = Fixture::new(&FsConfig::default());
        let a = m.call(MMAP, [0, PAGE_SIZE, 1, ANON_RW[1], u64::MAX, 0]);
        // Read-only, with data (written by the "kernel", as a file mapping's would be).
        m.mem.set_prot(a, a + PAGE_SIZE, PROT_DEFAULT);
        m.mem.write_bytes(0, a, b"kept").unwrap();
        m.mem.set_prot(a, a + PAGE_SIZE, 1);
        // The pages above `a` are free (a was carved from the top): grow in place.
        let below = m.call(MMAP, [0, PAGE_SIZE, 3, ANON_RW[1], u64::MAX, 0]);
        assert_eq!(below, a - PAGE_SIZE);
        assert_eq!(m.call(216, [below, PAGE_SIZE, 2 * PAGE_SIZE, 0, 0, 0]), neg(errno::ENOMEM), "a is above");
        let moved = m.call(216, [a, PAGE_SIZE, 4 * PAGE_SIZE, MREMAP_MAYMOVE, 0, 0]);
        assert!(moved != a && (moved as i64) > 0);
        assert_eq!(m.mem.read_bytes(moved, 4).unwrap(), b"kept");
        assert!(m.mem.store::<1>(0, moved, 1).is_err(), "still read-only after the move");
        assert!(m.mem.read_bytes(a, 1).is_err(), "the old range is gone");
    }

    #[test]
    fn madvise_checks_its_advice_and_dontneed_zeroes() {
        let mut m = Fixture::new(&FsConfig::default());
        let a = m.call(MMAP, [0, PAGE_SIZE, ANON_RW[0], ANON_RW[1], u64::MAX, 0]);
        m.mem.write_bytes(0, a, b"data").unwrap();
        assert_eq!(m.call(233, [a, PAGE_SIZE, 12345, 0, 0, 0]), neg(errno::EINVAL));
        assert_eq!(m.call(233, [a, PAGE_SIZE, 3, 0, 0, 0]), 0, "MADV_WILLNEED");
        assert_eq!(m.mem.read_bytes(a, 4).unwrap(), b"data");
        assert_eq!(m.call(233, [a, PAGE_SIZE, MADV_DONTNEED, 0, 0, 0]), 0);
        assert_eq!(m.mem.read_bytes(a, 4).unwrap(), [0; 4]);
        assert_eq!(m.call(233, [0x7000_0000, PAGE_SIZE, 3, 0, 0, 0]), neg(errno::ENOMEM), "unmapped");
    }
}
