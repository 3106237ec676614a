#!/usr/bin/env python3
"""Per-core DVFS and turbo on a skewed load (drivers/dvfs.py): a run with every core at 2.5 GHz, then the
policy's per-core points (lightly loaded cores at 1.5 GHz, the hottest at 3.5 GHz) from that run's per-core load,
each priced at its cores' own V and f and checked against the power budget.

    sim-scripts/dvfs_study.py [CONFIG] [--cores N] [--requests N] [--set NAME=VALUE ...] [--budget W]
                              [--server-budget W] [--capacity] [--csv FILE]

CONFIG is any config module with `system()` (default brps_target_socket, the target socket; a multi-socket
config works the same). By default the client is Zipf 0.99 and runs closed loop (its window); `--capacity`
instead finds each configuration's highest offered load with < 1% loss (drivers/capacity.py) and reports the run
at that load. The per-socket budget defaults to the config's Technology.tdp.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", nargs="?", default="brps_target_socket")
    ap.add_argument("--cores", type=int, default=None, help="cores (the config's system(cores=...))")
    ap.add_argument("--requests", type=int, default=30_000, help="measured requests per run")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a parameter")
    ap.add_argument("--budget", type=float, default=None, help="power budget per socket, W (default: tdp)")
    ap.add_argument("--server-budget", type=float, default=None, help="budget of the whole server, W")
    ap.add_argument("--capacity", action="store_true", help="each configuration at its highest sustained load")
    ap.add_argument("--csv", default=None, help="write the comparison table here")
    opts = ap.parse_args(argv)

    import configs
    from drivers import capacity, dvfs
    from models.sim import simulate

    kw = {"requests": opts.requests, "popularity": "zipf"}
    if opts.cores is not None:
        kw["cores"] = opts.cores
    system = configs.load(opts.config).system(**kw)
    system.client.zipf_theta = 0.99
    if opts.set:       # the same --set as run.py
        from drivers.cli.run import apply_override
        for item in opts.set:
            apply_override(system, item)

    def run(s, label: str) -> dict:
        if not opts.capacity:
            return dict(simulate(s).stats)

        def make(rate: float):
            t = dvfs.copy.deepcopy(s)
            t.client.offered_mpps = rate
            return t
        found = capacity.capacity(make, progress=lambda p: print(f"  {label}: {p.offered_mpps:.3f} Mpps per port "
                                                                 f"-> loss {p.loss:.4f}", flush=True))
        if found.best is None:
            raise SystemExit(f"{label}: no offered load stayed under 1% loss")
        return dict(found.best.stats)

    table, plan, _ = dvfs.study(system, budget_W=opts.budget, server_budget_W=opts.server_budget, run=run)
    print(plan.assignment.table().to_string(index=False))
    print(table.to_string())
    if opts.csv:
        table.to_csv(opts.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
