#!/usr/bin/env python3
"""Capacity under load in full-system mode beside SE mode, for one dense stack's cores, caches and memory.

Capacity is kvsim's metric (../shared/spec/kvs-workload.md): the highest open-loop offered load with < 1% of the
measured frames lost, found by the capacity search (drivers/capacity.py), here to --resolution. Both ways the
ghost client sends memcached binary GETs over UDP (--value-size bytes, 8-byte keys, --items items) at the offered
rate, every response checked:

* FS mode: Linux 6.1 boots on --harts harts of the stack (configs/linux_fs.py platforms) and /init serves one
  memcached-class thread per hart, pinned, on the kernel's UDP sockets. The machine has one virtio-net device with
  one receive queue: the kernel takes every datagram in, on whichever hart the interrupt reaches, and hands it to
  the socket of its server thread. The system boots and loads functionally once to a checkpoint; every probe
  restores it in detail and warms the caches over --warmup GETs before measuring. A datagram the guest drops (the
  device's ring or a socket's buffer full) is counted lost once the wire falls silent (engine fs_net.rs,
  LOST_AFTER_SILENCE_PS).
* SE mode: the same server program's instances, one per core (configs/mercury.py `system`), on kvsim's own guest
  network stack and the stack's integrated MAC, which steers each frame to its core's queue. Each probe loads the
  items in detail.

Per hart the figures scale linearly to the stack's cores (the thesis's scaling); the columns say per hart and per
stack. Reduced, and said so in the output: --harts harts, not the stack's 16-32; --requests measured GETs per hart
per probe.

    sim-scripts/fs_capacity.py [--platform mercury-a7] [--harts 1,2] [--value-size 64] [--modes fs,se]
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import tempfile
import time

import configs
from drivers import capacity as cap
from models.sim import simulate

linux_fs = configs.load("linux_fs")
mercury = configs.load("mercury")

ROOT = pathlib.Path(__file__).resolve().parent.parent

# The stacks' cores per stack (platforms.md) and their SE configuration (configs/mercury.py `system` arguments).
STACKS = {
    "mercury-a7": (32, dict(core_kind="a7")),
    "mercury-a15": (32, dict(core_kind="a15", clock="1.5GHz")),
}
HIGH_PER_HART_MPPS = 0.5   # assumed: the search's first probe, per hart (an A7 serves a 64 B GET in ~3-30 us)
RAISE_HIGH = 4             # a first probe that sustains is no upper bound: the search starts again this much higher
MAX_RAISES = 3             # ... at most this many times (0.5 -> 32 Mpps per hart), then the run stops with an error


def progress_printer(mode: str, platform: str, harts: int):
    return lambda p: print(f"  {mode} {platform} x{harts}: {p.offered_mpps:.4f} Mpps offered, loss {p.loss:.4f}",
                           flush=True)


def search_from_above(evaluate, harts: int, resolution: float, progress) -> cap.SearchResult:
    """drivers/capacity.py's search, its first probe raised until that probe loses frames (an A15 in SE mode
    sustains more than HIGH_PER_HART_MPPS)."""
    high, earlier = HIGH_PER_HART_MPPS * harts, []
    for _ in range(MAX_RAISES + 1):
        res = cap.search(evaluate, high, resolution=resolution, progress=progress)
        # Every probe run stays in the record (the table's probe count and host time cover the raised ones).
        res = dataclasses.replace(res, probes=earlier + res.probes)
        if res.best is None or not res.line_limited:
            return res
        earlier, high = res.probes, high * RAISE_HIGH
    return res


def fs_system(platform: str, harts: int, args, requests: int, detailed: bool):
    s = linux_fs.system(harts=harts, detailed=detailed, client=True, platform=platform, latency=args.latency,
                        items=args.items, requests=requests, value_size=args.value_size, transport="udp")
    s.client.get_ratio = 1.0
    return s


def se_system(platform: str, harts: int, args, rate: float):
    _cores, kw = STACKS[platform]
    s = mercury.system(cores=harts, latency=args.latency, items=args.items, requests=args.requests * harts,
                       get_ratio=1.0, value_size=args.value_size, **kw)
    s.client.offered_mpps = rate
    return s


def fs_capacity(platform: str, harts: int, args, tmp: pathlib.Path) -> tuple[cap.SearchResult, float, float]:
    """The FS search: (its result, host CPU s of the functional boot and load, host CPU s of the probes)."""
    boot = fs_system(platform, harts, args, 1, detailed=False)
    boot.checkpoint_to = str(tmp / f"fs-{platform}-{harts}")
    t = time.process_time()
    simulate(boot)
    boot_cpu = time.process_time() - t

    def make(rate: float):
        s = fs_system(platform, harts, args, args.requests * harts, detailed=True)
        s.restore_from = boot.checkpoint_to
        s.client.warmup_requests = args.warmup * harts
        s.client.offered_mpps = rate
        return s

    t = time.process_time()
    res = search_from_above(cap.simulated_server(make), harts, args.resolution, progress_printer("FS", platform, harts))
    return res, boot_cpu, time.process_time() - t


def se_capacity(platform: str, harts: int, args) -> tuple[cap.SearchResult, float]:
    t = time.process_time()
    res = search_from_above(cap.simulated_server(lambda rate: se_system(platform, harts, args, rate)), harts,
                            args.resolution, progress_printer("SE", platform, harts))
    return res, time.process_time() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", default="mercury-a7", choices=sorted(STACKS))
    ap.add_argument("--harts", default="1,2")
    ap.add_argument("--modes", default="fs,se")
    ap.add_argument("--value-size", type=int, default=64)
    ap.add_argument("--latency", default="10ns", help="the stacked DRAM's latency")
    ap.add_argument("--items", type=int, default=1024)
    ap.add_argument("--requests", type=int, default=1000, help="measured GETs per hart per probe")
    ap.add_argument("--warmup", type=int, default=200, help="FS: warm-up GETs per hart after the restore")
    ap.add_argument("--resolution", type=float, default=0.05)
    ap.add_argument("--out", default=str(ROOT / "results" / "fs" / "capacity.md"))
    args = ap.parse_args()
    harts_list = [int(h) for h in args.harts.split(",")]
    modes = args.modes.split(",")
    if set(modes) - {"fs", "se"} or not modes:
        raise SystemExit(f"--modes {args.modes!r}: fs, se or both")
    cores, _ = STACKS[args.platform]
    rows = []
    with tempfile.TemporaryDirectory(prefix="fs-capacity-") as tmp:
        for harts in harts_list:
            for mode in modes:
                if mode == "fs":
                    res, boot_cpu, cpu = fs_capacity(args.platform, harts, args, pathlib.Path(tmp))
                else:
                    (res, cpu), boot_cpu = se_capacity(args.platform, harts, args), 0.0
                if res.best is None or res.line_limited:
                    raise SystemExit(f"{mode} x{harts}: no capacity found (first probe raised {MAX_RAISES} "
                                     f"times from {HIGH_PER_HART_MPPS * harts} Mpps): {res.table()}")
                st = res.best.stats
                rows.append((mode, harts, res.best.offered_mpps, res.best.loss, st["client.throughput_mrps"],
                             st["client.latency.mean"] / 1e3, st.get("client.latency.p95", float("nan")) / 1e3,
                             st["client.insts_per_request"], len(res.probes), boot_cpu, cpu))
                print(f"{mode} {args.platform} x{harts}: capacity {res.best.offered_mpps * 1e6:,.0f} frames/s "
                      f"({cpu:.1f} s CPU)", flush=True)
                write(args, cores, rows)
    return 0


def write(args, cores: int, rows) -> None:
    lines = ["# Capacity under load: FS mode (Linux's UDP stack) beside SE mode (kvsim's guest stack)", "",
             f"`sim-scripts/fs_capacity.py --platform {args.platform} --harts {args.harts} --modes {args.modes} "
             f"--value-size {args.value_size} --latency {args.latency} --items {args.items} --requests "
             f"{args.requests} --warmup {args.warmup} --resolution {args.resolution}`. Capacity: the highest "
             f"open-loop offered load with < 1% of the measured frames lost (drivers/capacity.py's search, to "
             f"{args.resolution:.0%}). memcached binary GETs over UDP, {args.value_size} B values, {args.items:,} "
             f"items, one request per frame, DRAM {args.latency}. **Reduced**: {args.harts} harts, not the stack's "
             f"{cores}; {args.requests:,} measured GETs per hart per probe; per stack = per hart x {cores} (linear, "
             "as the thesis scaled). FS: one virtio-net receive queue (the kernel steers each datagram to its "
             "thread's socket), restored in detail from a functional checkpoint per probe, "
             f"{args.warmup} warm-up GETs per hart; SE: the stack's integrated MAC steers each frame to its core's "
             "queue, kvsim's own guest network stack, loaded in detail per probe. Host CPU s at nice 10 on a shared "
             "host.", "",
             "| mode | platform | harts | capacity k req/s | per hart k req/s | stack M req/s (x cores) | loss at "
             "capacity | answered k req/s | mean latency us | p95 latency us | insts/GET | probes | boot CPU s | "
             "search CPU s |", "|" + "---|" * 14]
    for mode, harts, mpps, loss, thr, mean, p95, insts, probes, boot_cpu, cpu in rows:
        lines.append(f"| {mode.upper()} | {args.platform} | {harts} | {mpps * 1e3:,.1f} | {mpps * 1e3 / harts:,.1f} | "
                     f"{mpps / harts * cores:,.3f} | {loss:.4f} | {thr * 1e3:,.1f} | {mean:,.2f} | {p95:,.2f} | "
                     f"{insts:,.0f} | {probes} | {boot_cpu:,.1f} | {cpu:,.1f} |")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
