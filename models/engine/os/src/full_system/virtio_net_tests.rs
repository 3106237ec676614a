//! The virtio-net device: a frame delivered at its tick (used-ring write and interrupt at the expected instruction
//! boundary, asleep or running), transmission of descriptor chains, interrupt suppression, and a driver that breaks
//! the queue's rules stopping the run with the reason.

use super::devices::map;
use super::virtio_net::*;
use super::*;
use kvsim_isa::asm::{addi, i, lui};

const DESC: u64 = 0x8100_0000;
const AVAIL: u64 = 0x8100_1000;
const USED: u64 = 0x8100_2000;
const BUF: u64 = 0x8100_3000;
const TX_DESC: u64 = 0x8110_0000;
const TX_AVAIL: u64 = 0x8110_1000;
const TX_USED: u64 = 0x8110_2000;

fn csrrw(rd: u32, csr: u32, rs1: u32) -> u32 {
    i(csr as i32, rs1, 1, rd, 0x73)
}
fn csrrs(rd: u32, csr: u32, rs1: u32) -> u32 {
    i(csr as i32, rs1, 2, rd, 0x73)
}
fn li32(rd: u32, v: u32) -> [u32; 2] {
    let lo = ((v & 0xfff) as i32) << 20 >> 20;
    let hi = v.wrapping_sub(lo as u32) >> 12;
    [lui(rd, hi), addi(rd, rd, lo)]
}
const WFI: u32 = 0x1050_0073;

/// An M-mode program: mtvec = the handler, MEIE and MIE on, then `body` forever (a counting loop, or wfi); the
/// handler reads minstret, mepc and mcause into s2, s4, s5 and powers the machine off. Returns the ELF and the
/// number of instructions before the loop.
fn program(sleep: bool) -> (Vec<u8>, u64) {
    // auipc t0, 0; addi t0, t0, handler (patched); csrw mtvec, t0; t0 = MEIE; csrs mie, t0; csrsi mstatus, MIE.
    let mut p = vec![0x0000_0297, 0, csrrw(0, 0x305, 5)];
    p.extend(li32(5, 1 << 11));
    p.push(csrrs(0, 0x304, 5));
    p.push(i(0x300, 8, 6, 0, 0x73));
    let prologue = p.len() as u64;
    if sleep {
        p.push(WFI);
        p.push(0xffdf_f06f); // j -4
    } else {
        p.push(addi(11, 11, 1));
        p.push(0xffdf_f06f); // j -4
    }
    let handler = p.len();
    p[1] = addi(5, 5, 4 * handler as i32);
    p.push(csrrs(18, 0xb02, 0)); // s2 = minstret
    p.push(csrrs(20, 0x341, 0)); // s4 = mepc
    p.push(csrrs(21, 0x342, 0)); // s5 = mcause
    p.extend(li32(6, 0x10_0000));
    p.extend(li32(7, 0x5555));
    p.push(0x0073_2023); // sw t2, 0(t1)
    let bytes: Vec<u8> = p.iter().flat_map(|w| w.to_le_bytes()).collect();
    (kvsim_isa::elf::tiny_elf(0x8000_0000, &bytes), prologue)
}

fn reg(m: &mut Machine, off: u64, val: u64) {
    use kvsim_isa::mmio::Mmio;
    use kvsim_isa::trap::Access;
    let r = m.platform().store(map::VIRTIO0 + off, 4, val, Access::Store);
    assert!(r.is_ok() || off == 0x050, "register {off:#x}: {r:?}");
}

fn write(m: &mut Machine, addr: u64, bytes: &[u8]) {
    m.mem.write_bytes(0, addr, bytes).unwrap();
}

fn desc(addr: u64, len: u32, flags: u16, next: u16) -> Vec<u8> {
    let mut d = addr.to_le_bytes().to_vec();
    d.extend_from_slice(&len.to_le_bytes());
    d.extend_from_slice(&flags.to_le_bytes());
    d.extend_from_slice(&next.to_le_bytes());
    d
}

