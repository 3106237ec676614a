"""One partitioned KVS run (reduced: 1,500 requests, 4,096 items) with the scratch trace on (KVSIM_PART_TRACE).

    KVSIM_PART_TRACE=F .venv/bin/python results/threads24/trace_run.py SxC ORDER OUT.json"""
import json
import sys

sys.path.insert(0, "tests")
from models.sim import simulate  # noqa: E402

from conftest import kvs_on_sockets  # noqa: E402

sockets, cores = map(int, sys.argv[1].split("x"))
s = kvs_on_sockets(sockets, cores)
s.schedule = "partitioned"
s.partition_order = sys.argv[2]
r = simulate(s)
json.dump({"stop": r.stop_reason, "stats": r.stats}, open(sys.argv[3], "w"), indent=0, sort_keys=True)
print(sys.argv[1:], r.stop_reason, r.stats.get("client.throughput_mrps"))
