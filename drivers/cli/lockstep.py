#!/usr/bin/env python3
"""Lockstep comparison of the engine against qemu-riscv64, instruction by instruction (hart 0).

    sim-scripts/lockstep.py workloads/build/tests/branches [ARGS...] [--max-insts N] [--keep DIR]

qemu-riscv64 runs with `-singlestep -d cpu,fpu,nochain` (every instruction is its own translation block, each
logged with the PC, x0..x31 and f0..f31 before it executes; the log goes to a file with -D so the guest's own
stderr stays apart). The engine runs with System.trace_file, which holds one line per instruction of hart 0: the
PC, x1..x31 and f0..f31 as 16-digit hex (raw 64-bit patterns: a single is NaN-boxed on both sides). The two
streams are compared record by record; the first difference is reported with its instruction index, PC, the
instruction that produced it (the previous record's PC, disassembled) and the registers that differ.
Floating-point registers are compared exactly (they never hold addresses). Exit status 0 when they agree completely, 1 on a divergence, 2 on a usage error.

Stack addresses differ between the two: qemu puts the initial stack near 0x40_0080_0000, the engine at
STACK_TOP = 0x3f_ffff_0000 (workloads/ABI.md), and the blocks above the initial sp (argv/envp strings, auxv)
have different contents (qemu adds its own auxv entries and places strings differently). Each trace's first
record gives its initial sp S. A register value v is then normalized as
  * S - v for v in [S - 64 MiB, S]: the program's own stack; frames are laid out identically relative to S,
    so these offsets must match exactly;
  * "initial-stack" for v in (S, S + 1 MiB]: a pointer into the argv/envp/auxv block; both sides must point
    into their block, but the exact offset is not compared (strings and auxv are placed differently);
  * v itself otherwise (code, data, heap addresses and plain numbers are identical in both).
Two equal values always agree (a plain number such as 0x40_0000_0000 can fall inside qemu's stack range).
Both runs get the same argv and an empty environment. Values that depend on the host or on simulated time
(clock_gettime, mmap/brk addresses, auxv contents) will differ by design: use programs without them.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import pathlib
import subprocess
import sys
import tempfile
from typing import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[2]

ABI = ["zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5", "a6",
       "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"]
STACK_BELOW = 64 << 20
STACK_ABOVE = 1 << 20

FP_ABI = ["ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1", "fa0", "fa1", "fa2", "fa3", "fa4",
          "fa5", "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9", "fs10", "fs11", "ft8", "ft9",
          "ft10", "ft11"]

# (pc, [x1..x31], [f0..f31] or None when the trace has no floating-point registers)
Record = tuple[int, list[int], list[int] | None]


def qemu_records(log: pathlib.Path) -> Iterator[Record]:
    """Records of a `-d cpu[,fpu]` log: a ' pc  <hex>' line, then lines of 'xN/name <hex>' pairs (x0..x31 in
    order) and, with fpu, of 'fN/name <hex>' pairs (f0..f31). Any other line (qemu may add some) is ignored."""
    pc = None
    xs: list[str] = []
    fs: list[str] = []

    def record() -> Record:
        return pc, [int(v, 16) for v in xs[1:]], [int(v, 16) for v in fs] if len(fs) == 32 else None

    with open(log, "r", errors="replace") as f:
        for line in f:
            if line.startswith(" pc"):
                if pc is not None and len(xs) == 32:
                    yield record()
                pc, xs, fs = int(line.split()[1], 16), [], []
            elif line.startswith(" x"):
                xs.extend(line.split()[1::2])
            elif line.startswith(" f") and not line.startswith(" fcsr"):
                fs.extend(line.split()[1::2])
    if pc is not None and len(xs) == 32:
        yield record()


def engine_records(trace: pathlib.Path) -> Iterator[Record]:
    """Records of the engine's trace_file: 'PC x1 .. x31 f0 .. f31' in hex (or, from older traces, without the
    f registers), one instruction per line."""
    with open(trace, "r") as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) not in (32, 64):
                raise ValueError(f"{trace}:{n}: expected 64 hex fields (pc, x1..x31, f0..f31), got {len(fields)}")
            values = [int(x, 16) for x in fields]
            yield values[0], values[1:32], values[32:] or None


def normalize(value: int, sp0: int) -> int | str:
    if sp0 - STACK_BELOW <= value <= sp0:
        return f"sp0-{sp0 - value:#x}"
    if sp0 < value <= sp0 + STACK_ABOVE:
        return "initial-stack"
    return value


def kind(normalized: int | str) -> str:
    return normalized if isinstance(normalized, str) else "value"


@dataclasses.dataclass
class Outcome:
    agreed: int                       # records that agree
    qemu_count: int
    engine_count: int
    divergence: str | None            # None when everything agreed
    engine_error: str | None = None

    @property
    def ok(self) -> bool:
        return self.divergence is None and self.engine_error is None


def disassemble(binary: pathlib.Path, pc: int) -> str:
    proc = subprocess.run(["riscv64-linux-gnu-objdump", "-d", f"--start-address={pc:#x}",
                           f"--stop-address={pc + 4:#x}", str(binary)], capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.strip().startswith(f"{pc:x}:"):
            return " ".join(line.split("\t")[1:]).strip()
    return "?"


def compare(binary: pathlib.Path, qemu_log: pathlib.Path, engine_trace: pathlib.Path) -> Outcome:
    q_iter, e_iter = qemu_records(qemu_log), engine_records(engine_trace)
    q_sp0 = e_sp0 = None
    prev_pc = None
    index = 0
    for q, e in itertools.zip_longest(q_iter, e_iter):
        if q is None or e is None:
            # One trace ended: count what is left of the other (this record included).
            q_rest = 0 if q is None else 1 + sum(1 for _ in q_iter)
            e_rest = 0 if e is None else 1 + sum(1 for _ in e_iter)
            longer = "qemu" if q_rest else "the engine"
            last = f"{prev_pc:#x}" if prev_pc is not None else "none"
            return Outcome(index, index + q_rest, index + e_rest,
                           f"the traces agree for {index} instructions, then {longer} continues for "
                           f"{max(q_rest, e_rest)} more (last common pc {last})")
        (qpc, qregs, qfregs), (epc, eregs, efregs) = q, e
        if index == 0:
            q_sp0, e_sp0 = qregs[1], eregs[1]
        problems = []
        if qpc != epc:
            problems.append(f"pc: engine {epc:#x}, qemu {qpc:#x}")
        for r in range(31):
            if qregs[r] == eregs[r]:
                continue        # identical values agree, even when one happens to fall in a stack range
            qn, en = normalize(qregs[r], q_sp0), normalize(eregs[r], e_sp0)
            if qn != en:
                problems.append(f"x{r + 1}/{ABI[r + 1]}: engine {eregs[r]:#018x} ({kind(en)}), "
                                f"qemu {qregs[r]:#018x} ({kind(qn)})")
        if qfregs is not None and efregs is not None:
            problems.extend(f"f{r}/{FP_ABI[r]}: engine {efregs[r]:#018x}, qemu {qfregs[r]:#018x}"
                            for r in range(32) if qfregs[r] != efregs[r])
        if problems:
            culprit = (f"after the instruction at {prev_pc:#x}: {disassemble(binary, prev_pc)}"
                       if prev_pc is not None else "in the initial state")
            text = f"first divergence at instruction {index} (pc {qpc:#x}), {culprit}\n  " + "\n  ".join(problems)
            return Outcome(index, index + 1, index + 1, text)
        prev_pc = qpc
        index += 1
    return Outcome(index, index, index, None)


def run(binary: pathlib.Path, args: list[str], *, max_insts: int = 2_000_000, workdir: pathlib.Path) -> Outcome:
    from models.errors import SimError
    from models.sim import simulate
    from models.system import System, Workload

    workdir.mkdir(parents=True, exist_ok=True)
    qemu_log, engine_trace = workdir / "qemu.log", workdir / "engine.trace"
    subprocess.run(["qemu-riscv64", "-singlestep", "-d", "cpu,fpu,nochain", "-D", str(qemu_log), str(binary), *args],
                   capture_output=True, env={}, timeout=600)
    system = System(workload=Workload(binary=str(binary), argv=list(args), env=[]), max_insts=max_insts,
                    trace_file=str(engine_trace))
    error = None
    try:
        result = simulate(system)
        if result.stop_reason != "exit":
            error = f"the engine stopped with {result.stop_reason} after {result.insts} instructions"
    except SimError as exc:
        error = f"the engine raised {type(exc).__name__}: {exc}"
    if not engine_trace.exists():
        return Outcome(0, 0, 0, "the engine wrote no trace file", error)
    outcome = compare(binary, qemu_log, engine_trace)
    outcome.engine_error = error
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary", type=pathlib.Path)
    parser.add_argument("args", nargs="*", help="guest arguments")
    parser.add_argument("--max-insts", type=int, default=2_000_000, help="engine instruction limit")
    parser.add_argument("--keep", type=pathlib.Path, help="keep both traces in this folder")
    opts = parser.parse_args(argv)
    if not opts.binary.is_file():
        print(f"no such program: {opts.binary}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="lockstep-") as tmp:
        outcome = run(opts.binary.resolve(), opts.args, max_insts=opts.max_insts, workdir=opts.keep or pathlib.Path(tmp))
    if outcome.engine_error:
        print(outcome.engine_error)
    if outcome.divergence:
        print(outcome.divergence)
    else:
        print(f"lockstep: {outcome.agreed} instructions agree")
    return 0 if outcome.ok else 1


if __name__ == "__main__":
    sys.exit(main())
