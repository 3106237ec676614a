use super::*;

const DRAM: u64 = 0x8000_0000;
const ROOT: u64 = DRAM + 0x10_0000;
const L1: u64 = ROOT + 0x1000;
const L0: u64 = ROOT + 0x2000;
const DATA: u64 = DRAM + 0x20_0000;
/// The virtual page the tests map (vpn2 = 0x100, vpn1 = 0x3, vpn0 = 0x5).
const VA: u64 = 0xffff_ffc0_0000_0000 | (3 << 21) | (5 << 12);

fn pte(pa: u64, flags: u64) -> u64 {
    ((pa >> 12) << 10) | flags
}

fn sv39(root: u64) -> u64 {
    (8 << 60) | (root >> 12)
}

/// Full-system memory with a three-level table mapping VA to DATA with `leaf_flags`.
fn machine(leaf_flags: u64) -> Memory {
    let mut m = Memory::new(64 << 20, true, 2);
    m.enable_full_system(DRAM, DRAM + (64 << 20), 0, DRAM - 1);
    let w = |m: &mut Memory, a: u64, v: u64| m.write_bytes(0, a, &v.to_le_bytes()).unwrap();
    w(&mut m, ROOT + 0x100 * 8, pte(L1, PTE_V));
    w(&mut m, L1 + 3 * 8, pte(L0, PTE_V));
    w(&mut m, L0 + 5 * 8, pte(DATA, leaf_flags));
    // An identity gigapage for DRAM (root[2]), kernel only.
    w(&mut m, ROOT + 2 * 8, pte(DRAM, PTE_V | PTE_R | PTE_W | PTE_X | PTE_A | PTE_D));
    w(&mut m, DATA, 0x1122_3344_5566_7788);
    m.set_context(XlateContext { satp: sv39(ROOT), fetch_prv: PRV_S, data_prv: PRV_S, sum: false, mxr: false });
    m
}

fn read_pte(m: &mut Memory, a: u64) -> u64 {
    u64::from_le_bytes(m.read_bytes(a, 8).unwrap().try_into().unwrap())
}

#[test]
fn a_walk_reads_one_pte_per_level_at_the_addresses_the_vpn_fields_select_and_sets_a_then_d() {
    let mut m = machine(PTE_V | PTE_R | PTE_W);
    assert_eq!(m.load::<8>(VA + 8 * 3).unwrap(), 0, "DATA + 24 holds zero");
    assert_eq!(m.load::<8>(VA).unwrap(), 0x1122_3344_5566_7788);
    assert_eq!(m.last_walk(), &[ROOT + 0x100 * 8, L1 + 3 * 8, L0 + 5 * 8]);
    assert_eq!(m.xlate_stats().walks, 1, "the second load hit the software TLB");
    assert_eq!(read_pte(&mut m, L0 + 40) & (PTE_A | PTE_D), PTE_A, "a load sets A only");
    m.store::<8>(0, VA + 16, 0xabcd).unwrap();
    assert_eq!(m.xlate_stats().walks, 2, "the first store walks (the read TLB entry does not allow writing)");
    assert_eq!(read_pte(&mut m, L0 + 40) & (PTE_A | PTE_D), PTE_A | PTE_D, "a store sets D");
    assert_eq!(read_pte(&mut m, DATA + 16), 0xabcd, "the store reached the physical page");
    m.store::<8>(0, VA + 24, 1).unwrap();
    assert_eq!(m.xlate_stats().walks, 2, "the second store hit the write TLB");
    // A gigapage is one PTE read; its offset comes from the virtual address's low 30 bits.
    assert_eq!(m.load::<8>(DRAM + 0x20_0000).unwrap(), 0x1122_3344_5566_7788);
    assert_eq!(m.last_walk(), &[ROOT + 2 * 8]);
    assert_eq!(m.xlate_stats().pte_reads, 3 + 3 + 1);
}

#[test]
fn permissions_fault_with_the_access_kind_and_the_virtual_address() {
    let mut m = machine(PTE_V | PTE_R | PTE_A);
    assert_eq!(m.store::<4>(0, VA, 1), Err(Trap::PageFault { addr: VA, access: Access::Store }));
    assert_eq!(m.fetch_decode(VA).unwrap_err(), Trap::PageFault { addr: VA, access: Access::Fetch });
    assert_eq!(m.load::<8>(VA + 0x1000), Err(Trap::PageFault { addr: VA + 0x1000, access: Access::Load }));
    // Bits 63..39 not a sign extension of bit 38.
    let bad = 0x0000_0040_0000_0000;
    assert_eq!(m.load::<8>(bad), Err(Trap::PageFault { addr: bad, access: Access::Load }));
    assert_eq!(m.xlate_stats().page_faults, 4);
    // A PTE outside DRAM is an access fault of the access.
    let mut m = machine(PTE_V | PTE_R);
    m.write_bytes(0, L1 + 3 * 8, &pte(0x1000_0000, PTE_V).to_le_bytes()).unwrap();
    m.flush_translations();
    assert_eq!(m.load::<8>(VA), Err(Trap::Unmapped { addr: VA, access: Access::Load }));
}

