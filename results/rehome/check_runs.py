"""The coherence check mode through the 2 x 2 and 2 x 4 KVS runs under both schedules (reduced runs)."""
import sys

sys.path.insert(0, "tests")
from models.sim import simulate  # noqa: E402

from conftest import kvs_on_sockets  # noqa: E402

for sockets, cores in ((2, 2), (2, 4)):
    for schedule in ("global", "partitioned"):
        s = kvs_on_sockets(sockets, cores)
        s.schedule = schedule
        for sock in s.sockets:
            sock.caches.directory.check = True
        r = simulate(s)
        print(sockets, cores, schedule, r.stop_reason, r.stats["client.throughput_mrps"], flush=True)
        if r.stop_reason != "client_done":
            sys.exit(f"{sockets} x {cores} {schedule}: stopped by {r.stop_reason}, not client_done")
