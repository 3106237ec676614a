"""`make validate` passes ITEMS=, CORES= and CHECKPOINTS= to the Xeon driver (the 192 Mi table as one make command)."""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_validate_passes_cores_and_checkpoints():
    dry = subprocess.run(["make", "-n", "-C", str(ROOT), "validate", "ITEMS=201326592", "CORES=1,3,4,24",
                          "CHECKPOINTS=/tmp/ck"], capture_output=True, text=True, check=True).stdout
    command = dry[dry.index("validate --items"):].replace("\\\n", " ")
    assert "--items 201326592" in command and "--cores 1,3,4,24" in command and "--checkpoints /tmp/ck" in command


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_validate_without_them_runs_the_driver_defaults():
    dry = subprocess.run(["make", "-n", "-C", str(ROOT), "validate"], capture_output=True, text=True, check=True).stdout
    command = dry[dry.index("kvsim validate"):]
    assert "--cores" not in command and "--checkpoints" not in command and "--items" not in command


def test_the_default_data_set_is_the_papers_and_is_loaded_into_a_checkpoint(monkeypatch):
    """Without --items the driver runs the paper's 192 Mi items, and without --checkpoints it keeps their loads in
    results/checkpoints/xeon; a reduced data set stays uncheckpointed unless asked. Stopped at the folder check, before
    any work."""
    from drivers.cli import validate_xeon as vx

    class Stop(Exception):
        pass

    folders = []

    def stop_at_folder(folder):
        folders.append(pathlib.Path(folder))
        raise Stop

    def ran_past_the_folder_check():
        raise AssertionError("no checkpoint folder was chosen for the paper's data set")

    monkeypatch.setattr(vx, "check_checkpoints_folder", stop_at_folder)
    monkeypatch.setattr(vx, "isa_ratio", ran_past_the_folder_check)
    with pytest.raises(Stop):
        vx.main(["--cores", "1", "--no-target"])
    assert folders == [vx.DEFAULT_CHECKPOINTS] and vx.PAPER_ITEMS == 201326592
    with pytest.raises(Stop):
        vx.main(["--cores", "1", "--no-target", "--checkpoints", "/tmp/elsewhere"])
    assert folders[-1] == pathlib.Path("/tmp/elsewhere")

    class Reduced(Exception):
        pass

    def reduced_runs_on(*_):
        raise Reduced

    monkeypatch.setattr(vx, "isa_ratio", reduced_runs_on)
    with pytest.raises(Reduced):
        vx.main(["--cores", "1", "--no-target", "--items", "65536"])
    assert len(folders) == 2


def test_the_default_run_says_its_loads_total_cost_and_refuses_a_disk_too_small_before_any_load(tmp_path, monkeypatch,
                                                                                              capsys):
    """`kvsim validate` at the paper's 192 Mi items: before any load starts it prints what the points' loads cost
    together (host CPU and disk), and refuses with the need and the free space when the disk under the checkpoint
    folder cannot hold them all (a fake free-space figure; nothing is loaded). With room, it goes on to the loads."""
    from drivers.cli import validate_xeon as vx
    from models.params import ParamError

    class Loading(Exception):
        pass

    def load_started(*_):
        raise Loading

    monkeypatch.setattr(vx, "load_once", load_started)
    monkeypatch.setattr(vx, "free_bytes", lambda folder: 5 * 10**9)
    argv = ["--cores", "1,4", "--checkpoints", str(tmp_path)]
    with pytest.raises(ParamError) as refused:
        vx.main(argv)
    out = capsys.readouterr().out
    # Three points (1 and 4 cores, the 60-core target), none loaded yet: each checkpoint is gigabytes at 192 Mi.
    cost = out[out.index("Data sets to load now: 3 (of 3 points; 0 in"):]
    gb = float(cost.split(" GB of disk in all")[0].rsplit(" ", 1)[1])
    assert gb > 3 * 5 and "min of host CPU" in cost and "5.0 GB free under" in cost
    # Each data set's size with its own index: the target keeps its config's (no item dropped), four times the
    # MICA-sized index of the studies' 192 Mi load (session 23 compared 25.0 GB with the study's 13.03 GB).
    assert "- target, 60 cores, 201,326,592 items: about 25.3 GB (60 partitions of a 512 MiB log and 2,097,152 " \
        "index buckets, 16.1 GB of index, 1.6 items a bucket)" in cost
    msg = str(refused.value)
    assert f"take about {gb:.1f} GB" in msg and "5.0 GB free" in msg and "Xeon, 4 core(s)" in msg
    assert "target, 60 cores" in msg
    # Enough room: the check passes and the first load starts.
    monkeypatch.setattr(vx, "free_bytes", lambda folder: 10**15)
    with pytest.raises(Loading):
        vx.main(argv)
