use super::*;

fn at(prv: u8) -> Privileged {
    let mut p = Privileged::new(0);
    p.prv = prv;
    p
}

#[test]
fn an_ecall_from_u_goes_to_s_when_delegated_and_to_m_otherwise() {
    let mut p = at(PRV_U);
    p.stvec = 0x8000_1000;
    p.mtvec = 0x8000_2000;
    p.mstatus |= status::SIE;
    p.medeleg = 1 << cause::ECALL_U;
    assert_eq!(p.take_trap(0x1234, cause::ECALL_U, 0), 0x8000_1000);
    assert_eq!((p.prv, p.sepc, p.scause, p.stval), (PRV_S, 0x1234, cause::ECALL_U, 0));
    assert_eq!(p.mstatus & status::SPP, 0, "came from U");
    assert_eq!(p.mstatus & (status::SIE | status::SPIE), status::SPIE, "SIE saved in SPIE and cleared");
    // sret goes back to U with SIE restored.
    assert_eq!(p.sret().unwrap(), 0x1234);
    assert_eq!(p.prv, PRV_U);
    assert_ne!(p.mstatus & status::SIE, 0);

    // Not delegated: to M, MPP = U.
    p.medeleg = 0;
    assert_eq!(p.take_trap(0x1238, cause::ECALL_U, 0), 0x8000_2000);
    assert_eq!((p.prv, p.mepc, p.mcause), (PRV_M, 0x1238, cause::ECALL_U));
    assert_eq!((p.mstatus & status::MPP) >> status::MPP_SHIFT, PRV_U as u64);
    assert_eq!(p.mret().unwrap(), 0x1238);
    assert_eq!(p.prv, PRV_U);
}

#[test]
fn a_trap_from_m_stays_in_m_even_when_delegated() {
    let mut p = at(PRV_M);
    p.mtvec = 0x100;
    p.medeleg = cause::DELEGABLE;
    p.take_trap(0x40, cause::ILLEGAL, 0x1234_5678);
    assert_eq!((p.prv, p.mcause, p.mtval, p.traps_to_m, p.traps_to_s), (PRV_M, cause::ILLEGAL, 0x1234_5678, 1, 0));
    assert_eq!((p.mstatus & status::MPP) >> status::MPP_SHIFT, PRV_M as u64);
}

#[test]
fn vectored_interrupts_jump_to_base_plus_four_times_the_cause() {
    let mut p = at(PRV_U);
    p.stvec = 0x8000_0001; // vectored
    p.mideleg = irq::S_MASK;
    assert_eq!(p.take_trap(0, cause::INTERRUPT | irq::STI as u64, 0), 0x8000_0000 + 4 * 5);
    let mut p = at(PRV_U);
    p.stvec = 0x8000_0001;
    p.medeleg = 1 << cause::ECALL_U;
    assert_eq!(p.take_trap(0, cause::ECALL_U, 0), 0x8000_0000, "exceptions use the base");
}

#[test]
fn interrupts_obey_the_global_enables_of_the_level_they_go_to() {
    let mut p = at(PRV_S);
    p.mideleg = irq::S_MASK;
    p.mie = (1 << irq::STI) | (1 << irq::MTI);
    p.set_irq_line(irq::STI, true);
    assert_eq!(p.pending_interrupt(), None, "S mode with SIE clear");
    assert!(p.wakeup_pending(), "but it wakes wfi");
    p.mstatus |= status::SIE;
    assert_eq!(p.pending_interrupt(), Some(irq::STI));
    p.mstatus &= !status::SIE;
    p.prv = PRV_U;
    assert_eq!(p.pending_interrupt(), Some(irq::STI), "always enabled below S");
    // An M-level interrupt beats it, and is enabled below M whatever MIE says.
    p.set_irq_line(irq::MTI, true);
    assert_eq!(p.pending_interrupt(), Some(irq::MTI));
    // In M mode, S-level interrupts are never taken; M-level ones need MIE.
    p.prv = PRV_M;
    assert_eq!(p.pending_interrupt(), None);
    p.mstatus |= status::MIE;
    assert_eq!(p.pending_interrupt(), Some(irq::MTI));
    p.set_irq_line(irq::MTI, false);
    assert_eq!(p.pending_interrupt(), None);
}

