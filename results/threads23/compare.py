"""Pairs of runs' statistics (JSON from measure.py or bench_server.py --stats-json): how many moved, the key
figures before -> after, and which parts of the model the moved ones belong to.

    .venv/bin/python results/threads23/compare.py A.json B.json [-v]     (either may be .json.gz)"""
import collections
import gzip
import json
import re
import sys


def load(path):
    d = json.load(gzip.open(path, "rt") if path.endswith(".gz") else open(path))
    return d.get("stats", d)


def total(d, pred):
    return sum(v for k, v in d.items() if pred(k) and isinstance(v, (int, float)))


ROWS = {
    "throughput M req/s": lambda d: d.get("client.throughput_mrps"),
    # A run without a latency percentile is an error (KeyError), not a 0 us row.
    "p50 / p95 / p99 us": lambda d: tuple(round(d[f"client.latency.{p}"] / 1000, 3) for p in ("p50", "p95", "p99")),
    "instructions": lambda d: d.get("system.insts"),
    "measured ns": lambda d: d.get("client.measured_ns"),
    "link messages": lambda d: total(d, lambda k: re.fullmatch(r"system\.link\d+_\d+\.messages", k) is not None),
    "remote hits": lambda d: total(d, lambda k: k.endswith("llc.remote_hits")),
    "remote misses": lambda d: total(d, lambda k: k.endswith("llc.remote_misses")),
}


def part(name):
    """The model part a statistic belongs to: its path with numbers dropped, two levels deep."""
    return ".".join(re.sub(r"\d+", "", p) for p in name.split(".")[:2])


a, b = load(sys.argv[1]), load(sys.argv[2])
common = [k for k in a if k in b]
moved = [k for k in common if a[k] != b[k]]
print(f"{sys.argv[1]} -> {sys.argv[2]}: {len(moved)} of {len(common)} common statistics moved; "
      f"{len(set(b) - set(a))} only in the second, {len(set(a) - set(b))} only in the first")
for row, f in ROWS.items():
    print(f"  {row}: {f(a)} -> {f(b)}")
by_part = collections.Counter(part(k) for k in moved)
of_part = collections.Counter(part(k) for k in common)
print("  moved by part:", ", ".join(f"{p} {n}/{of_part[p]}" for p, n in by_part.most_common(12)))
if "-v" in sys.argv:
    for k in moved[:80]:
        print("   ", k, a[k], "->", b[k])
