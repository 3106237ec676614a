"""Detailed mode end to end: how timing starts (at the start, at ROI_BEGIN, after N instructions), cache warming,
the statistics it adds and their names, the outputs (config.json resolved, the STATS_DUMP time series), progress
reports, and identical results for identical configurations."""

from __future__ import annotations

import csv
import json

import pytest

from models.params import ParamError
from models.sim import simulate

from conftest import BENCH_PROGRAMS, BUILD, make_system

MICRO = BUILD / "micro"
S = "system.socket0."


def chase(*args, **params):
    return make_system(MICRO / "chase", list(args), mode="detailed", mem_limit="256MiB", **params)


def test_functional_mode_has_no_timing_stats(engine):
    r = simulate(make_system(MICRO / "adds", ["dep", "100"]))
    assert r.exit_code == 0
    assert not any(k.startswith(S) for k in r.stats)
    assert r.sim_ticks == r.insts * 400  # one instruction per cycle at 2.5 GHz


def test_detailed_from_the_start_times_every_instruction(engine):
    r = simulate(make_system(MICRO / "adds", ["dep", "100"], mode="detailed"))
    assert r.exit_code == 0
    st = r.stats
    # ROI_BEGIN resets the stats: both sides count from it.
    assert st[S + "core0.committed_insts"] == st["system.hart0.insts"]
    assert st["system.timing.start_ticks"] == 0
    assert r.sim_ticks == st["system.hart0.sim_ticks"]
    # Names the design and the power model use.
    for name in ("core0.ipc", "core0.cycles", "core0.branch_mispredicts", "core0.rob_occupancy_avg",
                 "core0.lq_occupancy_avg", "core0.sq_occupancy_avg", "core0.l1d.mshr_occupancy_avg",
                 "core0.int_ops", "core0.loads", "core0.stores", "core0.branches", "core0.l1d.accesses",
                 "core0.l1d.misses", "core0.l1d.mpki", "core0.l1d.writebacks", "llc.accesses", "llc.mpki",
                 "mem.channel0.read_bw", "mem.channel0.write_bw", "mem.channel0.row_hit_rate"):
        assert S + name in st, name


def test_timing_can_start_after_n_instructions(engine):
    full = simulate(make_system(MICRO / "adds", ["indep", "400"], mode="detailed"))
    later = simulate(make_system(MICRO / "adds", ["indep", "400"], mode="detailed", detailed_start="insts",
                                 detailed_start_insts=20_000, quantum=100))
    assert later.insts == full.insts
    timed = later.stats[S + "core0.committed_insts"]
    assert timed == pytest.approx(full.insts - 20_000, abs=100)
    assert later.stats["system.timing.start_ticks"] == pytest.approx(20_000 * 400, abs=100 * 400)
    # The fast-forwarded part ran at one instruction per cycle, the timed part at about 3 per cycle.
    assert later.sim_ticks < full.insts * 400


def test_warming_fills_the_caches_before_the_roi(engine):
    cold = simulate(chase("16K", "4000", detailed_start="roi")).stat_dumps[-1][1]
    warm = simulate(chase("16K", "4000", detailed_start="roi", warm_caches=True)).stat_dumps[-1][1]
    cold_lat = cold[S + "core0.cycles"] / cold[S + "core0.loads"]
    warm_lat = warm[S + "core0.cycles"] / warm[S + "core0.loads"]
    assert warm[S + "core0.l1d.misses"] == 0 and warm_lat == pytest.approx(4.0, rel=0.01)
    # Cold, each of the 256 lines misses once (the set-up wrote them functionally, without the caches).
    assert cold[S + "core0.l1d.misses"] >= 256 and cold_lat > warm_lat * 1.5


def test_timing_config_is_validated_with_parameter_names():
    with pytest.raises(ParamError, match=r"System\.detailed_start = 'roi'.*System\.mode = 'detailed'"):
        make_system("x", detailed_start="roi").validate()
    with pytest.raises(ParamError, match=r"System\.detailed_start_insts > 0"):
        make_system("x", mode="detailed", detailed_start="insts").validate()
    with pytest.raises(ParamError, match=r"System\.warm_caches needs a fast-forward"):
        make_system("x", mode="detailed", warm_caches=True).validate()
    with pytest.raises(ParamError, match=r"System\.warm_start_insts = 50 must be below"):
        make_system("x", mode="detailed", detailed_start="insts", detailed_start_insts=50, warm_caches=True,
                    warm_start_insts=50).validate()
    from models.core import Core
    with pytest.raises(ParamError, match=r"System\.cores has 1 entries but System\.harts = 2"):
        make_system("x", mode="detailed", harts=2, cores=[Core()]).validate()


