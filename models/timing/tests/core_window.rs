//! The core's window beyond the ROB, exactly: the unified scheduler (an entry held from dispatch until the cycle
//! the instruction issues) and the integer rename registers (one held by each integer-writing instruction from
//! dispatch until it commits). The core alone between mock neighbours: a memory answering every access a fixed
//! time after it is asked, so each cycle below follows from the configuration.

use kvsim_params::Core as CoreParams;
use kvsim_timing::core::{Core, InstTiming, L1Latencies};
use kvsim_timing::inst::InstInfo;
use kvsim_timing::synth::*;
use kvsim_timing::FixedLatency;

const MEM: u64 = 40_000; // every access answered 40 ns (100 cycles at 2.5 GHz) after it is asked
const L1: L1Latencies = L1Latencies { l1i: 4, l1d: 4 };

/// Time `prog` on a fresh core with `p`; the timings in program order and the core.
fn timed(p: &CoreParams, prog: &[InstInfo]) -> (Vec<InstTiming>, Core) {
    let (mut core, mut mem) = (Core::new(0, p, L1, 64), FixedLatency::new(MEM));
    let t = prog.iter().map(|i| core.step(i, &mut mem)).collect();
    (t, core)
}

/// A load that misses (x5), two instructions waiting for it, and one that waits for nothing: all four fetched
/// together (one line, one fetch group).
fn waiting_on_a_miss() -> [InstInfo; 4] {
    [load(0x1000, 5, 0, 0x9_0000), alu(0x1004, 6, 5, 0), alu(0x1008, 7, 5, 0), alu(0x100c, 8, 0, 0)]
}

#[test]
fn a_full_scheduler_holds_dispatch_until_an_entry_issues() {
    let prog = waiting_on_a_miss();
    // Unbounded (the default): the independent add dispatches with the rest and issues the next cycle.
    let (t, core) = timed(&core_params(), &prog);
    assert_eq!(t[3].dispatch, t[0].dispatch);
    assert_eq!(t[3].issue, t[3].dispatch + 1);
    assert_eq!(core.stats.scheduler_stall_cycles, 0);
    // Two entries: the load and the first add take them; the second add waits for the load to issue (its entry is
    // free in that cycle); the independent add then waits for the first add, which issues when the load's data
    // arrives, and issues one cycle after it dispatches.
    let p = CoreParams { scheduler_entries: 2, ..core_params() };
    let (t, core) = timed(&p, &prog);
    assert_eq!(t[1].dispatch, t[0].dispatch);
    assert_eq!(t[2].dispatch, t[0].issue);
    assert_eq!(t[1].issue, t[0].complete);
    assert_eq!(t[3].dispatch, t[1].issue);
    assert_eq!(t[3].issue, t[3].dispatch + 1);
    // The cycles dispatch lost: (load's issue - first dispatch) + (first add's issue - load's issue).
    assert_eq!(core.stats.scheduler_stall_cycles, t[1].issue - t[0].dispatch);
}

#[test]
fn no_ops_take_no_scheduler_entry() {
    // One entry, held by the add waiting for the miss; a no-op after it dispatches at once (it never issues to a
    // unit), the next add waits for the entry.
    let mut nop = alu(0x1008, 0, 0, 0);
    nop.class = kvsim_timing::inst::InstClass::Nop;
    let prog = [load(0x1000, 5, 0, 0x9_0000), alu(0x1004, 6, 5, 0), nop, alu(0x100c, 8, 0, 0)];
    let p = CoreParams { scheduler_entries: 1, ..core_params() };
    let (t, _) = timed(&p, &prog);
    assert_eq!(t[1].dispatch, t[0].issue);
    assert_eq!(t[2].dispatch, t[1].dispatch);
    assert_eq!(t[3].dispatch, t[1].issue);
}

