#!/usr/bin/env python3
"""Probes per point of the capacity search (drivers/capacity.py) on the synthetic servers of its tests and on
small real cases, with each case's answer, so that two versions of the search can be compared side by side.

    sim-scripts/capacity_probes.py [--cases a,b] [--resolution R] [--cache FILE] [--save FILE] [--compare FILE]

`--cache FILE` keeps every simulated probe's outcome (loss, answered rate) by case and offered load: a simulated
probe is a deterministic function of its configuration, so a later run (another version of the search) reuses the
probes it shares with an earlier one instead of simulating them again. `--save` writes this run's answers and
probe counts; `--compare` reads a saved run and prints, per case, whether the two answers agree within the
resolution (each search's bracket [answer, upper) must hold the other's answer's threshold: the brackets overlap).

The real cases are reduced runs (few measured requests, small data sets), stated in their names; they are the
cases the search is tuned on, not the studies' conditions.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time
from typing import Callable

KEPT_STATS = ("client.", "system.nic0.", "run.")   # kept in the cache beside each probe's outcome, to study the curve
LINE_100G = 148.8      # 100 GbE, smallest frames, M frames/s per port (the synthetic suite's upper bound)


def _target_one_core(rob: int, width: int):
    def make(rate: float):
        from configs import brps_target_socket
        s = brps_target_socket.system(cores=1, requests=600, items=4096, offered_mpps=rate)
        s.caches.llc.size = 768 * 1024
        s.cores_per_cluster = 1                 # one core: a cluster of one on a one-router mesh
        s.noc = brps_target_socket.share_noc()
        s.core.rob_entries, s.core.issue_width = rob, width
        s.core.fetch_width = s.core.commit_width = width
        return s
    return make


def _xeon(cores: int, items: int, requests_per_core: int):
    def make(rate: float):
        from configs import xeon_e5_2697v2_socket as xeon
        ports = (cores + xeon.CORES_PER_PORT - 1) // xeon.CORES_PER_PORT
        return xeon.system(cores=cores, ports=ports, items=items, requests=requests_per_core * cores,
                           offered_mpps=rate)
    return make


def _kvs_default(harts: int, requests: int, items: int):
    def make(rate: float):
        from configs import kvs_default
        return kvs_default.system(harts=harts, requests=requests, items=items, offered_mpps=rate)
    return make


# name -> offered load -> System. Reduced runs: the measured requests and items are in each name.
REAL_CASES: dict[str, Callable] = {
    "target-1core-inorder-600req-4Ki": _target_one_core(1, 1),
    "target-1core-4issue-600req-4Ki": _target_one_core(64, 4),
    "xeon-1core-3000req-64Ki": _xeon(1, 1 << 16, 3000),
    "xeon-2core-1500req-64Ki": _xeon(2, 1 << 16, 1500),
    "xeon-4core-3000req-64Ki": _xeon(4, 1 << 16, 3000),
    "kvs_default-4core-2000req-16Ki": _kvs_default(4, 2000, 1 << 14),
    "kvs_default-4core-8000req-16Ki": _kvs_default(4, 8000, 1 << 14),
}


def synthetic_cases():
    from drivers.synthetic import BacklogServer, QueueServer
    servers = [QueueServer(c) for c in (0.05, 0.8, 1.7, 10.0, 37.0, 120.0, 146.0, 1000.0)] + \
        [QueueServer(20.0, background_loss=0.004), QueueServer(20.0, knee=0.3)]
    servers += [BacklogServer(c, slowdown) for c in (1.1, 8.0, 30.0) for slowdown in (0.0, 0.02, 0.05)]
    return {repr(s): s for s in servers}


def cached_server(name: str, make, cache: dict, cache_path: pathlib.Path | None, log):
    """A probe function that simulates `make(rate)` once per offered load and remembers the outcome."""
    from drivers import capacity

    def evaluate(rate: float):
        key = f"{name}@{rate!r}"
        if key not in cache:
            started = time.process_time()
            out = capacity.simulated_server(make)(rate)
            cache[key] = {"loss": out.loss, "answered_mpps": out.answered_mpps,
                          "cpu_s": time.process_time() - started,
                          "stats": {k: v for k, v in out.stats.items() if k.startswith(KEPT_STATS)}}
            if cache_path:
                cache_path.write_text(json.dumps(cache, indent=1, sort_keys=True))
        hit = cache[key]
        out = capacity.outcome_from_stats(hit["stats"], rate)   # this version's reading of the kept statistics
        log(f"  {name}: {rate:10.4f} offered -> {out.answered_mpps:10.4f} answered, loss {out.loss:.4f} ({out.law})")
        return out
    return evaluate


def run_case(evaluate, high: float, resolution: float) -> dict:
    from drivers import capacity
    res = capacity.search(evaluate, high, resolution=resolution)
    return {"probes": len(res.probes), "answer": res.offered_mpps, "upper": res.upper_mpps,
            "rates": [p.offered_mpps for p in res.probes], "losses": [p.loss for p in res.probes]}


def agree(a: dict, b: dict, resolution: float) -> bool:
    """Two answers agree within the resolution when each is within one resolution of the other (both brackets,
    [answer, upper), are at most one resolution wide and hold the threshold of a monotonic server)."""
    lo, hi = sorted((a["answer"], b["answer"]))
    return hi <= lo * (1 + resolution) * (1 + 1e-9)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="synthetic," + ",".join(REAL_CASES),
                        help="comma separated: 'synthetic' and/or real case names")
    parser.add_argument("--resolution", type=float, default=0.01)
    parser.add_argument("--cache", type=pathlib.Path, default=None, help="probe outcomes kept between runs")
    parser.add_argument("--save", type=pathlib.Path, default=None, help="write this run's answers here (JSON)")
    parser.add_argument("--compare", type=pathlib.Path, default=None, help="a saved run to compare answers with")
    parser.add_argument("--quiet", action="store_true", help="no line per probe")
    opts = parser.parse_args(argv)
    names = [c for c in opts.cases.split(",") if c]
    unknown = [c for c in names if c != "synthetic" and c not in REAL_CASES]
    if unknown:
        raise SystemExit(f"unknown cases {unknown}; known: synthetic, {', '.join(REAL_CASES)}")
    cache = json.loads(opts.cache.read_text()) if opts.cache and opts.cache.exists() else {}
    before = json.loads(opts.compare.read_text()) if opts.compare else {}

    def log(line: str) -> None:
        if not opts.quiet:
            print(line, flush=True)

    results: dict[str, dict] = {}
    if "synthetic" in names:
        for name, server in synthetic_cases().items():
            results[name] = run_case(server, LINE_100G, opts.resolution)
    for name in names:
        if name in REAL_CASES:
            from drivers import capacity
            make = REAL_CASES[name]
            high = capacity.line_rate_mpps(make(1.0))
            results[name] = run_case(cached_server(name, make, cache, opts.cache, log), high, opts.resolution)
    print(f"resolution {opts.resolution:g}; reduced real runs (requests and items in each name)")
    print(f"{'case':<52}{'probes':>7}{'answer':>11}{'upper':>11}" + ("   before: probes  answer  agree" if before
                                                                       else ""))
    for name, r in results.items():
        line = f"{name:<52}{r['probes']:>7}{r['answer']:>11.4f}{r['upper']:>11.4f}"
        if name in before:
            b = before[name]
            line += f"   {b['probes']:>14}{b['answer']:>8.4f}  {'yes' if agree(r, b, opts.resolution) else 'NO'}"
        print(line)
    for group, keys in (("synthetic", [k for k in results if k not in REAL_CASES]),
                        ("real", [k for k in results if k in REAL_CASES])):
        if keys:
            mean = sum(results[k]["probes"] for k in keys) / len(keys)
            was = [before[k]["probes"] for k in keys if k in before]
            print(f"mean probes per point, {group} ({len(keys)} cases): {mean:.2f}" +
                  (f" (before: {sum(was) / len(was):.2f})" if len(was) == len(keys) else ""))
    if opts.save:
        opts.save.write_text(json.dumps(results, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
