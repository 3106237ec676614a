//! The partitioned schedule's posted notices to a home (`MemSystem::post_puts_at_window_ends`, issue 24 item 5): a
//! core's clean copy of a line homed on another socket leaves its caches at once, and a core that takes a line from
//! its own socket's LLC copy (remote lines) holds it at once, but the home hears of either only at the window's end
//! (`deliver_posted`), in a fixed order (sending socket, then send time), so what the home's partition sees in a
//! window does not depend on which partition ran first. Two sockets of two cores (cores 0 and 1 on
//! socket 0, 2 and 3 on socket 1), ideal on-chip networks, the check mode on.

#[allow(dead_code)]
mod common;

use common::{CTRL_HOLD, LINK_LAT, REGION};
use kvsim_timing::mem::socket_messages::MsgKind;
use kvsim_timing::mem::LineState;
use kvsim_timing::synth::hierarchy_params;
use kvsim_timing::system::TimingSystem;
use kvsim_timing::{AccessKind, MemPort, MemReq, Tick};

fn system(posted: bool) -> TimingSystem {
    system_with(posted, false)
}

fn system_with(posted: bool, remote_lines: bool) -> TimingSystem {
    let mut h = hierarchy_params();
    h.directory.remote_lines = remote_lines;
    let mut sys = common::system(2, 2, 1, &h, 0);
    sys.mem.keep_socket_message_log();
    if posted {
        sys.mem.post_puts_at_window_ends();
    }
    sys
}

fn rd(sys: &mut TimingSystem, core: u16, addr: u64, t: Tick) -> Tick {
    sys.mem.access(&MemReq::new(addr, AccessKind::Read, core, t)) + 1_000
}

/// Whether the home's directory lists `core` as holding `addr`'s line.
fn listed(sys: &TimingSystem, core: u16, addr: u64) -> bool {
    sys.mem.dir.get(addr >> 6).is_some_and(|e| e.holders().contains(&core))
}

fn puts(sys: &TimingSystem, from: usize, to: usize) -> u64 {
    sys.mem.socket_messages().unwrap().count(from, to, MsgKind::Put)
}

/// `core` (of socket `base / REGION`) reads the 8 lines of its socket's memory that share `addr`'s L1D set (64 sets
/// of 8 ways), so its copy of `addr` leaves; returns the time after.
fn evict(sys: &mut TimingSystem, core: u16, addr: u64, base: u64, mut t: Tick) -> Tick {
    for k in 1..=8u64 {
        t = rd(sys, core, base + k * 0x1000 + (addr & 0xfff), t);
    }
    t
}

/// Cores `a` and `b` share `addr`'s line (neither owns it): `a` first, then `b`.
fn share(sys: &mut TimingSystem, a: u16, b: u16, addr: u64, t: Tick) -> Tick {
    let t = rd(sys, a, addr, t);
    let t = rd(sys, b, addr, t);
    let e = sys.mem.dir.get(addr >> 6).expect("a directory entry");
    assert!(e.owner != Some(a) && e.owner != Some(b), "a shared line: {e:?}");
    t
}

#[test]
fn a_clean_put_to_another_sockets_home_takes_effect_at_the_windows_end() {
    // Socket 1's line, shared by core 2 (its socket) and core 0 (socket 0).
    let a = REGION + 0x40;
    for posted in [false, true] {
        let mut sys = system(posted);
        let t = share(&mut sys, 2, 0, a, 1_000_000);
        let t = evict(&mut sys, 0, a, 0, t);
        assert_eq!(sys.mem.cores[0].state_of(a >> 6), LineState::Invalid, "core 0's copy left at once");
        // The global schedule's walk tells the home at once; the partitioned one at the window's end.
        assert_eq!((listed(&sys, 0, a), puts(&sys, 0, 1)), if posted { (true, 0) } else { (false, 1) });
        sys.mem.check_all();
        sys.mem.deliver_posted();
        assert_eq!((listed(&sys, 0, a), puts(&sys, 0, 1)), (false, 1));
        let log = sys.mem.socket_messages().unwrap().log();
        let put = log.iter().find(|m| m.kind == MsgKind::Put).expect("the put crossed");
        assert!(put.sent < t, "it left when the copy did");
        assert_eq!(put.arrives - put.sent, CTRL_HOLD + LINK_LAT, "booked as if sent then");
        sys.mem.check_all();
    }
}

