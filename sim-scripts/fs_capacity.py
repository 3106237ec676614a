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
  device's ring or a socket's buffer full) is counted lost once the guest is idle with nothing left to take in
  (engine fs_net.rs, guest_idle).
* SE mode: the same server program's instances, one per core (configs/mercury.py `system`), on kvsim's own guest
  network stack and the stack's integrated MAC, which steers each frame to its core's queue. Each probe loads the
  items in detail.

Per hart the figures scale linearly to the stack's cores (the thesis's scaling); the columns say per hart and per
stack. Reduced, and said so in the output: --harts harts, not the stack's 16-32; --requests measured GETs per hart
per probe.

The stacks (STACKS): Mercury and Iridium with A7- or A15-class cores, KeyVault. Both modes run the same cores at the
same clock (an A15-class core at 1.5 GHz, the thesis's faster clock), caches and memory: the stacked DRAM at
--latency, or Iridium's flash at --flash-read. The network differs by design: FS has the virtio-net device, SE the
stack's own NIC (Mercury's and Iridium's integrated MAC; KeyVault's zero-copy NIC, here on its own 10 GbE port
rather than a twelfth of its switch's uplink, so that the wire limits neither mode). KeyVault has 2-16 cores.
Each platform's table is its own section of --out; a run replaces its platform's section and keeps the others.

    sim-scripts/fs_capacity.py [--platform mercury-a7] [--harts 1,2] [--value-size 64] [--modes fs,se]
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import tempfile
import time
from typing import Callable

import configs
from drivers import capacity as cap
from models import System
from models.sim import simulate
from models.stacked import NandFlash, StackedDram

linux_fs = configs.load("linux_fs")
mercury = configs.load("mercury")
iridium = configs.load("iridium")
keyvault = configs.load("keyvault")

ROOT = pathlib.Path(__file__).resolve().parent.parent


@dataclasses.dataclass(frozen=True)
class StackSpec:
    """One dense stack as both modes run it."""
    title: str
    cores: int                  # cores per stack (platforms.md), the thesis's linear scaling
    clock: str                  # the cores' clock, both modes ('' = the core kind's own: an A7 at 1 GHz)
    memory: str                 # 'dram' (--latency) or 'flash' (--flash-read)
    se_system: Callable[..., System]    # (harts, args, **client_kw) -> the SE system

    def memory_text(self, args) -> str:
        return f"flash reads {args.flash_read}" if self.memory == "flash" else f"DRAM {args.latency}"


def _mercury(kind: str, clock: str):
    return lambda harts, args, **kw: mercury.system(cores=harts, core_kind=kind, clock=clock or None,
                                                    latency=args.latency, **kw)


def _iridium(kind: str, clock: str):
    return lambda harts, args, **kw: iridium.system(cores=harts, core_kind=kind, clock=clock or None,
                                                    read_latency=args.flash_read, **kw)


def _keyvault(harts, args, **kw):
    return keyvault.system(cores=harts, latency=args.latency, switch=False, **kw)


# The stacks' densest core counts, as their configs declare them: Mercury's DRAM and Iridium's flash take two cores
# per port or controller (models/stacked.py; 32 cores, the thesis's densest), KeyVault 2-16 (configs/keyvault.py).
_DRAM, _FLASH = StackedDram(), NandFlash()
MERCURY_CORES = _DRAM.ports * _DRAM.max_cores_per_port
IRIDIUM_CORES = _FLASH.controllers * _FLASH.max_cores_per_port
STACKS = {
    "mercury-a7": StackSpec("Mercury A7 1 GHz", MERCURY_CORES, "", "dram", _mercury("a7", "")),
    "mercury-a15": StackSpec("Mercury A15 1.5 GHz", MERCURY_CORES, "1.5GHz", "dram", _mercury("a15", "1.5GHz")),
    "iridium-a7": StackSpec("Iridium A7 1 GHz, 2 MB L2", IRIDIUM_CORES, "", "flash", _iridium("a7", "")),
    "iridium-a15": StackSpec("Iridium A15 1.5 GHz, 2 MB L2", IRIDIUM_CORES, "1.5GHz", "flash",
                             _iridium("a15", "1.5GHz")),
    "keyvault": StackSpec("KeyVault A15 1.5 GHz, 2 MB L2", keyvault.MAX_CORES, "", "dram", _keyvault),
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
                        flash_read=args.flash_read, core_clock=STACKS[platform].clock, items=args.items,
                        requests=requests, value_size=args.value_size, transport="udp")
    s.client.get_ratio = 1.0
    return s


def se_system(platform: str, harts: int, args, rate: float):
    s = STACKS[platform].se_system(harts, args, items=args.items, requests=args.requests * harts, get_ratio=1.0,
                                   value_size=args.value_size)
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
    ap.add_argument("--latency", default="10ns", help="the stacked DRAM's latency (Mercury, KeyVault)")
    ap.add_argument("--flash-read", default="20us", help="Iridium's flash read latency")
    ap.add_argument("--items", type=int, default=1024)
    ap.add_argument("--requests", type=int, default=1000, help="measured GETs per hart per probe")
    ap.add_argument("--warmup", type=int, default=200, help="FS: warm-up GETs per hart after the restore")
    ap.add_argument("--resolution", type=float, default=0.05)
    ap.add_argument("--out", default=str(ROOT / "results" / "fs" / "capacity.md"))
    args = ap.parse_args()
    harts_list, modes = check_args(args)
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
                             st["client.latency.mean"] / 1e3, st["client.latency.p95"] / 1e3,
                             st["client.latency.p999"] / 1e3, st["client.insts_per_request"],
                             len(res.probes), boot_cpu, cpu))
                print(f"{mode} {args.platform} x{harts}: capacity {res.best.offered_mpps * 1e6:,.0f} frames/s "
                      f"({cpu:.1f} s CPU)", flush=True)
                out = pathlib.Path(args.out)
                out.parent.mkdir(parents=True, exist_ok=True)
                old = out.read_text() if out.exists() else ""
                out.write_text(replace_section(old, args.platform, section(args, rows)))
    return 0


