//! Packed guest pages (System.unpacked_memory): a bound on the guest pages kept as whole 4 KiB host blocks. When a
//! new or unpacked page takes the count past it, the page made resident longest ago is packed (its zero bytes
//! dropped, `pack`) and freed; touching it again unpacks it. The guest sees the same bytes either way, and no
//! statistic depends on which pages are packed: this is host memory only.
//!
//! Why: loading the paper's data set (192 Mi Tiny items) touches about 22.5 GiB of guest pages, two thirds of them
//! the KVS server's index, whose 128-byte buckets hold about 1.6 of their 15 entries each; a packed index page keeps
//! only those. Pages holding decoded code and pages of a mapped checkpoint are never packed.
//!
//! A page made resident goes to the back of a queue; the front is packed next, unless one of the software TLBs holds
//! it (it was used since it became resident): then its TLB entries are dropped and it goes to the back again (a
//! second chance, as a clock does with reference bits).

use std::borrow::Cow;
use std::collections::VecDeque;

use super::{tlb_slot, Memory, Page, PageMap, EMPTY};
use kvsim_base::abi::PAGE_SIZE;

const WORDS: usize = (PAGE_SIZE / 8) as usize;
/// Bytes of a packed page's word mask (one bit per 8-byte word: set when the word is not zero).
const MASK_BYTES: usize = WORDS / 8;

/// Pack a page: the word mask, then per nonzero word a byte mask (bit j: byte j is not zero) and its nonzero bytes.
pub fn pack(page: &[u8]) -> Box<[u8]> {
    // Built on the stack at its largest and copied out at its size: one allocation, one pass (a page is packed on
    // most touches of a large random-access index).
    let mut buf = [0u8; MASK_BYTES + 9 * WORDS];
    let mut at = MASK_BYTES;
    for (i, word) in page.chunks_exact(8).enumerate() {
        let bytes: [u8; 8] = word.try_into().unwrap();
        if u64::from_ne_bytes(bytes) == 0 {
            continue;
        }
        buf[i / 8] |= 1 << (i % 8);
        let mask = byte_mask(bytes);
        buf[at] = mask;
        at += 1;
        let mut m = mask;
        while m != 0 {
            buf[at] = bytes[m.trailing_zeros() as usize];
            at += 1;
            m &= m - 1;
        }
    }
    Box::from(&buf[..at])
}

/// Bit j set when byte j is not zero.
fn byte_mask(bytes: [u8; 8]) -> u8 {
    bytes.iter().enumerate().fold(0, |m, (j, &b)| m | ((b != 0) as u8) << j)
}

/// Unpack `packed` (from `pack`) into `page`.
pub fn unpack(packed: &[u8], page: &mut [u8]) {
    page.fill(0);
    let mut at = MASK_BYTES;
    for (byte, &mask) in packed[..MASK_BYTES].iter().enumerate() {
        let mut words = mask;
        while words != 0 {
            let i = byte * 8 + words.trailing_zeros() as usize;
            words &= words - 1;
            let mut bytes = packed[at];
            at += 1;
            while bytes != 0 {
                page[i * 8 + bytes.trailing_zeros() as usize] = packed[at];
                at += 1;
                bytes &= bytes - 1;
            }
        }
    }
}

/// The packed pages and the queue of unpacked ones.
pub(super) struct Packing {
    /// Most unpacked heap pages (pages of a mapped checkpoint are not counted).
    limit: usize,
    queue: VecDeque<u64>,
    pub(super) packed: PageMap<Box<[u8]>>,
    /// Bytes of the packed pages (their `pack` output).
    packed_bytes: u64,
    /// Pages packed and unpacked so far.
    packs: u64,
    unpacks: u64,
}

/// What packing holds and has done: pages unpacked and packed now, the packed pages' bytes, packs and unpacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PackingCounts {
    pub unpacked: u64,
    pub packed: u64,
    pub packed_bytes: u64,
    pub packs: u64,
    pub unpacks: u64,
}

