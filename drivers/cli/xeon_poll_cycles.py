#!/usr/bin/env python3
"""Where a saved one-port Xeon run's cycles go: the polls that found no frame against those that found frames, and the
serialising stalls of the polls that found frames, per request and per batch.

    sim-scripts/xeon_poll_cycles.py DIR [DIR ...]     (each DIR a point validate_xeon.py --save kept)
    sim-scripts/xeon_poll_cycles.py --between DIR_A DIR_B

No run: the saved statistics only. The server marks the end of every poll with a hint (`system.hart<h>.polls_idle`,
`polls_busy`, `idle_poll_insts`, `busy_poll_insts`) and the core counts the empty polls' cycles
(`idle_poll_cycles`), so a core's cycles and instructions split into the empty polls' and the rest (the polls that
found frames: the driver's bursts and the requests they carried). Printed per run:
  * the IPC of all instructions, of the empty polls and of the polls that found frames;
  * per request: the busy polls' cycles and instructions, the empty polls' instructions and cycles;
  * per batch (a poll that found frames): its cycles and instructions, its fences, the cycles fences waited for older
    instructions to commit (`serialize_commit_wait_cycles`) and then for older stores to leave the store buffer
    (`serialize_drain_wait_cycles`: a doorbell, an uncached store, holds its entry for `Nic.mmio_latency`), the
    dispatch cycles stores waited for a store-queue entry (`store_queue_stall_cycles`), the branch mispredictions
    and the MMIO accesses (doorbells);
  * the busy polls' IPC with the serialising and store-queue waits taken out of their cycles.
With --between, the change from run A to run B of the busy cycles a request and of each of those parts a request:
which part carries the change of the IPC.

Every counter it reads must be in the run's statistics: an engine that does not write one is an error naming it,
never a zero.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re

HART = re.compile(r"^system\.hart(\d+)\.insts$")
STALLS = ("serialize_commit_wait_cycles", "serialize_drain_wait_cycles", "store_queue_stall_cycles")


def load(folder: pathlib.Path) -> dict[str, float]:
    try:
        stats = json.loads((folder / "stats.json").read_text())
    except FileNotFoundError as e:
        raise SystemExit(f"{folder}: {e.filename} missing (a point validate_xeon.py --save kept has stats.json)") \
            from None
    return stats.get("stats", stats)


def _get(s: dict[str, float], key: str) -> float:
    if key not in s:
        raise KeyError(f"{key} is not in the run's statistics (an engine that does not count it: a missing counter is "
                       "an error, not a zero)")
    return float(s[key])


def _core_prefix(s: dict[str, float], hart: int) -> str:
    """The stats prefix of hart `hart`'s core (system.socket<k>.core<hart>.)."""
    found = [k for k in s if re.match(rf"^system\.socket\d+\.core{hart}\.cycles$", k)]
    if len(found) != 1:
        raise KeyError(f"no single core{hart}.cycles for hart {hart} in the run's statistics ({len(found)} found)")
    return found[0].removesuffix("cycles")


def poll_figures(s: dict[str, float]) -> dict[str, float]:
    """The figures above for one run's statistics (summed over its cores)."""
    harts = sorted(int(m.group(1)) for k in s if (m := HART.match(k)))
    if not harts:
        raise KeyError("no system.hart<h>.insts in the run's statistics")
    t: dict[str, float] = {}

    def add(name: str, value: float) -> None:
        t[name] = t.get(name, 0.0) + value
    for h in harts:
        hart, core = f"system.hart{h}.", _core_prefix(s, h)
        for name in ("insts", "idle_poll_insts", "busy_poll_insts", "polls_idle", "polls_busy"):
            add(name, _get(s, hart + name))
        for name in ("cycles", "idle_poll_cycles", "fences", "branch_mispredicts") + STALLS:
            add(name, _get(s, core + name))
    requests = _get(s, "client.requests")
    mmio_keys = [k for k in s if re.match(r"^system\.socket\d+\.ddio\.mmio_accesses$", k)]
    if not mmio_keys:
        raise KeyError("system.socketN.ddio.mmio_accesses is not in the run's statistics (an engine that does not "
                       "count it: a missing counter is an error, not a zero)")
    mmio = sum(_get(s, k) for k in mmio_keys)
    batches = t["polls_busy"]
    if requests <= 0 or batches <= 0 or t["cycles"] <= t["idle_poll_cycles"]:
        raise ValueError(f"a run that served requests in batches is needed (requests {requests}, batches {batches})")
    busy_cycles = t["cycles"] - t["idle_poll_cycles"]
    busy_insts = t["insts"] - t["idle_poll_insts"]
    stalls = sum(t[n] for n in STALLS)
    out = {
        "cores": len(harts), "requests": requests, "batch": requests / batches,
        "ipc": t["insts"] / t["cycles"],
        "ipc_empty": t["idle_poll_insts"] / t["idle_poll_cycles"] if t["idle_poll_cycles"] else float("nan"),
        "ipc_busy": busy_insts / busy_cycles,
        # An upper bound: the stall counters can overlap one another (a store's store-queue wait and a fence's).
        "ipc_busy_without_waits": busy_insts / (busy_cycles - stalls) if busy_cycles > stalls else float("nan"),
        "empty_cycle_share": t["idle_poll_cycles"] / t["cycles"],
        "req_busy_cycles": busy_cycles / requests, "req_busy_insts": busy_insts / requests,
        "req_empty_insts": t["idle_poll_insts"] / requests, "req_empty_cycles": t["idle_poll_cycles"] / requests,
        "empty_polls_per_req": t["polls_idle"] / requests,
        "batch_cycles": busy_cycles / batches, "batch_insts": busy_insts / batches,
        "batch_fences": t["fences"] / batches, "batch_mispredicts": t["branch_mispredicts"] / batches,
        "batch_mmio": mmio / batches,
    }
    for n in STALLS:
        out["batch_" + n] = t[n] / batches
        out["req_" + n] = t[n] / requests
    out["req_other_cycles"] = out["req_busy_cycles"] - stalls / requests
    return out


