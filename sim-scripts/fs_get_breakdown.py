#!/usr/bin/env python3
"""Where a GET's time goes in full-system mode: Linux's network stack, the memcached-class server, its hashing and
the rest, by symbol ranges from the kernel's System.map and the server's (/init's) symbol table, over UDP and TCP,
on the dense stacks' A7- and A15-class cores (configs/linux_fs.py platforms).

Each point is one detailed run of one hart serving one outstanding request at a time (the thesis's method:
Client.window = 1), 100% GETs of the data set's items, with FullSystem.profile counting the measured phase's
instructions and time by PC. UDP runs restore a checkpoint of the booted, loaded system (written once per clock by
a functional run); TCP runs boot in detail (the client does not checkpoint TCP connections).

Kernel symbols are classed by the directory of the object that defines them (workloads/fs/build/obj/*/built-in.a):
net/, drivers/net/ and drivers/virtio/ are the network stack and its driver. /init's symbols are classed by name:
mcd_hash is the hashing, the other mcd_* functions and init.c's server loop are the server, the rest is the C
library. Time per PC is where the hart's simulated clock advanced (fs_profile.rs).

    sim-scripts/fs_get_breakdown.py [--requests N] [--out results/fs/get_breakdown.md]
"""

from __future__ import annotations

import argparse
import bisect
import pathlib
import subprocess
import tempfile
import time

import configs
from models.sim import simulate

ROOT = pathlib.Path(__file__).resolve().parent.parent

BUILD = ROOT / "workloads" / "fs" / "build"
NM = "riscv64-linux-gnu-nm"
# Kernel object directories -> class (the first match wins; longer prefixes first).
KERNEL_DIRS = [
    ("drivers/net", "kernel: network stack and driver"),
    ("drivers/virtio", "kernel: network stack and driver"),
    ("net", "kernel: network stack and driver"),
    ("kernel/sched", "kernel: scheduler and idle"),
    ("kernel/time", "kernel: timers"),
    ("arch/riscv/lib", "kernel: copies and checksums (lib)"),
    ("lib", "kernel: copies and checksums (lib)"),
    ("arch/riscv", "kernel: traps, system calls, interrupts"),
    ("kernel/entry", "kernel: traps, system calls, interrupts"),
    ("kernel/irq", "kernel: traps, system calls, interrupts"),
    ("drivers/irqchip", "kernel: traps, system calls, interrupts"),
    ("mm", "kernel: memory allocation"),
    ("kernel", "kernel: other"),
    ("fs", "kernel: other"),
]
# Library archives (linked in when used) beside the built-in ones.
KERNEL_LIBS = [("arch/riscv/lib/lib.a", "kernel: copies and checksums (lib)"),
               ("lib/lib.a", "kernel: copies and checksums (lib)")]
CLASSES = ["kernel: network stack and driver", "kernel: traps, system calls, interrupts", "kernel: scheduler and idle",
           "kernel: timers", "kernel: copies and checksums (lib)", "kernel: memory allocation", "kernel: other",
           "server: hashing",
           "server: protocol, store, loop", "user: C library"]
GROUPS = {"kernel network stack": ["kernel: network stack and driver"],
          "server": ["server: protocol, store, loop"], "hashing": ["server: hashing"]}
INIT_SERVER = ("main", "serve", "worker", "mcd_")