impl Memory {
    /// Keep at most `pages` guest pages unpacked from now on (System.unpacked_memory / 4 KiB; 0: every page, and
    /// packed pages are unpacked as they are touched). Each call looks at every unpacked page once: one in a
    /// software TLB gets a second chance. SE mode only (full-system mode reads page-table pages from the page map
    /// directly).
    pub fn limit_unpacked(&mut self, pages: u64) -> Result<(), String> {
        if let Some(k) = self.packing.as_mut() {
            k.limit = if pages == 0 { usize::MAX } else { pages as usize };
            self.pack_beyond_limit(u64::MAX);
            return Ok(());
        }
        if pages == 0 {
            return Ok(());
        }
        if self.xlate.is_some() {
            return Err("System.unpacked_memory: packed guest pages are built for SE mode only".into());
        }
        let mut queue: Vec<u64> = self.pages.iter().filter(|(_, &p)| !self.backed(p)).map(|(&v, _)| v).collect();
        queue.sort_unstable();
        self.packing = Some(Box::new(Packing {
            limit: pages as usize,
            queue: queue.into(),
            packed: PageMap::default(),
            packed_bytes: 0,
            packs: 0,
            unpacks: 0,
        }));
        self.pack_beyond_limit(u64::MAX);
        Ok(())
    }

    pub fn packing_counts(&self) -> PackingCounts {
        match &self.packing {
            Some(k) => PackingCounts {
                unpacked: (self.pages.len() - self.backed_pages) as u64,
                packed: k.packed.len() as u64,
                packed_bytes: k.packed_bytes,
                packs: k.packs,
                unpacks: k.unpacks,
            },
            None => PackingCounts { unpacked: (self.pages.len() - self.backed_pages) as u64, ..Default::default() },
        }
    }

    /// Page `vpn` unpacked, if it is packed.
    pub(super) fn unpack_page(&mut self, vpn: u64) -> Option<*mut Page> {
        let k = self.packing.as_mut()?;
        let packed = k.packed.remove(&vpn)?;
        (k.packed_bytes, k.unpacks) = (k.packed_bytes - packed.len() as u64, k.unpacks + 1);
        // A page packed before, most likely (page_slabs.rs keeps them); `unpack` writes all of it.
        let p = self.slabs.alloc_any();
        // SAFETY: a page of the slabs, owned by no map. (A packed page never held code: `has_code` is false.)
        unpack(&packed, unsafe { &mut (*p).data });
        self.pages.insert(vpn, p);
        self.now_unpacked(vpn);
        Some(p)
    }

    /// Page `vpn` was just made resident (allocated or unpacked): queue it and pack others while over the limit.
    pub(super) fn now_unpacked(&mut self, vpn: u64) {
        if let Some(k) = self.packing.as_mut() {
            k.queue.push_back(vpn);
            self.pack_beyond_limit(vpn);
        }
    }

    /// Pack pages from the queue's front while more than the limit are unpacked (never `keep`, the page a caller
    /// is about to use). Each page is looked at most once per call, so pages that cannot be packed end it.
    fn pack_beyond_limit(&mut self, keep: u64) {
        let Some(mut k) = self.packing.take() else { return };
        let mut looks = k.queue.len();
        while self.pages.len() - self.backed_pages > k.limit && looks > 0 {
            looks -= 1;
            let Some(vpn) = k.queue.pop_front() else { break };
            let Some(&p) = self.pages.get(&vpn) else { continue }; // freed or packed since: a stale entry
            let slot = tlb_slot(vpn);
            let in_tlb = self.rtlb[slot].vpn == vpn || self.wtlb[slot].vpn == vpn;
            // SAFETY: pages in the map are live.
            if vpn == keep || in_tlb || self.backed(p) || unsafe { (*p).has_code } {
                if in_tlb {
                    (self.rtlb[slot], self.wtlb[slot]) = (EMPTY, EMPTY);
                }
                if !self.backed(p) {
                    k.queue.push_back(vpn);
                }
                continue;
            }
            self.pages.remove(&vpn);
            // SAFETY: a live page of the slabs (not backed); no TLB entry refers to it (checked above).
            let packed = pack(unsafe { &(*p).data });
            (k.packed_bytes, k.packs) = (k.packed_bytes + packed.len() as u64, k.packs + 1);
            k.packed.insert(vpn, packed);
            self.slabs.release(p);
        }
        self.packing = Some(k);
    }