#[test]
fn integer_writers_wait_for_a_rename_register_freed_at_commit() {
    // Two rename registers: the load (x5) and the first add (x6) hold them until they commit, and the add commits
    // after the load (in order); the second add (x7) dispatches when the load commits.
    let prog = [load(0x1000, 5, 0, 0x9_0000), alu(0x1004, 6, 0, 0), alu(0x1008, 7, 0, 0), alu(0x100c, 8, 0, 0)];
    let (t, core) = timed(&core_params(), &prog);
    assert_eq!(t[2].dispatch, t[0].dispatch);
    assert_eq!(core.stats.rename_stall_cycles, 0);
    let p = CoreParams { int_rename_registers: 2, ..core_params() };
    let (t, core) = timed(&p, &prog);
    assert_eq!(t[1].dispatch, t[0].dispatch);
    assert_eq!(t[2].dispatch, t[0].commit);
    // The third add takes the register the first add frees at its commit, in the same cycle.
    assert_eq!(t[1].commit, t[0].commit);
    assert_eq!(t[3].dispatch, t[1].commit);
    assert_eq!(core.stats.rename_stall_cycles, t[0].commit - t[0].dispatch);
    // Instructions that write no integer register (x0, a store) take none: with one register, held by the load,
    // they dispatch at once.
    let prog = [load(0x1000, 5, 0, 0x9_0000), alu(0x1004, 0, 0, 0), store(0x1008, 6, 0, 0xa_0000)];
    let p = CoreParams { int_rename_registers: 1, ..core_params() };
    let (t, _) = timed(&p, &prog);
    assert_eq!((t[1].dispatch, t[2].dispatch), (t[0].dispatch, t[0].dispatch));
}

#[test]
fn a_load_a_4k_multiple_from_a_buffered_store_waits_the_alias_penalty() {
    let p = CoreParams { alias_4k_penalty: 7, ..core_params() };
    let (a, b) = (0x9_0010u64, 0x9_1010u64); // one page apart: equal in address bits 11:0
    let clock = *Core::new(0, &p, L1, 64).clock();
    let memory_at = |issue: u64| clock.cycle_at_or_after(clock.tick(issue) + MEM);
    // A store to `a` still in the store buffer (its line is being fetched for ownership); a load of `b`: the partial
    // compare matches, the full one does not, so the load is reissued 7 cycles later and then reads memory.
    let (t, core) = timed(&p, &[store(0x1000, 5, 0, a), load(0x1004, 6, 0, b)]);
    assert_eq!(t[1].complete, memory_at(t[1].issue + 7));
    assert_eq!((core.stats.aliased_loads, core.stats.forwarded_loads), (1, 0));
    // Without the partial compare (0, the default) the same load reads memory at once.
    let (t, core) = timed(&core_params(), &[store(0x1000, 5, 0, a), load(0x1004, 6, 0, b)]);
    assert_eq!(t[1].complete, memory_at(t[1].issue));
    assert_eq!(core.stats.aliased_loads, 0);
    // Another word of the page: no match in bits 11:0, no delay.
    let (t, core) = timed(&p, &[store(0x1000, 5, 0, a + 8), load(0x1004, 6, 0, b)]);
    assert_eq!(t[1].complete, memory_at(t[1].issue));
    assert_eq!(core.stats.aliased_loads, 0);
}

#[test]
fn the_youngest_matching_store_decides_between_alias_and_forwarding() {
    let p = CoreParams { alias_4k_penalty: 7, ..core_params() };
    let (a, b) = (0x9_0010u64, 0x9_1010u64);
    // The store to `b` itself is younger than the aliasing one: it forwards, no penalty (a true dependence).
    let (t, core) = timed(&p, &[store(0x1000, 5, 0, a), store(0x1004, 5, 0, b), load(0x1008, 6, 0, b)]);
    assert_eq!(t[2].complete, t[2].issue.max(t[1].complete) + 4);
    assert_eq!((core.stats.aliased_loads, core.stats.forwarded_loads), (0, 1));
    // The aliasing store is the younger: the load waits the penalty, then forwards from the older store to `b`.
    let (t, core) = timed(&p, &[store(0x1000, 5, 0, b), store(0x1004, 5, 0, a), load(0x1008, 6, 0, b)]);
    assert_eq!(t[2].complete, (t[2].issue + 7).max(t[0].complete) + 4);
    assert_eq!((core.stats.aliased_loads, core.stats.forwarded_loads), (1, 1));
}