def check_args(args) -> tuple[list[int], list[str]]:
    """The harts and modes, every system they name built once before any simulation (a KeyVault of 1 core, a
    latency that does not parse: the error comes now, not after the first search)."""
    try:
        harts_list = [int(h) for h in args.harts.split(",")]
    except ValueError:
        raise SystemExit(f"--harts {args.harts!r}: a comma-separated list of hart counts") from None
    modes = args.modes.split(",")
    if set(modes) - {"fs", "se"} or not modes:
        raise SystemExit(f"--modes {args.modes!r}: fs, se or both")
    for harts in harts_list:
        try:
            if "se" in modes:
                se_system(args.platform, harts, args, 1.0).validate()
            if "fs" in modes:
                fs_system(args.platform, harts, args, 1, detailed=True).validate()
        except (ValueError, TypeError) as e:
            raise SystemExit(f"--platform {args.platform} --harts {harts}: {e}") from None
    return harts_list, modes


TITLE = "# Capacity under load: FS mode (Linux's UDP stack) beside SE mode (kvsim's guest stack)"


def replace_section(text: str, platform: str, new: str) -> str:
    """`text` (the file: the title, then a section per platform, each opening with '## <platform>:') with the
    section of `platform` replaced by `new`, or `new` added at the end; the other platforms' sections are kept."""
    body = text.split("\n## ")
    sections = [f"## {b}" for b in body[1:]]
    head = f"## {platform}:"
    kept = [sec.rstrip("\n") for sec in sections if not sec.startswith(head)]
    at = next((i for i, sec in enumerate(sections) if sec.startswith(head)), len(kept))
    kept.insert(at, new.rstrip("\n"))
    return "\n\n".join([TITLE, *kept]) + "\n"


def section(args, rows) -> str:
    spec = STACKS[args.platform]
    se_net = ("its zero-copy NIC (one 10 GbE port, no switch) steers each frame to its core's slots"
              if args.platform == "keyvault" else "the stack's integrated MAC steers each frame to its core's queue")
    lines = [f"## {args.platform}: {spec.title}, {spec.memory_text(args)}", "",
             f"`sim-scripts/fs_capacity.py --platform {args.platform} --harts {args.harts} --modes {args.modes} "
             f"--value-size {args.value_size} --latency {args.latency} --flash-read {args.flash_read} --items "
             f"{args.items} --requests {args.requests} --warmup {args.warmup} --resolution {args.resolution}`. "
             "Capacity: the highest "
             f"open-loop offered load with < 1% of the measured frames lost (drivers/capacity.py's search, to "
             f"{args.resolution:.0%}). memcached binary GETs over UDP, {args.value_size} B values, {args.items:,} "
             f"items, one request per frame, {spec.memory_text(args)}. **Reduced**: {args.harts} harts, not the "
             f"stack's {spec.cores}; {args.requests:,} measured GETs per hart per probe; per stack = per hart x "
             f"{spec.cores} (linear, as the thesis scaled). FS: one virtio-net receive queue (the kernel steers "
             "each datagram to its thread's socket), restored in detail from a functional checkpoint per probe, "
             f"{args.warmup} warm-up GETs per hart; SE: {se_net}, kvsim's own guest network stack, loaded in "
             "detail per probe. FS counts a frame lost once the guest is idle (every hart asleep in wfi, no "
             "interrupt pending) with nothing on the wire toward it or waiting in the device (engine fs_net.rs). "
             "Host CPU s of the simulating process on a shared 2-core host.", "",
             "| mode | platform | harts | capacity k req/s | per hart k req/s | stack M req/s (x cores) | loss at "
             "capacity | answered k req/s | mean latency us | p95 latency us | p99.9 latency us | insts/GET | probes | "
             "boot CPU s | search CPU s |", "|" + "---|" * 15]
    for mode, harts, mpps, loss, thr, mean, p95, p999, insts, probes, boot_cpu, cpu in rows:
        lines.append(f"| {mode.upper()} | {args.platform} | {harts} | {mpps * 1e3:,.1f} | {mpps * 1e3 / harts:,.1f} | "
                     f"{mpps / harts * spec.cores:,.3f} | {loss:.4f} | {thr * 1e3:,.1f} | {mean:,.2f} | {p95:,.2f} | "
                     f"{p999:,.2f} | {insts:,.0f} | {probes} | {boot_cpu:,.1f} | {cpu:,.1f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
