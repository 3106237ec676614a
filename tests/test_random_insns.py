"""Randomized differential test: straight-line RV64GC sequences (integer and F/D) (tests/riscv_random.py) run under
qemu-riscv64 and the engine; every sequence's final registers and memory window must match.

    KVSIM_RANDOM_SEQS=20000 .venv/bin/python -m pytest tests/test_random_insns.py     # a long run
    KVSIM_RANDOM_SEED=7 ...                                                            # another seed

On a mismatch the test names the first sequence that differs, then re-runs that sequence's prefixes (its first
k instructions, for every k) under both to name the first instruction after which the state differs."""

from __future__ import annotations

import os
import pathlib

import pytest

import riscv_random as rr
from conftest import cross_compile, run_engine, run_qemu

SEQS = int(os.environ.get("KVSIM_RANDOM_SEQS", "300"))
SEED = int(os.environ.get("KVSIM_RANDOM_SEED", "20261122"))
INSN_CAP = 2_000 * SEQS + 1_000_000


def build(seqs: list[rr.Sequence], folder: pathlib.Path, name: str) -> pathlib.Path:
    src = folder / f"{name}.S"
    src.write_text(rr.render(seqs, SEED))
    return cross_compile([src], folder / name, extra=["-march=rv64gc"])


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    folder = tmp_path_factory.mktemp("random_insns")
    seqs = rr.generate(SEED, SEQS)
    return seqs, build(seqs, folder, "random"), folder


def engine_stdout(binary: pathlib.Path) -> bytes:
    result = run_engine(binary, max_insts=INSN_CAP)
    assert result.stop_reason == "exit", f"engine stopped with {result.stop_reason} after {result.insts} insts"
    assert result.exit_code == 0, f"engine exit status {result.exit_code}"
    return bytes(result.stdout)


def test_generator_covers_the_instruction_pool():
    """Every mnemonic of the pool occurs (with the default size), so the comparison exercises all of them."""
    seqs = rr.generate(SEED, max(SEQS, 300))
    used = {s.mnemonic(k) for s in seqs for k in range(len(s.body))}
    assert set(rr.ALL_MNEMONICS) <= used, sorted(set(rr.ALL_MNEMONICS) - used)


def test_harness_under_qemu(program):
    """The generated program itself is sound: one record per sequence, base registers where they belong."""
    seqs, binary, _ = program
    ref = run_qemu(binary)
    assert ref.exit_code == 0
    records = rr.split_records(ref.stdout)
    assert len(records) == len(seqs) and len(records[-1]) == rr.RECORD_SIZE
    for rec in records[:5]:
        _, regs = rr.decode_record(rec)
        assert regs[7] == regs[1] + rr.S0_OFFSET      # s0 = sp - 128
        assert regs[1] % 16 == 0


def localize(seq: rr.Sequence, folder: pathlib.Path) -> str:
    """Run every prefix of `seq` under both; describe the first instruction after which they disagree."""
    binary = build(rr.prefixes(seq), folder, f"prefixes_{seq.index}")
    ref = rr.split_records(run_qemu(binary).stdout)
    got = rr.split_records(engine_stdout(binary))
    for k, (a, b) in enumerate(zip(ref, got)):
        if a != b:
            if k == 0:
                return "the state differs before any random instruction (harness: register/window set-up)"
            detail = "\n    ".join(rr.describe_record_difference(a, b))
            return f"first divergence after instruction {k - 1}: `{seq.body[k - 1]}`\n    {detail}"
    if len(ref) != len(got):
        return f"record counts differ: qemu {len(ref)}, engine {len(got)}"
    return "the prefixes agree when run alone (the divergence depends on earlier sequences)"


def test_random_sequences_match_qemu(program, engine):
    seqs, binary, folder = program
    ref = run_qemu(binary).stdout
    got = engine_stdout(binary)
    if got == ref:
        return
    ref_records, got_records = rr.split_records(ref), rr.split_records(got)
    for i, (a, b) in enumerate(zip(ref_records, got_records)):
        if a != b:
            seq = seqs[i]
            listing = "\n".join(f"    {k:3d}: {insn}" for k, insn in enumerate(seq.body))
            diff = "\n    ".join(rr.describe_record_difference(a, b))
            pytest.fail(f"sequence {i} (seed {SEED}) differs from qemu-riscv64 at its end:\n    {diff}\n"
                        f"{localize(seq, folder)}\nsequence {i}:\n{listing}", pytrace=False)
    pytest.fail(f"output lengths differ: qemu {len(ref)} bytes ({len(ref_records)} records), engine {len(got)} "
                f"bytes ({len(got_records)} records)", pytrace=False)