def test_outputs_resolve_dram_timings_and_keep_the_time_series(engine, tmp_path):
    system = make_system(MICRO / "chase", ["16K", "800"], mode="detailed", detailed_start="roi",
                         mem_limit="256MiB")
    system.memory.t_cl = 18
    r = simulate(system, tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    mem = config["memory"]
    assert (mem["t_cl"], mem["t_rcd"], mem["t_ck"], mem["t_refi"]) == (18, 17, 833, 7_800_000)
    assert all(v is not None for v in mem.values())
    rows = list(csv.DictReader((tmp_path / "stats_series.csv").open()))
    assert len(rows) == len(r.stat_dumps) == 1
    assert float(rows[0][S + "core0.loads"]) == 800
    assert int(rows[0]["sim_ticks"]) == r.stat_dumps[0][0]
    assert "stats_series.csv" not in {p.name for p in tmp_path.iterdir()} or rows


def test_progress_reports_do_not_change_results(engine):
    calls = []
    system = make_system(MICRO / "stream", ["1M"], harts=3, mode="detailed", detailed_start="roi", quantum=50,
                         mem_limit="256MiB")
    plain = simulate(system)
    reported = simulate(system, progress=lambda *a: calls.append(a), progress_every=20_000)
    assert plain.stats == reported.stats
    assert plain.stat_dumps == reported.stat_dumps
    assert len(calls) >= 3
    assert {c[2] for c in calls} >= {"fast-forward", "detailed"}
    assert all(b[0] >= a[0] for a, b in zip(calls, calls[1:]))


def test_a_raising_progress_callback_stops_the_run(engine):
    def stop(insts, ticks, phase):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        simulate(make_system(BENCH_PROGRAMS / "kvmix", ["3"]), progress=stop, progress_every=100_000)


def test_detailed_mode_runs_every_test_program_as_functional_mode_does(engine):
    """Timing never changes what a single-hart program computes: the differential test programs print the same
    and exit the same in both modes (clock_gettime then reads the timing model's time, still monotonic)."""
    from conftest import TEST_PROGRAMS, programs_in

    programs = programs_in(TEST_PROGRAMS)
    assert len(programs) > 10
    for prog in programs:
        params = {"misaligned": "allow"} if prog.name == "misaligned" else {}   # as tests/test_qemu_diff.py
        functional = simulate(make_system(prog, max_insts=2_000_000, **params))
        detailed = simulate(make_system(prog, max_insts=2_000_000, mode="detailed", **params))
        assert (detailed.stdout, detailed.stderr, detailed.exit_code, detailed.insts) == \
            (functional.stdout, functional.stderr, functional.exit_code, functional.insts), prog.name
        assert detailed.stats["system.socket0.core0.committed_insts"] > 0, prog.name


def test_max_time_stops_a_detailed_run_at_that_simulated_time(engine):
    r = simulate(make_system(MICRO / "chase", ["16M", "100000"], mode="detailed", max_time="20us",
                             mem_limit="256MiB", quantum=50))
    assert r.stop_reason == "max_time"
    # Stops at the first turn past 20 us: at most a quantum of DRAM-bound loads (~70 ns each) later.
    assert 20_000_000 <= r.sim_ticks < 20_000_000 + 50 * 100_000


def test_warming_can_start_after_n_instructions(engine):
    """Fast-forward, then warm, then time: the L1 chase's 256 lines were written during warming, so the timed
    region hits; warming only the last 50 instructions leaves them cold."""
    args = ["16K", "4000"]
    begin = int(simulate(make_system(MICRO / "chase", args, mem_limit="256MiB")).stats["system.roi.begin_insts"])

    def timed_region(warm_start: int) -> dict:
        s = make_system(MICRO / "chase", args, mode="detailed", detailed_start="insts", detailed_start_insts=begin - 1,
                        warm_caches=True, warm_start_insts=warm_start, mem_limit="256MiB", quantum=1)
        return simulate(s).stat_dumps[-1][1]

    assert timed_region(0)[S + "core0.l1d.misses"] == 0
    assert timed_region(begin - 50)[S + "core0.l1d.misses"] >= 200


def test_per_hart_cores_and_time_ordered_scheduling(engine):
    """Heterogeneous cores (System.cores): hart 1 at half the clock of hart 0. The scheduler runs whichever hart
    is behind in simulated time, so both reach about the same time, hart 1 with about half the instructions."""
    from models.core import Core

    s = make_system(MICRO / "adds", ["indep", "3000"], harts=2, mode="detailed", quantum=50,
                    cores=[Core(clock="2.5GHz"), Core(clock="1.25GHz")])
    r = simulate(s)
    assert r.stats["system.socket0.core1.clock"] == 1.25e9 and r.stats["system.socket0.core0.clock"] == 2.5e9
    t0, t1 = r.stats["system.hart0.sim_ticks"], r.stats["system.hart1.sim_ticks"]
    assert abs(t0 - t1) < 50 * 800   # within about a quantum of hart 1's instructions
    n0, n1 = r.harts[0]["insts"], r.harts[1]["insts"]
    assert 0.4 * n0 < n1 < 0.6 * n0, (n0, n1)