#[test]
fn csrs_check_privilege_and_show_their_views() {
    let mut p = at(PRV_S);
    assert_eq!(p.read_csr(csr::MSTATUS, [0; 3]), Err(Trap::Csr(csr::MSTATUS)));
    assert_eq!(p.write_csr(csr::MEPC, 1), Err(Trap::Csr(csr::MEPC)));
    p.mstatus |= status::MPP | status::SUM | status::MIE;
    let s = p.read_csr(csr::SSTATUS, [0; 3]).unwrap();
    assert_eq!(s & (status::MPP | status::MIE), 0, "sstatus hides M fields");
    assert_ne!(s & status::SUM, 0);
    assert_eq!(s & status::XL64, status::XL64);
    // sie/sip show only delegated bits; S may set SSIP but not STIP.
    p.mideleg = irq::S_MASK;
    p.write_csr(csr::SIP, (1 << irq::SSI) | (1 << irq::STI)).unwrap();
    assert_eq!(p.mip, 1 << irq::SSI);
    // satp: Sv48 is not implemented, so the write has no effect; Sv39 is taken with its ASID.
    let sv39 = (8u64 << 60) | (5 << 44) | 0x8_0123;
    assert_eq!(p.write_csr(csr::SATP, sv39), Ok(Effect::Context));
    assert_eq!(p.write_csr(csr::SATP, (9u64 << 60) | 1), Ok(Effect::None));
    assert_eq!(p.satp, sv39);
    // Counters need mcounteren (and scounteren below S); read-only CSRs refuse writes.
    assert_eq!(p.read_csr(csr::TIME, [1, 2, 3]), Err(Trap::Csr(csr::TIME)));
    p.mcounteren = 7;
    assert_eq!(p.read_csr(csr::TIME, [1, 2, 3]), Ok(2));
    assert_eq!(p.write_csr(csr::CYCLE, 0), Err(Trap::Csr(csr::CYCLE)));
    let mut m = at(PRV_M);
    assert_eq!(m.read_csr(csr::MHARTID, [0; 3]), Ok(0));
    assert_eq!(m.write_csr(csr::MHARTID, 1), Err(Trap::Csr(csr::MHARTID)));
    assert_eq!(m.read_csr(0x7c0, [0; 3]), Err(Trap::Csr(0x7c0)), "an unknown CSR is illegal");
}

#[test]
fn xret_and_system_instructions_are_refused_below_their_level() {
    assert!(at(PRV_S).mret().is_err());
    assert!(at(PRV_U).sret().is_err());
    let mut tsr = at(PRV_S);
    tsr.mstatus |= status::TSR;
    assert!(tsr.sret().is_err());
    assert!(at(PRV_U).check_wfi().is_err());
    assert!(at(PRV_S).check_wfi().is_ok());
    assert!(at(PRV_U).check_sfence().is_err());
    let mut tvm = at(PRV_S);
    tvm.mstatus |= status::TVM;
    assert!(tvm.check_sfence().is_err());
    assert!(tvm.read_csr(csr::SATP, [0; 3]).is_err());
}

#[test]
fn mret_to_s_clears_mprv_and_the_context_follows_mprv() {
    let mut p = at(PRV_M);
    p.satp = (8 << 60) | 0x80000;
    p.mstatus |= status::MPRV | (1 << status::MPP_SHIFT);
    let c = p.xlate_context();
    assert_eq!((c.fetch_prv, c.data_prv), (PRV_M, PRV_S), "MPRV: loads and stores as MPP");
    p.mret().unwrap();
    assert_eq!(p.prv, PRV_S);
    assert_eq!(p.mstatus & status::MPRV, 0);
    let c = p.xlate_context();
    assert_eq!((c.fetch_prv, c.data_prv, c.satp), (PRV_S, PRV_S, (8 << 60) | 0x80000));
}

#[test]
fn system_instructions_decode_from_their_words() {
    assert_eq!(decode_sys(0x3020_0073), Some(SysInst::Mret));
    assert_eq!(decode_sys(0x1020_0073), Some(SysInst::Sret));
    assert_eq!(decode_sys(0x1050_0073), Some(SysInst::Wfi));
    assert_eq!(decode_sys(0x1200_0073), Some(SysInst::SfenceVma));
    assert_eq!(decode_sys(0x12b5_0073), Some(SysInst::SfenceVma), "sfence.vma a0, a1");
    // csrrw a0, mstatus, a1 and csrrsi zero, sstatus, 2.
    assert_eq!(decode_sys(0x3005_9573), Some(SysInst::Csr { csr: 0x300, op: 1, rd: 10, src_reg: Some(11), imm: 0 }));
    assert_eq!(decode_sys(0x1001_6073), Some(SysInst::Csr { csr: 0x100, op: 2, rd: 0, src_reg: None, imm: 2 }));
    assert_eq!(decode_sys(0x0000_0013), None);
}

#[test]
fn faults_become_the_exceptions_of_their_access() {
    let pf = Trap::PageFault { addr: 0xdead_0000, access: Access::Store };
    assert_eq!(exception_of(&pf, 0), Some((cause::STORE_PAGE, 0xdead_0000)));
    let f = Trap::PageFault { addr: 0x1000, access: Access::Fetch };
    assert_eq!(exception_of(&f, 0), Some((cause::FETCH_PAGE, 0x1000)));
    let a = Trap::Unmapped { addr: 0x10, access: Access::Load };
    assert_eq!(exception_of(&a, 0), Some((cause::LOAD_ACCESS, 0x10)));
    assert_eq!(exception_of(&Trap::Illegal("x"), 0x1234), Some((cause::ILLEGAL, 0x1234)));
    assert_eq!(exception_of(&Trap::Ebreak, 0), Some((cause::BREAKPOINT, 0)), "tval zero, as qemu-system-riscv64");
    assert_eq!(exception_of(&Trap::Limit { page: 0, limit: 0 }, 0), None, "the simulator's own error");
}