    /// Forget packed page `vpn` (munmap, brk shrinking): true if it was packed.
    pub(super) fn free_packed(&mut self, vpn: u64) -> bool {
        let Some(k) = self.packing.as_mut() else { return false };
        match k.packed.remove(&vpn) {
            Some(packed) => {
                k.packed_bytes -= packed.len() as u64;
                true
            }
            None => false,
        }
    }

    /// The packed pages' numbers (unordered).
    pub(super) fn packed_numbers(&self) -> impl Iterator<Item = u64> + '_ {
        self.packing.iter().flat_map(|k| k.packed.keys().copied())
    }

    /// The data of resident page `vpn` (unpacked into a copy if it is packed).
    pub fn page_data(&self, vpn: u64) -> Option<Cow<'_, [u8]>> {
        if let Some(&p) = self.pages.get(&vpn) {
            // SAFETY: pages in the map are live.
            return Some(Cow::Borrowed(unsafe { &(&(*p).data)[..] }));
        }
        let packed = self.packing.as_ref()?.packed.get(&vpn)?;
        let mut data = vec![0u8; PAGE_SIZE as usize];
        unpack(packed, &mut data);
        Some(Cow::Owned(data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page like a KVS index page at 192 Mi items: 32 buckets of 128 bytes (a zero version word in EREW), each
    /// with one or two entries of a 16-bit tag and a log offset under 512 MiB.
    fn index_like(seed: u64) -> Vec<u8> {
        let mut page = vec![0u8; PAGE_SIZE as usize];
        let mut s = seed;
        for b in 0..32 {
            for e in 1..=1 + b % 2 {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let entry = (s >> 48 | 1) << 48 | (s & 0x1fff_ffff);
                page[b * 128 + 8 * e..b * 128 + 8 * e + 8].copy_from_slice(&entry.to_le_bytes());
            }
        }
        page
    }

    fn heap(pages: u64) -> Memory {
        let mut m = Memory::new(1 << 30, false, 2);
        m.regions.heap_start = 0x10_0000;
        m.regions.brk = 0x10_0000 + pages * PAGE_SIZE;
        m
    }

    /// Host bytes of the guest's pages: whole pages at 4 KiB, packed ones at their packed size.
    fn host_bytes(m: &Memory) -> u64 {
        let c = m.packing_counts();
        c.unpacked * PAGE_SIZE + c.packed_bytes
    }

    #[test]
    fn packed_pages_read_back_exactly_and_bound_host_memory() {
        // 256 index-like pages written with stores, 8 kept whole: every byte reads back, the guest sees 256
        // resident pages, and the host holds under a sixth of their bytes (all 256 whole without packing).
        let n = 256;
        let mut m = heap(n);
        let mut whole = heap(n);
        m.limit_unpacked(8).unwrap();
        for (k, mem) in [&mut m, &mut whole].into_iter().enumerate() {
            for p in 0..n {
                for (i, w) in index_like(p).chunks_exact(8).enumerate() {
                    let v = u64::from_le_bytes(w.try_into().unwrap());
                    if v != 0 || (k == 0 && i == 0) {
                        mem.store::<8>(0, 0x10_0000 + p * PAGE_SIZE + 8 * i as u64, v).unwrap();
                    }
                }
            }
        }
        let c = m.packing_counts();
        assert!(c.unpacked <= 8 && c.packed == n - c.unpacked && c.packs >= n - 8, "{c:?}");
        m.limit_unpacked(8).unwrap(); // a second call changes the bound only: the packed pages stay
        assert_eq!(m.packing_counts().packed, c.packed);
        assert_eq!((m.resident_pages(), m.pages_touched), (n, n));
        assert_eq!(host_bytes(&whole), n * PAGE_SIZE);
        assert!(host_bytes(&m) * 6 < n * PAGE_SIZE, "{} of {}", host_bytes(&m), n * PAGE_SIZE);
        for p in (0..n).rev() {
            let want = index_like(p);
            assert_eq!(&*m.page_data(0x100 + p).unwrap(), &want[..], "page {p} as a checkpoint reads it");
            for (i, w) in want.chunks_exact(8).enumerate() {
                let addr = 0x10_0000 + p * PAGE_SIZE + 8 * i as u64;
                assert_eq!(m.load::<8>(addr).unwrap(), u64::from_le_bytes(w.try_into().unwrap()), "{addr:#x}");
            }
        }
        assert!(m.packing_counts().unpacks >= n - 8);
        assert_eq!(m.page_numbers(), whole.page_numbers());
        // Freeing the heap frees packed pages too.
        m.free_range(0x10_0000, 0x10_0000 + n * PAGE_SIZE);
        assert_eq!((m.resident_pages(), m.packing_counts().packed, m.packing_counts().packed_bytes), (0, 0, 0));
    }

    #[test]
    fn pages_in_use_or_holding_code_stay_whole() {
        let mut m = heap(16);
        m.store::<4>(0, 0x10_0000, 0x0010_0093).unwrap(); // addi x1, x0, 1
        m.fetch_decode(0x10_0000).unwrap();
        m.limit_unpacked(2).unwrap();
        for p in 1..16 {
            m.store::<8>(0, 0x10_0000 + p * PAGE_SIZE, p).unwrap();
            // The page just stored to is never the one packed to make room for it.
            assert!(m.pages.contains_key(&(0x100 + p)), "page {p}");
        }
        assert!(m.pages.contains_key(&0x100), "the code page stays whole");
        // A packed page is unpacked by a store, which must reach decoded code checks as before: none here.
        m.store::<8>(0, 0x10_0000 + PAGE_SIZE, 77).unwrap();
        assert_eq!(m.load::<8>(0x10_0000 + PAGE_SIZE).unwrap(), 77);
    }

    #[test]
    fn full_system_mode_is_refused() {
        let mut m = heap(1);
        assert!(m.limit_unpacked(0).is_ok());
        m.enable_full_system(0x8000_0000, 0x9000_0000, 0x1000_0000, 0x1001_0000);
        assert!(m.limit_unpacked(4).unwrap_err().contains("SE mode only"));
    }

    #[test]
    fn pack_round_trips_every_byte() {
        let mut full = vec![0u8; PAGE_SIZE as usize];
        for (i, b) in full.iter_mut().enumerate() {
            *b = (i * 7 + 1) as u8 | 1;
        }
        let mut odd = vec![0u8; PAGE_SIZE as usize];
        odd[0] = 9;
        odd[4095] = 200;
        odd[2049] = 1;
        for page in [vec![0u8; PAGE_SIZE as usize], full, odd, index_like(3)] {
            let packed = pack(&page);
            let mut back = vec![0xffu8; PAGE_SIZE as usize];
            unpack(&packed, &mut back);
            assert_eq!(back, page);
        }
        assert_eq!(pack(&[0u8; PAGE_SIZE as usize]).len(), MASK_BYTES, "a zero page keeps only its mask");
        for (w, m) in [(0u64, 0u8), (1, 1), (0x80, 1), (0x100, 2), (0xff00_0000_0000_0001, 0x81), (u64::MAX, 0xff)] {
            assert_eq!(byte_mask(w.to_le_bytes()), m, "{w:#x}");
        }
        // An index-like page (64 entries of 8 bytes, 6 of them nonzero, plus their byte masks) packs to under 1/8.
        assert!(pack(&index_like(5)).len() < PAGE_SIZE as usize / 8, "{}", pack(&index_like(5)).len());
    }
}