#[test]
fn user_pages_need_sum_in_s_mode_and_are_then_not_cached() {
    let mut m = machine(PTE_V | PTE_R | PTE_W | PTE_U);
    assert_eq!(m.load::<8>(VA), Err(Trap::PageFault { addr: VA, access: Access::Load }));
    let ctx = XlateContext { satp: sv39(ROOT), fetch_prv: PRV_S, data_prv: PRV_S, sum: true, mxr: false };
    m.set_context(ctx);
    let walks = m.xlate_stats().walks;
    assert_eq!(m.load::<8>(VA).unwrap(), 0x1122_3344_5566_7788);
    assert_eq!(m.load::<8>(VA).unwrap(), 0x1122_3344_5566_7788);
    assert_eq!(m.xlate_stats().walks, walks + 2, "each S-mode access to a user page walks (SUM is read live)");
    // SUM off again: refused at once, with no flush needed.
    m.set_context(XlateContext { sum: false, ..ctx });
    assert!(m.load::<8>(VA).is_err());
    // U mode reaches it (and caches it), but not the kernel's gigapage.
    m.set_context(XlateContext { fetch_prv: 0, data_prv: 0, ..ctx });
    assert_eq!(m.load::<8>(VA).unwrap(), 0x1122_3344_5566_7788);
    assert_eq!(m.load::<8>(DRAM), Err(Trap::PageFault { addr: DRAM, access: Access::Load }));
}

#[test]
fn the_kernel_and_user_caches_survive_a_privilege_round_trip_and_satp_or_sfence_flush_them() {
    let mut m = machine(PTE_V | PTE_R | PTE_W | PTE_U);
    let s = XlateContext { satp: sv39(ROOT), fetch_prv: PRV_S, data_prv: PRV_S, sum: false, mxr: false };
    let u = XlateContext { fetch_prv: 0, data_prv: 0, ..s };
    m.load::<8>(DRAM).unwrap(); // S: the gigapage
    m.set_context(u);
    m.load::<8>(VA).unwrap(); // U: the user page
    let walks = m.xlate_stats().walks;
    m.set_context(s);
    m.load::<8>(DRAM).unwrap();
    m.set_context(u);
    m.load::<8>(VA).unwrap();
    assert_eq!(m.xlate_stats().walks, walks, "both sets kept across the switches");
    m.flush_translations();
    m.load::<8>(VA).unwrap();
    assert_eq!(m.xlate_stats().walks, walks + 1);
    m.set_context(XlateContext { satp: sv39(ROOT) | (1 << 44), ..u });
    m.load::<8>(VA).unwrap();
    assert_eq!(m.xlate_stats().walks, walks + 2, "a new satp starts empty");
}

#[test]
fn a_store_through_one_mapping_invalidates_code_decoded_through_another() {
    let mut m = machine(PTE_V | PTE_R | PTE_W | PTE_X);
    // addi a0, a0, 1 at DATA, fetched through VA; then overwritten through the identity gigapage.
    m.write_bytes(0, DATA, &crate::asm::addi(10, 10, 1).to_le_bytes()).unwrap();
    let d = m.fetch_decode(VA).unwrap();
    assert_eq!((d.op, d.imm), (crate::decode::Op::Addi, 1));
    let b = m.block(VA).unwrap();
    assert_eq!(unsafe { (&(*b).insts)[0].imm }, 1);
    let g = m.code_generation();
    m.store::<4>(0, DATA, crate::asm::addi(10, 10, 7) as u64).unwrap();
    assert!(m.code_generation() > g, "the physical page holds decoded code");
    let b = m.block(VA).unwrap();
    assert_eq!(unsafe { (&(*b).insts)[0].imm }, 7);
}

#[test]
fn reservations_hold_physical_addresses() {
    let mut m = machine(PTE_V | PTE_R | PTE_W);
    m.reserve(0, VA);
    // Hart 1 stores to the same physical word through the identity mapping: the reservation breaks.
    m.store::<8>(1, DATA, 5).unwrap();
    assert!(!m.take_reservation(0, VA));
    m.reserve(0, VA);
    m.store::<8>(1, DATA + 64, 5).unwrap();
    assert!(m.take_reservation(0, VA));
}

#[test]
fn se_memory_never_translates() {
    let mut m = Memory::new(1 << 20, false, 1);
    m.regions.heap_start = 0x10_0000;
    m.regions.brk = 0x10_1000;
    m.store::<8>(0, 0x10_0000, 9).unwrap();
    assert_eq!(m.load::<8>(0x10_0000).unwrap(), 9);
    assert!(!m.full_system());
    assert_eq!(m.xlate_stats(), XlateStats::default());
    assert!(m.last_walk().is_empty());
}

#[test]
fn the_timing_models_view_of_the_tables_is_the_walk_without_its_side_effects() {
    use kvsim_timing::tlb::Side;
    use kvsim_timing::tlb_guest::PageTables;
    let mut m = machine(PTE_V | PTE_R | PTE_W);
    let asid_satp = sv39(ROOT) | (7 << 44);
    m.set_context(XlateContext { satp: asid_satp, fetch_prv: PRV_S, data_prv: PRV_S, sum: false, mxr: false });
    assert_eq!(m.asid(Side::Data), Some(7));
    let mut ptes = [0; 3];
    assert_eq!(PageTables::walk(&mut m, Side::Data, VA + 0x18, &mut ptes), Some((3, DATA + 0x18)));
    assert_eq!(ptes, [ROOT + 0x100 * 8, L1 + 3 * 8, L0 + 5 * 8], "the functional walk's entries, root first");
    assert_eq!(read_pte(&mut m, L0 + 40) & PTE_A, 0, "no A bit set: the executor's walk sets it");
    assert_eq!(m.xlate_stats().walks, 0, "and no walk counted");
    assert_eq!(
        PageTables::walk(&mut m, Side::Data, DRAM + 0x12_3456, &mut ptes),
        Some((1, DRAM + 0x12_3456)),
        "a gigapage"
    );
    assert_eq!(PageTables::walk(&mut m, Side::Data, VA + (1 << 21), &mut ptes), None, "not mapped");
    m.set_context(XlateContext { satp: asid_satp, fetch_prv: PRV_M, data_prv: PRV_M, sum: false, mxr: false });
    assert_eq!(m.asid(Side::Inst), None, "M mode is not translated");
}
