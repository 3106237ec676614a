"""One whole capacity point of the target socket at the paper's conditions, issue 24: the one-socket point of the
scaling study (servers.server: 60 cores, Uniform, 95% GET, EREW, 300 measured requests a core, 25,000 warm-up
requests a core), restored from CHECKPOINT of ITEMS items, run as the studies run it (drivers/studies/end_to_end
`evaluate`: the reduced scale's search, 5% resolution, at most 8 probes, then the steady-state window at the
capacity found; no power model). Prints the point's CPU time (this process and every reaped child: the shared
warm-up's server and its forks), this process's own CPU time at each probe and window (a run that does not fork
runs here), and each forked run's own CPU time (where the checkout records it); with --json OUT, the record. Runs with whichever checkout is first on the path.

--zipf: Zipf 0.99 keys (EREW; the study's skewed point: fewer measured requests, the hottest core's ~300); the
windows confirm the search's answer (drivers/window_capacity.py) unless --no-confirm (then the rule at the search's
answer, as before the confirmation existed). --paper-search: the search of the studies at the paper's conditions
(2% resolution, at most 12 probes) instead of the reduced scale's.

Usage: capacity_point.py CHECKPOINT ITEMS [--zipf] [--no-confirm] [--confirm-budget N] [--paper-search] [--max-windows N] [--json OUT]"""
import json
import sys
import time

from drivers.shared_warmup import cpu_seconds
from drivers.studies import common, end_to_end, servers

args = sys.argv[1:]
out = args[args.index("--json") + 1] if "--json" in args else None
windows = int(args[args.index("--max-windows") + 1]) if "--max-windows" in args else None
checkpoint, items = args[0], int(args[1])


def system():
    s = servers.server(sockets=1, items=items, requests_per_core=end_to_end.REDUCED.requests_per_core,
                       popularity="zipf" if "--zipf" in args else "uniform",
                       warmup_requests=common.WARMUP_REQUESTS_PER_CORE * servers.CORES_PER_SOCKET)
    s.restore_from = checkpoint
    return s


options = {"resolution": end_to_end.REDUCED.resolution, "max_probes": end_to_end.REDUCED.max_probes,
           "steady": True, "power": False}
if windows:
    options["steady_max_windows"] = windows
if "--paper-search" in args:      # the search of the studies at the paper's conditions (end_to_end.scale_of)
    options.update(resolution=common.CAPACITY_RESOLUTION, max_probes=12)
if "--no-confirm" in args:
    options["confirm"] = False
if "--confirm-budget" in args:    # loads the windows may judge (drivers/window_capacity.BUDGET by default)
    options["confirm_budget"] = int(args[args.index("--confirm-budget") + 1])
marks = []
c0, s0, w0 = cpu_seconds(), time.process_time(), time.time()


def report(text):
    marks.append({"event": text, "self_cpu_s": time.process_time() - s0, "cpu_s": cpu_seconds() - c0,
                  "wall_s": time.time() - w0})
    print(json.dumps(marks[-1]), flush=True)


shared = []      # the point's SharedWarmup, to read each forked run's own CPU time (absent before this change)


class Kept(end_to_end.SharedWarmup):
    def __init__(self):
        super().__init__()
        shared.append(self)


end_to_end.SharedWarmup = Kept
res = end_to_end.evaluate(system, options, report)
st = res["stats"]
rec = {"checkpoint": checkpoint, "items": items, "options": options, "cpu_total_s": cpu_seconds() - c0,
       "self_cpu_s": time.process_time() - s0, "wall_s": time.time() - w0, "marks": marks, "probes": res["probes"],
       "windows": res.get("windows"), "capacity_mpps_per_port": st.get("capacity.mpps_per_port"),
       "steady": {k: v for k, v in st.items() if k.startswith("steady.")},
       "capacity": {k: v for k, v in st.items() if k.startswith("capacity.")}, "loads": res.get("loads"),
       "warmups": [x.warmups for x in shared], "forked_runs_cpu_s": [getattr(x, "run_cpu", None) for x in shared]}
print(json.dumps({k: rec[k] for k in ("cpu_total_s", "self_cpu_s", "wall_s", "capacity_mpps_per_port", "capacity",
                                      "loads")}, indent=1))
if out:
    with open(out, "w") as f:
        json.dump(rec, f, indent=1, sort_keys=True)
