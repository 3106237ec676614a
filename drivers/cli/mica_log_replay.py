#!/usr/bin/env python3
"""One partition of MICA's circular log replayed without the machine: how many items a request re-appends and how
many GETs miss, over time, for a log of RATIO x the partition's data.

    sim-scripts/mica_log_replay.py [--ratio 1.6] [--items 100000] [--get-ratio 0.95] [--seed 1]
                                   [--items-per-bucket 12 [--bucket-slots 15]]

The partition's items (Tiny, one slot each) are loaded in a random order, the tail right after them. Then uniform
requests: a GET of an item more than half the log behind the tail re-appends it at the tail (MICA's approximate
LRU, the KVS server's lru=1); a GET of an item more than the log behind it misses (evicted); a PUT updates in place
(a Tiny value always fits) unless its item was evicted, which appends it. Printed per span of requests (in units of
the partition's items, n): re-appends, GET misses and appends a request. The simulated runs of validate_xeon see
the first few hundredths of n (a 16 Mi-item run has n = 699,050 at 24 partitions and 16,667 warm-up requests a
partition); MICA's measured server, serving for minutes, the steady state (tens of n). Wrap skips at the log's end
are left out.

With --items-per-bucket, MICA's lossy index too (kvs-workload.md; MICA's src/table.c in cache mode): each key
hashes to one of items / ITEMS-PER-BUCKET buckets of BUCKET-SLOTS entries; an insert into a full bucket takes an
entry whose item is evicted (more than the log behind the tail), else drops the entry whose item is furthest behind
the tail. A dropped key's GET misses, and its PUT appends a new item at the tail (and drops another key): the tail
moves even in a log over twice the data, so on a server that runs long enough the oldest items cross into the
log's older half and GETs re-append them (each re-append moving the tail on again). MICA's sizing gives 12 items a
bucket at 4 partitions and 8 at 12 and 24 (validate_xeon's INDEX_NOTE).
"""

from __future__ import annotations

import argparse
import random

MARKS = (0.025, 0.5, 1, 2, 5, 10, 20, 40)   # span ends, in units of n requests


def replay(ratio: float, items: int, get_ratio: float = 0.95, seed: int = 1, marks=MARKS,
           items_per_bucket: float | None = None, bucket_slots: int = 15):
    """[(span end in n, re-appends a request, GET misses a request, appends a request)] over each span since the
    previous mark; with `items_per_bucket`, behind MICA's lossy index of `bucket_slots` entries a bucket."""
    if not ratio > 1 or items < 1 or not 0 <= get_ratio <= 1:
        raise SystemExit(f"--ratio {ratio} --items {items} --get-ratio {get_ratio}: the log must be larger than "
                         "the data, with at least one item and a GET ratio in [0, 1]")
    if items_per_bucket is not None and not (items_per_bucket > 0 and bucket_slots >= 1
                                             and items / items_per_bucket >= 1):
        raise SystemExit(f"--items-per-bucket {items_per_bucket} --bucket-slots {bucket_slots}: an index needs "
                         "at least one bucket of at least one entry and a positive number of items a bucket")
    window = int(ratio * items)
    rng = random.Random(seed)
    order = list(range(items))
    rng.shuffle(order)
    pos = [0] * items
    for slot, key in enumerate(order):
        pos[key] = slot
    index = LossyIndex(items, items_per_bucket, bucket_slots, rng, pos, window) if items_per_bucket else None
    if index:
        for slot, key in enumerate(order):
            index.insert(key, slot + 1)
    tail, moved, missed, appended, t = items, 0, 0, 0, 0
    out, last = [], (0, 0, 0, 0)
    for mark in marks:
        while t < mark * items:
            t += 1
            key = rng.randrange(items)
            behind = tail - pos[key]
            indexed = index is None or index.holds(key)
            if rng.random() < get_ratio:
                if not indexed or behind > window:
                    missed += 1
                    if indexed and index:
                        index.drop(key)          # a stale entry met on the way is cleared
                elif 2 * behind > window:
                    pos[key], tail, moved = tail, tail + 1, moved + 1
            elif not indexed or behind > window:
                pos[key], tail, appended = tail, tail + 1, appended + 1
                if index and not indexed:
                    index.insert(key, tail)
        span = t - last[0]
        out.append((mark, (moved - last[1]) / span, (missed - last[2]) / span, (appended - last[3]) / span))
        last = (t, moved, missed, appended)
    return out


