"""Journals no point needs any more (drivers/sweep/journal.py, issue 28, session 20): a journal whose key is no point
of the sweep's current plan (another engine build or configuration) or whose point is stored ok is listed and
removed only by the explicit command (`sweep.py --clean-journals`, `figures.py --clean-journals`), which prints
each file removed; a sweep's run never removes one; sweeps that share a store keep each other's."""

from __future__ import annotations

import dataclasses
import io

import pytest
from rich.console import Console

from drivers import sweep as sw
from drivers.cli import sweep as sweep_cli
from drivers.sweep.journal import PointJournal, journal_path

SWEEP_FILE = """
from drivers.sweep import Base, Grid, Sweep
SWEEPS = [Sweep(name, Base("brps_target_socket", cores=2), Grid({{"core.rob_entries": robs}}),
                evaluator="drivers.synthetic:evaluate_point", options={{"sleep_ms": 0}})
          for name, robs in (("jclean", {robs}), ("jother", [8]))]
"""


def _sweeps(tmp_path, robs=(16, 64)):
    path = tmp_path / "sweeps.py"
    path.write_text(SWEEP_FILE.format(robs=list(robs)))
    return path, sw.load_sweep_module(str(path))


def _journal(store, key: str, units: int = 3) -> None:
    j = PointJournal(journal_path(store, key), key)
    for i in range(units):
        j.stats(f"unit {i}", lambda i=i: {"x": float(i)})


def _main(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    console = Console(file=out, width=400)
    real = sweep_cli.Console
    sweep_cli.Console = lambda **_: console
    try:
        return sweep_cli.main(argv), out.getvalue()
    finally:
        sweep_cli.Console = real


def test_journals_of_keys_the_plan_does_not_have_are_listed_and_removed_only_on_the_command(tmp_path):
    store = tmp_path / "store"
    path, (plan, other) = _sweeps(tmp_path)
    planned = [p.key for p in plan.resolve()]
    # The same sweep as another configuration planned it (rob 16 and 32): the key of rob 32 is no point any more.
    (tmp_path / "old").mkdir()
    _, (old_plan, _) = _sweeps(tmp_path / "old", robs=(16, 32))
    stale = next(p.key for p in old_plan.resolve() if p.key not in planned)
    _journal(store, planned[0])                      # a point of the plan, stopped mid-way: kept
    _journal(store, stale)                           # another configuration's: removed
    journal_path(store, stale).with_name(f"{stale}.jsonl.damaged").write_text("cut")   # kept beside it: removed
    (store / "journal" / "notes.txt").write_text("not a journal")                     # left alone
    _journal(store, planned[1])                      # its point stored ok below (as after a kill between its
    files = sorted(p.name for p in (store / "journal").iterdir())         # record and the journal's removal)
    # A run of the sweep (its rob-64 point) removes no journal.
    sw.run(dataclasses.replace(plan, space=sw.List([{"core.rob_entries": 64}])), store=store, jobs=1, progress=False)
    assert sorted(p.name for p in (store / "journal").iterdir()) == files
    assert set(sw.stored_points(store)) == {planned[1]}
    # The listing first: nothing removed.
    code, said = _main([str(path), "--store", str(store), "--clean-journals", "--dry-run"])
    assert code == 0 and sorted(p.name for p in (store / "journal").iterdir()) == files
    assert f"would remove {journal_path(store, stale)}" in said and "not a point of the sweep's plan" in said
    assert f"would remove {journal_path(store, planned[1])}" in said and "its point's record is stored" in said
    assert "3 journal file(s)" in said and "dry run: nothing removed" in said
    # Then the removal, each file said with its size and why.
    code, said = _main([str(path), "--store", str(store), "--clean-journals"])
    assert code == 0 and sorted(p.name for p in (store / "journal").iterdir()) == sorted([f"{planned[0]}.jsonl",
                                                                                         "notes.txt"])
    size = f"{len(b'cut') / 1e6:.2f} MB"
    assert f"removed {journal_path(store, stale).with_name(stale + '.jsonl.damaged')} ({size})" in said
    assert "3 journal file(s)" in said and "removed in 1 store(s)" in said
    code, said = _main([str(path), "--store", str(store), "--clean-journals"])
    assert "0 journal file(s)" in said


def test_sweeps_that_share_a_store_keep_each_others_journals(tmp_path):
    store = tmp_path / "shared"
    path, (plan, other) = _sweeps(tmp_path)
    mine, theirs = plan.resolve()[0].key, other.resolve()[0].key
    _journal(store, mine)
    _journal(store, theirs)
    removed = sw.clean_sweep_journals([(plan, store), (other, store)], say=lambda text: None)
    assert removed == [] and journal_path(store, mine).exists() and journal_path(store, theirs).exists()
    # Planned alone, the other sweep's journal is not one of this plan's.
    removed = sw.clean_sweep_journals([(plan, store)], say=lambda text: None)
    assert [p for p, _, _ in removed] == [journal_path(store, theirs)]


def test_dry_run_alone_is_refused(tmp_path):
    path, _ = _sweeps(tmp_path)
    with pytest.raises(SystemExit):
        sweep_cli.main([str(path), "--dry-run"])


def test_the_figures_command_cleans_each_studys_store_as_its_run_plans_it(tmp_path):
    from drivers import studies
    from drivers.cli import figures
    from drivers.studies import common

    study = studies.get("partition_load")
    conditions = common.Conditions(reduced=True, items=None, all_points=False)
    sweeps = study.sweeps(**figures.study_kwargs(study, conditions, True))
    root = tmp_path / "stores"
    planned = {s.name: s.resolve()[0].key for s in sweeps}
    for name, key in planned.items():
        _journal(root / name, key)
        _journal(root / name, "f" * 24)
    assert figures.main(["--study", "partition_load", "--reduced", "--store", str(root), "--clean-journals",
                         "--outdir", str(tmp_path / "figs")]) == 0
    for name, key in planned.items():
        assert journal_path(root / name, key).exists() and not journal_path(root / name, "f" * 24).exists()
    assert not (tmp_path / "figs").exists(), "nothing run or drawn"