/// Bring the device up as a driver does (features, queues, DRIVER_OK), with `buffers` receive buffers of 2 KiB
/// posted and notified, and route its interrupt to hart 0's M context.
fn driver_up(m: &mut Machine, buffers: u16, avail_flags: u16) {
    reg(m, 0x070, (S_ACKNOWLEDGE | S_DRIVER) as u64);
    reg(m, 0x024, 1);
    reg(m, 0x020, 1); // VERSION_1
    reg(m, 0x024, 0);
    reg(m, 0x020, F_MAC);
    reg(m, 0x070, (S_ACKNOWLEDGE | S_DRIVER | S_FEATURES_OK) as u64);
    for (q, (d, a, u)) in [(DESC, AVAIL, USED), (TX_DESC, TX_AVAIL, TX_USED)].into_iter().enumerate() {
        reg(m, 0x030, q as u64);
        reg(m, 0x038, 8);
        for (off, v) in [(0x080, d), (0x090, a), (0x0a0, u)] {
            reg(m, off, v & 0xffff_ffff);
            reg(m, off + 4, v >> 32);
        }
        reg(m, 0x044, 1);
    }
    reg(m, 0x070, (S_ACKNOWLEDGE | S_DRIVER | S_FEATURES_OK | S_DRIVER_OK) as u64);
    for b in 0..buffers {
        write(m, DESC + 16 * b as u64, &desc(BUF + 0x800 * b as u64, 0x800, 2, 0));
        write(m, AVAIL + 4 + 2 * b as u64, &b.to_le_bytes());
    }
    write(m, AVAIL, &avail_flags.to_le_bytes());
    write(m, AVAIL + 2, &buffers.to_le_bytes());
    reg(m, 0x050, 0);
    m.serve_net(0).unwrap();
    let plat = m.platform();
    plat.plic.priority[map::VIRTIO0_IRQ as usize] = 1;
    plat.plic.enable[0] = 1 << map::VIRTIO0_IRQ;
    assert!(plat.net.as_ref().unwrap().rx_posted());
}

fn frame(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 + 3) as u8).collect()
}

#[test]
fn a_frame_is_written_into_the_receive_ring_at_its_tick_and_its_interrupt_taken_at_the_next_instruction_boundary() {
    // 1 GHz: one instruction a nanosecond. The frame's last bit arrives 500 ps into instruction 5001, so the device
    // writes it then and the interrupt is taken after instruction 5001, whatever the quantum.
    let at = 5_000_500;
    for quantum in [10_000, 7, 1_000_000] {
        let (elf, _) = program(false);
        let cfg = FsConfig { quantum, ..FsConfig::default() };
        let mut m = Machine::new(cfg, Boot::BareMachine { elf: &elf }).unwrap();
        driver_up(&mut m, 2, 0);
        let f = frame(98);
        m.net_in.push_back((at, f.clone()));
        assert_eq!(m.run(100_000), Ok(End::PowerOff { code: 0 }));
        assert_eq!(m.last_rx_ps, Some(5_001_000), "the used-ring write at the first instruction boundary after it");
        let x = &m.harts[0].x;
        assert_eq!(x[21], cause::INTERRUPT | irq::MEI as u64, "mcause: the PLIC's external interrupt");
        assert_eq!(x[18], 5001, "5001 instructions (to 5.001 us) retired before the handler's first");
        // The used ring: index 1, buffer 0 with the header and the frame; the buffer holds both.
        let used = m.mem.read_bytes(USED, 12).unwrap();
        assert_eq!(u16::from_le_bytes([used[2], used[3]]), 1);
        assert_eq!(u32::from_le_bytes(used[4..8].try_into().unwrap()), 0, "descriptor 0");
        assert_eq!(u32::from_le_bytes(used[8..12].try_into().unwrap()), (NET_HDR_LEN + 98) as u32);
        let buf = m.mem.read_bytes(BUF, (NET_HDR_LEN + 98) as u64).unwrap();
        assert_eq!(&buf[..NET_HDR_LEN], &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0], "no offloads, num_buffers 1");
        assert_eq!(&buf[NET_HDR_LEN..], &f[..]);
        let net = m.platform().net.clone().unwrap();
        assert_eq!((net.counts.rx_frames, net.counts.interrupts, net.interrupt_status), (1, 1, 1));
    }
}

