"""Determinism: the same binary and configuration give identical instruction counts, statistics, simulated
time and guest output on every run, including multi-hart runs, and the stats files written are byte-identical."""

from __future__ import annotations

import shutil

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


def test_statistics_do_not_depend_on_where_the_binary_is(tmp_path, workloads_built, engine):
    """The same program copied under two host folders whose paths differ in length gives bit-identical statistics
    and output: the guest's argv[0] is the file name, not the host path (workloads/ABI.md, start-up), so where the
    project is checked out does not move the guest's stack. With the host path there, the longer path moved every
    stack address down, and the detailed run's cache and timing statistics changed."""
    short = tmp_path / "a"
    long = tmp_path / ("a-folder-name-long-enough-to-move-the-stack-by-more-than-a-cache-line-" * 2)
    runs = []
    for folder in (short, long):
        folder.mkdir()
        binary = folder / "kvmix"
        shutil.copy2(BENCH_PROGRAMS / "kvmix", binary)
        runs.append(simulate(make_system(binary, ["1"], mode="detailed", seed=3)))
    a, b = runs
    assert len(str(long)) - len(str(short)) > 128
    assert a.stop_reason == b.stop_reason == "exit"
    assert a.stats["system.socket0.core0.cycles"] > 0
    assert a.stats == b.stats
    assert a.sim_ticks == b.sim_ticks
    assert (a.stdout, a.exit_code) == (b.stdout, b.exit_code)
