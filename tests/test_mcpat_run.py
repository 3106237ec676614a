"""`kvsim run --mcpat`: real McPAT on the run's McPAT XML export, its totals and tree beside the model's in the
run folder. The real McPAT is the shared tool (../shared/tools/mcpat/mcpat); a user's machine has none, so the tests
that need it skip, saying so. The plumbing (a McPAT that fails, the environment variable) is tested with tiny
stand-in programs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from drivers.cli import mcpat_run

from conftest import ROOT

MCPAT = ROOT.parent / "shared" / "tools" / "mcpat" / "mcpat"
KVSIM = [sys.executable, "-m", "drivers.cli"]
SMALL_XEON = ["xeon_e5_2697v2_socket", "--arg", "cores=2", "--arg", "requests=600", "--arg", "items=4096"]


def kvsim(*args, env=None):
    return subprocess.run([*KVSIM, *args], capture_output=True, text=True, cwd=ROOT, timeout=900,
                          env={**os.environ, "COLUMNS": "200", **(env or {})})


@pytest.mark.slow
@pytest.mark.skipif(not os.access(MCPAT, os.X_OK), reason=f"McPAT is not installed here ({MCPAT} is absent)")
def test_real_mcpat_totals_sit_beside_the_models(tmp_path, engine):
    out = tmp_path / "run"
    proc = kvsim("run", *SMALL_XEON, "--mcpat", str(MCPAT), "--outdir", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    totals = json.loads((out / "mcpat" / "totals.json").read_text())["socket0"]
    printout = (out / "mcpat" / "socket0.out").read_text()
    assert "Processor:" in printout
    # McPAT's figures are read from its own printout, not copied from the model.
    first = printout[printout.index("Processor:"):].splitlines()
    area = next(float(x.split("=")[1].split()[0]) for x in first if x.strip().startswith("Area ="))
    assert totals["mcpat"]["area_mm2"] == pytest.approx(area)
    for metric in ("area_mm2", "peak_dynamic_W", "runtime_dynamic_W"):
        assert totals["mcpat"][metric] > 0 and totals["model"][metric] > 0
    stats = json.loads((out / "stats.json").read_text())
    assert stats["mcpat.socket0.runtime_dynamic_W"] == totals["mcpat"]["runtime_dynamic_W"]
    assert stats["power.socket.runtime_power_W"] > 0
    assert "McPAT socket0" in proc.stdout
    tree = (out / "mcpat" / "socket0_tree.csv").read_text()
    assert tree.startswith("line,level,kvsim_area_mm2,mcpat_area_mm2") and "Total Cores" in tree


def test_a_mcpat_that_prints_no_processor_fails_the_run_by_name(tmp_path, engine):
    fake = tmp_path / "mcpat"
    fake.write_text("#!/bin/sh\necho 'McPAT (version 1.3) is computing the target processor...'\n")
    fake.chmod(0o755)
    out = tmp_path / "run"
    proc = kvsim("run", *SMALL_XEON, "--outdir", str(out), env={mcpat_run.ENV: str(fake)})
    assert proc.returncode == 2 and "McpatFailed" in proc.stdout and "Processor" in proc.stdout
    assert (out / "status").read_text().startswith("failed: McpatFailed"), "a run whose McPAT failed is not ok"
    assert json.loads((out / "provenance.json").read_text())["status"].startswith("failed")


def test_a_missing_mcpat_binary_is_refused_before_the_run(tmp_path):
    out = tmp_path / "run"
    proc = kvsim("run", *SMALL_XEON, "--mcpat", str(tmp_path / "nothing"), "--outdir", str(out))
    assert proc.returncode == 2 and "is not an executable file" in proc.stdout
    assert not (out / "config.json").exists()
