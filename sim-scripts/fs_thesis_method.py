#!/usr/bin/env python3
"""The dense-server thesis's method in full-system mode, beside kvsim's capacity under load (SE mode).

The thesis (../shared/spec/kvs-workload.md, "How the dense-server thesis measured") ran Linux and its TCP/IP stack
with one memcached thread, took TPS = 1 / round-trip time of one request, and scaled it linearly to the stack and
the server. Here: one hart of the stack's core, caches and memory (configs/linux_fs.py platforms) boots Linux 6.1
functionally to a checkpoint (server up, items loaded), then each point restores it in detail and sends GETs one
at a time (Client.window = 1) over the kernel's UDP; TPS per core = 1 / mean RTT. The stack's TPS is that x its
cores, the server's that x the stacks per 1.5U of kvsim's own server table (results/figures/dense/
dense_server_table.csv, which is where kvsim's capacity under load, the second figure, comes from: SE mode, every
core serving, the highest offered load with < 1% loss).

Reduced, and said so in the output: values of 64 B to 1 KiB doubling (the client's UDP frames hold at most 1,400
bytes of value; the thesis went to 1 MB), --requests measured GETs per point after 100 warm-up GETs, 1,024 items
(they fit every L2, so Iridium's flash is seen only on cache misses of the kernel and server).

    sim-scripts/fs_thesis_method.py [--sizes 64,128,256,512,1024] [--requests 300]
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import tempfile
import time

import configs
from models.sim import simulate

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
]
ITEMS = 1024
WARMUP = 100        # assumed: warm-up GETs after a restore (the caches start cold)


def system(platform: str, clock: str, latency: str, flash: str, size: int, requests: int):
    s = configs.load("linux_fs").system(client=True, detailed=True, platform=platform, core_clock=clock,
                                        latency=latency, flash_read=flash, window=1, value_size=size, items=ITEMS,
                                        requests=requests)
    s.client.get_ratio = 1.0
    return s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="64,128,256,512,1024")
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--out", default=str(ROOT / "results" / "fs" / "thesis_method.md"))
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    table = {row["server"]: row for row in csv.DictReader(SERVER_TABLE.open())}
    results = {}
    with tempfile.TemporaryDirectory(prefix="fs-thesis-") as tmp:
        ckpts: dict[tuple[int, int], pathlib.Path] = {}
        for name, platform, clock, latency, flash, _cores, _row in POINTS:
            for size in sizes:
                s = system(platform, clock, latency, flash, size, args.requests)
                key = (s.clock, size)
                if key not in ckpts:
                    c = system(platform, clock, latency, flash, size, 1)
                    c.mode = "functional"
                    c.checkpoint_to = str(pathlib.Path(tmp) / f"ckpt-{s.clock}-{size}")
                    simulate(c)
                    ckpts[key] = pathlib.Path(c.checkpoint_to)
                s.restore_from = str(ckpts[key])
                s.client.warmup_requests = WARMUP
                t = time.process_time()
                r = simulate(s)
                cpu = time.process_time() - t
                st = r.stats
                assert r.stop_reason == "client_done" and st["client.misses"] == 0
                rtt = st["client.latency.mean"] * 1e-9
                results[(name, size)] = (1 / rtt, rtt, st["client.insts_per_request"])
                print(f"{name} {size} B: RTT {rtt * 1e6:.2f} us, TPS/core {1 / rtt:,.0f} ({cpu:.1f} s CPU)",
                      flush=True)
    lines = ["# The thesis's method in FS mode beside kvsim's capacity under load", "",
             "`sim-scripts/fs_thesis_method.py " + f"--sizes {args.sizes} --requests {args.requests}`. "
             f"**Reduced**: values {args.sizes} B (the thesis: 64 B to 1 MB doubling; the client's UDP frames hold at "
             f"most 1,400 bytes of value), {args.requests} measured GETs per point after {WARMUP} warm-up GETs, "
             f"{ITEMS:,} items. Thesis method: Linux 6.1 and its UDP stack on one hart of the stack's core, caches and "
             "memory, restored in detail from a functional checkpoint of the booted, loaded system; one GET "
             "outstanding; TPS per core = 1 / mean RTT, scaled linearly by the stack's cores and by the stacks per "
             "1.5U of kvsim's server table. kvsim's capacity: results/figures/dense/dense_server_table.csv (SE mode, "
             "kvsim's own guest network stack, every core serving, the highest offered load with < 1% loss, 8-byte "
             "values).", ""]
    head = "| stack | value B | RTT us | insts/GET | TPS per core | stack M TPS (thesis method) | stacks per 1.5U | " \
           "server M TPS (thesis method) | kvsim capacity: stack M req/s | kvsim capacity: server M req/s |"
    lines += [head, "|" + "---|" * 10]
    for name, _platform, _clock, _lat, _flash, cores, row in POINTS:
        srv = table[row]
        stacks = int(srv["stacks per 1.5U"])
        for size in sizes:
            tps, rtt, insts = results[(name, size)]
            lines.append(f"| {name} | {size} | {rtt * 1e6:,.2f} | {insts:,.0f} | {tps:,.0f} | "
                         f"{tps * cores / 1e6:,.3f} | {stacks} | {tps * cores * stacks / 1e6:,.1f} | "
                         f"{float(srv['stack M req/s']):,.3f} | {float(srv['server M req/s']):,.1f} |")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
