use super::sbi::{eid, IMPL_ID, SPEC_VERSION};
use super::*;
use kvsim_isa::asm::{addi, i, lui};
use kvsim_isa::exec::ExecHook;
use kvsim_timing::inst::{InstClass, InstInfo};

const S_BASE: u64 = 0x8020_0000;
/// tiny_elf's code follows its ELF and program headers in the segment.
const ENTRY_OFFSET: u64 = 64 + 56;

fn csrrw(rd: u32, csr: u32, rs1: u32) -> u32 {
    i(csr as i32, rs1, 1, rd, 0x73)
}
fn csrrs(rd: u32, csr: u32, rs1: u32) -> u32 {
    i(csr as i32, rs1, 2, rd, 0x73)
}
fn csrrsi(csr: u32, uimm: u32) -> u32 {
    i(csr as i32, uimm, 6, 0, 0x73)
}
/// Load a 32-bit constant into `rd` (lui + addi).
fn li32(rd: u32, v: u32) -> [u32; 2] {
    let lo = ((v & 0xfff) as i32) << 20 >> 20;
    let hi = v.wrapping_sub(lo as u32) >> 12;
    [lui(rd, hi), addi(rd, rd, lo)]
}
fn jal_self() -> u32 {
    0x0000_006f // j . (jal x0, 0)
}
const ECALL: u32 = 0x73;
const WFI: u32 = 0x1050_0073;
const MRET: u32 = 0x3020_0073;
const A0: u32 = 10;
const A1: u32 = 11;
const A6: u32 = 16;
const A7: u32 = 17;

