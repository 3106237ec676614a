"""A steady-state window run from scratch (no restore, no shared warm-up: the path this change must leave alone),
issue 24: the 8-core target socket loading 65,536 items with cache warming, at 10 M frames/s a port, windows of
LENGTH measured requests (drivers/steady_state.py `simulated_window`), and its measured phase's raw progress reports
at two intervals (one under the engine's 2 M signal-check interval, one over it). Writes OUT (JSON): per window
its batch means, throughput, p95, statistics, and the reports.

Usage: window_from_scratch.py OUT LENGTH [LENGTH ...]"""
import json
import sys

from configs import brps_target_socket
from drivers import steady_state as ss
from models.sim import simulate

out, lengths = sys.argv[1], [int(a) for a in sys.argv[2:]]


def at(requests):
    return brps_target_socket.system(cores=8, items=65536, requests=requests, offered_mpps=10)


record = {"windows": [], "reports": {}}
for n in lengths:
    w = ss.simulated_window(at, None)(n)
    record["windows"].append({"requests": n, "batch_rates": w.batch_rates.tolist(), "throughput": w.throughput,
                              "p95": w.p95, "p95_half_width": w.p95_half_width, "stats": w.stats})
for every in (50_000, 3_000_000):
    reports = []
    simulate(at(lengths[0]), progress=lambda *r: reports.append(list(r)), progress_every=every)
    record["reports"][str(every)] = [r for r in reports if r[2] == ss.MEASURED_PHASE]
with open(out, "w") as f:
    json.dump(record, f, sort_keys=True)
print(json.dumps({"windows": [(w["requests"], w["throughput"]) for w in record["windows"]],
                  "reports": {k: len(v) for k, v in record["reports"].items()}}))
