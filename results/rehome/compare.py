"""Before -> after of the rehome fix: throughput, link messages, remote hits, and how many statistics moved."""
import json
import sys


def load(path):
    d = json.load(open(path))
    return d.get("stats", d)


for name in ("kvs2x2", "kvs4x1", "dual"):
    a, b = load(f"results/rehome/before_{name}.json"), load(f"results/rehome/after_{name}.json")
    def tot(d, pred):
        return sum(v for k, v in d.items() if pred(k) and isinstance(v, (int, float)))
    rows = {
        "throughput_mrps": lambda d: d.get("client.throughput_mrps"),
        "link messages": lambda d: tot(d, lambda key: key.startswith("system.link") and key.endswith(".messages")),
        "remote_hits": lambda d: tot(d, lambda key: key.endswith("llc.remote_hits")),
        "remote_misses": lambda d: tot(d, lambda key: key.endswith("llc.remote_misses")),
    }
    moved = [k for k in a if a[k] != b.get(k)]
    new = [k for k in b if k not in a]
    print(f"{name}: {len(moved)} of {len(a)} statistics moved; {len(new)} new in the second run")
    for r, f in rows.items():
        print(f"  {r}: {f(a)} -> {f(b)}")
    if "-v" in sys.argv:
        for k in moved[:60]:
            print("   ", k, a[k], "->", b.get(k))
