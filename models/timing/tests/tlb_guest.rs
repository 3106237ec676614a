//! Exact tests of FS mode's translation (`tlb_guest`): a TLB miss walks the guest's own Sv39 table, reading its
//! entries at their physical addresses, root first, each at the latency it meets after the STLB lookup; the
//! translation is the frame the table gives; a 2 MB page reads one entry fewer; a hit costs nothing; ASIDs keep
//! address spaces apart; a flush forgets; an untranslated side (M mode) passes addresses through.

use std::collections::HashMap;

use kvsim_params::Mmu as MmuParams;
use kvsim_timing::tlb::{Mmu, Side};
use kvsim_timing::tlb_guest::PageTables;

const STLB: u64 = 7;
const ROOT: u64 = 0x8010_0000;
const MID: u64 = 0x8010_1000;
const LEAF: u64 = 0x8010_2000;
const V: u64 = 1;
const RWX: u64 = 0b1110;

/// A guest's memory holding Sv39 tables: PTEs by physical address, and the ASID (None: not translated).
struct Guest {
    ptes: HashMap<u64, u64>,
    asid: Option<u16>,
}

fn pte(pa: u64, flags: u64) -> u64 {
    (pa >> 12) << 10 | flags
}

fn vpn(va: u64, level: u32) -> u64 {
    (va >> (12 + 9 * level)) & 511
}

impl Guest {
    /// Map the 4 KB page at `va` to `pa` (through MID and LEAF) and the 2 MB page at `huge` to `huge_pa`.
    fn new(va: u64, pa: u64, huge: u64, huge_pa: u64) -> Guest {
        let mut ptes = HashMap::new();
        ptes.insert(ROOT + vpn(va, 2) * 8, pte(MID, V));
        ptes.insert(MID + vpn(va, 1) * 8, pte(LEAF, V));
        ptes.insert(LEAF + vpn(va, 0) * 8, pte(pa, V | RWX));
        assert_eq!(vpn(huge, 2), vpn(va, 2), "both under the same root entry");
        ptes.insert(MID + vpn(huge, 1) * 8, pte(huge_pa, V | RWX));
        Guest { ptes, asid: Some(1) }
    }
}

impl PageTables for Guest {
    fn asid(&self, _side: Side) -> Option<u16> {
        self.asid
    }
    fn walk(&mut self, _side: Side, va: u64, out: &mut [u64; 3]) -> Option<(usize, u64)> {
        let mut table = ROOT;
        for (n, level) in (0..3u32).rev().enumerate() {
            let at = table + vpn(va, level) * 8;
            out[n] = at;
            let e = *self.ptes.get(&at)?;
            let frame = (e >> 10) << 12;
            if e & RWX != 0 {
                let within = (1u64 << (12 + 9 * level)) - 1;
                return Some((n + 1, (frame & !within) | (va & within)));
            }
            table = frame;
        }
        None
    }
}

fn mmu() -> Mmu {
    Mmu::new(&MmuParams { enabled: true, levels: 3, pwc_entries: 0, ..MmuParams::default() })
}

/// Translate `va` at cycle 100, every page-table read taking `read_cycles`: (ready cycle, physical address, reads).
fn translate(m: &mut Mmu, g: &mut Guest, va: u64, read_cycles: u64) -> (u64, u64, Vec<u64>) {
    let mut reads = Vec::new();
    let (ready, pa) = m.translate_guest(Side::Data, va, 100, g, |addr, c| {
        reads.push(addr);
        c + read_cycles
    });
    (ready, pa, reads)
}

const VA: u64 = 0x4000_1234;
const PA: u64 = 0x8123_4000;
const HUGE: u64 = 0x4020_0000;
const HUGE_PA: u64 = 0x8040_0000;

#[test]
fn a_miss_reads_the_guests_three_entries_at_their_physical_addresses_and_a_hit_reads_none() {
    let mut g = Guest::new(VA, PA, HUGE, HUGE_PA);
    let mut m = mmu();
    let (ready, pa, reads) = translate(&mut m, &mut g, VA, 4);
    assert_eq!(reads, vec![ROOT + vpn(VA, 2) * 8, MID + vpn(VA, 1) * 8, LEAF + vpn(VA, 0) * 8], "root first");
    assert_eq!(ready, 100 + STLB + 3 * 4, "the STLB lookup, then three dependent reads of 4 cycles");
    assert_eq!(pa, PA | 0x234, "the frame the leaf names, the offset kept");
    assert_eq!(translate(&mut m, &mut g, VA + 8, 4), (100, PA | 0x23c, vec![]), "an L1 hit: no cycles, no reads");
    // A 2 MB page: its entry in the middle table is the leaf, two reads.
    let (ready, pa, reads) = translate(&mut m, &mut g, HUGE + 0x1_2345, 9);
    assert_eq!(reads, vec![ROOT + vpn(HUGE, 2) * 8, MID + vpn(HUGE, 1) * 8]);
    assert_eq!((ready, pa), (100 + STLB + 2 * 9, HUGE_PA + 0x1_2345));
    assert_eq!(translate(&mut m, &mut g, HUGE + 0x10_0000, 9), (100, HUGE_PA + 0x10_0000, vec![]), "same 2 MB page");
    let mut stats = kvsim_timing::StatSink::new();
    m.stats("c.", &mut stats);
    assert_eq!(stats.get("c.dtlb.4k.walks"), Some(1.0));
    assert_eq!(stats.get("c.dtlb.4k.walk_cycles"), Some(12.0));
    assert_eq!(stats.get("c.dtlb.4k.pte_reads"), Some(3.0));
    assert_eq!(stats.get("c.dtlb.2m.walk_cycles"), Some(18.0));
    assert_eq!(stats.get("c.dtlb.2m.pte_reads"), Some(2.0));
}

#[test]
fn a_translation_is_kept_until_the_guest_flushes_and_asids_keep_address_spaces_apart() {
    let mut g = Guest::new(VA, PA, HUGE, HUGE_PA);
    let mut m = mmu();
    translate(&mut m, &mut g, VA, 4);
    // The guest remaps the page without a fence: the TLB still holds the old frame, as hardware does.
    g.ptes.insert(LEAF + vpn(VA, 0) * 8, pte(0x8777_7000, V | RWX));
    assert_eq!(translate(&mut m, &mut g, VA, 4).1, PA | 0x234);
    m.flush_all();
    let (ready, pa, reads) = translate(&mut m, &mut g, VA, 4);
    assert_eq!((ready, pa, reads.len()), (100 + STLB + 12, 0x8777_7234, 3), "after sfence.vma: walked again");
    // Another address space misses (its own walk), and the first one's entry is still there when it returns.
    g.asid = Some(2);
    assert_eq!(translate(&mut m, &mut g, VA, 4).2.len(), 3, "ASID 2 walks");
    g.asid = Some(1);
    assert_eq!(translate(&mut m, &mut g, VA, 4), (100, 0x8777_7234, vec![]), "ASID 1's entry hits");
    // M mode (or satp Bare): addresses are physical, no lookup.
    g.asid = None;
    assert_eq!(translate(&mut m, &mut g, VA, 4), (100, VA, vec![]));
}
