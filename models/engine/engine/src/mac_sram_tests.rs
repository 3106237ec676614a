//! The MAC's SRAM in a whole memory system built from a configuration (`driver::timing_system`).

use kvsim_devices::mac_sram::{window, MacSram};
use kvsim_params::{MemoryController, MemoryControllerKind, Nic, NicAttach, System};
use kvsim_timing::socket_memory::SocketPort;
use kvsim_timing::{AccessKind, MemPort, MemReq};

/// One core over 3D NAND (20 us reads), an integrated MAC with `sram` bytes of SRAM answering in `latency` ps.
fn system(sram: u64, latency: u64) -> kvsim_timing::system::TimingSystem {
    let mut system = System { harts: 1, ..System::default() };
    system.memory = MemoryController { kind: MemoryControllerKind::Flash, ..Default::default() };
    system.nic =
        Nic { enabled: true, attach: NicAttach::OnDie, sram_size: sram, sram_latency: latency, ..Default::default() };
    crate::driver::timing_system(&system).unwrap()
}

/// When a read of `addr` by core 0 at `t` completes (a cold miss everywhere).
fn read(sys: &mut kvsim_timing::system::TimingSystem, addr: u64, t: u64) -> u64 {
    sys.mem.access(&MemReq::new(addr, AccessKind::Read, 0, t))
}

#[test]
fn a_ring_line_in_the_sram_misses_to_the_sram_and_other_lines_to_the_flash() {
    let (ring, heap) = (window(0, 1 << 20).0 + 0x40, 0x10_0000);
    let t = 1_000_000;
    let (mut fast, mut slow, mut none) = (system(1 << 20, 2_000), system(1 << 20, 7_000), system(0, 2_000));
    let (at_2ns, at_7ns) = (read(&mut fast, ring, t), read(&mut slow, ring, t));
    assert_eq!(at_7ns - at_2ns, 5_000, "the same path but for the SRAM's latency");
    // Without the SRAM the same line comes from the flash: the flash's 20 us instead of the SRAM's 2 ns.
    let from_flash = read(&mut none, ring, t);
    assert_eq!(from_flash - at_2ns, 20_000_000 - 2_000);
    // A line outside the window still comes from the flash with the SRAM present (an idle flash each time:
    // the flash queues reads per controller).
    assert_eq!(read(&mut fast, heap, t), read(&mut system(0, 2_000), heap, t));
    let mut out = kvsim_timing::StatSink::new();
    fast.mem.mem.socket_stats(0, "m.", 0, &mut out);
    let get = |k: &str| out.entries.iter().find(|x| x.0 == k).map(|x| x.1);
    assert_eq!((get("m.mac_sram.reads"), get("m.mac_sram.writes")), (Some(1.0), Some(0.0)));
    let mut plain = kvsim_timing::StatSink::new();
    none.mem.mem.socket_stats(0, "m.", 0, &mut plain);
    assert!(plain.entries.iter().all(|x| !x.0.contains("mac_sram")), "no SRAM, no SRAM counters");
}

#[test]
fn the_sram_in_front_keeps_the_flash_routing_by_owner() {
    // The flash's default port map is by requester: wrapped in the SRAM it must still say so, or the LLC would
    // stop keeping the owners its evictions are routed by.
    let mut sys = system(1 << 20, 2_000);
    assert!(sys.mem.mem.routes_by_owner());
    sys.mem.mem.wrap_port(0, |m| SocketPort::other(MacSram::new(m, vec![])));
    assert!(sys.mem.mem.routes_by_owner());
}
