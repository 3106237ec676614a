"""How much the seed moves the 2 x 2 and 4 x 1 KVS runs (reduced, as measure.py), beside how much the partitions'
order does: throughput per seed under each schedule, and the spread.

    .venv/bin/python results/threads23/seeds.py [SEEDS]    (default 5: System.seed and client.seed 1..5)"""
import statistics
import sys

sys.path.insert(0, "tests")
from models.sim import simulate  # noqa: E402

from conftest import kvs_on_sockets  # noqa: E402

seeds = range(1, 1 + (int(sys.argv[1]) if len(sys.argv) > 1 else 5))
for sockets, cores in ((2, 2), (4, 1)):
    for schedule in ("global", "socket", "reversed"):
        rates = []
        for seed in seeds:
            s = kvs_on_sockets(sockets, cores)
            s.seed = seed
            s.client.seed = seed
            if schedule != "global":
                s.schedule, s.partition_order = "partitioned", schedule
            r = simulate(s)
            assert r.stop_reason == "client_done", r.stop_reason
            rates.append(r.stats["client.throughput_mrps"])
        print(f"{sockets} x {cores} {schedule:8s}", " ".join(f"{x:.3f}" for x in rates),
              f"mean {statistics.mean(rates):.3f} sd {statistics.stdev(rates):.3f} "
              f"({100 * statistics.stdev(rates) / statistics.mean(rates):.2f}%)", flush=True)