def report(name: str, f: dict[str, float]) -> list[str]:
    return [
        f"{name}: {f['cores']:.0f} core(s), {f['requests']:.0f} requests, batch {f['batch']:.3f}",
        f"  IPC {f['ipc']:.3f}: empty polls {f['ipc_empty']:.3f} ({f['empty_cycle_share']:.1%} of the cycles), "
        f"polls with frames {f['ipc_busy']:.3f} ({f['ipc_busy_without_waits']:.3f} without the waits below)",
        f"  a request: {f['req_busy_cycles']:.1f} busy cycles, {f['req_busy_insts']:.1f} busy instructions; "
        f"{f['empty_polls_per_req']:.2f} empty polls, {f['req_empty_insts']:.1f} instructions, "
        f"{f['req_empty_cycles']:.1f} cycles",
        f"  a batch: {f['batch_cycles']:.0f} cycles, {f['batch_insts']:.1f} instructions, {f['batch_fences']:.2f} "
        f"fences, {f['batch_mmio']:.2f} MMIO accesses, {f['batch_mispredicts']:.2f} mispredictions; waits: fences for "
        f"older commits {f['batch_serialize_commit_wait_cycles']:.0f} cycles, for the store buffer to drain "
        f"{f['batch_serialize_drain_wait_cycles']:.0f}, stores for a store-queue entry "
        f"{f['batch_store_queue_stall_cycles']:.0f}",
    ]


def between(a: dict[str, float], b: dict[str, float]) -> list[str]:
    parts = [("fences waiting for older commits", "req_serialize_commit_wait_cycles"),
             ("fences waiting for the store buffer", "req_serialize_drain_wait_cycles"),
             ("stores waiting for a store-queue entry", "req_store_queue_stall_cycles"),
             ("everything else", "req_other_cycles")]
    total = b["req_busy_cycles"] - a["req_busy_cycles"]
    out = [f"busy cycles a request: {a['req_busy_cycles']:.1f} -> {b['req_busy_cycles']:.1f} ({total:+.1f}; busy "
           f"instructions {a['req_busy_insts']:.1f} -> {b['req_busy_insts']:.1f}; batch {a['batch']:.2f} -> "
           f"{b['batch']:.2f})"]
    for label, key in parts:
        d = b[key] - a[key]
        share = f"{d / total:.0%} of the change" if total else "-"
        out.append(f"  {label}: {a[key]:.1f} -> {b[key]:.1f} ({d:+.1f}, {share})")
    out.append(f"  IPC {a['ipc']:.3f} -> {b['ipc']:.3f}; polls with frames {a['ipc_busy']:.3f} -> {b['ipc_busy']:.3f}, "
               f"without the waits {a['ipc_busy_without_waits']:.3f} -> {b['ipc_busy_without_waits']:.3f}; empty "
               f"polls {a['ipc_empty']:.3f} -> {b['ipc_empty']:.3f}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="*", type=pathlib.Path, help="saved points (validate_xeon.py --save DIR/N)")
    parser.add_argument("--between", nargs=2, type=pathlib.Path, metavar=("DIR_A", "DIR_B"),
                        help="the change of the busy cycles a request from run A to run B, part by part")
    opts = parser.parse_args(argv)
    if not opts.dirs and not opts.between:
        parser.error("give saved points, or --between DIR_A DIR_B")
    try:
        for d in opts.dirs:
            print("\n".join(report(str(d), poll_figures(load(d)))))
        if opts.between:
            a, b = (poll_figures(load(d)) for d in opts.between)
            print("\n".join(between(a, b)))
    except (KeyError, ValueError) as e:
        raise SystemExit(f"xeon_poll_cycles: {e.args[0] if e.args else e}") from None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
