"""base (012f089) against after (this branch): every statistic of the standard runs (standard_runs.py), value for value."""
import json

for run in ("kvs_default/stats.json", "kvs2x2.json", "kvs4x1.json"):
    def load(tag, run=run):
        path = f"results/mend-s23/{tag}_{run}"
        d = json.load(open(path))
        return d.get("stats", d) if "/" not in run else d, d.get("stop") if "/" not in run else None
    (a, sa), (b, sb) = load("base"), load("after")
    a = {k: v for k, v in a.items() if not k.startswith("host.")}
    b = {k: v for k, v in b.items() if not k.startswith("host.")}
    differ = [k for k in a if a[k] != b.get(k)]
    print(f"{run}: {len(a)} statistics, {len(differ)} differ, {len(set(b) - set(a))} new, {len(set(a) - set(b))} gone; "
          f"stop {sa} -> {sb}")
    for k in differ[:20]:
        print("   ", k, a[k], "->", b.get(k))
