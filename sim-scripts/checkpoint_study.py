#!/usr/bin/env python3
"""Measurements of checkpoints at scale (the KVS with the Tiny data set; server sized so nothing is evicted).

    checkpoint_study.py load ITEMS HARTS DIR          load from scratch, checkpoint into DIR (1,000 requests after)
    checkpoint_study.py restore ITEMS HARTS DIR REQ   functional run of REQ requests restored from DIR (no warm-up)
    checkpoint_study.py first ITEMS HARTS DIR         detailed run restored from DIR: warming, default warm-up
    checkpoint_study.py warmup ITEMS HARTS DIR REQ W1 W2 ...
                                                      detailed runs restored from DIR, warm-up W each: LLC MPKI and
                                                      throughput of REQ measured requests

Each prints wall times from the command's start (the first progress report of each phase: about when it began),
the peak RSS of the process and the figures of the run. Extra server arguments: KVS_EXTRA="lru=0 ..."."""

from __future__ import annotations

import os
import resource
import sys
import time

T0 = time.time()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from configs import kvs_functional  # noqa: E402
from models.sim import simulate  # noqa: E402


def system(items: int, harts: int, requests: int, **client):
    per = items // harts + 1
    log_mib = 1 << max(3, ((per * 40 * 5 // 4) >> 20).bit_length())  # a power of two holding a partition's items
    buckets = 1 << max(12, (per // 4 - 1).bit_length())  # about 4 items a bucket
    extra = tuple(os.environ.get("KVS_EXTRA", "").split())
    s = kvs_functional.system(harts=harts, server_args=(f"log_mib={log_mib}", f"buckets={buckets}", *extra),
                              items=items, requests=requests, **client)
    s.mem_limit = "20GiB"
    return s


def run(s, label: str):
    seen: dict[str, float] = {}
    r = simulate(s, progress=lambda insts, ticks, phase: seen.setdefault(phase, round(time.time() - T0, 2)),
                 progress_every=100_000)
    st = r.stats
    print(f"{label}: wall {time.time() - T0:.2f} s, phases began by {seen}, peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10} MiB, requests {st['client.requests']:.0f}, "
          f"llc.mpki {st.get('system.socket0.llc.mpki', 0):.3f}, throughput {st.get('client.throughput_mrps', 0):.3f} Mrps"
          + (f", checkpoint {st['system.checkpoint.bytes']:.0f} bytes" if "system.checkpoint.bytes" in st else ""),
          flush=True)


def main() -> None:
    what, items, harts, ckpt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if what == "load":
        s = system(items, harts, 1000)
        s.checkpoint_to = ckpt
        run(s, "load")
    elif what == "restore":
        s = system(items, harts, int(sys.argv[5]), warmup_requests=0)
        s.restore_from = ckpt
        run(s, "restore")
    elif what in ("first", "warmup"):
        warmups = [int(w) for w in sys.argv[6:]] if what == "warmup" else [None]
        for w in warmups:
            s = system(items, harts, int(sys.argv[5]) if what == "warmup" else 2000)
            if w is not None:
                s.client.warmup_requests = w
            s.mode, s.detailed_start, s.warm_caches, s.restore_from = "detailed", "roi", True, ckpt
            run(s, f"warmup {s.client.warmup_requests}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
