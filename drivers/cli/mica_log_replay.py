#!/usr/bin/env python3
"""One partition of MICA's circular log replayed without the machine: how many items a request re-appends and how
many GETs miss, over time, for a log of RATIO x the partition's data.

    sim-scripts/mica_log_replay.py [--ratio 1.6] [--items 100000] [--get-ratio 0.95] [--seed 1]

The partition's items (Tiny, one slot each) are loaded in a random order, the tail right after them. Then uniform
requests: a GET of an item more than half the log behind the tail re-appends it at the tail (MICA's approximate
LRU, the KVS server's lru=1); a GET of an item more than the log behind it misses (evicted); a PUT updates in place
(a Tiny value always fits) unless its item was evicted, which appends it. Printed per span of requests (in units of
the partition's items, n): re-appends and GET misses a request. The simulated runs of validate_xeon see the first
few hundredths of n (a 16 Mi-item run has n = 699,050 at 24 partitions and 16,667 warm-up requests a partition);
MICA's measured server, serving for minutes, the steady state (tens of n). Wrap skips at the log's end are left out.
"""

from __future__ import annotations

import argparse
import random

MARKS = (0.025, 0.5, 1, 2, 5, 10, 20, 40)   # span ends, in units of n requests


def replay(ratio: float, items: int, get_ratio: float = 0.95, seed: int = 1, marks=MARKS):
    """[(span end in n, re-appends a request, GET misses a request)] over each span since the previous mark."""
    if not ratio > 1 or items < 1 or not 0 <= get_ratio <= 1:
        raise SystemExit(f"--ratio {ratio} --items {items} --get-ratio {get_ratio}: the log must be larger than "
                         "the data, with at least one item and a GET ratio in [0, 1]")
    window = int(ratio * items)
    rng = random.Random(seed)
    order = list(range(items))
    rng.shuffle(order)
    pos = [0] * items
    for slot, key in enumerate(order):
        pos[key] = slot
    tail, moved, missed, t = items, 0, 0, 0
    out, last = [], (0, 0, 0)
    for mark in marks:
        while t < mark * items:
            t += 1
            key = rng.randrange(items)
            behind = tail - pos[key]
            if rng.random() < get_ratio:
                if behind > window:
                    missed += 1
                elif 2 * behind > window:
                    pos[key], tail, moved = tail, tail + 1, moved + 1
            elif behind > window:
                pos[key], tail = tail, tail + 1
        span = t - last[0]
        out.append((mark, (moved - last[1]) / span, (missed - last[2]) / span))
        last = (t, moved, missed)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ratio", type=float, default=1.6, help="the log over the partition's data")
    parser.add_argument("--items", type=int, default=100_000, help="items in the partition (n)")
    parser.add_argument("--get-ratio", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=1)
    opts = parser.parse_args(argv)
    print(f"log = {opts.ratio:g} x the data, {opts.items:,} items, {opts.get_ratio:g} GETs, seed {opts.seed}")
    prev = 0.0
    for mark, moved, missed in replay(opts.ratio, opts.items, opts.get_ratio, opts.seed):
        print(f"requests {prev:g} n to {mark:g} n: re-appends {moved:.4f} and GET misses {missed:.4f} a request")
        prev = mark
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
