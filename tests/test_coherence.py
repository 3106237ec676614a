"""The coherent memory system under real guest programs: the ping-pong microbenchmark gives the configured
cache-to-cache latency, litmus programs give only RVWMO-allowed outcomes and match qemu, multi-hart atomics and
LR/SC run with the directory's check mode on (single writer or many readers, exact sharers and data versions after
every access) from 2 to 64 harts, and detailed runs are deterministic on 1, 4 and 60 cores.

Run with `-s` to see the figures."""

from __future__ import annotations

import pytest

from models.cache import Cache
from models.sim import simulate

from conftest import (
    BUILD,
    CONTROL_BYTES,
    DATA_BYTES,
    TEST_PROGRAMS,
    as_guest_run,
    make_system,
    noc_message_cycles,
    run_qemu,
)

MICRO = BUILD / "micro"
S = "system.socket0."


def small_llc(system):
    """The test platform of the timing microbenchmarks: a 1 MiB 16-way LLC (cheap to build)."""
    system.caches.llc = Cache(size="1MiB", assoc=16, hit_latency=20, mshrs=64, inclusive=True)
    return system


def pingpong(directory_latency: int, handoffs: int = 500):
    # quantum=1: the harts interleave instruction by instruction in simulated time, so a spinning hart sees the
    # other's store at the time it is made, not a scheduling quantum later.
    system = small_llc(make_system(MICRO / "pingpong", [str(handoffs // 2)], harts=2, mode="detailed",
                                   detailed_start="roi", quantum=1, mem_limit="256MiB"))
    system.caches.directory.latency = directory_latency
    result = simulate(system)
    assert result.exit_code == 0, (result.stop_reason, result.stdout)
    stats = result.stat_dumps[-1][1]
    return system, stats, stats[S + "core0.cycles"] / handoffs


def test_pingpong_gives_the_configured_coherence_latency(engine):
    system, stats, per_handoff = pingpong(10)
    c = system.caches
    # One handoff: the waiting hart's load misses and the writer, now the owner, answers (3-hop): the L1 lookup,
    # the request to the line's home, the directory's lookup, the forward to the owner, the owner's L1 lookup and
    # the data to the requester. The two cores are clusters of one on a 2 x 1 mesh and the one LLC slice (the
    # home) shares core 0's router, so whichever core asks, the three messages cross one link, the home's
    # crossbar and one link, in some order: request and forward are control messages, the reply is data.
    assert system.noc.clock == system.core.clock and c.llc_slices == 1
    network = noc_message_cycles(system.noc, 1, CONTROL_BYTES) + noc_message_cycles(system.noc, 0, CONTROL_BYTES) \
        + noc_message_cycles(system.noc, 1, DATA_BYTES)
    three_hop = c.l1d.hit_latency + c.directory.latency + c.l1d.hit_latency + network
    print(f"\nping-pong: {per_handoff:.2f} cycles per handoff; configured 3-hop latency {three_hop} cycles")
    # Plus the spin loop's exit: a branch mispredict and a few instructions.
    assert three_hop <= per_handoff <= three_hop + system.core.mispredict_penalty + 6
    # Every handoff is one forwarded read and one upgrade with one invalidation.
    assert stats[S + "directory.forwards"] == pytest.approx(500, abs=3)
    assert stats[S + "directory.upgrades"] == pytest.approx(500, abs=3)
    assert stats[S + "directory.invalidations"] == pytest.approx(500, abs=3)
    # The handoff time follows the configured latency cycle for cycle: 40 more cycles of directory lookup add 40
    # cycles to each handoff.
    _, _, slower = pingpong(50)
    print(f"ping-pong with a 50-cycle directory: {slower:.2f} cycles per handoff")
    assert slower - per_handoff == pytest.approx(40, abs=1)


@pytest.mark.parametrize("test", ["mp", "sb"])
def test_litmus_programs_give_only_allowed_outcomes_and_match_qemu(engine, test):
    reference = run_qemu(MICRO / "litmus", [test, "300"])
    assert reference.exit_code == 0, reference
    for quantum in (1, 3, 17):
        for mode in ("functional", "detailed"):
            result = simulate(make_system(MICRO / "litmus", [test, "300"], harts=2, mode=mode, quantum=quantum,
                                          mem_limit="256MiB"))
            assert as_guest_run(result) == reference, (test, quantum, mode, bytes(result.stdout))
            assert b"forbidden outcomes 0" in bytes(result.stdout)


@pytest.mark.parametrize("harts, l2, check", [(2, False, True), (8, True, True), (16, False, True),
                                              pytest.param(64, False, False, marks=pytest.mark.slow)])
def test_atomics_and_lrsc_keep_the_coherence_invariants(engine, harts, l2, check):
    """multihart: AMOs, LR/SC loops and a spinlock guarding plain loads and stores to shared lines. The check mode
    stops the run at the first breach; the output must also match qemu's. (The check scans every core's caches
    after each access: on 64 harts it would take minutes here, so 64 cores are checked under random traffic in
    `models/timing/tests/coherence.rs` and run here for their output alone.)"""
    virtual = min(harts, 64)
    system = small_llc(make_system(TEST_PROGRAMS / "multihart", [str(virtual)], harts=harts, mode="detailed",
                                   quantum=7, mem_limit="256MiB"))
    system.caches.l2_enabled = l2
    system.caches.directory.check = check
    result = simulate(system)
    assert as_guest_run(result) == run_qemu(TEST_PROGRAMS / "multihart", [str(virtual)])
    assert result.exit_code == 0
    assert result.stats[S + "directory.invalidations"] > 100, "the harts really shared lines"
    assert result.stats[S + "directory.forwards"] > 100


@pytest.mark.slow
@pytest.mark.parametrize("harts", [1, 4, 60])
def test_identical_runs_give_identical_statistics(engine, harts):
    def run():
        system = small_llc(make_system(TEST_PROGRAMS / "multihart", [str(min(harts * 2, 64))], harts=harts,
                                       mode="detailed", quantum=13, mem_limit="256MiB", seed=5))
        return simulate(system)

    a, b = run(), run()
    assert a.exit_code == b.exit_code == 0
    assert a.stats == b.stats
    assert a.sim_ticks == b.sim_ticks
    assert a.stats[f"{S}core{harts - 1}.committed_insts"] > 0
