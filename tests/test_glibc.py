"""Ordinary Linux programs on Debian's static glibc (RV64GC with F and D, lp64d), built as a user builds them
(`-static -O2`, workloads/glibc/): each must print the same output and exit with the same status as under
qemu-riscv64, in functional and in detailed mode. The pthreads program runs one thread per simulated core.

The expected output is never stored: qemu produces it at test time."""

from __future__ import annotations

import pytest
from test_qemu_diff import assert_same

from conftest import BUILD, as_guest_run, run_engine, run_qemu

GLIBC = BUILD / "glibc"
INSN_CAP = 400_000_000

# (program, arguments, System parameters). Arguments keep the detailed runs to a few seconds.
PROGRAMS = [
    ("hello", [], {}),
    ("malloc100", [], {"mem_limit": "512MiB"}),
    ("qsort", [], {}),
    ("pthreads", [], {"harts": 4}),
    ("dhry", ["20000"], {}),
    ("linpack", ["40"], {}),
]


def run_pair(name, args, params, mode):
    binary = GLIBC / name
    ref = run_qemu(binary, args)
    result = run_engine(binary, args, max_insts=INSN_CAP, mode=mode, **params)
    assert result.stop_reason == "exit", f"{name} ({mode}): stopped with {result.stop_reason} after {result.insts}"
    return ref, as_guest_run(result), result


@pytest.mark.parametrize("name,args,params", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_glibc_program_matches_qemu_functional(name, args, params, workloads_built, engine):
    ref, got, _ = run_pair(name, args, params, "functional")
    assert ref.stdout, f"{name} printed nothing under qemu-riscv64: the program is broken"
    assert ref.exit_code == 0, f"{name} fails under qemu-riscv64 ({ref.exit_code}): the program is broken"
    assert_same(name, ref, got)


@pytest.mark.slow
@pytest.mark.parametrize("name,args,params", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_glibc_program_matches_qemu_detailed(name, args, params, workloads_built, engine):
    ref, got, result = run_pair(name, args, params, "detailed")
    assert_same(f"{name} (detailed)", ref, got)
    cycles = [v for k, v in result.stats.items() if k.endswith(".cycles")]
    assert cycles and max(cycles) > 0, "the detailed run timed its instructions"


def test_pthreads_runs_one_thread_per_hart(workloads_built, engine):
    """The four threads run on four harts, each doing a share of the work; with fewer harts than threads
    pthread_create fails (EAGAIN), as at a thread limit, and the program says so."""
    result = run_engine(GLIBC / "pthreads", [], harts=4, max_insts=INSN_CAP)
    assert result.stop_reason == "exit" and result.exit_code == 0
    insts = [h["insts"] for h in result.harts]
    # The main thread also fills the array; each created thread sums a quarter of it (about 1/10 of the total).
    assert all(n > result.insts // 20 for n in insts), insts
    short = run_engine(GLIBC / "pthreads", [], harts=2, max_insts=INSN_CAP)
    assert short.exit_code == 1 and b"pthread_create failed" in bytes(short.stdout)


def test_fp_benchmark_uses_the_fp_units(workloads_built, engine):
    """The Linpack-like kernel runs FP instructions through the core model's FP units (detailed mode)."""
    result = run_engine(GLIBC / "linpack", ["20"], mode="detailed", max_insts=INSN_CAP)
    assert result.stop_reason == "exit" and result.exit_code == 0
    def total(stat):
        """The stat summed over the cores of the timing model (not the harts' own counters)."""
        return sum(v for k, v in result.stats.items() if k.startswith("system.socket") and k.endswith("." + stat))

    assert total("fp_fma_ops") > 1000 and total("fp_div_ops") > 10, {k: v for k, v in result.stats.items()
                                                                    if ".fp_" in k}
    assert total("fp_ops") == sum(total(f"fp_{c}_ops") for c in ("add", "mul", "fma", "cvt", "div"))
    # The core model and the functional hart count the same FP instructions.
    assert total("fp_ops") == result.stats["system.hart0.fp_ops"]
