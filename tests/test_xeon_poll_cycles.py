"""sim-scripts/xeon_poll_cycles.py: a saved run's cycles split into empty polls and polls with frames, the latter's
serialising waits per batch and request, and the change between two runs part by part (drivers/cli/xeon_poll_cycles)."""

import json

import pytest

from drivers.cli import xeon_poll_cycles as xp


def run_stats(cores=2, *, insts=10_000.0, idle_insts=1_000.0, cycles=6_000.0, idle_cycles=400.0, polls_busy=10.0,
              polls_idle=12.0, requests=40.0, commit_wait=100.0, drain_wait=50.0, sq_stall=30.0, fences=60.0,
              mispredicts=80.0, mmio=20.0):
    """Statistics of a run with `cores` identical cores, each with the given counts."""
    s = {"client.requests": requests * cores, "system.socket0.ddio.mmio_accesses": mmio * cores}
    for c in range(cores):
        s.update({f"system.hart{c}.insts": insts, f"system.hart{c}.idle_poll_insts": idle_insts,
                  f"system.hart{c}.busy_poll_insts": insts - idle_insts, f"system.hart{c}.polls_idle": polls_idle,
                  f"system.hart{c}.polls_busy": polls_busy})
        core = f"system.socket0.core{c}."
        s.update({core + "cycles": cycles, core + "idle_poll_cycles": idle_cycles, core + "fences": fences,
                  core + "branch_mispredicts": mispredicts, core + "serialize_commit_wait_cycles": commit_wait,
                  core + "serialize_drain_wait_cycles": drain_wait, core + "store_queue_stall_cycles": sq_stall})
    return s


def test_the_cycles_split_into_empty_polls_and_polls_with_frames():
    f = xp.poll_figures(run_stats())
    assert f["cores"] == 2 and f["requests"] == 80 and f["batch"] == pytest.approx(4.0)
    assert f["ipc"] == pytest.approx(10_000 / 6_000)
    assert f["ipc_empty"] == pytest.approx(1_000 / 400)
    assert f["ipc_busy"] == pytest.approx(9_000 / 5_600)
    # The busy polls' IPC without the three waits (100 + 50 + 30 cycles a core).
    assert f["ipc_busy_without_waits"] == pytest.approx(9_000 / (5_600 - 180))
    assert f["req_busy_cycles"] == pytest.approx(5_600 / 40)
    assert f["req_empty_insts"] == pytest.approx(1_000 / 40)
    assert f["empty_polls_per_req"] == pytest.approx(12 / 40)
    assert f["batch_cycles"] == pytest.approx(560) and f["batch_insts"] == pytest.approx(900)
    assert f["batch_serialize_drain_wait_cycles"] == pytest.approx(5) and f["batch_mmio"] == pytest.approx(2)
    assert f["req_other_cycles"] == pytest.approx((5_600 - 180) / 40)


def test_the_change_between_two_runs_is_given_part_by_part():
    a = xp.poll_figures(run_stats())
    # Run B: the same requests in twice as many batches, with 400 more cycles of store-buffer waits a core.
    b = xp.poll_figures(run_stats(cycles=6_400.0, drain_wait=450.0, polls_busy=20.0))
    lines = xp.between(a, b)
    assert "140.0 -> 150.0 (+10.0" in lines[0]
    drain = next(x for x in lines if x.strip().startswith("fences waiting for the store buffer"))
    assert "+10.0, 100% of the change" in drain
    other = next(x for x in lines if x.strip().startswith("everything else"))
    assert "+0.0" in other


@pytest.mark.parametrize("missing", ["system.socket0.core1.serialize_drain_wait_cycles",
                                     "system.socket0.core0.store_queue_stall_cycles",
                                     "system.hart1.idle_poll_insts", "client.requests"])
def test_a_missing_counter_is_an_error_naming_it_never_a_zero(missing):
    s = run_stats()
    del s[missing]
    with pytest.raises(KeyError, match=missing.replace(".", r"\.")):
        xp.poll_figures(s)


def test_a_run_without_batches_is_refused():
    with pytest.raises(ValueError, match="batches"):
        xp.poll_figures(run_stats(polls_busy=0.0))


def test_the_command_reads_saved_points_and_refuses_an_old_engines(tmp_path, capsys):
    for name, stats in (("a", run_stats()), ("b", run_stats(cycles=6_400.0, drain_wait=450.0, polls_busy=20.0))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "stats.json").write_text(json.dumps(stats))
    assert xp.main([str(tmp_path / "a"), "--between", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "empty polls 2.500" in out and "fences waiting for the store buffer" in out
    old = run_stats()
    del old["system.socket0.core0.serialize_commit_wait_cycles"]
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "stats.json").write_text(json.dumps(old))
    with pytest.raises(SystemExit, match="serialize_commit_wait_cycles is not in the run's statistics"):
        xp.main([str(tmp_path / "old")])


def test_a_run_without_the_doorbell_counter_is_an_error_never_a_zero():
    s = {k: v for k, v in run_stats().items() if not k.endswith(".ddio.mmio_accesses")}
    with pytest.raises(KeyError, match="mmio_accesses"):
        xp.poll_figures(s)
