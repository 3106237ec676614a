//! Doorbells: a core's store to an uncached device register, exactly. With `Core.ordered_uncached_stores` (x86's UC
//! memory type) the store is sent only once it has committed and every older store has left the store buffer, and
//! its register trip holds the buffer from then; without it the trip starts when the store issues. The core alone
//! beside a mock memory: cached lines owned 40 ns (100 cycles at 2.5 GHz) after they are asked, a device range
//! whose writes are posted 100 ns (250 cycles) after they are sent.

use kvsim_params::Core as CoreParams;
use kvsim_timing::core::{Core, InstTiming, L1Latencies};
use kvsim_timing::inst::{InstClass, InstInfo};
use kvsim_timing::synth::*;
use kvsim_timing::{AccessKind, MemPort, MemReq, Tick};

const MEM: Tick = 40_000;
const TRIP: Tick = 100_000;
const TRIP_CYCLES: u64 = 250;
const DEVICE: (u64, u64) = (0xf000_0000, 0xf000_1000);
const DOORBELL: u64 = 0xf000_0018;
const L1: L1Latencies = L1Latencies { l1i: 4, l1d: 4 };

/// Cached memory at a fixed latency and a device range whose stores take `TRIP`.
struct WithDevice;

impl MemPort for WithDevice {
    fn access(&mut self, req: &MemReq) -> Tick {
        let device = req.addr >= DEVICE.0 && req.addr < DEVICE.1;
        req.time + if device && req.kind == AccessKind::Write { TRIP } else { MEM }
    }
    fn uncached(&self, addr: u64) -> bool {
        addr >= DEVICE.0 && addr < DEVICE.1
    }
}

fn timed(ordered: bool, prog: &[InstInfo]) -> (Vec<InstTiming>, Core) {
    let p = CoreParams { ordered_uncached_stores: ordered, ..core_params() };
    let mut core = Core::new(0, &p, L1, 64);
    let t = prog.iter().map(|i| core.step(i, &mut WithDevice)).collect();
    (t, core)
}

fn fence(pc: u64) -> InstInfo {
    op(pc, InstClass::Fence, 0, 0, 0)
}

#[test]
fn an_ordered_doorbell_starts_its_trip_at_its_commit_not_its_issue() {
    // A load that misses, the doorbell (independent of it: it issues at once), a fence that waits for the buffer.
    let prog = [load(0x1000, 5, 0, 0x9_0000), store(0x1004, 0, 0, DOORBELL), fence(0x1008)];
    // Not ordered: the trip runs from the store's issue, hidden behind the load's miss but for its last cycles.
    let (t, _) = timed(false, &prog);
    assert!(t[1].commit >= t[0].commit && t[1].issue + 10 < t[1].commit);
    assert_eq!(t[2].issue, t[1].commit.max(t[1].issue + TRIP_CYCLES));
    // Ordered: the trip starts when the doorbell commits (no store is older), in full.
    let (t, core) = timed(true, &prog);
    assert_eq!(t[2].issue, t[1].commit + TRIP_CYCLES);
    assert_eq!(core.stats.serialize_drain_wait_cycles, TRIP_CYCLES);
}

#[test]
fn an_ordered_doorbell_waits_for_the_older_stores_to_drain() {
    // A store whose line is owned 100 cycles after it issues, then the doorbell and a fence: the doorbell is sent
    // when the older store leaves the buffer, and the fence waits for its trip after that.
    let prog = [store(0x1000, 0, 0, 0x9_0000), store(0x1004, 0, 0, DOORBELL), fence(0x1008)];
    let (t, _) = timed(true, &prog);
    assert!(t[1].commit < t[0].issue + 100);
    assert_eq!(t[2].issue, t[0].issue + 100 + TRIP_CYCLES);
    // Not ordered, both trips overlap: the fence waits for the longer, the doorbell's from its issue.
    let (t, _) = timed(false, &prog);
    assert_eq!(t[2].issue, t[1].issue + TRIP_CYCLES);
}

#[test]
fn cached_stores_are_timed_alike_with_and_without_the_order() {
    // Two stores to cached lines and a fence: the flag changes nothing for them.
    let prog = [store(0x1000, 0, 0, 0x9_0000), store(0x1004, 0, 0, 0xa_0000), fence(0x1008)];
    let (a, _) = timed(false, &prog);
    let (b, _) = timed(true, &prog);
    assert_eq!(a, b);
}
