"""Differential tests: every program of workloads/tests/ runs under qemu-riscv64 (the reference) and under the
engine; stdout, stderr and exit status must be identical. The multi-hart program also runs on several harts in
the engine, where its output must still equal qemu's single-hart run.

The expected output is never stored: qemu produces it at test time."""

from __future__ import annotations

import difflib
import pathlib

import pytest

from conftest import TEST_PROGRAMS, WORKLOADS, GuestRun, as_guest_run, run_engine, run_qemu

# Far above what any test program executes; a run that reaches it is a hang, reported as such.
INSN_CAP = 500_000_000

# System parameters a program needs to behave as under qemu-user (default: none).
PROGRAM_PARAMS = {
    "misaligned": {"misaligned": "allow"},   # qemu-user performs misaligned accesses
}


def program_names() -> list[str]:
    """The test programs, named from their sources as the workloads Makefile does (NAME.c, NAME.S, NAME_asm.S)."""
    names = set()
    for src in (WORKLOADS / "tests").iterdir():
        if src.suffix in (".c", ".S") and src.is_file():
            names.add(src.stem.removesuffix("_asm"))
    return sorted(names)


def describe_difference(name: str, ref: bytes, got: bytes) -> str:
    ref_lines = ref.decode("utf-8", "replace").splitlines()
    got_lines = got.decode("utf-8", "replace").splitlines()
    diff = list(difflib.unified_diff(ref_lines, got_lines, "qemu-riscv64", "engine", lineterm="", n=2))
    if len(diff) > 60:
        diff = diff[:60] + [f"... ({len(diff) - 60} more diff lines)"]
    return f"{name} differs ({len(ref)} bytes from qemu, {len(got)} from the engine):\n" + "\n".join(diff)


def assert_same(label: str, ref: GuestRun, got: GuestRun) -> None:
    assert got.stdout == ref.stdout, describe_difference(f"{label}: stdout", ref.stdout, got.stdout)
    assert got.stderr == ref.stderr, describe_difference(f"{label}: stderr", ref.stderr, got.stderr)
    assert got.exit_code == ref.exit_code, f"{label}: exit status {got.exit_code}, qemu-riscv64 gives {ref.exit_code}"


def run_both(binary: pathlib.Path, args: list[str], harts: int = 1,
             env: dict[str, str] | None = None, **extra) -> tuple[GuestRun, GuestRun]:
    ref = run_qemu(binary, args, env=env)
    params = {**PROGRAM_PARAMS.get(binary.name, {}), **extra}
    result = run_engine(binary, args, env=env, harts=harts, max_insts=INSN_CAP, **params)
    assert result.stop_reason == "exit", (
        f"{binary.name}: the engine stopped with {result.stop_reason!r} after {result.insts} instructions "
        f"(qemu-riscv64 exits with {ref.exit_code})")
    return ref, as_guest_run(result)


def test_program_list_is_complete(workloads_built):
    """Every test source builds to a program (so none silently drops out of the comparison)."""
    names = program_names()
    assert "multihart" in names and len(names) >= 9, names
    missing = [n for n in names if not (TEST_PROGRAMS / n).is_file()]
    assert not missing, f"not built: {missing}"


@pytest.mark.parametrize("name", [n for n in program_names() if n != "multihart"])
def test_matches_qemu(name, workloads_built, engine):
    binary = TEST_PROGRAMS / name
    ref, got = run_both(binary, [])
    assert ref.stdout, f"{name} printed nothing under qemu-riscv64: the test program is broken"
    assert_same(name, ref, got)


@pytest.mark.parametrize("harts,virtual,quantum", [(1, "8", 1000), (4, "8", 1000), (4, "13", 1000),
                                                   (3, "13", 1000), (4, "8", 1), (4, "8", 7)])
def test_multihart_matches_qemu(harts, virtual, quantum, workloads_built, engine):
    """The engine on `harts` harts must print what qemu prints on one hart for the same total work. Small
    quanta interleave the harts' LR/SC and AMO sequences instruction by instruction."""
    binary = TEST_PROGRAMS / "multihart"
    ref, got = run_both(binary, [virtual], harts=harts, quantum=quantum)
    assert b"mutual exclusion held: 1" in ref.stdout, ref.stdout
    assert_same(f"multihart {virtual} on {harts} harts, quantum {quantum}", ref, got)


def test_arguments_and_environment_match_qemu(workloads_built, engine):
    """The initial stack with arguments (one with a space, one empty) and environment strings."""
    args = ["first", "hello world", "", "x" * 300]
    env = {"KVSIM_A": "1", "EMPTY": "", "LONG": "y" * 200, "SPACES": "a b c"}
    ref, got = run_both(TEST_PROGRAMS / "startup", args, env=env)
    assert b"env SPACES=a b c" in ref.stdout and ref.exit_code == 5, ref.stdout
    assert_same("startup with arguments", ref, got)


def test_multihart_really_uses_every_hart(workloads_built, engine):
    """With 4 harts, every hart executes a share of the work (so the 4-hart comparison is not vacuous)."""
    result = run_engine(TEST_PROGRAMS / "multihart", ["8"], harts=4, max_insts=INSN_CAP)
    assert result.stop_reason == "exit"
    assert len(result.harts) == 4
    one = run_engine(TEST_PROGRAMS / "multihart", ["8"], harts=1, max_insts=INSN_CAP)
    # Each hart does two of the eight virtual harts' work: well over a tenth of the one-hart total.
    for i, hart in enumerate(result.harts):
        assert hart["insts"] > one.insts // 10, (i, [h["insts"] for h in result.harts], one.insts)
