"""Every code block of the README runs as a new user would run it: each `sh` line as a shell command (with the
`kvsim` command on PATH), each `python` block saved as a script file and run with python (so the sweep example
needs, and has, `if __name__ == "__main__":`). They run in a fresh folder, so their relative outputs land there."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)


def readme_blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer((ROOT / "README.md").read_text())]


def user_env(tmp_path) -> dict[str, str]:
    """The environment of a user of this checkout after `make engine`: its packages importable and `kvsim` on
    PATH (here a stand-in for the installed console script that runs this checkout's code)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "kvsim"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m drivers.cli \"$@\"\n")
    shim.chmod(0o755)
    return {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{bin_dir}:{os.environ['PATH']}", "COLUMNS": "200"}


def test_the_readme_has_python_and_sh_examples_and_only_those():
    kinds = [kind for kind, _ in readme_blocks()]
    assert "python" in kinds and "sh" in kinds
    assert set(kinds) <= {"python", "sh"}, f"a block this test does not run: {kinds}"


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(readme_blocks())))
def test_readme_block_runs(index, tmp_path, engine):
    kind, code = readme_blocks()[index]
    env = user_env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    if kind == "sh":
        for line in code.splitlines():
            command = line.split("  #")[0].strip()
            if not command or command.startswith("#"):
                continue
            out = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                                 timeout=300)
            assert out.returncode == 0, f"README: {command}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
        return
    script = work / f"readme_example_{index}.py"
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], cwd=work, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, f"README block {index}:\n{code}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    assert "failed" not in out.stderr.lower() or "0 failed" in out.stderr.lower(), out.stderr[-3000:]