#[test]
fn in_detailed_mode_a_frame_is_written_at_the_instruction_at_which_the_cores_time_reaches_its_arrival() {
    // The core's prices (10 ps a plain instruction, 1,000 ps a CSR access) put the frame's arrival, 1,000,005 ps,
    // inside the loop's instruction that ends at 1,000,010 ps: the device writes the frame at that boundary and the
    // interrupt is taken there, whatever the quantum (before, at the end of the slice holding it).
    let at = 1_000_005;
    for quantum in [10_000, 7, 1_000_000] {
        let (elf, _) = program(false);
        let cfg = FsConfig { quantum, ..FsConfig::default() };
        let mut m = Machine::new(cfg, Boot::BareMachine { elf: &elf }).unwrap();
        driver_up(&mut m, 2, 0);
        m.net_in.push_back((at, frame(98)));
        m.harts[0].timed_ps = Some(0);
        let mut hook = super::tests::PriceHook { now: vec![0], ..Default::default() };
        assert_eq!(m.run_hooked(1_000_000, &mut hook), Ok(End::PowerOff { code: 0 }));
        let reached = hook.times.iter().position(|&t| t >= at).unwrap() as u64 + 1;
        let boundary = hook.times[reached as usize - 1];
        assert_eq!(boundary, 1_000_010, "the instruction holding the arrival ends 5 ps after it");
        assert_eq!(m.last_rx_ps, Some(boundary), "quantum {quantum}: the used-ring write at that boundary");
        let x = &m.harts[0].x;
        assert_eq!(x[21], cause::INTERRUPT | irq::MEI as u64, "mcause: the PLIC's external interrupt");
        assert_eq!(x[18], reached, "quantum {quantum}: minstret read first in the handler");
    }
}

#[test]
fn a_frame_wakes_a_hart_asleep_in_wfi_at_its_tick() {
    let (elf, prologue) = program(true);
    let mut m = Machine::new(FsConfig::default(), Boot::BareMachine { elf: &elf }).unwrap();
    driver_up(&mut m, 1, 0);
    let at = 7_000_000;
    m.net_in.push_back((at, frame(60)));
    assert_eq!(m.run(100_000), Ok(End::PowerOff { code: 0 }));
    assert_eq!(m.last_rx_ps, Some(at));
    // The prologue and the wfi ran before the sleep; the sleep lasted to the frame's tick exactly.
    let h = &m.harts[0];
    assert_eq!(h.idle_ps, at - (prologue + 1) * 1000, "asleep from the wfi's end to the tick");
    assert_eq!(h.x[18], prologue + 1, "minstret: the prologue and the wfi");
}

#[test]
fn a_frame_waits_for_a_receive_buffer_and_the_backlog_drops_beyond_its_bound() {
    let (elf, _) = program(false);
    let mut m = Machine::new(FsConfig::default(), Boot::BareMachine { elf: &elf }).unwrap();
    driver_up(&mut m, 0, 0);
    for k in 0..RX_BACKLOG_FRAMES as u64 + 3 {
        m.net_in.push_back((1000 + k, frame(64)));
    }
    m.deliver_frames(1_000_000).unwrap();
    let net = m.platform().net.clone().unwrap();
    assert_eq!((net.backlog.len(), net.counts.rx_dropped, net.counts.rx_frames), (RX_BACKLOG_FRAMES, 3, 0));
    // The driver posts one buffer and notifies: the oldest waiting frame goes in at the notify's time.
    write(&mut m, DESC, &desc(BUF, 0x800, 2, 0));
    write(&mut m, AVAIL + 4, &0u16.to_le_bytes());
    write(&mut m, AVAIL + 2, &1u16.to_le_bytes());
    reg(&mut m, 0x050, 0);
    m.serve_net(0).unwrap();
    let net = m.platform().net.clone().unwrap();
    assert_eq!((net.backlog.len(), net.counts.rx_frames), (RX_BACKLOG_FRAMES - 1, 1));
}

