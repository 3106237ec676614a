"""Does a shorter turn shrink what the partitions' order moves? The 2 x 2 and 4 x 1 KVS runs (reduced, as
measure.py) under the partitioned schedule, socket order against reversed, at several System.quantum values: the
statistics that differ and the throughput of each.

    .venv/bin/python results/threads23/quantum.py [QUANTUM ...]    (default 100 25 5)"""
import sys

sys.path.insert(0, "tests")
from models.sim import simulate  # noqa: E402

from conftest import kvs_on_sockets  # noqa: E402

for quantum in [int(q) for q in sys.argv[1:]] or [100, 25, 5]:
    for sockets, cores in ((2, 2), (4, 1)):
        runs = {}
        for order in ("socket", "reversed"):
            s = kvs_on_sockets(sockets, cores)
            s.schedule, s.partition_order, s.quantum = "partitioned", order, quantum
            r = simulate(s)
            assert r.stop_reason == "client_done", r.stop_reason
            runs[order] = r.stats
        a, b = runs["socket"], runs["reversed"]
        moved = sum(1 for k in a if a[k] != b.get(k))
        print(f"quantum {quantum:4d} {sockets} x {cores}: {moved} of {len(a)} statistics differ; M req/s "
              f"{a['client.throughput_mrps']:.3f} -> {b['client.throughput_mrps']:.3f}", flush=True)
