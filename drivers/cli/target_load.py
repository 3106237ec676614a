#!/usr/bin/env python3
"""The billion-RPS target socket (configs/brps_target_socket.py, 60 cores) at its highest sustained load: the
open-loop offered load per port with less than 1% loss (drivers/capacity.py), and at that load the throughput,
p95 latency, LLC MPKI and on-chip network utilisation.

    sim-scripts/target_load.py [--requests N] [--resolution R] [--high MPPS] [--at MPPS]

`--at` skips the search and reports one run at that offered load per port.
To run another checkout's models and engine (e.g. the main branch's, for a before/after comparison), run this
module with that checkout first on the path: `PYTHONPATH=OTHER python -m drivers.cli.target_load`. Statistics a checkout does not produce (a network before the mesh was modelled) print
as "-".
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=30_000, help="measured requests per probe")
    parser.add_argument("--resolution", type=float, default=0.01, help="relative resolution of the search")
    parser.add_argument("--high", type=float, default=None, help="upper end of the search (M frames/s per port)")
    parser.add_argument("--at", type=float, default=None, help="one run at this load (M frames/s per port)")
    opts = parser.parse_args(argv)
    from configs import brps_target_socket as target
    from drivers import capacity
    from models import stats_paths

    def make(rate: float):
        return target.system(requests=opts.requests, offered_mpps=rate)

    def show(p) -> None:
        print(f"probe: {p.offered_mpps:8.3f} Mpps per port offered -> {p.answered_mpps:8.3f} Mpps answered, "
              f"loss {p.loss:.4f}, {p.result.host_seconds:.1f} host s", flush=True)

    started = time.perf_counter()
    if opts.at is not None:
        outcome = capacity.simulated_server(make)(opts.at)
        best = capacity.Probe(opts.at, outcome.loss, outcome.answered_mpps, "at", outcome.stats, outcome.result)
        show(best)
    else:
        found = capacity.capacity(make, high=opts.high, resolution=opts.resolution, progress=show)
        print(f"search: {time.perf_counter() - started:.0f} host s, {len(found.probes)} probes")
        if found.best is None:
            print("no probe stayed under 1% loss")
            return 1
        best = found.best
        print(f"highest sustained load: {best.offered_mpps:.3f} Mpps per port offered")
    s = best.result.stats

    def stat(suffix: str) -> str:
        keys = sorted(k for k in s if k.endswith(suffix))
        return f"{s[keys[0]]:.3f} ({keys[0]})" if keys else "-"

    print(f"throughput: {s['client.throughput_mrps']:.3f} M requests/s; loss {best.loss:.4f}")
    print(f"p95 latency: {s['client.latency.p95'] / 1e3:.3f} us")
    print(f"LLC MPKI: {stat('llc.mpki')}")
    batches = stats_paths.NIC_QUEUE.values(s, "rx_batch_mean")
    batch = f"{sum(batches) / len(batches):.1f}" if batches else "-"
    print(f"instructions per request: {s['client.insts_per_request']:.0f}; RX batch (mean over NICs): {batch}")
    print(f"mesh link utilisation: mean {stat('noc.link_utilization_avg')}, max {stat('noc.link_utilization_max')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
