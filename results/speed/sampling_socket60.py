"""Sampling on the 60-core target socket (reduced data set): full and sampled runs of some of the validation
table's configurations, with each run's host CPU in total and in its measured (detailed) phase."""
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.getcwd())
from drivers.cli import sampling_table as t
from drivers.steady_state import batch_rates, measured_reports, reports_in_order
from models.sim import simulate


def run(name, sampled, **scale):
    s = t.system(name, sampled, **scale)
    reports, first = [], {}

    def progress(insts, ticks, phase, answered):
        if phase == "detailed" and "detailed" not in first:
            first["detailed"] = time.process_time()
        if answered is not None:
            reports.append((phase, float(ticks), float(answered)))

    every = max(20_000, scale["requests_per_core"] * s.harts * 2000 // ((t.BATCHES + 2) * 8) // s.harts)
    started = time.process_time()
    stats = dict(simulate(s, progress=progress, progress_every=every).stats)
    end = time.process_time()
    tt, n = reports_in_order(*measured_reports(*zip(*reports)))
    stats[t.BATCH_RATES] = batch_rates(tt * 1e-12, n, t.BATCHES)[0] / 1e6
    return stats, end - started, end - first.get("detailed", end)


names = sys.argv[1].split(",")
rpc = int(sys.argv[2])
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
warmup = int(sys.argv[4]) if len(sys.argv) > 4 else -1
scale = dict(cores=60, items=1 << 18, requests_per_core=rpc, seed=seed, client_seed=seed, steady=True,
             warmup=warmup)
print(t.HEADER, flush=True)
for name in names:
    full, fc, fd = run(name, False, **scale)
    samp, sc, sd = run(name, True, **scale)
    line, verdicts = t.row(name, full, samp, (fc, sc))
    print(line, flush=True)
    print("HOST", json.dumps({"name": name, "full_cpu": fc, "full_detailed_cpu": fd, "sampled_cpu": sc,
                              "sampled_detailed_cpu": sd, "verdicts": verdicts,
                              "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                              "load": os.getloadavg()}), flush=True)
