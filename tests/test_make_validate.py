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