fn program(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn supervisor(words: &[u32], cfg: FsConfig) -> Machine {
    let elf = kvsim_isa::elf::tiny_elf(S_BASE, &program(words));
    assert_eq!(kvsim_isa::elf::parse(&elf).unwrap().entry, S_BASE + ENTRY_OFFSET);
    Machine::new(cfg, Boot::BareSupervisor { elf: &elf }).unwrap()
}

fn sbi(ext: u64, fid: u32) -> Vec<u32> {
    let mut v = li32(A7, ext as u32).to_vec();
    v.push(addi(A6, 0, fid as i32));
    v.push(ECALL);
    v
}

/// An S-mode program: timer interrupt enabled, set_timer(`tick`), then a loop; the handler records time, instret,
/// sepc and scause in s2..s5 and shuts the machine down.
fn timer_program(tick: u32) -> Vec<u32> {
    // stvec = the handler (patched below: auipc t0, 0; addi t0, t0, off), then STIE.
    let mut p = vec![0x0000_0297, 0, csrrw(0, 0x105, 5), addi(5, 0, 32), csrrs(0, 0x104, 5)];
    p.extend(li32(A0, tick));
    p.extend(sbi(eid::TIME, 0));
    p.push(csrrsi(0x100, 2)); // sstatus.SIE
    let loop_at = p.len();
    assert_eq!(loop_at, 12);
    p.push(addi(A1, A1, 1));
    p.push(0xffdf_f06f); // j -4
    let handler = p.len();
    p[1] = addi(5, 5, (4 * handler) as i32);
    assert_eq!(loop_at + 2, handler);
    p.push(csrrs(18, 0xc01, 0)); // s2 = time
    p.push(csrrs(19, 0xc02, 0)); // s3 = instret
    p.push(csrrs(20, 0x141, 0)); // s4 = sepc
    p.push(csrrs(21, 0x142, 0)); // s5 = scause
    p.push(addi(A0, 0, 0));
    p.push(addi(A1, 0, 0));
    p.extend(sbi(eid::SRST, 0));
    p.push(jal_self());
    p
}

#[test]
fn a_timer_interrupt_is_taken_at_the_first_instruction_boundary_of_its_tick_whatever_the_quantum() {
    // 1 GHz and a 10 MHz timebase: one tick is 100 instructions, so tick 50 falls after instruction 5000.
    for quantum in [10_000, 7, 1_000_000] {
        let cfg = FsConfig { clock_hz: 1_000_000_000, quantum, ..FsConfig::default() };
        let mut m = supervisor(&timer_program(50), cfg);
        assert_eq!(m.run(1_000_000), Ok(End::PowerOff { code: 0 }));
        let x = &m.harts[0].x;
        assert_eq!(x[21], cause::INTERRUPT | irq::STI as u64, "scause");
        assert_eq!(x[18], 50, "time read by the handler's first instruction");
        assert_eq!(x[19], 5001, "5000 instructions before the interrupt, then the csrr time");
        let loop_pc = S_BASE + ENTRY_OFFSET + 4 * 12; // the 13th instruction (see timer_program)
        assert!((loop_pc..loop_pc + 8).contains(&x[20]), "sepc {:#x} is in the loop", x[20]);
        assert_eq!(m.prv[0].interrupts, 1);
    }
}

#[test]
fn in_detailed_mode_a_timer_interrupt_is_taken_after_the_instruction_at_which_the_cores_time_reaches_its_tick() {
    // The core's prices (PriceHook) make the instruction at which time reaches tick 50 (5 us) a known one; before,
    // the interrupt waited for the end of the slice (a quantum of instructions) in which time passed the tick.
    for quantum in [10_000, 7, 1_000_000] {
        let cfg = FsConfig { clock_hz: 1_000_000_000, quantum, ..FsConfig::default() };
        let mut m = supervisor(&timer_program(50), cfg);
        m.harts[0].timed_ps = Some(0);
        let mut hook = PriceHook { now: vec![0], ..Default::default() };
        assert_eq!(m.run_hooked(10_000_000, &mut hook), Ok(End::PowerOff { code: 0 }));
        let tick_ps = 5_000_000;
        // Instructions retired when the core's time first reached the tick (the loop's are 10 ps each, so it is
        // reached exactly): the interrupt is taken after them.
        let reached = hook.times.iter().position(|&t| t >= tick_ps).unwrap() as u64 + 1;
        assert_eq!(hook.times[reached as usize - 1], tick_ps);
        let x = &m.harts[0].x;
        assert_eq!(x[21], cause::INTERRUPT | irq::STI as u64, "scause");
        assert_eq!(x[19], reached + 1, "quantum {quantum}: the handler's csrr instret follows the csrr time");
        assert_eq!(x[18], 50, "time read by the handler's first instruction: the tick, not later");
        assert_eq!(m.prv[0].interrupts, 1);
    }
}

#[test]
fn sbi_base_calls_answer_with_this_implementation_and_unknown_calls_are_not_supported() {
    let mut p = Vec::new();
    p.extend(sbi(eid::BASE, 0)); // spec version
    p.push(addi(18, A1, 0));
    p.extend(sbi(eid::BASE, 1)); // implementation id
    p.push(addi(19, A1, 0));
    p.extend(li32(A0, eid::HSM as u32));
    p.extend(sbi(eid::BASE, 3)); // probe HSM
    p.push(addi(20, A1, 0));
    p.extend(sbi(0x0a00_0000, 0)); // no such extension
    p.push(addi(21, A0, 0));
    p.extend([addi(A0, 0, 0), addi(A1, 0, 0)]);
    p.extend(sbi(eid::SRST, 0));
    let mut m = supervisor(&p, FsConfig::default());
    assert_eq!(m.run(10_000), Ok(End::PowerOff { code: 0 }));
    let x = &m.harts[0].x;
    assert_eq!((x[18], x[19], x[20], x[21] as i64), (SPEC_VERSION, IMPL_ID, 1, -2));
    assert_eq!(m.sbi_calls, 5);
}

#[test]
fn a_privilege_change_m_to_u_and_back_by_ecall_costs_one_instruction_each_way() {
    let elf = m_to_u_and_back();
    let mut m = Machine::new(FsConfig::default(), Boot::BareMachine { elf: &elf }).unwrap();
    assert_eq!(m.privilege(0), PRV_M);
    assert_eq!(m.run(1000), Ok(End::PowerOff { code: 0 }));
    let x = &m.harts[0].x;
    assert_eq!(x[18], cause::ECALL_U);
    assert_eq!((x[19] & kvsim_isa::privileged::status::MPP) >> 11, PRV_U as u64, "MPP says it came from U");
    assert_eq!(m.privilege(0), PRV_M);
    assert_eq!(m.prv[0].traps_to_m, 1);
    // Every instruction of the path once: 7 to the mret, the ecall, 2 csrr, 4 li, the store.
    assert_eq!(m.total_insts(), 7 + 1 + 2 + 4 + 1);
}

/// A timing model of known prices: a system instruction (serialising: CSR access, xret, ecall) costs 1,000 ps,
/// any other 10 ps; it records the classes it saw and hart 0's time after each instruction.
#[derive(Default)]
pub(super) struct PriceHook {
    pub now: Vec<u64>,
    pub seen: Vec<InstClass>,
    pub times: Vec<u64>,
}

impl ExecHook for PriceHook {
    const ACTIVE: bool = true;
    fn on_inst(&mut self, hart: usize, info: &InstInfo) {
        self.now[hart] += if info.class == InstClass::System { 1_000 } else { 10 };
        self.seen.push(info.class);
        if hart == 0 {
            self.times.push(self.now[0]);
        }
    }
    fn time_ps(&self, hart: usize) -> Option<u64> {
        Some(self.now[hart])
    }
    fn sleep_until(&mut self, hart: usize, t: u64) {
        self.now[hart] = self.now[hart].max(t);
    }
}

/// The M -> U -> M program of the test below.
fn m_to_u_and_back() -> Vec<u8> {
    // M mode: mtvec = handler, mepc = the U code, MPP = U (0), mret; U: ecall; handler: s2 = mcause, power off.
    // auipc t0, 0; addi t0, t0, handler (patched); csrw mtvec; auipc; addi t0, t0, user code (patched); csrw mepc.
    let mut p = vec![0x0000_0297, 0, csrrw(0, 0x305, 5), 0x0000_0297, 0, csrrw(0, 0x341, 5), MRET];
    let user = p.len();
    p.push(ECALL);
    let handler = p.len();
    p[1] = addi(5, 5, 4 * handler as i32);
    p[4] = addi(5, 5, 4 * (user as i32 - 3));
    p.push(csrrs(18, 0x342, 0)); // s2 = mcause
    p.push(csrrs(19, 0x300, 0)); // s3 = mstatus
    p.extend(li32(6, 0x10_0000));
    p.extend(li32(7, 0x5555));
    p.push(0x0073_2023); // sw t2, 0(t1)
    kvsim_isa::elf::tiny_elf(0x8000_0000, &program(&p))
}

#[test]
fn in_detailed_mode_every_instruction_reaches_the_timing_model_and_a_privilege_change_costs_a_serialising_one() {
    let elf = m_to_u_and_back();
    let mut m = Machine::new(FsConfig::default(), Boot::BareMachine { elf: &elf }).unwrap();
    m.harts[0].timed_ps = Some(0);
    let mut hook = PriceHook { now: vec![0], ..Default::default() };
    assert_eq!(m.run_hooked(1000, &mut hook), Ok(End::PowerOff { code: 0 }));
    // Every one of the 15 instructions reached the model once, the ones the machine finishes itself (csrw, mret,
    // the powering-off store) as the executor's (ecall, csrr).
    assert_eq!(hook.seen.len() as u64, m.total_insts());
    assert_eq!(m.total_insts(), 15);
    // System: csrw mtvec, csrw mepc, mret (M -> U), ecall (U -> M), csrr mcause, csrr mstatus.
    let system = hook.seen.iter().filter(|c| **c == InstClass::System).count();
    assert_eq!(system, 6);
    assert_eq!(hook.seen.last(), Some(&InstClass::Store), "the store that powers off is a store");
    // The hart's time is the model's: 6 x 1,000 + 9 x 10 ps; each privilege change (mret, ecall) costs one
    // serialising instruction, 1,000 ps here.
    assert_eq!(m.harts[0].time_ps(), 6 * 1_000 + 9 * 10);
    // By level: M ran 4 plain + csrw x2 + mret, then 5 plain + csrr x2 and the store after the trap; U the ecall.
    let [u, s, mm] = m.by_level[0];
    assert_eq!((u.insts, s.insts, mm.insts), (1, 0, 14));
    assert_eq!((u.ps, s.ps, mm.ps), (1_000, 0, 3 * 1_000 + 4 * 10 + 2 * 1_000 + 5 * 10));
    assert_eq!(mm.stores, 1);
}

/// set_timer(1000 ticks = 100 us), interrupts enabled in sie but not globally: wfi wakes, no trap; s2 = time.
fn wfi_program() -> Vec<u32> {
    let mut p = vec![addi(5, 0, 32), csrrs(0, 0x104, 5)];
    p.extend(li32(A0, 1000));
    p.extend(sbi(eid::TIME, 0));
    p.push(WFI);
    p.push(csrrs(18, 0xc01, 0));
    p.extend([addi(A0, 0, 0), addi(A1, 0, 0)]);
    p.extend(sbi(eid::SRST, 0));
    p
}

#[test]
fn in_detailed_mode_wfi_sleeps_the_core_until_the_timers_tick() {
    let p = wfi_program();
    let mut m = supervisor(&p, FsConfig::default());
    m.harts[0].timed_ps = Some(0);
    let mut hook = PriceHook { now: vec![0], ..Default::default() };
    assert_eq!(m.run_hooked(10_000, &mut hook), Ok(End::PowerOff { code: 0 }));
    // The model's clock jumped to the tick (100 us) while asleep; time then reads the tick.
    assert_eq!(m.harts[0].x[18], 1000, "time after wfi is the timer's tick");
    assert!(hook.now[0] >= 100_000_000 && hook.now[0] < 100_000_000 + 20 * 1_000);
    assert_eq!(m.by_level[0][1].ps, m.harts[0].time_ps(), "all of it (sleep included) in S mode");
}

#[test]
fn a_hart_asleep_with_nothing_to_wake_it_is_an_error() {
    let mut m = supervisor(&[WFI, jal_self()], FsConfig::default());
    let err = m.run(1000).unwrap_err();
    assert!(err.contains("asleep with no timer set"), "{err}");
}

#[test]
fn wfi_sleeps_until_the_timer_and_the_sleep_counts_as_time() {
    let p = wfi_program();
    let mut m = supervisor(&p, FsConfig::default());
    assert_eq!(m.run(10_000), Ok(End::PowerOff { code: 0 }));
    assert_eq!(m.harts[0].x[18], 1000, "time after wfi is the timer's tick");
    assert_eq!(m.prv[0].interrupts, 0);
    assert!(m.harts[0].idle_ps > 99_000_000 && m.harts[0].cnt.insts < 100);
}

#[test]
fn bad_kernels_and_initramfs_too_large_for_memory_are_refused_before_running() {
    let elf = kvsim_isa::elf::tiny_elf(0x8000_0000, &[0; 64]);
    let err = Machine::new(FsConfig::default(), Boot::Linux { kernel: &elf, initramfs: None }).err().unwrap();
    assert!(err.contains("ELF"), "{err}");
    let x86ish = vec![0x4du8; 4096];
    let err = Machine::new(FsConfig::default(), Boot::Linux { kernel: &x86ish, initramfs: None }).err().unwrap();
    assert!(err.contains("not a RISC-V Linux Image"), "{err}");
    let mut image = vec![0u8; 4096];
    image[0x30..0x38].copy_from_slice(b"RISCV\0\0\0");
    image[0x38..0x3c].copy_from_slice(b"RSC\x05");
    let cfg = FsConfig { dram_bytes: 32 << 20, ..FsConfig::default() };
    let rd = vec![0u8; 40 << 20];
    let err = Machine::new(cfg.clone(), Boot::Linux { kernel: &image, initramfs: Some(&rd) }).err().unwrap();
    assert!(err.contains("initramfs") && err.contains("does not fit"), "{err}");
    assert!(Machine::new(cfg, Boot::Linux { kernel: &image, initramfs: Some(&[0; 4096]) }).is_ok());
}

#[test]
fn the_device_tree_is_a_well_formed_blob_naming_every_hart_and_the_command_line() {
    let cfg = FsConfig { harts: 3, bootargs: "console=ttyS0 quiet".into(), ..FsConfig::default() };
    let dtb = fdt::machine_tree(&cfg, Some((0x8800_0000, 0x8810_0000)));
    let be = |o: usize| u32::from_be_bytes(dtb[o..o + 4].try_into().unwrap());
    assert_eq!(be(0), 0xd00d_feed);
    assert_eq!(be(4) as usize, dtb.len());
    // Walk the structure block: nodes balance, and the names and properties are where they should be.
    let (off_struct, off_strings) = (be(8) as usize, be(12) as usize);
    let mut at = off_struct;
    let (mut depth, mut names, mut props) = (0i32, Vec::new(), Vec::new());
    loop {
        match be(at) {
            1 => {
                let end = at + 4 + dtb[at + 4..].iter().position(|&b| b == 0).unwrap();
                names.push(String::from_utf8(dtb[at + 4..end].to_vec()).unwrap());
                depth += 1;
                at = (end + 1).next_multiple_of(4);
            }
            2 => {
                depth -= 1;
                at += 4;
            }
            3 => {
                let (len, name_off) = (be(at + 4) as usize, be(at + 8) as usize);
                let s = off_strings + name_off;
                let name = String::from_utf8(dtb[s..s + dtb[s..].iter().position(|&b| b == 0).unwrap()].to_vec());
                props.push((name.unwrap(), dtb[at + 12..at + 12 + len].to_vec()));
                at = (at + 12 + len).next_multiple_of(4);
            }
            9 => break,
            t => panic!("unexpected token {t} at {at}"),
        }
    }
    assert_eq!(depth, 0);
    for n in ["cpu@0", "cpu@1", "cpu@2", "plic@c000000", "clint@2000000", "serial@10000000", "memory@80000000"] {
        assert!(names.iter().any(|x| x == n), "{n} in {names:?}");
    }
    let prop = |k: &str| props.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).unwrap();
    assert_eq!(prop("bootargs"), b"console=ttyS0 quiet\0");
    assert_eq!(prop("linux,initrd-start"), [0, 0, 0, 0, 0x88, 0, 0, 0]);
    assert_eq!(prop("interrupts-extended").len(), 4 * 4 * 3, "CLINT: two lines per hart (first such property)");
}

