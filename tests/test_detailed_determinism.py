"""Determinism of detailed mode: identical configuration and seed give identical statistics, also with several
harts interleaved by simulated time; a different core (ROB size) gives different timing (and, since the harts of
kvmix race on shared data, possibly a different interleaving and output)."""

from __future__ import annotations

from models.sim import simulate

from conftest import BENCH_PROGRAMS, BUILD, make_system


def stream_system(**params):
    return make_system(BUILD / "micro" / "stream", ["2M"], harts=4, mode="detailed", detailed_start="roi",
                       warm_caches=True, quantum=64, mem_limit="256MiB", seed=7, **params)


def test_identical_config_and_seed_give_identical_stats(engine):
    a, b = simulate(stream_system()), simulate(stream_system())
    assert a.exit_code == b.exit_code == 0
    assert a.stats == b.stats
    assert a.stat_dumps == b.stat_dumps
    assert a.sim_ticks == b.sim_ticks
    assert any(k.startswith("system.socket0.core3.") for k in a.stats)
    # The harts really interleaved: all four loaded their share in the measured region.
    assert all(a.stats[f"system.socket0.core{i}.loads"] > 1000 for i in range(4))


def test_multi_hart_kvmix_is_deterministic_and_timing_depends_on_the_core(engine):
    def run(rob):
        s = make_system(BENCH_PROGRAMS / "kvmix", ["1"], harts=2, mode="detailed", quantum=100, seed=3)
        s.core.rob_entries = rob
        return simulate(s)

    a, b, c = run(64), run(64), run(16)
    assert a.stats == b.stats and a.stdout == b.stdout
    assert c.stats["system.socket0.core0.cycles"] > a.stats["system.socket0.core0.cycles"]
