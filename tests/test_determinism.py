"""Determinism: the same binary and configuration give identical instruction counts, statistics, simulated
time and guest output on every run, including multi-hart runs, and the stats files written are byte-identical."""

from __future__ import annotations

import pytest

from models.sim import simulate

from conftest import BENCH_PROGRAMS, TEST_PROGRAMS, make_system

CASES = {
    "multihart-4": (TEST_PROGRAMS / "multihart", ["13"], {"harts": 4, "quantum": 37}),
    "syscalls": (TEST_PROGRAMS / "syscalls", [], {}),
    "kvmix-1": (BENCH_PROGRAMS / "kvmix", ["1"], {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_two_runs_are_identical(case, tmp_path, workloads_built, engine):
    binary, args, params = CASES[case]
    runs = [simulate(make_system(binary, args, max_insts=200_000_000, **params), outdir=tmp_path / f"run{i}")
            for i in range(2)]
    a, b = runs
    assert a.stop_reason == "exit", a.stop_reason
    assert [h["insts"] for h in a.harts] == [h["insts"] for h in b.harts]
    assert a.insts > 0
    assert a.sim_ticks == b.sim_ticks
    assert a.stats == b.stats
    assert (a.stdout, a.stderr, a.exit_code) == (b.stdout, b.stderr, b.exit_code)
    for name in ("stats.txt", "stats.json", "config.json", "guest.stdout", "guest.stderr"):
        assert (tmp_path / "run0" / name).read_bytes() == (tmp_path / "run1" / name).read_bytes(), name
