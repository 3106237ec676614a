"""How the measured statistics of the target socket's capacity point depend on the warm-up's length (issue 24):
the one-socket point of the scaling study (servers.server: 60 cores, Uniform, 95% GET, EREW, 25,000 warm-up
requests a core by default), restored from CHECKPOINT of ITEMS items, its warm-up FACTOR times the default, then
one steady-state window (drivers/steady_state.simulated_window, 30 batch means) of REQUESTS requests at RATE M
frames/s a port. Prints the window's throughput and its 95% interval (batch means), p95 and its interval, the
LLC's misses per kilo-instruction of the measured phase, and the CPU time of the whole process.

Usage: warmup_length.py CHECKPOINT ITEMS FACTOR [--rate 63.2218] [--requests 36000] [--json OUT]"""
import json
import sys
import time

from drivers import steady_state as ss
from drivers.studies import common, servers
from models import stats_paths as paths

args = sys.argv[1:]


def option(name, default):
    if name not in args:
        return default
    i = args.index(name)
    value = args[i + 1]
    del args[i:i + 2]
    return value


out = option("--json", None)
rate, requests = float(option("--rate", "63.2218")), int(option("--requests", "36000"))
checkpoint, items, factor = args[0], int(args[1]), float(args[2])
warmup = round(factor * common.WARMUP_REQUESTS_PER_CORE * servers.CORES_PER_SOCKET)


def system(n):
    s = servers.server(sockets=1, items=items, requests_per_core=300, warmup_requests=warmup)
    s.client.offered_mpps, s.client.requests = rate, n
    s.restore_from = checkpoint
    return s


c0 = time.process_time()
w = ss.simulated_window(system, None)(requests)
cpu = time.process_time() - c0
mean, half = ss.interval(w.batch_rates)
st = w.stats
llc_misses = sum(paths.LLC.values(st, "misses"))
roi = st.get("system.roi.insts", 0.0)
rec = {"checkpoint": checkpoint, "items": items, "factor": factor, "warmup_requests": warmup, "rate": rate,
       "requests": requests, "cpu_s": cpu, "throughput_mrps": w.throughput, "batch_mean_mrps": mean,
       "batch_half_width_mrps": half, "p95_ns": w.p95, "p95_half_width_ns": w.p95_half_width,
       "llc_misses": llc_misses, "roi_insts": roi, "llc_mpki": 1e3 * llc_misses / roi if roi else None,
       "llc_mpki_stat": sum(paths.LLC.values(st, "mpki")), "llc_demand_mpki": sum(paths.LLC.values(st, "demand_mpki")),
       "client_throughput_mrps": st.get("client.throughput_mrps"), "client_loss": st.get("client.loss"),
       "client_p95_ns": st.get("client.latency.p95")}
print(json.dumps(rec, indent=1))
if out:
    with open(out, "w") as f:
        json.dump({**rec, "batch_rates": [float(x) for x in w.batch_rates]}, f, indent=1)
