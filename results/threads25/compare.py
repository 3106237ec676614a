"""How many statistics two stats JSON files (measure.py's, or bench_server.py --stats-json, gzipped or not) differ
in, and the throughput of each.

    python3 results/threads25/compare.py A.json[.gz] B.json[.gz]"""
import gzip
import json
import sys


def load(p):
    d = json.load(gzip.open(p) if p.endswith(".gz") else open(p))
    return d.get("stats", d)


a, b = load(sys.argv[1]), load(sys.argv[2])
common = [k for k in a if k in b]
moved = [k for k in common if a[k] != b[k]]
print(f"{len(moved)} of {len(common)} statistics differ (only in A: {len(a) - len(common)}, only in B: "
      f"{len(b) - len(common)})")
for k in ("client.throughput_mrps", "client.latency.p50_us", "client.latency.p95_us", "client.latency.p99_us"):
    print(k, a.get(k), b.get(k))