def nm(path: pathlib.Path) -> list[tuple[int, str, str]]:
    out = subprocess.run([NM, "-n", str(path)], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms.append((int(parts[0], 16), parts[1], parts[2]))
    return syms


def kernel_classes() -> dict[str, str]:
    """Kernel text symbol -> class, by the directory of the built-in archive that defines it."""
    by_name: dict[str, str] = {}
    archives = [(f"{prefix}/built-in.a", cls) for prefix, cls in KERNEL_DIRS] + KERNEL_LIBS
    for name, cls in archives:
        archive = BUILD / "obj" / name
        if not archive.exists():
            continue
        out = subprocess.run([NM, str(archive)], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTW":
                by_name.setdefault(parts[2], cls)
    return by_name


class Symbols:
    """Text symbols of the kernel (System.map) and /init, sorted, each with its class."""

    def __init__(self) -> None:
        classes = kernel_classes()
        entries = []
        for line in (BUILD / "System.map").read_text().splitlines():
            addr, kind, name = line.split()[:3]
            if kind in "tTW":
                entries.append((int(addr, 16), name, classes.get(name, "kernel: other")))
        for addr, kind, name in nm(BUILD / "init"):
            if kind in "tTW":
                cls = ("server: hashing" if name == "mcd_hash" else
                       "server: protocol, store, loop" if name.startswith(INIT_SERVER) else "user: C library")
                entries.append((addr, name, cls))
        entries.sort()
        self.addrs = [e[0] for e in entries]
        self.entries = entries

    def of(self, pc: int) -> tuple[str, str]:
        i = bisect.bisect_right(self.addrs, pc) - 1
        if i < 0:
            raise ValueError(f"PC {pc:#x} is below every symbol")
        return self.entries[i][1], self.entries[i][2]


def attribute(profile: pathlib.Path, syms: Symbols) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """(class -> [insts, ps], symbol -> [insts, ps]) of a profile file."""
    by_class = {c: [0.0, 0.0] for c in CLASSES}
    by_sym: dict[str, list[float]] = {}
    for line in profile.read_text().splitlines():
        if line.startswith("#"):
            continue
        pc, n, ps = line.split()
        name, cls = syms.of(int(pc, 16))
        for d in (by_class[cls], by_sym.setdefault(f"{name} [{cls}]", [0.0, 0.0])):
            d[0] += int(n)
            d[1] += int(ps)
    return by_class, by_sym


def run_point(platform: str, transport: str, requests: int, ckpt: pathlib.Path | None, prof: pathlib.Path):
    s = configs.load("linux_fs").system(client=True, detailed=True, platform=platform, transport=transport,
                                        window=1, requests=requests, items=1024)
    s.client.get_ratio = 1.0
    s.full_system.profile = str(prof)
    if ckpt is not None:
        s.restore_from = str(ckpt)
        s.client.warmup_requests = 200      # assumed: warms the cold caches after the restore
    t = time.process_time()
    r = simulate(s)
    return r, time.process_time() - t


def checkpoint(platform: str, where: pathlib.Path) -> pathlib.Path:
    s = configs.load("linux_fs").system(client=True, platform=platform, window=1, items=1024, requests=1)
    s.client.get_ratio = 1.0
    s.mode = "functional"
    s.checkpoint_to = str(where)
    simulate(s)
    return where


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--platforms", default="mercury-a7,mercury-a15")
    ap.add_argument("--out", default=str(ROOT / "results" / "fs" / "get_breakdown.md"))
    args = ap.parse_args()
    syms = Symbols()
    rows, top = [], []
    with tempfile.TemporaryDirectory(prefix="fs-breakdown-") as tmp:
        tmpdir = pathlib.Path(tmp)
        for platform in args.platforms.split(","):
            ckpt = checkpoint(platform, tmpdir / f"ckpt-{platform}")
            for transport in ("udp", "tcp"):
                prof = tmpdir / f"{platform}-{transport}.prof"
                r, cpu = run_point(platform, transport, args.requests, ckpt if transport == "udp" else None, prof)
                st = r.stats
                assert r.stop_reason == "client_done" and st["client.misses"] == 0
                by_class, by_sym = attribute(prof, syms)
                req = st["client.requests"]
                total_i = sum(v[0] for v in by_class.values())
                total_t = sum(v[1] for v in by_class.values())
                rows.append((platform, transport, st, req, by_class, total_i, total_t, cpu))
                best = sorted(by_sym.items(), key=lambda kv: -kv[1][1])[:8]
                top.append((platform, transport, [(n, v[0] / req, v[1] / total_t) for n, v in best]))
                print(f"{platform} {transport}: {total_i / req:,.0f} insts, {total_t / req / 1e6:,.2f} us busy per GET, "
                      f"RTT mean {st['client.latency.mean'] / 1e3:,.2f} us ({cpu:.1f} s CPU)", flush=True)
    lines = ["# Where a GET's time goes in full-system mode (Linux 6.1, kernel UDP/TCP, virtio-net)", "",
             "`sim-scripts/fs_get_breakdown.py` (detailed, 1 hart, one outstanding GET at a time, "
             f"{args.requests} measured GETs of 1,024 items with 8-byte keys and values, every response checked; "
             "UDP restored from a checkpoint of the booted, loaded system with 200 warm-up GETs, TCP booted in "
             "detail). Time per GET is the measured phase's simulated time attributed by PC (where the hart's "
             "clock advanced), idle (wfi) excluded; RTT is the client's mean round trip.", ""]
    lines += ["| platform | transport | RTT mean us | busy us/GET | insts/GET | IPC | kernel network stack | server | "
              "hashing | other kernel | C library |", "|" + "---|" * 11]
    for platform, transport, st, req, by_class, ti, tt, _cpu in rows:
        def share(classes: list[str], by_class=by_class, req=req, tt=tt) -> str:
            i = sum(by_class[c][0] for c in classes) / req
            t = sum(by_class[c][1] for c in classes) / tt
            return f"{t:.1%} ({i:,.0f} insts)"
        other = [c for c in CLASSES if c.startswith("kernel:") and c not in GROUPS["kernel network stack"]]
        lines.append(f"| {platform} | {transport} | {st['client.latency.mean'] / 1e3:,.2f} | {tt / req / 1e6:,.2f} | "
                     f"{ti / req:,.0f} | {st['system.socket0.core0.ipc']:.3f} | "
                     f"{share(GROUPS['kernel network stack'])} | {share(GROUPS['server'])} | "
                     f"{share(GROUPS['hashing'])} | {share(other)} | {share(['user: C library'])} |")
    lines += ["", "## Every class (share of busy time, instructions per GET)", ""]
    lines += ["| platform | transport | " + " | ".join(CLASSES) + " |", "|" + "---|" * (2 + len(CLASSES))]
    for platform, transport, _st, req, by_class, _ti, tt, _cpu in rows:
        lines.append(f"| {platform} | {transport} | " + " | ".join(
            f"{by_class[c][1] / tt:.1%} / {by_class[c][0] / req:,.0f}" for c in CLASSES) + " |")
    lines += ["", "## The most expensive symbols (share of busy time, instructions per GET)", ""]
    for platform, transport, best in top:
        lines.append(f"- {platform} {transport}: " + "; ".join(f"{n} {t:.1%} / {i:,.0f}" for n, i, t in best))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
