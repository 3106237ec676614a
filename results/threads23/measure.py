"""Statistics of the 2 x 2 and 4 x 1 KVS runs (tests/conftest.py::kvs_on_sockets, 1,500 requests, 4,096 items:
reduced) under the schedules named, written as JSON to results/threads23/{tag}_{schedule}_kvs{S}x{C}.json.

    .venv/bin/python results/threads23/measure.py TAG global partitioned [reversed]

'reversed' is the partitioned schedule with System.partition_order = 'reversed' (not on 012f089)."""
import json
import sys
import time

sys.path.insert(0, "tests")
from models.sim import simulate  # noqa: E402

from conftest import kvs_on_sockets  # noqa: E402

tag, schedules = sys.argv[1], sys.argv[2:]
for sockets, cores in ((2, 2), (4, 1)):
    for schedule in schedules:
        s = kvs_on_sockets(sockets, cores)
        s.schedule = "global" if schedule == "global" else "partitioned"
        if schedule == "reversed":
            s.partition_order = "reversed"
        t = time.process_time()
        r = simulate(s)
        with open(f"results/threads23/{tag}_{schedule}_kvs{sockets}x{cores}.json", "w") as f:
            json.dump({"stop": r.stop_reason, "stats": r.stats}, f, indent=0, sort_keys=True)
        print(tag, schedule, sockets, cores, r.stop_reason, f"{time.process_time() - t:.1f} s CPU", flush=True)
