#!/usr/bin/env python3
"""CREW against EREW on the dual- and quad-socket targets under uniform keys, with and without remote lines in the
LLC (Directory.remote_lines: a socket's LLC caches lines homed on other sockets): each point's capacity (the
highest offered load per port with < 1% loss, drivers/capacity.py), the inter-socket links' utilisation at that
load, and the remote lines' counters. The client checks every response (a wrong one stops the run with an error).

    sim-scripts/remote_lines.py [--sockets 2 4] [--modes erew crew] [--remote on off] [--requests-per-core N]
                                [--items N] [--resolution R] [--get-ratio G] [--at MPPS]

`--at MPPS` skips the search: one probe at that offered load per port. Above capacity, an overloaded server answers
at its service rate (drivers/capacity.py), so the answered rate of one overloaded probe measures the capacity.

A reduced run (fewer requests per core than the studies' full scale) says so in its first line.
"""

from __future__ import annotations

import argparse
import sys
import time


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sockets", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--modes", nargs="+", default=["erew", "crew"], choices=["erew", "crew"])
    parser.add_argument("--remote", nargs="+", default=["off", "on"], choices=["off", "on"])
    parser.add_argument("--requests-per-core", type=int, default=300, help="measured requests per core per probe")
    parser.add_argument("--items", type=int, default=1 << 16)
    parser.add_argument("--get-ratio", type=float, default=0.95)
    parser.add_argument("--resolution", type=float, default=0.05)
    parser.add_argument("--at", type=float, default=None, help="one probe at this load (M frames/s per port)")
    opts = parser.parse_args(argv)
    from drivers import capacity
    from drivers.studies import end_to_end, servers
    from models import stats_paths as paths

    how = f"one probe at {opts.at} Mpps/port" if opts.at is not None else f"{opts.resolution:.0%} search resolution"
    print(f"scale: {opts.requests_per_core} measured requests per core per probe, {opts.items:,} items, uniform "
          f"keys, {opts.get_ratio:.0%} GET, {how} (reduced: the paper's conditions are 192 Mi items and steady-state "
          "windows)", flush=True)
    print("| sockets | mode | remote lines | capacity (M req/s) | offered (Mpps/port) | link util mean | "
          "link util max | remote hits / LLC misses | socket invalidations | responses checked | host s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for sockets in opts.sockets:
        for mode in opts.modes:
            for remote in opts.remote:
                def make(rate: float, sockets=sockets, mode=mode, remote=remote):
                    system = servers.server(sockets, items=opts.items, requests_per_core=opts.requests_per_core,
                                            popularity="uniform", get_ratio=opts.get_ratio, mode=mode,
                                            offered_mpps=rate)
                    for s in system.sockets:
                        s.caches.directory.remote_lines = remote == "on"
                    return system
                started = time.perf_counter()
                if opts.at is not None:
                    outcome = capacity.simulated_server(make)(opts.at)
                    best = capacity.Probe(opts.at, outcome.loss, outcome.answered_mpps, "at", outcome.stats,
                                          outcome.result)
                else:
                    found = capacity.capacity(make, resolution=opts.resolution, high=None,
                                              progress=lambda p: print(f"  probe {p.offered_mpps:.2f} Mpps/port: "
                                                                       f"loss {p.loss:.4f}", file=sys.stderr,
                                                                       flush=True))
                    best = found.best
                host = time.perf_counter() - started
                if best is None:
                    print(f"| {sockets} | {mode.upper()} | {remote} | no probe under 1% loss | | | | | | | "
                          f"{host:.0f} |", flush=True)
                    continue
                st = best.result.stats
                if opts.at is not None:
                    print(f"  answered {st[paths.CLIENT.stat('throughput_mrps')]:.1f} M req/s at {opts.at} Mpps/port "
                          f"offered, loss {best.loss:.4f}", file=sys.stderr, flush=True)
                util = paths.SOCKET_LINK.values(st, "utilization")
                hits = sum(paths.LLC.values(st, "remote_hits"))
                misses = sum(paths.LLC.values(st, "misses"))
                print(f"| {sockets} | {mode.upper()} | {remote} | {end_to_end.sustained_mrps(st):.1f} | "
                      f"{best.offered_mpps:.2f} | {_mean(util):.3f} | {max(util):.3f} | {hits:,.0f} / {misses:,.0f} | "
                      f"{st[paths.SYSTEM_DIRECTORY.stat('socket_invalidations')]:,.0f} | "
                      f"{st[paths.CLIENT.stat('responses_checked')]:,.0f} of {st[paths.CLIENT.stat('requests')]:,.0f}"
                      f" | {host:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
