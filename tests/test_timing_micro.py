"""Timing microbenchmarks on real binaries (workloads/micro/), run through the engine in detailed mode: each test
asserts what the configuration implies (load-to-use latency per level, DRAM bandwidth, IPC of add chains, the ROB
and MSHR limits on memory-level parallelism, software prefetch). Every figure is read from the STATS_DUMP snapshot
the program takes right after ROI_END, so only the measured region counts.

Run with `-s` to see the figures."""

from __future__ import annotations

import pytest

from models.cache import Cache
from models.sim import simulate

from conftest import BUILD, CONTROL_BYTES, DATA_BYTES, make_system, noc_message_cycles

MICRO = BUILD / "micro"
S = "system.socket0."


def detailed(prog: str, args: list[str], *, harts: int = 1, warm: bool = False, **overrides):
    """A detailed-mode System running workloads/micro/`prog`, timed from its ROI_BEGIN. The test platform: the
    target's core and L1s (models defaults), a 1 MiB 16-way LLC (small, so working sets beyond it stay cheap to
    build) and one DDR4-2400 channel. `overrides` are dotted paths: core__rob_entries=128."""
    system = make_system(MICRO / prog, args, harts=harts, mode="detailed", detailed_start="roi",
                         warm_caches=warm, quantum=100, mem_limit="1GiB")
    system.caches.llc = Cache(size="1MiB", assoc=16, hit_latency=20, mshrs=64, inclusive=True)
    for path, value in overrides.items():
        *parents, leaf = path.split("__")
        target = system
        for p in parents:
            target = getattr(target, p)
        setattr(target, leaf, value)
    return system


def measure(system) -> dict[str, float]:
    """Run and return the measured region's stats (the last STATS_DUMP snapshot)."""
    result = simulate(system)
    assert result.exit_code == 0, (result.stop_reason, result.stdout, result.stderr)
    assert result.stat_dumps, "the program took no STATS_DUMP snapshot"
    return result.stat_dumps[-1][1]


def cycles_per_ns(system) -> float:
    return system.core.clock / 1e9


