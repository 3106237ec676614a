"""The run scripts kept beside the results (results/**/*.sh, tracked) run from a clone: no command names a folder
of the machine they first ran on (session 23's `cd /work/wt/xeon-s23`, checkpoint folders under /work/wt), and the
ones with the commands of a study run from the repository root with their folders as arguments. What was run is
recorded in their comments."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
# An absolute path in a command, other than the system's programs, devices, process files and scratch (/tmp): a
# name after the slash that ends a path's component (at a slash, a blank, a quote, a semicolon or the line's end), so
# that an awk pattern such as /file:function/ is not one.
MACHINE_PATH = re.compile(r"(?<![\w.}])/(?!usr/bin/|dev/null|proc/|tmp/)[A-Za-z][\w.-]*(?=[/\s\"';)]|$)")


def _scripts() -> list[str]:
    out = subprocess.run(["git", "ls-files", "results/*.sh", "results/**/*.sh"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    return sorted(set(out))


def _machine_paths(name: str) -> list[str]:
    """The lines of script `name` whose commands (not comments) name an absolute folder (MACHINE_PATH)."""
    found = []
    for n, line in enumerate((ROOT / name).read_text().splitlines(), 1):
        command = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        if MACHINE_PATH.search(command):
            found.append(f"{name}:{n}: {line.strip()}")
    return found


def test_no_run_script_names_a_folder_of_the_machine_it_ran_on():
    """98a3949: results/runs23/*.sh and llc_192Mi_s23's run.sh cd into worktrees of session 23's machine; two
    standard-run scripts' default interpreter was another worktree's. (0fe3c0d: the awk pattern /file:function/ of
    results/speed/s24/byfn.sh was read as a folder.)"""
    scripts = _scripts()
    assert "results/runs23/run.sh" in scripts and "results/figures/llc_192Mi_s23/run.sh" in scripts
    found = [line for name in scripts for line in _machine_paths(name)]
    assert not found, "commands naming this machine's folders:\n" + "\n".join(found)


@pytest.mark.parametrize("command, named", [
    ("cd /work/wt/xeon-s23", True), ("py=/work/wt/studies/.venv/bin/python", True), ('cd "/work"', True),
    ("--checkpoints /work/wt/ck16-xeon-s23 --save x", True), ("ls /opt;", True),
    ("awk '/file:function/{go=1;next}'", False), ("sub(/ \\[.*$/,\"\",fn)", False), ("/usr/bin/time -v x", False),
    ("echo > /dev/null", False), ("cat /proc/loadavg", False), ("BASE=/tmp/x", False), ("$WT/.venv/bin/python", False),
])
def test_a_machine_path_is_a_folders_name_not_a_pattern(command, named):
    assert bool(MACHINE_PATH.search(command)) == named, command


@pytest.mark.skipif(shutil.which("git") is None or not pathlib.Path("/usr/bin/time").exists(),
                    reason="needs git and /usr/bin/time")
@pytest.mark.parametrize("script, args, wanted", [
    ("results/runs23/run.sh", ["CK"], ["--checkpoints CK", "--save results/runs23/after"]),
    ("results/runs23/range.sh", [], ["--checkpoints results/checkpoints-xeon-16Mi", "nics[0].mmio_latency=50ns"]),
    ("results/figures/llc_192Mi_s23/run.sh", ["ST", "OUT"], ["--store ST --outdir OUT", "--sweep llc-60c-192Mi "]),
    ("results/figures/llc_192Mi_s23/compact_driver/run.sh", [],
     ["--store results/sweeps --outdir results/figures-llc-192Mi-compact", "--only caches.llc.size=15728640"]),
    ("results/figures/key_points.sh", ["llc", "llc-60c-192Mi-key", "ST", "OUT"],
     ["--study llc --sweep llc-60c-192Mi-key --jobs 1 --no-progress --store ST --outdir OUT"]),
    ("results/figures/key_points.sh", ["batching", "batching-60c-192Mi-key", "ST", "OUT", "."],
     ["--study batching --sweep batching-60c-192Mi-key --checkpoint . --jobs 1 --no-progress --store ST"]),
])
def test_a_study_run_script_runs_from_a_clone_with_its_folders_as_arguments(tmp_path, monkeypatch, script, args,
                                                                           wanted):
    """Each script copied into a fresh repository at its own path and started from elsewhere runs its commands at
    that repository's root, with the folders given (or defaults inside the repository); the interpreter is a stub
    that records its working folder and arguments. Run under git's variables as a hook sets them (GIT_DIR naming
    another repository, here a decoy): the test's git and the script's find only the fresh repository, so neither
    reinitialises nor runs in the one the variables name (on 0fe3c0d `git init` wrote the decoy and the script ran
    in the test's working folder)."""
    decoy = tmp_path / "decoy.git"
    monkeypatch.setenv("GIT_DIR", str(decoy))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path))
    # Never run a script that names the machine's folders: it would cd there and run the study for real (on
    # 98a3949 the LLC script ran the 192 Mi study in the main checkout when this test was first tried on it).
    assert not _machine_paths(script), _machine_paths(script)
    clone = tmp_path / "clone"
    (clone / script).parent.mkdir(parents=True)
    shutil.copy(ROOT / script, clone / script)
    # Only the fresh repository: no variable of git's (a hook's GIT_DIR, GIT_WORK_TREE, ...) may point elsewhere.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q", str(clone)], check=True, env=env)
    stub = tmp_path / "python"
    stub.write_text(f'#!/bin/sh\necho "$PWD $*" >> {tmp_path}/calls\n')
    stub.chmod(0o755)
    subprocess.run(["bash", str(clone / script), *args], cwd=tmp_path, check=True, capture_output=True,
                   env={**env, "PY": str(stub)})
    assert not decoy.exists()
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls and all(c.startswith(f"{clone.resolve()} ") for c in calls), calls
    for w in wanted:
        assert any(w in c for c in calls), (w, calls)
