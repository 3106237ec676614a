#!/usr/bin/env python3
"""Speed of the functional engine against qemu-riscv64 on the same binary (`make bench`).

    sim-scripts/bench.py [--rounds N] [--qemu-repeats R]

Runs workloads/build/bench/kvmix (hashing, a hash table, sorting, atomics; ~5.5 million instructions per
round) in the engine and under qemu-riscv64, checks that both print the same checksum and exit status, and
prints simulated MIPS for both: the engine's instruction count divided by each one's host wall time (qemu does
not count instructions, so it is credited with the engine's count for the same binary and arguments; qemu's
time is the best of R runs). Exit status 1 when the outputs differ.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from models.sim import simulate  # noqa: E402
from models.system import System, Workload  # noqa: E402

BENCH = ROOT / "workloads" / "build" / "bench" / "kvmix"


def run_qemu(args: list[str]) -> tuple[float, bytes, int]:
    started = time.perf_counter()
    proc = subprocess.run(["qemu-riscv64", str(BENCH), *args], capture_output=True, env={})
    return time.perf_counter() - started, proc.stdout, proc.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=50, help="kvmix rounds (~5.5 M instructions each)")
    parser.add_argument("--qemu-repeats", type=int, default=3, help="qemu runs; the fastest counts")
    opts = parser.parse_args(argv)
    console = Console()
    if not BENCH.is_file():
        console.print(f"[red]{BENCH} is missing: run `make workloads`")
        return 2
    args = [str(opts.rounds)]

    result = simulate(System(workload=Workload(binary=str(BENCH), argv=args)))
    if result.stop_reason != "exit":
        console.print(f"[red]the engine stopped with {result.stop_reason}")
        return 1
    qemu_runs = [run_qemu(args) for _ in range(max(1, opts.qemu_repeats))]
    qemu_seconds = min(r[0] for r in qemu_runs)
    _, qemu_out, qemu_code = qemu_runs[0]

    insts = result.insts
    engine_mips = insts / result.host_seconds / 1e6
    qemu_mips = insts / qemu_seconds / 1e6
    table = Table(title=f"kvmix, {opts.rounds} rounds: {insts:,} instructions")
    for col in ("runner", "host seconds", "simulated MIPS", "exit"):
        table.add_column(col, justify="right" if col != "runner" else "left")
    same = bytes(result.stdout) == qemu_out and result.exit_code == qemu_code
    table.add_row("kvsim engine (functional)", f"{result.host_seconds:.3f}", f"{engine_mips:,.1f}",
                  str(result.exit_code))
    table.add_row("qemu-riscv64 (best of %d)" % len(qemu_runs), f"{qemu_seconds:.3f}", f"{qemu_mips:,.1f}",
                  str(qemu_code))
    console.print(table)
    console.print(f"engine: {bytes(result.stdout).decode(errors='replace').strip()}")
    console.print(f"qemu:   {qemu_out.decode(errors='replace').strip()}")
    console.print(f"engine / qemu speed: {engine_mips / qemu_mips:.3f}  "
                  f"(qemu is {qemu_mips / engine_mips:.1f}x faster)")
    if not same:
        console.print(f"[red]outputs differ: engine exit {result.exit_code}, qemu exit {qemu_code}")
        return 1
    console.print("outputs match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
