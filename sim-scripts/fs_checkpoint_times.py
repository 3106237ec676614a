#!/usr/bin/env python3
"""Host time to boot Linux on the FS machine and to restore a checkpoint of it, functionally and in detail.

Each row is one run of configs/linux_fs.py with the client (1,024 items, `--requests` measured GETs, UDP, one
outstanding): booted functionally (with and without writing the checkpoint), booted in detail, and restored from
the checkpoint functionally and in detail (no warm-up). Host CPU time of this process (the engine runs in it),
best of `--repeat` runs: the host is shared, and CPU time is less noisy than wall time.

    sim-scripts/fs_checkpoint_times.py [--requests 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import tempfile
import time

import configs
from models.sim import simulate

ROOT = pathlib.Path(__file__).resolve().parent.parent


def system(detailed: bool, requests: int):
    return configs.load("linux_fs").system(client=True, detailed=detailed, window=1, items=1024, requests=requests)


def timed(s) -> tuple[float, dict]:
    t = time.process_time()
    r = simulate(s)
    assert r.stop_reason == "client_done" and r.stats["client.misses"] == 0
    return time.process_time() - t, r.stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "results" / "fs" / "checkpoint_times.md"))
    args = ap.parse_args()
    rows: dict[str, list[float]] = {}
    info: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="fs-ckpt-times-") as tmp:
        ckpt = pathlib.Path(tmp) / "booted"
        for _ in range(args.repeat):
            shutil.rmtree(ckpt, ignore_errors=True)
            points = []
            s = system(False, args.requests)
            s.checkpoint_to = str(ckpt)
            points.append(("boot, load, write the checkpoint, measure (functional)", s))
            points.append(("boot, load, measure (functional)", system(False, args.requests)))
            points.append(("boot, load, measure (detailed)", system(True, args.requests)))
            for detailed in (False, True):
                s = system(detailed, args.requests)
                s.restore_from = str(ckpt)
                s.client.warmup_requests = 0
                points.append((f"restore, measure ({'detailed' if detailed else 'functional'})", s))
            for name, s in points:
                cpu, st = timed(s)
                rows.setdefault(name, []).append(cpu)
                info[name] = st
    lines = ["# Host time to boot and to restore an FS checkpoint", "",
             f"`sim-scripts/fs_checkpoint_times.py --requests {args.requests} --repeat {args.repeat}`: Linux 6.1 to "
             f"/init, eth0 up, 1,024 items loaded over UDP, then {args.requests} measured GETs (one outstanding); "
             "host CPU time of the process, best of the repeats (Python start-up excluded).", "",
             "| run | host CPU s (best) | all repeats | checkpoint bytes |", "|---|---|---|---|"]
    for name, cpus in rows.items():
        st = info[name]
        ck = st.get("system.checkpoint.bytes")
        lines.append(f"| {name} | {min(cpus):.2f} | {', '.join(f'{c:.2f}' for c in cpus)} | "
                     f"{f'{ck:,.0f}' if ck else ''} |")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
