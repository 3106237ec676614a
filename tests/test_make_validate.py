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
