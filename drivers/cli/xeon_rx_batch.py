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

    sim-scripts/xeon_rx_batch.py --split ONE_CORE_DIR THREE_CORE_DIR

splits a core's busy time into a time a batch F and a time a request S from a 1-core run (full batches of 32) and a
3-core run of the same model (F + k S = busy cycles a batch, at each run's batch k), replays the 3-core queue with
them (`replay_batch`: frames on the port at the run's measured rate, each to one of the queues at random, visible in
the NIC's write-back groups or at its timer, a core taking F + b S for a batch of b and an empty poll's measured
cycles for none) to show the replay gives the run's batch, and then finds the F and S that give the published pair
under the same NIC: the published 1-core point fixes F + 32 S (2.7 GHz x 32 / 5.78 M requests/s) and the published
3-core batch (5.29) fixes F.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import random
import re

from drivers.cli.validate_xeon import PUBLISHED

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


def replay_batch(F: float, S: float, *, group: int, queues: int, port_mfps: float, clock: float,
                 timer_s: float, idle_cycles: float, frames_per_queue: int = 100_000, seed: int = 1) -> float:
    """The mean batch (packets per non-empty poll) of one of `queues` cores on a port receiving `port_mfps` M frames/s,
    each frame to a queue at random; a queue's frames become visible in groups of `group` (or, partial, `timer_s`
    after the group's first frame); a poll takes every visible frame up to 32 and costs F + b S cycles for b frames,
    or `idle_cycles` (> 0) for none. Deterministic for a seed."""
    if idle_cycles <= 0 or F + S <= 0:
        raise ValueError(f"replay_batch: an empty poll and a batch must take time (idle {idle_cycles}, F {F}, S {S})")
    rng = random.Random(seed)
    period = clock / (port_mfps * 1e6)
    timer = timer_s * clock
    t, pending, visible = 0.0, [], []
    while len(visible) < frames_per_queue:
        t += period
        if rng.randrange(queues) == 0:
            pending.append(t)
            if len(pending) == group:
                visible.extend([t] * group)
                pending = []
        if pending and t - pending[0] >= timer:
            visible.extend([t] * len(pending))
            pending = []
    core, i, batches, frames = 0.0, 0, 0, 0
    while i < len(visible):
        j = i
        while j < len(visible) and visible[j] <= core and j - i < 32:
            j += 1
        if j == i:
            core += idle_cycles
            continue
        core += F + (j - i) * S
        batches, frames, i = batches + 1, frames + (j - i), j
    return frames / batches


def split(one: dict[str, float], three: dict[str, float]) -> tuple[float, float]:
    """(F, S): busy cycles a batch and a request from two runs' busy cycles a batch at their batches."""
    (k1, c1), (k3, c3) = (one["batch"], one["busy_cycles_per_batch"]), (three["batch"], three["busy_cycles_per_batch"])
    S = (c1 - c3) / (k1 - k3)
    return c3 - k3 * S, S


def solve_published(replay, one_core_cycles_per_batch: float, target: float) -> tuple[float, float, float]:
    """F, S and the replayed batch where F + 32 S is the published 1-core cycles a batch and the replay (a function
    of F and S) gives `target`, by bisection on F (the batch grows with F at a fixed F + 32 S)."""
    lo, hi = 0.0, one_core_cycles_per_batch / 2
    for _ in range(30):
        F = (lo + hi) / 2
        if replay(F, (one_core_cycles_per_batch - F) / 32) < target:
            lo = F
        else:
            hi = F
    F = (lo + hi) / 2
    S = (one_core_cycles_per_batch - F) / 32
    return F, S, replay(F, S)


def split_report(one_dir: pathlib.Path, three_dir: pathlib.Path) -> list[str]:
    (s1, c1), (s3, c3) = _load(one_dir), _load(three_dir)
    one, three = batch_figures(s1, c1), batch_figures(s3, c3)
    F, S = split(one, three)
    # An empty poll's cycles: the cores' empty-poll cycles over the harts' empty polls.
    empty = sum(v for k, v in s3.items() if re.match(r"^system\.hart\d+\.polls_idle$", k))
    idle = sum(s3[k.removesuffix("cycles") + "idle_poll_cycles"] for k in s3 if CORE.match(k))
    if not empty or not idle:
        raise SystemExit(f"{three_dir}: no empty polls counted (system.hart*.polls_idle): the 3-core run's cores must "
                         "have polled an empty queue to price one")
    idle_cycles = idle / empty
    nic = c3["nics"][0]
    queues = sum(1 for k in s3 if CORE.match(k))
    port_mfps = three["queue_mpps"] * queues
    clock = three["clock_ghz"] * 1e9

    def replay(f: float, s: float) -> float:
        return replay_batch(f, s, group=int(nic["rx_wb_threshold"]), queues=queues, port_mfps=port_mfps, clock=clock,
                            timer_s=nic["rx_wb_timer"] * 1e-12, idle_cycles=idle_cycles)
    published_1c = clock * PUBLISHED[1]["rx_batch"] / (PUBLISHED[1]["throughput_mrps"] * 1e6)
    Fp, Sp, kp = solve_published(replay, published_1c, PUBLISHED[3]["rx_batch"])
    return [f"split of {one_dir} (batch {one['batch']:.2f}) and {three_dir} (batch {three['batch']:.3f}):",
            f"  the model: F = {F:.0f} cycles a batch, S = {S:.1f} cycles a request; the replay of the 3-core queue "
            f"with them: batch {replay(F, S):.3f} (the run: {three['batch']:.3f}); empty poll {idle_cycles:.0f} cycles",
            f"  the published pair under the same NIC (write-back group {nic['rx_wb_threshold']}, port at "
            f"{port_mfps:.3f} M frames/s): F + 32 S = {published_1c:.0f} cycles (1 core) and batch "
            f"{PUBLISHED[3]['rx_batch']} (3 cores) give F = {Fp:.0f}, S = {Sp:.1f} (replayed batch {kp:.3f})",
            f"  the model's S with the published 1-core cycles a batch (F = {published_1c - 32 * S:.0f}): batch "
            f"{replay(published_1c - 32 * S, S):.3f}; the model's F with them (S = {(published_1c - F) / 32:.1f}): "
            f"batch {replay(F, (published_1c - F) / 32):.3f}"]


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
    parser.add_argument("folders", nargs="*", metavar="DIR", help="saved points (validate_xeon.py --save DIR/<cores>)")
    parser.add_argument("--split", nargs=2, metavar=("ONE_CORE_DIR", "THREE_CORE_DIR"),
                        help="split a core's busy time into a time a batch and a request from a 1- and a 3-core run, "
                        "and find the pair the published 1- and 3-core figures give")
    opts = parser.parse_args(argv)
    if not opts.folders and not opts.split:
        parser.error("give saved points (DIR ...) or --split ONE_CORE_DIR THREE_CORE_DIR")
    for folder in map(pathlib.Path, opts.folders):
        s, config = _load(folder)
        print("\n".join(report(str(folder), batch_figures(s, config))))
    if opts.split:
        print("\n".join(split_report(*map(pathlib.Path, opts.split))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