#[test]
fn hsm_starts_a_second_hart_at_the_callers_time_and_it_stops_itself() {
    let ld_t0_a2 = 0x0006_3283; // ld t0, 0(a2)
    let beqz_t0_back4 = 0xfe02_8ee3; // beqz t0, -4
    let mut p = vec![0x0000_0597, 0, addi(A0, 0, 1), 0x0000_0617, 0]; // auipc a1; addi a1 (secondary); li a0, 1; auipc a2; addi a2 (marker)
    p.extend(sbi(eid::HSM, 0));
    p.push(addi(18, A0, 0)); // s2 = error
    p.extend([ld_t0_a2, beqz_t0_back4]);
    p.push(addi(19, 5, 0)); // s3 = marker
    p.extend([addi(A0, 0, 0), addi(A1, 0, 0)]);
    p.extend(sbi(eid::SRST, 0));
    let secondary = p.len();
    p.push(addi(5, A0, 41)); // t0 = hart id + 41
    p.push(0x0055_b023); // sd t0, 0(a1)
    p.extend(sbi(eid::HSM, 1)); // hart_stop
    p.push(jal_self());
    let marker = p.len() + 4;
    p.extend([0; 8]);
    p[1] = addi(A1, A1, 4 * secondary as i32);
    p[4] = addi(12, 12, 4 * (marker as i32 - 3));
    let cfg = FsConfig { harts: 2, ..FsConfig::default() };
    let mut m = supervisor(&p, cfg);
    assert_eq!(m.run_state, vec![HartRun::Running, HartRun::Stopped], "hart 1 waits for hart_start");
    assert_eq!(m.run(1_000_000), Ok(End::PowerOff { code: 0 }));
    assert_eq!((m.harts[0].x[18], m.harts[0].x[19]), (0, 42), "hart_start succeeded; hart 1 wrote 1 + 41");
    assert_eq!(m.run_state[1], HartRun::Stopped, "hart 1 stopped itself");
    assert_eq!(m.harts[1].cnt.insts, 2 + 4, "two instructions and the hart_stop call");
    assert!(m.harts[1].idle_ps > 0, "hart 1 started at hart 0's time, not at zero");
}

