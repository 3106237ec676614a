"""A workload's native C test suite, shared by the KVS and memcached-class server tests.

`make -C <workload> native` builds the test binary with the host compiler (ASan + UBSan, -Werror); `--list` names
its cases, so each C case can be reported as its own pytest case; `make -C <workload> native-test` runs them all and
prints one `PASS name` / `FAIL name` line per case, preceded by the indented lines explaining a failure.
"""

from __future__ import annotations

import pathlib
import re
import subprocess

RESULT_LINE = re.compile(r"^(PASS|FAIL) (\S+)$")

# The finished run: the make process, each case's PASS/FAIL, and each case's failure lines.
NativeRun = tuple[subprocess.CompletedProcess[str], dict[str, str], dict[str, list[str]]]


def list_cases(workload: pathlib.Path, test_binary: pathlib.Path) -> list[str]:
    """The C test cases, from the test binary itself (built here if needed; empty if the build fails, which the
    suite's own test then reports)."""
    build = subprocess.run(["make", "-s", "-C", str(workload), "native"], capture_output=True, text=True, timeout=900)
    if build.returncode != 0 or not test_binary.exists():
        return []
    listing = subprocess.run([str(test_binary), "--list"], capture_output=True, text=True, timeout=60)
    return listing.stdout.split() if listing.returncode == 0 else []


def run_suite(workload: pathlib.Path) -> NativeRun:
    """Run `make native-test` once and parse its per-case results."""
    proc = subprocess.run(["make", "-C", str(workload), "native-test"], capture_output=True, text=True, timeout=1800)
    results: dict[str, str] = {}
    details: dict[str, list[str]] = {}
    pending: list[str] = []
    for line in proc.stdout.splitlines():
        m = RESULT_LINE.match(line)
        if m:
            results[m.group(2)] = m.group(1)
            details[m.group(2)] = pending
            pending = []
        elif line.startswith("    "):
            pending.append(line.strip())
    return proc, results, details


def assert_case_passed(run: NativeRun, case: str) -> None:
    """One C case ran and passed; on failure, its own explanation lines (or the run's tail if it never ran)."""
    proc, results, details = run
    assert case in results, f"{case} did not run:\n{(proc.stdout + proc.stderr)[-3000:]}"
    assert results[case] == "PASS", "\n".join(details.get(case, [])) or f"{case} failed"
