"""Where one probe of the target socket's capacity point goes, by phase (issue 24): the one-socket point of the
scaling study at the paper's conditions (servers.server: 60 cores, Uniform, 95% GET, EREW, 300 measured requests a
core, 25,000 warm-up requests a core), restored from a checkpoint of ITEMS items, at RATE M frames/s a port.

Usage: probe_phases.py CHECKPOINT ITEMS [RATE] [--json OUT] [--stats OUT] (OUT: the phases; the run's statistics)

Host time is CPU time: the process's (time.process_time) and its main thread's (CLOCK_THREAD_CPUTIME_ID); the
difference is the engine's other thread, the page file's checksum pass. A phase's time runs from its first progress
report (every 1 M guest instructions) to the next phase's first; what comes before the first report is the restore
plus the first 1 M instructions of warming (subtracted at the warming phase's measured rate)."""
import json
import sys
import time

from drivers.studies import common, servers
from models.sim import simulate

args = [a for a in sys.argv[1:] if not a.startswith("--")]
out_json = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
out_stats = sys.argv[sys.argv.index("--stats") + 1] if "--stats" in sys.argv else None
args = [a for a in args if a not in (out_json, out_stats)]
checkpoint, items = args[0], int(args[1])
rate = float(args[2]) if len(args) > 2 else 60.0
EVERY = 1_000_000

system = servers.server(sockets=1, items=items, requests_per_core=300,
                        warmup_requests=common.WARMUP_REQUESTS_PER_CORE * servers.CORES_PER_SOCKET)
system.client.offered_mpps = rate
system.restore_from = checkpoint

marks = []        # (phase, insts, process CPU, main thread CPU, answered)


def progress(insts, _ticks, phase, answered):
    marks.append((phase, insts, time.process_time(), time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID), answered))


t0, m0 = time.process_time(), time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID)
r = simulate(system, progress=progress, progress_every=EVERY)
t1, m1 = time.process_time(), time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID)
marks.append(("end", r.insts, t1, m1, None))

first = {}
for i, mk in enumerate(marks):
    first.setdefault(mk[0], i)
order = [p for p in ("warming", "detailed", "end") if p in first]
rec = {"checkpoint": checkpoint, "items": items, "rate": rate, "cpu_total_s": t1 - t0,
       "other_threads_cpu_s": (t1 - t0) - (m1 - m0), "insts_total": r.insts,
       "roi_insts": r.stats.get("system.roi.insts"), "client_requests": r.stats.get("client.requests"),
       "warmup_requests": system.client.warmup_requests, "phases": {}}
for a, b in zip(order, order[1:]):
    i, j = first[a], first[b]
    insts = marks[j][1] - marks[i][1]
    cpu = marks[j][2] - marks[i][2]
    rec["phases"][a] = {"insts": insts, "cpu_s": cpu, "main_thread_cpu_s": marks[j][3] - marks[i][3],
                        "mips_per_cpu_s": insts / cpu / 1e6}
w = rec["phases"].get("warming")
head = marks[first[order[0]]]
rec["before_first_report_cpu_s"] = head[2] - t0
rec["before_first_report_main_cpu_s"] = head[3] - m0
if w:
    rec["restore_main_cpu_s_est"] = (head[3] - m0) - EVERY / (w["insts"] / w["main_thread_cpu_s"])
rec["quality"] = {k: r.stats.get(k) for k in ("client.loss", "client.throughput_mrps", "system.roi.insts")}
print(json.dumps(rec, indent=1))
if out_json:
    with open(out_json, "w") as f:
        json.dump(rec, f, indent=1)
if out_stats:
    with open(out_stats, "w") as f:
        json.dump(r.stats, f, indent=1, sort_keys=True)