def dram_latency_cycles(system) -> float:
    """Load-to-use latency of a random access that misses every cache: L1D and LLC lookups, the controller, and a
    row conflict (another row is open in the bank: PRE, ACT, RD, burst), in core cycles."""
    c, m = system.caches, system.memory.resolved_timings()
    dram_ns = system.memory.ctrl_latency / 1e3 + (m["t_rp"] + m["t_rcd"] + m["t_cl"] + m["burst_length"] // 2) \
        * m["t_ck"] / 1e3
    return c.l1d.hit_latency + c.llc.hit_latency + dram_ns * cycles_per_ns(system) + memory_trip_cycles(system)


def llc_trip_cycles(system) -> int:
    """The on-chip network's part of an LLC hit on the one-core test platform: the request to the core's own
    cluster's slice and the line back, each through the cluster crossbar (the network runs at the core clock)."""
    assert system.noc.clock == system.core.clock
    return noc_message_cycles(system.noc, 0, CONTROL_BYTES) + noc_message_cycles(system.noc, 0, DATA_BYTES)


def memory_trip_cycles(system) -> int:
    """The network's part of a miss to DRAM: the LLC's trip plus the slice's request to the memory controller and
    its data back (the one controller shares the one cluster's router)."""
    return llc_trip_cycles(system) + noc_message_cycles(system.noc, 0, CONTROL_BYTES) \
        + noc_message_cycles(system.noc, 0, DATA_BYTES)


@pytest.mark.parametrize("level, working_set, loads", [("L1D", "16K", "20000"), ("LLC", "512K", "20000"),
                                                       ("DRAM", "16M", "4000")])
def test_pointer_chase_gives_the_configured_latency(engine, level, working_set, loads):
    system = detailed("chase", [working_set, loads], warm=level != "DRAM")
    stats = measure(system)
    c = system.caches
    expected = {"L1D": c.l1d.hit_latency, "LLC": c.l1d.hit_latency + c.llc.hit_latency + llc_trip_cycles(system),
                "DRAM": dram_latency_cycles(system)}[level]
    measured = stats[S + "core0.cycles"] / stats[S + "core0.loads"]
    print(f"\npointer chase over {working_set} ({level}): {measured:.2f} cycles per load, configured {expected:.2f}")
    if level == "DRAM":
        # Refresh (tRFC every tREFI) and the odd row hit move it a little; nothing else may.
        assert expected * 0.98 <= measured <= expected * 1.06
        assert stats[S + "llc.miss_rate"] > 0.99
    else:
        assert measured == pytest.approx(expected, rel=0.01)
        hit_level = S + ("core0.l1d.miss_rate" if level == "L1D" else "llc.miss_rate")
        assert stats[hit_level] < 0.01


def stream_bw(system) -> tuple[float, dict]:
    stats = measure(system)
    return stats[S + "mem.channel0.read_bw"], stats


def test_streaming_read_approaches_the_channel_peak(engine):
    peak = detailed("stream", []).memory.peak_channel_bandwidth()
    assert peak == pytest.approx(19.2e9, rel=0.001)
    # Enough lines in flight: one core with a large window and 64 L1D MSHRs.
    big = detailed("stream", ["16M"], core__rob_entries=256, core__lq_entries=128, caches__l1d__mshrs=64)
    bw_big, s_big = stream_bw(big)
    # The target's core on four harts (10 L1D MSHRs each).
    four = detailed("stream", ["16M"], harts=4)
    bw_four, _ = stream_bw(four)
    # One target core alone: Little's law bounds it to mshrs lines per unloaded miss latency (row hits).
    one = detailed("stream", ["16M"])
    bw_one, s_one = stream_bw(one)
    m = one.memory.resolved_timings()
    unloaded_ns = (one.caches.l1d.hit_latency + one.caches.llc.hit_latency) / cycles_per_ns(one) \
        + one.memory.ctrl_latency / 1e3 + (m["t_cl"] + m["burst_length"] // 2) * m["t_ck"] / 1e3
    little = one.caches.l1d.mshrs * 64 / (unloaded_ns * 1e-9)
    print(f"\nstream, 1 core with 64 MSHRs: {bw_big / 1e9:.2f} GB/s = {100 * bw_big / peak:.1f}% of "
          f"{peak / 1e9:.1f} GB/s; 4 target cores: {bw_four / 1e9:.2f} GB/s = {100 * bw_four / peak:.1f}%; "
          f"1 target core: {bw_one / 1e9:.2f} GB/s (Little's-law bound {little / 1e9:.2f} GB/s)")
    # Refresh alone costs tRFC/tREFI = 4.5%.
    assert 0.92 < bw_big / peak <= 1.0
    assert s_big[S + "mem.channel0.row_hit_rate"] > 0.95
    assert 0.85 < bw_four / peak <= 1.0
    assert 0.85 * little < bw_one <= 1.01 * little
    assert s_one[S + "core0.l1d.mshr_occupancy_avg"] <= one.caches.l1d.mshrs


@pytest.mark.parametrize("issue_width", [3, 2])
def test_add_chains_run_one_per_cycle_or_at_the_issue_width(engine, issue_width):
    overrides = dict(core__issue_width=issue_width, core__fetch_width=issue_width, core__commit_width=issue_width)
    dep = measure(detailed("adds", ["dep", "2000"], warm=True, **overrides))[S + "core0.ipc"]
    indep = measure(detailed("adds", ["indep", "2000"], warm=True, **overrides))[S + "core0.ipc"]
    print(f"\nissue width {issue_width}: dependent adds IPC {dep:.3f}, independent adds IPC {indep:.3f}")
    # 64 adds + 2 loop instructions per iteration; the loop overhead overlaps with the dependent chain.
    assert 1.0 <= dep <= 66 / 64 + 0.01
    assert issue_width * 0.97 <= indep <= issue_width


def test_ipc_rises_with_the_rob_then_levels_off(engine):
    ipcs, occupancy = {}, {}
    for rob in (8, 16, 32, 64, 128, 256):
        stats = measure(detailed("robloop", ["16M", "4000"], core__rob_entries=rob,
                                 core__lq_entries=max(32, rob // 2)))
        ipcs[rob] = stats[S + "core0.ipc"]
        occupancy[rob] = stats[S + "core0.l1d.mshr_occupancy_avg"]
    print("\nROB sweep (memory-latency-bound loop): " + ", ".join(f"ROB {r}: IPC {i:.3f} (MSHRs busy "
                                                               f"{occupancy[r]:.1f})" for r, i in ipcs.items()))
    robs = sorted(ipcs)
    assert all(ipcs[b] >= ipcs[a] * 0.999 for a, b in zip(robs, robs[1:])), ipcs
    # While the window is the limit, doubling it nearly doubles the misses in flight ...
    for a, b in ((8, 16), (16, 32), (32, 64)):
        assert ipcs[b] > 1.7 * ipcs[a], ipcs
    # ... until the 10 L1D MSHRs are: then it levels off.
    mshrs = detailed("robloop", []).caches.l1d.mshrs
    assert ipcs[256] < 1.02 * ipcs[128]
    assert mshrs * 0.95 <= occupancy[256] <= mshrs


def test_memory_level_parallelism_is_bounded_by_the_mshrs(engine):
    mshrs = 4
    per_link, occupancy = {}, {}
    for k in (1, 2, 4, 8, 16):
        stats = measure(detailed("mlp", [str(k), str(max(250, 2000 // k)), "16M"], core__rob_entries=256,
                                 core__lq_entries=128, caches__l1d__mshrs=mshrs))
        per_link[k] = stats[S + "core0.cycles"] / stats[S + "core0.l1d.misses"]
        occupancy[k] = stats[S + "core0.l1d.mshr_occupancy_avg"]
    mlp = {k: per_link[1] / per_link[k] for k in per_link}
    print("\nMLP with 4 L1D MSHRs: " + ", ".join(f"{k} chains: {mlp[k]:.2f}x (MSHRs busy {occupancy[k]:.2f})"
                                                 for k in mlp))
    assert all(occ <= mshrs + 1e-9 for occ in occupancy.values())
    assert mlp[2] > 1.8 and mlp[4] > 3.3
    assert all(mlp[k] <= mshrs * 1.02 for k in mlp)
    assert mlp[16] < mlp[4] * 1.05


def test_software_prefetch_hides_the_latency_of_a_pointer_chase(engine):
    plain = measure(detailed("prefetch_chase", ["0", "4000", "16M"]))
    ahead = measure(detailed("prefetch_chase", ["8", "4000", "16M"]))
    system = detailed("prefetch_chase", [])
    plain_c, ahead_c = plain[S + "core0.cycles"] / 4000, ahead[S + "core0.cycles"] / 4000
    print(f"\npointer chase over 16 MB: {plain_c:.1f} cycles per link, with prefetch.r 8 links ahead "
          f"{ahead_c:.1f}")
    assert plain_c >= 0.98 * dram_latency_cycles(system)
    assert ahead[S + "core0.prefetches"] == 4000 and plain[S + "core0.prefetches"] == 0
    assert ahead[S + "core0.l1d.prefetches"] == 4000
    assert ahead_c < 0.25 * plain_c


@pytest.mark.parametrize("latency_ns", [10, 50])
def test_pointer_chase_into_stacked_dram_costs_its_closed_page_latency(engine, latency_ns):
    """MemoryController.kind = 'dram3d' puts the 3D-stacked DRAM behind the caches of a real run: a chase that
    misses every cache costs the L1D and LLC lookups, the network's trips, and the stack's closed-page latency."""
    from models.stacked import StackedDram

    system = detailed("chase", ["16M", "4000"])
    system.memory.kind = "dram3d"
    system.memory.dram3d = StackedDram(access_latency=f"{latency_ns}ns", port_map="address")
    stats = measure(system)
    c = system.caches
    expected = c.l1d.hit_latency + c.llc.hit_latency + memory_trip_cycles(system) + latency_ns * cycles_per_ns(system)
    measured = stats[S + "core0.cycles"] / stats[S + "core0.loads"]
    print(f"\npointer chase into stacked DRAM at {latency_ns} ns: {measured:.2f} cycles per load, "
          f"configured {expected:.2f}")
    assert measured == pytest.approx(expected, rel=0.01)
    assert stats[S + "llc.miss_rate"] > 0.99
