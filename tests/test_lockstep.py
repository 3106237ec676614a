"""sim-scripts/lockstep.py: the engine and qemu-riscv64 agree instruction by instruction (hart 0's PC, integer
and floating-point registers) on small programs; and the comparison itself finds a planted divergence (checked against a trace
synthesized from qemu's, so the tool is tested even where the engine is not involved)."""

from __future__ import annotations

import pathlib
import subprocess

import pytest

from drivers.cli import lockstep

from conftest import TEST_PROGRAMS

# Programs and arguments: ~20-40 thousand instructions each, traces of tens of MB (fparith's argument selects its
# short sample: one rounding mode, every fourth edge value).
PROGRAMS = {"compressed": [], "loadstore": [], "fparith": ["sample"]}


def qemu_log(binary: pathlib.Path, folder: pathlib.Path) -> pathlib.Path:
    log = folder / "qemu.log"
    subprocess.run(["qemu-riscv64", "-singlestep", "-d", "cpu,fpu,nochain", "-D", str(log), str(binary)],
                   capture_output=True, env={}, check=False, timeout=300)
    return log


def synthesize_engine_trace(records: list, out: pathlib.Path, plant: int | None = None, drop_tail: int = 0,
                            plant_fp: int | None = None):
    """An engine-format trace equal to qemu's up to the stack placement: stack values are moved to the engine's
    stack top, initial-stack pointers by a different amount. Optionally one integer register is corrupted at
    record `plant`, one floating-point register at record `plant_fp`, or the last `drop_tail` records are left
    out."""
    sp0 = records[0][1][1]
    engine_sp0 = 0x3F_FFFF_0000 - 0x1A0
    lines = []
    for i, (pc, regs, fregs) in enumerate(records[:len(records) - drop_tail]):
        moved = []
        for v in regs:
            if sp0 - lockstep.STACK_BELOW <= v <= sp0:
                v = v - sp0 + engine_sp0
            elif sp0 < v <= sp0 + lockstep.STACK_ABOVE:
                v = v - sp0 + engine_sp0 + 0x48
            moved.append(v)
        if i == plant:
            moved[9] ^= 0x10          # x10 / a0
        fregs = list(fregs)
        if i == plant_fp:
            fregs[10] ^= 1            # f10 / fa0: the last bit of a mantissa
        lines.append(" ".join(f"{x:016x}" for x in [pc, *moved, *fregs]))
    out.write_text("\n".join(lines) + "\n")
    return len(records)


def test_lockstep_compare_finds_planted_divergence(tmp_path, workloads_built):
    binary = TEST_PROGRAMS / "compressed"
    log = qemu_log(binary, tmp_path)
    trace = tmp_path / "engine.trace"
    records = list(lockstep.qemu_records(log))
    n = synthesize_engine_trace(records, trace)
    assert n > 1000
    same = lockstep.compare(binary, log, trace)
    assert same.ok and same.agreed == n, same.divergence

    synthesize_engine_trace(records, trace, plant=777)
    planted = lockstep.compare(binary, log, trace)
    assert not planted.ok and planted.agreed == 777
    assert "instruction 777" in planted.divergence and "x10/a0" in planted.divergence

    synthesize_engine_trace(records, trace, plant_fp=901)
    planted_fp = lockstep.compare(binary, log, trace)
    assert not planted_fp.ok and planted_fp.agreed == 901
    assert "f10/fa0" in planted_fp.divergence and "x10/a0" not in planted_fp.divergence, planted_fp.divergence

    synthesize_engine_trace(records, trace, drop_tail=5)
    short = lockstep.compare(binary, log, trace)
    assert not short.ok and short.agreed == n - 5 and "qemu continues for 5 more" in short.divergence


@pytest.mark.slow
@pytest.mark.parametrize("name", PROGRAMS)
def test_engine_agrees_with_qemu_in_lockstep(name, tmp_path, workloads_built, engine):
    outcome = lockstep.run(TEST_PROGRAMS / name, PROGRAMS[name], max_insts=5_000_000, workdir=tmp_path)
    assert outcome.engine_error is None, outcome.engine_error
    assert outcome.ok, outcome.divergence
    assert outcome.agreed == outcome.qemu_count > 1000
