"""Statistics of the 2 x 2 and 4 x 1 KVS runs (tests/conftest.py::kvs_on_sockets, 1,500 requests, 4,096 items:
reduced) under the partitioned schedule in both partition orders (or the global schedule), as JSON in
results/threads25/{tag}_{order}_kvs{S}x{C}.json, and how many statistics the order moves (threads-s25; as
results/threads24/measure.py).

    .venv/bin/python results/threads25/measure.py TAG [2x2 4x1] [global]"""
import json
import sys
import time

sys.path.insert(0, "tests")
from models.sim import simulate  # noqa: E402

from conftest import kvs_on_sockets  # noqa: E402

tag = sys.argv[1]
shapes = [a for a in sys.argv[2:] if "x" in a] or ["2x2", "4x1"]
orders = ["global"] if "global" in sys.argv else ["socket", "reversed"]
for shape in shapes:
    sockets, cores = map(int, shape.split("x"))
    runs = {}
    for order in orders:
        s = kvs_on_sockets(sockets, cores)
        if order != "global":
            s.schedule = "partitioned"
            s.partition_order = order
        t = time.process_time()
        r = simulate(s)
        runs[order] = r.stats
        with open(f"results/threads25/{tag}_{order}_kvs{shape}.json", "w") as f:
            json.dump({"stop": r.stop_reason, "stats": r.stats}, f, indent=0, sort_keys=True)
        print(tag, order, shape, r.stop_reason, f"{time.process_time() - t:.1f} s CPU",
              f"{r.stats.get('client.throughput_mrps')} M req/s", flush=True)
    if len(runs) == 2:
        a, b = runs["socket"], runs["reversed"]
        common = [k for k in a if k in b]
        moved = [k for k in common if a[k] != b[k]]
        print(f"{tag} {shape}: the order moves {len(moved)} of {len(common)} statistics", flush=True)