#[test]
fn transmitted_chains_leave_without_their_header_and_no_interrupt_flag_suppresses_the_interrupt() {
    let (elf, _) = program(false);
    let mut m = Machine::new(FsConfig::default(), Boot::BareMachine { elf: &elf }).unwrap();
    driver_up(&mut m, 1, 0);
    // Two frames: one as header + data in two chained descriptors, one in a single buffer after its header.
    let (a, b) = (frame(80), frame(200));
    let mut hdr_b = vec![0u8; NET_HDR_LEN];
    hdr_b.extend_from_slice(&b);
    write(&mut m, 0x8120_0000, &[0u8; NET_HDR_LEN]);
    write(&mut m, 0x8120_1000, &a);
    write(&mut m, 0x8120_2000, &hdr_b);
    write(&mut m, TX_DESC, &desc(0x8120_0000, NET_HDR_LEN as u32, 1, 1));
    write(&mut m, TX_DESC + 16, &desc(0x8120_1000, 80, 0, 0));
    write(&mut m, TX_DESC + 32, &desc(0x8120_2000, hdr_b.len() as u32, 0, 0));
    write(&mut m, TX_AVAIL + 4, &[0, 0, 2, 0]);
    write(&mut m, TX_AVAIL, &1u16.to_le_bytes()); // VIRTQ_AVAIL_F_NO_INTERRUPT
    write(&mut m, TX_AVAIL + 2, &2u16.to_le_bytes());
    reg(&mut m, 0x050, 1);
    m.serve_net(0).unwrap();
    let sent: Vec<Vec<u8>> = m.net_out.iter().map(|f| f.1.clone()).collect();
    assert_eq!(sent, vec![a, b]);
    let used = m.mem.read_bytes(TX_USED, 20).unwrap();
    assert_eq!(u16::from_le_bytes([used[2], used[3]]), 2);
    assert_eq!((used[4], used[12]), (0, 2), "the chains' heads, in order");
    let net = m.platform().net.clone().unwrap();
    assert_eq!((net.counts.tx_frames, net.interrupt_status, net.counts.interrupts), (2, 0, 0));
}

#[test]
fn a_driver_that_breaks_the_rings_rules_stops_the_run_with_the_reason() {
    let (elf, _) = program(false);
    let mut m = Machine::new(FsConfig::default(), Boot::BareMachine { elf: &elf }).unwrap();
    driver_up(&mut m, 0, 0);
    write(&mut m, AVAIL + 4, &9u16.to_le_bytes()); // descriptor 9 of a ring of 8
    write(&mut m, AVAIL + 2, &1u16.to_le_bytes());
    m.net_in.push_back((10, frame(64)));
    let e = m.run(100_000).unwrap_err();
    assert!(e.contains("queue 0's available ring names descriptor 9 of 8"), "{e}");
}

#[test]
fn features_ok_stays_clear_without_version_1_and_a_status_of_zero_resets_the_queues() {
    let mut n = VirtioNet::new(SERVER_MAC);
    assert_eq!(n.load(0, 4), Some(0x7472_6976));
    assert_eq!((n.load(4, 4), n.load(8, 4)), (Some(2), Some(1)), "version 2, a network device");
    n.store(0x014, 4, 1);
    assert_eq!(n.load(0x010, 4), Some(1), "VERSION_1 is bit 32");
    assert_eq!(n.load(0x100, 4), Some(0x0000_0002), "the MAC's first bytes, little-endian");
    assert_eq!(n.load(0x105, 1), Some(2));
    n.store(0x020, 4, F_MAC);
    n.store(0x070, 4, (S_ACKNOWLEDGE | S_DRIVER | S_FEATURES_OK) as u64);
    assert_eq!(n.status & S_FEATURES_OK, 0, "a legacy driver is refused");
    n.store(0x044, 4, 1);
    assert!(n.queues[0].ready);
    n.store(0x070, 4, 0);
    assert!(!n.queues[0].ready && n.status == 0);
    assert_eq!(n.store(0x050, 4, 1), Some(true), "a notify is reported to the machine");
}
