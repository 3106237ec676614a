#!/usr/bin/env python3
"""How much the partitioned schedule (System.schedule = 'partitioned') moves a run's statistics against the global
schedule: two statistics files written by `sim-scripts/bench_server.py --stats-json` (same server, seed and load,
one per schedule) compared stat by stat.

    sim-scripts/partition_difference.py GLOBAL.json PARTITIONED.json [--top 15]

Printed: how many statistics are identical, the headline statistics side by side (throughput, loss, latency
percentiles, the cores' instructions and cycles, the links' messages), and the differing statistics with the
largest relative differences. A statistic present in one file only is an error."""

from __future__ import annotations

import argparse
import json
import pathlib

HEADLINES = ("client.throughput_mrps", "client.requests", "client.loss", "client.latency.p50", "client.latency.p95",
             "client.latency.p99", "client.measured_ns", "system.insts", "system.sim_ticks")


def relative(a: float, b: float) -> float:
    """(b - a) / |a|, or 0 when both are 0 and infinity when only a is."""
    if a == b:
        return 0.0
    return (b - a) / abs(a) if a else float("inf")


def summed(stats: dict, prefix: str, suffix: str) -> float:
    return sum(v for k, v in stats.items() if k.startswith(prefix) and k.endswith(suffix))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("global_json")
    parser.add_argument("partitioned_json")
    parser.add_argument("--top", type=int, default=15, help="differing statistics to list")
    opts = parser.parse_args(argv)
    a = json.loads(pathlib.Path(opts.global_json).read_text())
    b = json.loads(pathlib.Path(opts.partitioned_json).read_text())
    if set(a) != set(b):
        only = sorted(set(a) ^ set(b))
        raise SystemExit(f"the two runs have different statistics: {only[:10]} ...")
    same = sum(1 for k in a if a[k] == b[k])
    print(f"{len(a)} statistics, {same} identical, {len(a) - same} differ")
    rows = [(k, a[k], b[k]) for k in HEADLINES if k in a]
    rows += [(f"sum {what}", summed(a, "system.socket", what), summed(b, "system.socket", what))
             for what in (".insts", ".cycles")]
    rows += [("sum system.link*.messages", summed(a, "system.link", ".messages"),
              summed(b, "system.link", ".messages"))]
    print(f"{'statistic':44} {'global':>16} {'partitioned':>16} {'difference':>11}")
    for name, x, y in rows:
        print(f"{name:44} {x:16.6g} {y:16.6g} {relative(x, y):+11.4%}")
    differing = sorted(((abs(relative(a[k], b[k])), k) for k in a if a[k] != b[k] and a[k]), reverse=True)
    print("largest relative differences (of statistics non-zero under the global schedule):")
    for _, k in differing[:opts.top]:
        print(f"  {k:60} {a[k]:14.6g} -> {b[k]:14.6g} ({relative(a[k], b[k]):+.3%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