#[test]
fn a_fence_counts_its_wait_for_older_commits_and_then_for_the_store_buffer() {
    use kvsim_timing::inst::InstClass;
    let fence = |pc| op(pc, InstClass::Fence, 0, 0, 0);
    // After a load that misses: the fence issues when the load commits, and waited that long past its dispatch.
    let (t, core) = timed(&core_params(), &[load(0x1000, 5, 0, 0x9_0000), fence(0x1004)]);
    assert_eq!(t[1].issue, t[0].commit);
    assert!(t[0].commit > t[1].dispatch + 1 + 50);
    assert_eq!(core.stats.serialize_commit_wait_cycles, t[0].commit - (t[1].dispatch + 1));
    assert_eq!(core.stats.serialize_drain_wait_cycles, 0);
    // After a store whose line takes 100 cycles to own: the store commits at once, leaves the store buffer when its
    // line is owned, and the fence waits for that past the store's commit.
    let (t, core) = timed(&core_params(), &[store(0x1000, 0, 0, 0x9_0000), fence(0x1004)]);
    let committed = (t[1].dispatch + 1).max(t[0].commit);
    assert!(t[1].issue > committed + 50);
    assert_eq!(core.stats.serialize_commit_wait_cycles, committed - (t[1].dispatch + 1));
    assert_eq!(core.stats.serialize_drain_wait_cycles, t[1].issue - committed);
}

#[test]
fn a_store_waiting_for_a_store_queue_entry_counts_the_dispatch_cycles_it_lost() {
    // One store-queue entry: the second store dispatches when the first leaves the store buffer (its line owned
    // 100 cycles after it asked), not with it in the first fetch group.
    let prog = [store(0x1000, 0, 0, 0x9_0000), store(0x1004, 0, 0, 0xa_0000)];
    let (t, core) = timed(&core_params(), &prog);
    assert_eq!(t[1].dispatch, t[0].dispatch);
    assert_eq!(core.stats.store_queue_stall_cycles, 0);
    let p = CoreParams { sq_entries: 1, ..core_params() };
    let (t, core) = timed(&p, &prog);
    assert!(t[1].dispatch > t[0].dispatch + 50);
    assert_eq!(core.stats.store_queue_stall_cycles, t[1].dispatch - t[0].dispatch);
}

#[test]
fn a_tso_core_runs_the_fences_tso_implies_as_alu_operations() {
    use kvsim_timing::inst::InstClass;
    // A store whose line takes 100 cycles to own, then a fence: `fence w,o` (TSO keeps it) and `fence rw,rw`.
    let fence = |tso_implied| InstInfo { tso_implied, ..op(0x1004, InstClass::Fence, 0, 0, 0) };
    let prog = |f| [store(0x1000, 0, 0, 0x9_0000), f, alu(0x1008, 6, 0, 0)];
    let tso = CoreParams { tso_fences: true, ..core_params() };
    // Not TSO: both fences wait for the store buffer, and the add after them dispatches when they commit.
    for implied in [false, true] {
        let (t, core) = timed(&core_params(), &prog(fence(implied)));
        assert!(t[1].issue > t[0].commit + 50);
        assert!(t[2].dispatch >= t[1].commit);
        assert!(core.stats.serialize_drain_wait_cycles > 50);
    }
    // TSO: the implied fence issues the cycle after its dispatch, the add dispatches with it, nothing waits.
    let (t, core) = timed(&tso, &prog(fence(true)));
    assert_eq!(t[1].issue, t[1].dispatch + 1);
    assert_eq!(t[2].dispatch, t[1].dispatch);
    assert_eq!(core.stats.serialize_drain_wait_cycles + core.stats.serialize_commit_wait_cycles, 0);
    assert_eq!(core.stats.fences(), 1);
    // TSO, a fence that orders the store before later loads: it still waits for the store buffer.
    let (t, core) = timed(&tso, &prog(fence(false)));
    assert!(t[1].issue > t[0].commit + 50);
    assert_eq!(core.stats.serialize_drain_wait_cycles, t[1].issue - (t[1].dispatch + 1).max(t[0].commit));
}
