//! A core's software prefetch through `MemPort::prefetch` (one L1 lookup in its walk, `sw_prefetch`) against what
//! it stands for: the L1 looked up first for the MSHR grant (`CacheArray::mshr_grant` at the request's time when
//! the line is absent, else the request's time), then the walk (`access_mode` in `Mode::Timed`). After the same
//! random timed traffic on two cores (few MSHRs, a slow memory: grants often wait), both give the same send ticks
//! and completion ticks and hold the same state.

use kvsim_timing::mem::{MemSystem, Mode};
use kvsim_timing::{AccessKind, FixedLatency, MemPort, MemReq, ReqClass};

#[path = "common/two_cores.rs"]
mod two_cores;
use two_cores::{hierarchy, random_access, state, system, Access, MMIO};

/// The prefetch as `MemPort::prefetch` did it before its walk answered the grant: the tick its miss is sent.
fn prefetch_two_lookups(m: &mut MemSystem<FixedLatency>, req: &MemReq) -> u64 {
    let mut sent = req.time;
    if req.class == ReqClass::Core && !(MMIO.0..MMIO.1).contains(&req.addr) {
        let l1 = &m.cores[req.requester as usize].l1d;
        if l1.find(req.addr >> 6).is_none() {
            sent = l1.mshr_grant(req.time);
        }
    }
    m.access_mode(req, Mode::Timed);
    sent
}

fn same_prefetches_after_random_timed_traffic(prefetchers: bool, seed: u64) {
    let h = hierarchy(prefetchers);
    let (mut one, mut two) = (system(&h), system(&h));
    let mut x = seed | 1;
    let mut now = [0u64; 2];
    let (mut waited, mut at_once) = (0, 0);
    for i in 0..30_000u64 {
        let Access { core, kind, addr, non_temporal, pc, step } = random_access(&mut x);
        now[core] += step;
        one.set_pc(core as u16, pc);
        two.set_pc(core as u16, pc);
        let req = MemReq { non_temporal, ..MemReq::new(addr, kind, core as u16, now[core]) };
        if kind == AccessKind::Prefetch {
            let (sent_one, sent_two) = (one.prefetch(&req), prefetch_two_lookups(&mut two, &req));
            assert_eq!(sent_one, sent_two, "prefetch {i}: {req:?}");
            if sent_one > req.time {
                waited += 1;
            } else {
                at_once += 1;
            }
        } else {
            assert_eq!(one.access(&req), two.access_mode(&req, Mode::Timed), "access {i}: {req:?}");
        }
        if i % 1000 == 999 {
            assert_eq!(state(&one), state(&two), "after access {i}");
        }
    }
    assert_eq!(state(&one), state(&two));
    // Both answers are exercised: prefetches that waited for an MSHR and prefetches sent at once.
    assert!(waited > 100 && at_once > 100, "waited, at once: {waited}, {at_once}");
}

#[test]
fn sw_prefetch_equals_lookup_then_walk() {
    for seed in [1, 7, 12345] {
        same_prefetches_after_random_timed_traffic(false, seed);
    }
}

#[test]
fn sw_prefetch_equals_lookup_then_walk_with_prefetchers() {
    for seed in [3, 99] {
        same_prefetches_after_random_timed_traffic(true, seed);
    }
}