class LossyIndex:
    """MICA's lossy index over the replay's keys: which keys an entry holds, per bucket."""

    def __init__(self, items: int, items_per_bucket: float, slots: int, rng: random.Random, pos: list[int],
                 window: int):
        self.buckets: list[list[int]] = [[] for _ in range(max(1, int(items / items_per_bucket)))]
        self.bucket_of = [rng.randrange(len(self.buckets)) for _ in range(items)]
        self.indexed = [False] * items
        self.slots, self.pos, self.window = slots, pos, window
        self.dropped = 0        # live entries an insert displaced (index evictions)

    def holds(self, key: int) -> bool:
        return self.indexed[key]

    def drop(self, key: int) -> None:
        self.buckets[self.bucket_of[key]].remove(key)
        self.indexed[key] = False

    def insert(self, key: int, tail: int) -> None:
        """`key`'s new item is in; `tail` is the tail after it: an evicted item's entry, else a free one, else the
        entry whose item is furthest behind the tail gives way."""
        bucket = self.buckets[self.bucket_of[key]]
        stale = next((k for k in bucket if tail - self.pos[k] > self.window), None)
        if stale is None and len(bucket) >= self.slots:
            stale = min(bucket, key=lambda k: self.pos[k])
            self.dropped += 1
        if stale is not None:
            bucket.remove(stale)
            self.indexed[stale] = False
        bucket.append(key)
        self.indexed[key] = True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ratio", type=float, default=1.6, help="the log over the partition's data")
    parser.add_argument("--items", type=int, default=100_000, help="items in the partition (n)")
    parser.add_argument("--get-ratio", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=1,
                        help="the replay's own generator (the load's order, each request's key and operation, the "
                             "index's choices); no simulation runs, so no System.seed or client.seed")
    parser.add_argument("--items-per-bucket", type=float, default=None,
                        help="MICA's lossy index of items / this many buckets (default: no index, nothing dropped)")
    parser.add_argument("--bucket-slots", type=int, default=15, help="entries a bucket (MICA's cache mode: 15)")
    parser.add_argument("--marks", default=",".join(f"{m:g}" for m in MARKS),
                        help="span ends in units of n requests, increasing (comma separated)")
    opts = parser.parse_args(argv)
    try:
        marks = tuple(float(m) for m in opts.marks.split(","))
    except ValueError:
        raise SystemExit(f"--marks {opts.marks}: numbers separated by commas") from None
    if not marks or marks[0] <= 0 or any(b <= a for a, b in zip(marks, marks[1:])):
        raise SystemExit(f"--marks {opts.marks}: positive and increasing")
    index = "" if opts.items_per_bucket is None else \
        f", lossy index of {opts.items_per_bucket:g} items a bucket of {opts.bucket_slots} entries"
    print(f"log = {opts.ratio:g} x the data, {opts.items:,} items, {opts.get_ratio:g} GETs, seed {opts.seed}{index}")
    prev = 0.0
    for mark, moved, missed, appended in replay(opts.ratio, opts.items, opts.get_ratio, opts.seed, marks,
                                                items_per_bucket=opts.items_per_bucket,
                                                bucket_slots=opts.bucket_slots):
        print(f"requests {prev:g} n to {mark:g} n: re-appends {moved:.4f} and GET misses {missed:.4f} a request"
              + (f", appends {appended:.4f}" if index else ""))
        prev = mark
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
