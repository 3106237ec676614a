#!/usr/bin/env python3
"""The dense-server thesis's method in full-system mode, beside kvsim's capacity under load (SE mode).

The thesis (../shared/spec/kvs-workload.md, "How the dense-server thesis measured") ran Linux and its TCP/IP stack
with one memcached thread, took TPS = 1 / round-trip time of one request, and scaled it linearly to the stack and
the server. Here: one hart of the stack's core, caches and memory (configs/linux_fs.py platforms) boots Linux 6.1,
the client loads the items, warms up and sends GETs one at a time (Client.window = 1); TPS per core = 1 / mean RTT
(from the request's first byte on the wire to its response's last). The stack's TPS is that x its cores, the
server's that x the stacks per 1.5U of kvsim's own server table (results/figures/dense/dense_server_table.csv,
which is where kvsim's capacity under load, the second figure, comes from: SE mode, every core serving, the
highest offered load with < 1% loss).

Transport: TCP by default, as the thesis (the kernel's TCP/IP stack, a Java client). memcached takes no request
that spans datagrams, so values beyond one frame (~1,400 B) cannot be SET over UDP; over TCP requests and
responses span segments (values to 1 MiB; the server's largest chunk, item_max=, is the item's). `--transport udp`
takes values to 1 KiB. Either way the system boots and loads functionally once per clock and value size to a
checkpoint (over TCP the client saves its quiet connections) and every point restores it in detail, warm-up GETs
first (the caches start cold); `--boot detailed` instead boots and loads each point in detail (warm-up after the
load), the way session 11 measured TCP, to compare the two.

Reduced, and said so in the output: per point min(--requests, --bytes / value) measured GETs (at least
--min-requests) after as many warm-up GETs (at most 100), and min(1,024, 32 MiB / the item's chunk) items (1,024
up to 8 KiB values: they fit every L2, so Iridium's flash is seen only on cache misses of the kernel and server;
16 of 1 MiB values, which no cache holds).

    sim-scripts/fs_thesis_method.py [--sizes 64,128,...,1048576] [--requests 300] [--points mercury]
        [--boot checkpoint|detailed] [--out FILE]
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import tempfile
import time

import configs
from models.sim import simulate

linux_fs = configs.load("linux_fs")

ROOT = pathlib.Path(__file__).resolve().parent.parent

SERVER_TABLE = ROOT / "results" / "figures" / "dense" / "dense_server_table.csv"

# (row name, platform, A15 clock, DRAM latency, flash read, cores per stack, the server table's row)
POINTS = [
    ("Mercury-32 A7 1 GHz, DRAM 10 ns", "mercury-a7", "", "10ns", "20us", 32, "Mercury-32 (A7 1 GHz)"),
    ("Mercury-32 A7 1 GHz, DRAM 100 ns", "mercury-a7", "", "100ns", "20us", 32, "Mercury-32 (A7 1 GHz)"),
    ("Mercury-32 A15 1.5 GHz, DRAM 10 ns", "mercury-a15", "1.5GHz", "10ns", "20us", 32, "Mercury-32 (A15 1.5 GHz)"),
    ("Mercury-32 A15 1.5 GHz, DRAM 100 ns", "mercury-a15", "1.5GHz", "100ns", "20us", 32,
     "Mercury-32 (A15 1.5 GHz)"),
    ("Iridium-32 A7 1 GHz, flash 10 us", "iridium-a7", "", "10ns", "10us", 32, "Iridium-32 (A7 1 GHz, L2)"),
    ("Iridium-32 A7 1 GHz, flash 20 us", "iridium-a7", "", "10ns", "20us", 32, "Iridium-32 (A7 1 GHz, L2)"),
    ("Iridium-32 A15 1.5 GHz, flash 20 us", "iridium-a15", "1.5GHz", "10ns", "20us", 32,
     "Iridium-32 (A15 1.5 GHz, L2)"),
    ("KeyVault-16 A15 1.5 GHz, DRAM 10 ns", "keyvault", "", "10ns", "20us", 16, "KeyVault-16 (A15 1.5 GHz, L2)"),
    ("KeyVault-16 A15 1.5 GHz, DRAM 100 ns", "keyvault", "", "100ns", "20us", 16, "KeyVault-16 (A15 1.5 GHz, L2)"),
]
ITEMS = 1024
DATA_BYTES = 32 << 20  # assumed: the data set's chunks at most (1 MiB values: 16 items, beyond every cache)
WARMUP = 100        # assumed: warm-up GETs at most (after a restore the caches start cold)
# assumed: data segments in flight from the client (Client.tcp_segments) above the 45 full segments of the
# server's 65,535-byte window, so the window paces a large SET, as a kernel's TCP would; FS mode's wire never drops
TCP_SEGMENTS = 64
KEY_SIZE = 8        # the tiny data set's keys
HEADS = (1 << 12) * 8  # the server's buckets=12 heads


def items_of(size: int) -> int:
    return min(ITEMS, DATA_BYTES // linux_fs.item_chunk(KEY_SIZE, size))


def store_of(size: int) -> str:
    """The server's mem=: the data set's chunks and heads (at least the default 8 MiB), in MiB."""
    need = items_of(size) * linux_fs.item_chunk(KEY_SIZE, size) + HEADS
    return f"{max(8, -(-need // (1 << 20)) + 1)}m"


def system(platform: str, clock: str, latency: str, flash: str, size: int, requests: int, transport: str):
    s = linux_fs.system(client=True, detailed=True, platform=platform, core_clock=clock, latency=latency,
                        flash_read=flash, window=1, value_size=size, items=items_of(size), requests=requests,
                        transport=transport, store=store_of(size),
                        tcp_segments=TCP_SEGMENTS if transport == "tcp" else 0)
    s.client.get_ratio = 1.0
    return s


def counts(size: int, args) -> tuple[int, int]:
    """(measured GETs, warm-up GETs) of a point."""
    n = max(args.min_requests, min(args.requests, args.bytes // size))
    return n, min(WARMUP, n)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=",".join(str(64 << i) for i in range(15)))
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--bytes", type=int, default=16 << 20, help="value bytes of a point's measured GETs at most")
    ap.add_argument("--min-requests", type=int, default=10)
    ap.add_argument("--transport", default="tcp", choices=("tcp", "udp"))
    ap.add_argument("--boot", default="checkpoint", choices=("checkpoint", "detailed"),
                    help="restore a functional checkpoint per point (default), or boot and load each in detail")
    ap.add_argument("--points", default="", help="only the rows whose name contains one of these ('|' between)")
    ap.add_argument("--out", default=str(ROOT / "results" / "fs" / "thesis_method.md"))
    ap.add_argument("--keep", action="store_true",
                    help="keep the rows --out already holds (from earlier runs of this script) beside the new points")
    args = ap.parse_args()
    args.kept = kept_rows(pathlib.Path(args.out)) if args.keep else {}
    sizes = [int(x) for x in args.sizes.split(",")]
    table = {row["server"]: row for row in csv.DictReader(SERVER_TABLE.open())}
    points = [pt for pt in POINTS if any(w in pt[0] for w in args.points.split("|"))]
    if not points:
        raise SystemExit(f"--points {args.points!r} matches no row")
    if args.transport == "udp" and max(sizes) > 1024:
        raise SystemExit("--transport udp: values to 1024 B (a SET must fit one datagram); use tcp")
    results = {}
    with tempfile.TemporaryDirectory(prefix="fs-thesis-") as tmp:
        ckpts: dict[tuple, tuple[pathlib.Path, float]] = {}
        # Sizes in the order given (a long sweep can put the far ends first), every row at each size.
        for size in sizes:
            for name, platform, clock, latency, flash, _cores, _row in points:
                n, warm = counts(size, args)
                s = system(platform, clock, latency, flash, size, n, args.transport)
                boot_cpu = 0.0
                if args.boot == "checkpoint":
                    # A functional boot and load depend on the clock, the command line, the memory and the data
                    # set only (not on the caches or memory timing).
                    key = (s.clock, size, s.full_system.bootargs, s.full_system.memory)
                    if key not in ckpts:
                        c = system(platform, clock, latency, flash, size, 1, args.transport)
                        c.mode = "functional"
                        c.checkpoint_to = str(pathlib.Path(tmp) / f"ckpt-{len(ckpts)}")
                        t = time.process_time()
                        simulate(c)
                        ckpts[key] = (pathlib.Path(c.checkpoint_to), time.process_time() - t)
                        boot_cpu = ckpts[key][1]
                    s.restore_from = str(ckpts[key][0])
                else:
                    s.client.warmup_after_load = True
                s.client.warmup_requests = warm
                t = time.process_time()
                r = simulate(s)
                cpu = time.process_time() - t
                st = r.stats
                assert r.stop_reason == "client_done" and st["client.misses"] == 0, (r.stop_reason, name, size)
                assert st["client.hits"] == n, (st["client.hits"], n)
                rtt = st["client.latency.mean"] * 1e-9
                results[(name, size)] = (1 / rtt, rtt, st["client.insts_per_request"], n, warm, cpu, boot_cpu)
                print(f"{name} {size} B: {n} GETs, RTT {rtt * 1e6:.2f} us, TPS/core {1 / rtt:,.0f} "
                      f"({cpu:.1f} s CPU; functional boot and load {boot_cpu:.1f} s)", flush=True)
                write(args, sizes, points, table, results)
    return 0


def kept_rows(out: pathlib.Path) -> dict[tuple[str, int], str]:
    """The table rows of an earlier output, by (stack, value size)."""
    rows = {}
    for line in out.read_text().splitlines() if out.exists() else []:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) > 2 and cells[1].isdigit():
            rows[(cells[0], int(cells[1]))] = line
    return rows


def write(args, sizes, points, table, results) -> None:
    """The table of every point measured so far."""
    transport = {"tcp": "TCP", "udp": "UDP"}[args.transport]
    how = ("booted and loaded in detail per point, warm-up GETs after the load" if args.boot == "detailed" else
           "restored in detail from a functional checkpoint of the booted, loaded system (one per clock and value "
           "size), warm-up GETs after it")
    lines = ["# The thesis's method in FS mode beside kvsim's capacity under load", "",
             "`sim-scripts/fs_thesis_method.py " + f"--sizes {args.sizes} --requests {args.requests} --bytes "
             f"{args.bytes} --min-requests {args.min_requests} --transport {args.transport} --boot {args.boot}"
             + (f" --points '{args.points}'" if args.points else "") + "`. "
             f"**Reduced**: per point the measured GETs (column GETs) are min({args.requests}, {args.bytes:,} B / "
             f"value) and at least {args.min_requests}, after as many warm-up GETs (at most {WARMUP}); the data set "
             f"is min({ITEMS:,}, {DATA_BYTES >> 20} MiB / the item's chunk) items (column items). The thesis: 64 B "
             f"to 1 MB doubling. Thesis method: Linux 6.1 and its {transport} stack on one hart of the stack's core, "
             f"caches and memory, {how}; one GET outstanding; RTT from the request's first byte on the wire to its "
             "response's last; TPS per core = 1 / mean RTT, scaled linearly by the stack's cores and by the stacks "
             "per 1.5U of kvsim's server table. kvsim's capacity: results/figures/dense/dense_server_table.csv (SE "
             "mode, kvsim's own guest network stack, every core serving, the highest offered load with < 1% loss, "
             "8-byte values). Host CPU s: the point's detailed simulation; boot CPU s: the functional boot and load that "
             "wrote the checkpoint, where this point wrote it (nice 10, shared host)."
             + (" With --keep: the rows this file held before (earlier runs, same columns) are kept beside this "
                "run's points." if args.keep else ""), ""]
    head = "| stack | value B | items | GETs | RTT us | insts/GET | TPS per core | stack M TPS (thesis method) | " \
           "stacks per 1.5U | server M TPS (thesis method) | kvsim capacity: stack M req/s | " \
           "kvsim capacity: server M req/s | host CPU s | boot CPU s |"
    lines += [head, "|" + "---|" * 14]
    names = [pt[0] for pt in points]
    for name in [n for n, _ in args.kept if n not in names]:
        names.append(name)
    for name in dict.fromkeys(names):
        pt = next((p for p in points if p[0] == name), None)
        for size in sorted({sz for n, sz in args.kept if n == name} | set(sizes)):
            if (name, size) not in results:
                if (name, size) in args.kept:
                    lines.append(args.kept[(name, size)])
                continue
            cores, srv = pt[5], table[pt[6]]
            stacks = int(srv["stacks per 1.5U"])
            tps, rtt, insts, n, _warm, cpu, boot_cpu = results[(name, size)]
            lines.append(f"| {name} | {size} | {items_of(size):,} | {n} | {rtt * 1e6:,.2f} | {insts:,.0f} | "
                         f"{tps:,.0f} | {tps * cores / 1e6:,.3f} | {stacks} | {tps * cores * stacks / 1e6:,.1f} | "
                         f"{float(srv['stack M req/s']):,.3f} | {float(srv['server M req/s']):,.1f} | {cpu:,.1f} | "
                         f"{boot_cpu:,.1f} |")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