/// A timing model with a real MMU over the guest's tables (`kvsim_timing::tlb_guest`): 10 ps an instruction, a
/// page-table read 100 ps; it records the entries read and the physical addresses of the loads.
struct MmuHook {
    mmu: kvsim_timing::tlb::Mmu,
    now: u64,
    reads: Vec<u64>,
    loads: Vec<u64>,
}

impl ExecHook for MmuHook {
    const ACTIVE: bool = true;
    fn on_inst(&mut self, _hart: usize, _info: &InstInfo) {
        self.now += 10;
    }
    fn on_inst_fs(&mut self, _hart: usize, info: &InstInfo, tables: &mut kvsim_isa::memory::Memory) {
        self.now += 10;
        if info.class == InstClass::Load {
            let reads = &mut self.reads;
            let side = kvsim_timing::tlb::Side::Data;
            let (ready, pa) = self.mmu.translate_guest(side, info.mem_addr, self.now, tables, |addr, t| {
                reads.push(addr);
                t + 100
            });
            self.now = ready;
            self.loads.push(pa);
        }
    }
    fn time_ps(&self, _hart: usize) -> Option<u64> {
        Some(self.now)
    }
}

#[test]
fn in_detailed_mode_a_loads_tlb_miss_walks_the_guests_table_at_its_physical_addresses_and_costs_its_reads() {
    // S mode with Sv39 on: the code runs in an identity gigapage, the data page at VA maps to DATA through three
    // levels. The first load misses the TLB and walks (three reads, root first); the second hits.
    const ROOT: u64 = 0x8100_0000;
    const L1: u64 = ROOT + 0x1000;
    const L0: u64 = ROOT + 0x2000;
    const DATA: u64 = 0x8120_0000;
    const VA: u64 = 0x4000_5000; // vpn2 1, vpn1 0, vpn0 5
    let pte = |pa: u64, flags: u64| (pa >> 12) << 10 | flags;
    let mut p = li32(5, VA as u32).to_vec();
    p.push(i(0, 5, 3, 6, 0x03)); // ld t1, 0(t0)
    p.push(i(8, 5, 3, 7, 0x03)); // ld t2, 8(t0)
    p.extend([addi(A0, 0, 0), addi(A1, 0, 0)]);
    p.extend(sbi(eid::SRST, 0));
    let mut m = supervisor(&p, FsConfig::default());
    for (at, v) in [
        (ROOT + 2 * 8, pte(0x8000_0000, 0xcf)), // the identity gigapage of DRAM: V R W X A D
        (ROOT + 8, pte(L1, 1)),
        (L1, pte(L0, 1)),
        (L0 + 5 * 8, pte(DATA, 0xc7)), // V R W A D
        (DATA, 0x1111),
        (DATA + 8, 0x2222),
    ] {
        m.mem.write_bytes(0, at, &u64::to_le_bytes(v)).unwrap();
    }
    m.prv[0].satp = (8 << 60) | (3 << 44) | (ROOT >> 12); // Sv39, ASID 3
    m.harts[0].timed_ps = Some(0);
    let params = kvsim_params::Mmu { enabled: true, levels: 3, pwc_entries: 0, ..Default::default() };
    let mut hook = MmuHook { mmu: kvsim_timing::tlb::Mmu::new(&params), now: 0, reads: vec![], loads: vec![] };
    assert_eq!(m.run_hooked(1000, &mut hook), Ok(End::PowerOff { code: 0 }));
    assert_eq!((m.harts[0].x[6], m.harts[0].x[7]), (0x1111, 0x2222), "the loads read DATA");
    assert_eq!(hook.reads, [ROOT + 8, L1, L0 + 5 * 8], "one walk: the guest's entries, root first");
    assert_eq!(hook.loads, [DATA, DATA + 8], "the caches see the physical addresses");
    // Every instruction 10 ps, the walk the STLB's 7 cycles (1 ps each here) and three reads of 100.
    assert_eq!(hook.now, 10 * m.total_insts() + 7 + 3 * 100);
}