#[test]
fn a_core_that_takes_the_line_again_before_the_windows_end_stays_listed() {
    let a = REGION + 0x40;
    let mut sys = system(true);
    let t = share(&mut sys, 2, 0, a, 1_000_000);
    let t = evict(&mut sys, 0, a, 0, t);
    // Core 0 reads the line again: the home still lists it, and serves it.
    rd(&mut sys, 0, a, t);
    assert_ne!(sys.mem.cores[0].state_of(a >> 6), LineState::Invalid);
    sys.mem.check_all();
    sys.mem.deliver_posted();
    assert!(listed(&sys, 0, a), "the late put does not drop a core that holds the line");
    assert_eq!(puts(&sys, 0, 1), 1, "the put still crossed");
    sys.mem.check_all();
}

#[test]
fn the_windows_puts_arrive_by_sending_socket_then_send_time_whatever_order_they_were_sent_in() {
    // Socket 0's line, shared by cores 1 and 2; socket 1's line, shared by cores 3 and 0.
    let (a, b) = (0x40, REGION + 0x80);
    let mut sys = system(true);
    let t = share(&mut sys, 1, 2, a, 1_000_000);
    let t = share(&mut sys, 3, 0, b, t);
    let before = sys.mem.socket_messages().unwrap().log().len();
    // Socket 1's core 2 evicts first, then socket 0's core 0, later.
    let t = evict(&mut sys, 2, a, REGION, t);
    evict(&mut sys, 0, b, 0, t);
    sys.mem.deliver_posted();
    let log = &sys.mem.socket_messages().unwrap().log()[before..];
    let order: Vec<(u16, u16)> = log.iter().filter(|m| m.kind == MsgKind::Put).map(|m| (m.from, m.to)).collect();
    assert_eq!(order, [(0, 1), (1, 0)], "socket 0's put first, though sent later");
    sys.mem.check_all();
}

#[test]
fn a_core_that_takes_a_line_from_its_sockets_copy_is_listed_at_the_home_at_the_windows_end() {
    // Socket 1's line, shared by core 2 (its socket) and core 0: core 0's read crosses and leaves a copy in socket
    // 0's LLC; core 1's read finds that copy (no core of socket 0 owns the line, so the copy answers).
    let a = REGION + 0x40;
    for posted in [false, true] {
        let mut sys = system_with(posted, true);
        let t = share(&mut sys, 2, 0, a, 1_000_000);
        let hits = |sys: &TimingSystem| sys.mem.llc.iter().map(|s| s.stats.remote_hits).sum::<u64>();
        let messages = sys.mem.socket_messages().unwrap().log().len();
        rd(&mut sys, 1, a, t);
        assert_eq!(hits(&sys), 1, "served by socket 0's copy");
        assert_eq!(sys.mem.socket_messages().unwrap().log().len(), messages, "nothing crossed");
        assert_ne!(sys.mem.cores[1].state_of(a >> 6), LineState::Invalid);
        // The global walk writes the home's sharer set at once; the partitioned one at the window's end.
        assert_eq!(listed(&sys, 1, a), !posted);
        sys.mem.check_all();
        sys.mem.deliver_posted();
        assert!(listed(&sys, 1, a));
        sys.mem.check_all();
    }
}

#[test]
fn a_home_write_in_the_same_window_still_invalidates_a_copy_taken_from_the_sockets_copy() {
    let a = REGION + 0x40;
    let mut sys = system_with(true, true);
    let t = share(&mut sys, 2, 0, a, 1_000_000);
    let t = rd(&mut sys, 1, a, t);
    assert!(!listed(&sys, 1, a));
    // Core 2, on the home's socket, writes before the window's end: the home lists core 1 first, then invalidates
    // it with the others (a copy the home did not know of would be left stale).
    sys.mem.access(&MemReq::new(a, AccessKind::Write, 2, t));
    for core in [0, 1] {
        assert_eq!(sys.mem.cores[core].state_of(a >> 6), LineState::Invalid, "core {core}'s copy");
        assert!(!listed(&sys, core as u16, a));
    }
    sys.mem.check_all();
    sys.mem.deliver_posted();
    assert!(!listed(&sys, 1, a), "nothing left to list");
    sys.mem.check_all();
}
