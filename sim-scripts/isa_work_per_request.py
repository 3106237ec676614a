#!/usr/bin/env python3
"""Instructions per request of the same KVS server code compiled for x86-64 and for RV64: how the guest's
instruction count compares with an x86 one, for the 1-core Xeon row (issue #23).

The KVS server's portable core (workloads/kvs: parsing, hashing, index, log, responses, the software loopback NIC's
queue) runs its native benchmark (tools/bench.c, `one`: EREW, prefetch on, one request a packet, 8-byte keys and
values, 95% GET) built with gcc -O2 for the host (x86-64) and with riscv64-linux-gnu-gcc -O2 -march=rv64gc_zicbop
(the guest's prefetch instructions) for RV64. Counted: the instructions executed inside `kvs_core_poll`, callees
included (the server's work; the benchmark's own injection and collection of frames are outside it): x86-64 by
callgrind (`--toggle-collect=kvs_core_poll`), RV64 from qemu-riscv64's trace of every instruction (`-singlestep -d
nochain,exec`), counting from each entry of `kvs_core_poll` to its return. Two packet counts are run and
differenced, so the load and set-up cancel; the result is instructions per request, and their ratio.

    sim-scripts/isa_work_per_request.py [--keys 4096] [--packets 2048,4096] [--write FILE]

With --write FILE it also writes the counts, the ratio and their provenance (the server sources' commit, the
compilers' versions, the command, the host CPU time) as JSON: results/validation/isa_work_per_request.json is that
file, and validate_xeon.py reads the ratio from it to state the simulated work a request in x86 terms.

Needs gcc, riscv64-linux-gnu-gcc, valgrind and qemu-riscv64. Slow: qemu traces every instruction (minutes).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
KVS = ROOT / "workloads" / "kvs"
SOURCES = ["kvs_store.c", "kvs_proto.c", "kvs_server.c", "keyhash.c", "platform_native.c", "tools/bench.c",
           "tests/kt_main.c"]
FUNCTION = "kvs_core_poll"
COMMON_FLAGS = ["-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-Werror", "-DKT_NO_MAIN"]
RV_FLAGS = ["-static", "-march=rv64gc_zicbop", "-mabi=lp64d"]


def build(out: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    x86, rv = out / "bench_x86", out / "bench_rv"
    subprocess.run(["gcc", *COMMON_FLAGS, "-o", str(x86), *SOURCES], cwd=KVS, check=True)
    subprocess.run(["riscv64-linux-gnu-gcc", *COMMON_FLAGS, *RV_FLAGS, "-o", str(rv), *SOURCES], cwd=KVS, check=True)
    return x86, rv


def x86_count(binary: pathlib.Path, keys: int, packets: int, out: pathlib.Path) -> int:
    """Instructions inside FUNCTION (callees included), every call, by callgrind."""
    cg = out / f"callgrind.{packets}"
    subprocess.run(["valgrind", "--tool=callgrind", f"--toggle-collect={FUNCTION}", f"--callgrind-out-file={cg}",
                    str(binary), str(keys), str(packets), "one"], check=True, capture_output=True, text=True)
    m = re.search(r"^summary:\s+(\d+)", cg.read_text(), re.M)
    if not m:
        raise SystemExit(f"no summary line in {cg}")
    return int(m.group(1))


def function_entry(binary: pathlib.Path) -> int:
    nm = subprocess.run(["riscv64-linux-gnu-nm", str(binary)], check=True, capture_output=True, text=True).stdout
    m = re.search(rf"^([0-9a-f]+) T {FUNCTION}$", nm, re.M)
    if not m:
        raise SystemExit(f"{FUNCTION} not found in {binary}")
    return int(m.group(1), 16)


def rv_count(binary: pathlib.Path, keys: int, packets: int) -> int:
    """Instructions inside FUNCTION (callees included), every call, from qemu's per-instruction trace: a call
    ends when the PC comes back to the instruction after the call (2 or 4 bytes after the caller's PC)."""
    entry = function_entry(binary)
    proc = subprocess.Popen(["qemu-riscv64", "-singlestep", "-d", "nochain,exec", str(binary), str(keys),
                             str(packets), "one"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    inside, total, prev, back = False, 0, 0, (0, 0)
    for line in proc.stderr:
        if not line.startswith(b"Trace"):
            continue
        i = line.index(b"/") + 1
        pc = int(line[i:i + 16], 16)
        if inside:
            if pc in back:
                inside = False
            else:
                total += 1
        elif pc == entry:
            inside, back = True, (prev + 2, prev + 4)
            total += 1
        prev = pc
    if proc.wait() != 0:
        raise SystemExit(f"qemu-riscv64 {binary} failed ({proc.returncode})")
    return total


def first_line(cmd: list[str]) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[0]


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def record(keys: int, packets: tuple[int, int], x: list[int], r: list[int], cpu_s: float, argv: list[str]) -> dict:
    """What was measured and how: the file validate_xeon.py reads the ratio from."""
    requests = packets[1] - packets[0]
    x_per, r_per = (x[1] - x[0]) / requests, (r[1] - r[0]) / requests
    dirty = git("status", "--porcelain", "--", "workloads/kvs")
    return {
        "what": (f"instructions executed inside {FUNCTION} (callees included), per request: two packet counts run "
                 "and differenced (tools/bench.c 'one' mode: EREW, prefetch on, one request a packet, 8-byte keys "
                 "and values, 95% GET); x86-64 counted by callgrind, RV64 from qemu-riscv64's trace"),
        "function": FUNCTION, "keys": keys, "packets": list(packets),
        "x86_64": {"compiler": first_line(["gcc", "--version"]), "flags": " ".join(COMMON_FLAGS),
                   "instructions": x, "per_request": x_per},
        "rv64": {"compiler": first_line(["riscv64-linux-gnu-gcc", "--version"]),
                 "flags": " ".join(COMMON_FLAGS + RV_FLAGS), "instructions": r, "per_request": r_per},
        "x86_over_rv64": x_per / r_per,
        "server_sources_commit": git("log", "-1", "--format=%H", "--", "workloads/kvs"),
        "server_sources_modified": bool(dirty),
        "tree_commit": git("rev-parse", "HEAD"),
        "command": " ".join(["sim-scripts/isa_work_per_request.py", *argv]),
        "host_cpu_s": round(cpu_s, 1),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keys", type=int, default=4096, help="items loaded before the measured packets")
    ap.add_argument("--packets", default="2048,4096", help="two packet counts, multiples of 32 (the bench's burst)")
    ap.add_argument("--write", metavar="FILE", help="also write the counts, the ratio and their provenance as JSON")
    args = ap.parse_args(argv)
    argv = list(sys.argv[1:] if argv is None else argv)
    low, high = (int(x) for x in args.packets.split(","))
    if low >= high or low % 32 or high % 32:
        ap.error("--packets: two increasing multiples of 32")
    for tool in ("gcc", "riscv64-linux-gnu-gcc", "valgrind", "qemu-riscv64", "riscv64-linux-gnu-nm"):
        if not shutil.which(tool):
            ap.error(f"{tool} not found")
    if args.write and not pathlib.Path(args.write).resolve().parent.is_dir():
        ap.error(f"--write {args.write}: its folder does not exist")
    cpu0 = time.process_time() + sum(os.times()[2:4])
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp)
        x86, rv = build(out)
        x = [x86_count(x86, args.keys, n, out) for n in (low, high)]
        r = [rv_count(rv, args.keys, n) for n in (low, high)]
    requests = high - low
    x_per, r_per = (x[1] - x[0]) / requests, (r[1] - r[0]) / requests
    print(f"{FUNCTION}, callees included, per request ({args.keys} keys; {low} and {high} packets, differenced):")
    print(f"  x86-64 (gcc -O2):                      {x_per:8.1f}  ({x[0]:,} / {x[1]:,})")
    print(f"  RV64 (gcc -O2 -march=rv64gc_zicbop):   {r_per:8.1f}  ({r[0]:,} / {r[1]:,})")
    print(f"  x86-64 / RV64:                         {x_per / r_per:8.3f}")
    if args.write:
        cpu = time.process_time() + sum(os.times()[2:4]) - cpu0
        pathlib.Path(args.write).write_text(json.dumps(record(args.keys, (low, high), x, r, cpu, argv), indent=1)
                                            + "\n")
        print(f"written: {args.write}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
