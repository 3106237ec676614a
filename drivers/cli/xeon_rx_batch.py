#!/usr/bin/env python3
"""What sets a saved one-port Xeon run's RX batch: the batches' sizes, the NIC's descriptor write-back groups, and a
core's time per batch against the time its queue takes to receive a group.

    sim-scripts/xeon_rx_batch.py DIR [DIR ...]     (each DIR a point validate_xeon.py --save kept: stats.json, config.json)

No run: the saved statistics and configuration only. Printed per run:
  * the batch (packets per non-empty poll, validate_xeon's row) and the share of batches of each size;
  * the NIC's RX descriptor write-backs per frame and its write-back group (`Nic.rx_wb_threshold`): a frame becomes
    visible to the driver only when its group's write-back lands, so with a group of G the batches are multiples of G
    unless the group's timer (`rx_wb_timer`) flushes a partial one;
  * per core: the cycles a batch (all of them, and less the empty polls' `idle_poll_cycles`: the busy time) and the
    mean time its queue takes to receive one group (G frames at the queue's measured rate): a core busy for less
    than a group's arrival time mostly finds one group a poll, and the batch is G plus the share that found two.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import re

BATCH_SIZE = re.compile(r"^system\.nic(\d+)\.rx_batch_size::(\d+|more)$")
CORE = re.compile(r"^system\.socket(\d+)\.core(\d+)\.cycles$")


def _load(folder: pathlib.Path) -> tuple[dict[str, float], dict]:
    try:
        stats = json.loads((folder / "stats.json").read_text())
        config = json.loads((folder / "config.json").read_text())
    except FileNotFoundError as e:
        raise SystemExit(f"{folder}: {e.filename} missing (a point validate_xeon.py --save kept has stats.json and "
                         "config.json)") from None
    return stats.get("stats", stats), config


def histogram(s: dict[str, float]) -> dict[str, float]:
    """Batches of each size (key '1'..'32', 'more'), summed over the NICs; empty polls ('0') are not batches."""
    out: dict[str, float] = {}
    for k, v in s.items():
        if (m := BATCH_SIZE.match(k)) and m.group(2) != "0":
            out[m.group(2)] = out.get(m.group(2), 0.0) + v
    if not out:
        raise KeyError("no NIC of the run reports rx_batch_size: a missing counter is an error, not a zero")
    return out


def batch_figures(s: dict[str, float], config: dict) -> dict[str, float]:
    """The figures above for one run. Needs one NIC (the one-port points, 1 to 3 cores)."""
    nics = config.get("nics") or []
    if len(nics) != 1:
        raise SystemExit(f"xeon_rx_batch: a one-NIC run is needed (the 1- to 3-core points), this one has {len(nics)}")
    group = int(nics[0]["rx_wb_threshold"])
    clock = float(config["core"]["clock"])
    hist = histogram(s)
    batches = sum(hist.values())
    queues = sorted({int(m.group(1)) for k in s if (m := re.match(r"^system\.nic0\.queue(\d+)\.rx_batches$", k))})
    frames = sum(s[f"system.nic0.queue{q}.rx_frames"] for q in queues)
    cores = sorted(k for k in s if CORE.match(k))
    if len(cores) != len(queues) or not cores:
        raise SystemExit(f"xeon_rx_batch: {len(cores)} cores against {len(queues)} RX queues (one queue a core needed)")
    cycles = sum(s[k] for k in cores)
    idle = sum(s[k.removesuffix("cycles") + "idle_poll_cycles"] for k in cores)
    # The measured interval: every core's cycles over its clock (the cores run the same interval).
    seconds = cycles / len(cores) / clock
    per_queue_rate = frames / len(queues) / seconds
    out = {"batch": frames / batches, "group": group,
           "writebacks_per_frame": s["system.nic0.rx_writebacks_per_frame"],
           "cycles_per_batch": cycles / batches, "busy_cycles_per_batch": (cycles - idle) / batches,
           "group_arrival_cycles": group / per_queue_rate * clock, "queue_mpps": per_queue_rate / 1e6,
           "clock_ghz": clock / 1e9}
    for size, n in hist.items():
        out[f"share_{size}"] = n / batches
    return out


def report(name: str, f: dict[str, float]) -> list[str]:
    shares = sorted(((k.removeprefix("share_"), v) for k, v in f.items() if k.startswith("share_") and v > 0),
                    key=lambda kv: (kv[0] == "more", int(kv[0]) if kv[0] != "more" else 0))
    return [f"{name}: RX batch {f['batch']:.3f} packets per non-empty poll; write-back group {f['group']:.0f}, "
            f"{f['writebacks_per_frame']:.4f} write-backs a frame",
            "  batches by size: " + ", ".join(f"{k}: {v:.1%}" for k, v in shares),
            f"  a core's cycles a batch {f['cycles_per_batch']:.0f} (busy {f['busy_cycles_per_batch']:.0f}) at "
            f"{f['clock_ghz']:.2f} GHz; its queue receives {f['queue_mpps']:.3f} M frames/s, one group in "
            f"{f['group_arrival_cycles']:.0f} cycles (busy / group time {f['busy_cycles_per_batch'] / f['group_arrival_cycles']:.3f})"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", metavar="DIR", help="saved points (validate_xeon.py --save DIR/<cores>)")
    opts = parser.parse_args(argv)
    for folder in map(pathlib.Path, opts.folders):
        s, config = _load(folder)
        print("\n".join(report(str(folder), batch_figures(s, config))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
