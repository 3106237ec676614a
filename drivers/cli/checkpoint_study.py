#!/usr/bin/env python3
"""Measurements of checkpoints at scale (the KVS with the Tiny data set; server sized so nothing is evicted).

    checkpoint_study.py load ITEMS HARTS DIR          load from scratch, checkpoint into DIR (1,000 requests after)
    checkpoint_study.py restore ITEMS HARTS DIR REQ   functional run of REQ requests restored from DIR (no warm-up)
    checkpoint_study.py first ITEMS HARTS DIR         detailed run restored from DIR: warming, default warm-up
    checkpoint_study.py warmup ITEMS HARTS DIR REQ W1 W2 ...
                                                      detailed runs restored from DIR, warm-up W each: LLC MPKI and
                                                      throughput of REQ measured requests
    checkpoint_study.py study-warmup STUDY DIR W1 W2 ...
                                                      the same for a study's first sweep (drivers/studies/STUDY.py):
                                                      its base configuration loaded and checkpointed into DIR (if not
                                                      there), then restored with each warm-up W
    checkpoint_study.py xeon ITEMS DIR [CORES ...]    the Xeon validation with ITEMS Tiny items (default cores 4
                                                      and 12): `validate_xeon.py --no-target --checkpoints DIR`,
                                                      which loads each point's data set once and restores it

Options: --target runs the billion-RPS target socket (configs/brps_target_socket.py with HARTS cores: its NICs,
mesh, caches; the load is functional) instead of the functional KVS config; --sized keeps the config's log and index
sized from the item count (models.client.kvs_server_sizes, what the studies run) instead of about 4 items a bucket. Each command prints wall times from the
command's start (the first progress report of each phase: about when it began), the figures of the run and the
process's host memory: peak VmHWM, and the peaks of RssAnon (memory of this run alone: the heap, the client
model, the pages the run wrote), RssFile (checkpoint pages mapped from the page cache, shared by every run
restored from the same checkpoint) sampled every 50 ms, and Pss (shared pages divided among the runs that map
them) every second. Extra server arguments: KVS_EXTRA="lru=0 ..."."""

from __future__ import annotations

import os
import pathlib
import sys
import threading
import time

from configs import brps_target_socket, kvs_functional
from models import stats_paths
from models.sim import simulate

CHECKPOINT_BYTES = stats_paths.CHECKPOINT.stat("bytes")

T0 = time.time()


