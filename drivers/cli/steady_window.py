#!/usr/bin/env python3
"""One steady-state measurement (drivers/steady_state.py) on the billion-RPS target socket: the check that the
rule's windows work on the whole 60-core socket (issue 28: a 60-core window once failed in batch_rates).

    sim-scripts/steady_window.py --cores 60 --items 65536 --requests-per-core 500 --popularity zipf
    sim-scripts/steady_window.py --cores 60 --items 65536 --seeds 2 --max-windows 1

Closed loop (the client's window of packets per queue; saturation is not required, as for the DVFS study's runs).
Prints each window (throughput with its 95% interval, p95 with its interval) and the host time, wall and CPU (of
this process: the simulation runs in it). The data set is loaded by every window (a small one: the check is of
the windows, not of the load).
"""

from __future__ import annotations

import argparse
import resource
import time


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv: list[str] | None = None) -> int:
    from drivers import steady_state as ss
    from drivers.studies import common
    from models.params import ParamError

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", type=int, default=common.FULL_CORES)
    parser.add_argument("--items", type=int, default=1 << 16, help="tiny items (a reduced data set: said below)")
    parser.add_argument("--requests-per-core", type=int, default=500, help="the first window's, per core")
    parser.add_argument("--popularity", choices=("uniform", "zipf"), default="uniform")
    parser.add_argument("--seeds", type=int, default=1, help="repeated seeds (client.measure_seed 0 .. N-1)")
    parser.add_argument("--max-windows", type=int, default=ss.MAX_WINDOWS)
    args = parser.parse_args(argv)
    if args.cores < 1 or args.items < 1 or args.requests_per_core < 1:
        parser.error("--cores, --items and --requests-per-core must be at least 1")

    def measure(seed: int) -> ss.SteadyState:
        def at(requests: int):
            s = common.target(args.cores, items=args.items, requests_per_core=1, popularity=args.popularity)
            if args.popularity == "zipf":
                s.client.zipf_theta = 0.99
            s.client.requests = requests
            s.client.measure_seed = seed
            return s

        def report(text: str) -> None:
            print(f"seed {seed}: {text} (host {time.time() - wall:.0f} s wall, {cpu_seconds() - cpu:.0f} s CPU)",
                  flush=True)
        return ss.measure(ss.simulated_window(at, None), args.requests_per_core * args.cores, saturation=0.0,
                          max_windows=args.max_windows, report=report)

    data = common.Conditions(items=args.items).text().split("; ")[1]
    scale = "full platform (60 cores)" if args.cores == common.FULL_CORES else f"reduced: {args.cores} cores"
    conditions = f"{scale}; {data}"
    print(f"conditions: {conditions}; {args.popularity} keys, closed loop", flush=True)
    wall, cpu = time.time(), cpu_seconds()
    try:
        rep = ss.replicate(measure, args.seeds)
    except (ParamError, ValueError) as err:
        print(f"error: {err}")
        return 2
    st = rep.stats()
    print(f"throughput {st['steady.throughput']:.4g} +- {st['steady.half_width']:.3g} M req/s "
          f"({'converged' if st['steady.converged'] else 'not converged'}), p95 {st['steady.p95_ns'] / 1e3:.3g} +- "
          f"{st['steady.p95_half_width_ns'] / 1e3:.3g} us, {args.seeds} seed(s); host {time.time() - wall:.0f} s "
          f"wall, {cpu_seconds() - cpu:.0f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