def server_args(items: int, harts: int) -> tuple[str, ...]:
    per = items // harts + 1
    log_mib = 1 << max(3, ((per * 40 * 5 // 4) >> 20).bit_length())  # a power of two holding a partition's items
    buckets = 1 << max(12, (per // 4 - 1).bit_length())  # about 4 items a bucket
    return (f"log_mib={log_mib}", f"buckets={buckets}", *os.environ.get("KVS_EXTRA", "").split())


def system(items: int, harts: int, requests: int, target: bool = False, sized: bool = False, **client):
    if target:
        s = brps_target_socket.system(cores=harts, items=items, requests=requests, **client)
        if not sized:
            s.workload.argv = ["mode=erew", *server_args(items, harts)]
    else:
        s = kvs_functional.system(harts=harts, server_args=server_args(items, harts), items=items,
                                  requests=requests, **client)
    s.mem_limit = "20GiB"
    return s


def functional(s):
    s.mode, s.detailed_start, s.warm_caches = "functional", "start", False
    return s


class MemorySampler:
    """Peaks of this process's VmRSS, RssAnon, RssFile (/proc/self/status, every 50 ms) and Pss
    (/proc/self/smaps_rollup: the shared pages divided among the processes mapping them, every second), sampled in
    a thread."""

    FIELDS = ("VmRSS", "RssAnon", "RssFile", "VmHWM", "Pss")

    def __init__(self, every: float = 0.05):
        self.peak = dict.fromkeys(self.FIELDS, 0)
        self.every, self.stop = every, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def sample(self, rollup: bool) -> dict[str, int]:
        now = {}
        # smaps_rollup walks every page table entry (its cost grows with the mapped gigabytes): once a second.
        for path in ("/proc/self/status", "/proc/self/smaps_rollup") if rollup else ("/proc/self/status",):
            with open(path) as f:
                for line in f:
                    name, _, value = line.partition(":")
                    if name in self.FIELDS:
                        now[name] = int(value.split()[0]) << 10
        return now

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            for k, v in self.sample(n % 20 == 0).items():
                self.peak[k] = max(self.peak[k], v)
            self.stop.wait(self.every)
            n += 1

    def text(self) -> str:
        self.stop.set()
        self.thread.join()
        return ", ".join(f"peak {k} {v / 2**30:.3f} GiB" for k, v in self.peak.items())


def run(s, label: str):
    seen: dict[str, float] = {}
    mem = MemorySampler()
    r = simulate(s, progress=lambda insts, ticks, phase: seen.setdefault(phase, round(time.time() - T0, 2)),
                 progress_every=100_000)
    st = r.stats
    print(f"{label}: wall {time.time() - T0:.2f} s, phases began by {seen}, {mem.text()}, requests "
          f"{st['client.requests']:.0f}, llc.mpki {st.get(stats_paths.LLC.stat(0, 'mpki'), 0):.3f}, throughput "
          f"{st.get('client.throughput_mrps', 0):.3f} Mrps"
          + (f", checkpoint {st[CHECKPOINT_BYTES]:.0f} bytes" if CHECKPOINT_BYTES in st else ""),
          flush=True)


def study_warmup(study: str, ckpt: str, warmups: list[int]) -> None:
    from drivers import studies
    from drivers.sweep import Point, loader_system

    base = studies.get(study).sweeps(full=False)[0].base
    if not os.path.isdir(ckpt):
        point = Point("", 0, {}, base, {}, "", {})
        run(loader_system(point, pathlib.Path(ckpt)), f"load {study}")
    for w in warmups:
        s = base.build()
        s.client.warmup_requests, s.restore_from = w, ckpt
        run(s, f"warmup {w}")


def xeon(items: int, ckpt_root: str, cores_list: list[int]) -> int:
    """The Xeon validation restored from checkpoints: validate_xeon.py --checkpoints, the one way to run it (each
    point's data set loaded with its own server arguments, MICA's log and index)."""
    from drivers.cli import validate_xeon

    return validate_xeon.main(["--no-target", "--items", str(items), "--checkpoints", ckpt_root,
                               "--cores", ",".join(str(c) for c in cores_list)])


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = [a for a in argv if a not in ("--target", "--sized")]
    target, sized = "--target" in argv, "--sized" in argv
    if sized and not target:
        sys.exit("--sized applies to the target socket (--target)")
    if args and args[0] == "study-warmup":
        study_warmup(args[1], args[2], [int(w) for w in args[3:]])
        return
    if args and args[0] == "xeon":
        sys.exit(xeon(int(args[1]), args[2], [int(c) for c in args[3:]] or [4, 12]))
    if len(args) < 4:
        sys.exit(__doc__)
    what, items, harts, ckpt = args[0], int(args[1]), int(args[2]), args[3]
    if what == "load":
        s = functional(system(items, harts, 1000, target, sized))
        s.checkpoint_to = ckpt
        run(s, "load")
    elif what == "restore":
        s = functional(system(items, harts, int(args[4]), target, sized, warmup_requests=0))
        s.restore_from = ckpt
        run(s, "restore")
    elif what in ("first", "warmup"):
        warmups = [int(w) for w in args[5:]] if what == "warmup" else [None]
        for w in warmups:
            s = system(items, harts, int(args[4]) if what == "warmup" else 2000, target, sized)
            if w is not None:
                s.client.warmup_requests = w
            s.mode, s.detailed_start, s.warm_caches, s.restore_from = "detailed", "roi", True, ckpt
            run(s, f"warmup {s.client.warmup_requests}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
