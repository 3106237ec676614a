"""Reduced reproduction: 8-core share of the target socket, 1 Mi items, 32 requests a packet, fixed offered load."""
import json, sys, pathlib
from drivers.studies.common import target
from models.sim import simulate
offered = float(sys.argv[1]); tag = sys.argv[2]
extra = sys.argv[3:]   # server args name=value
system = target(cores=8, items=1 << 20, requests_per_core=20000, requests_per_packet=32, offered_mpps=offered,
                warm_last_insts=20_000_000, server_args=extra)
import os
if os.environ.get("L1D"): system.caches.l1d.size = os.environ["L1D"]
if os.environ.get("L1MSHR"): system.caches.l1d.mshrs = int(os.environ["L1MSHR"])
if os.environ.get("CH"): system.memory.channels = int(os.environ["CH"])
if os.environ.get("DDIO"):
    for n in system.nics: n.ddio_ways = float(os.environ["DDIO"])
out = pathlib.Path(f"/tmp/b32/{tag}")
res = simulate(system, out)
s = json.load(open(out / "stats.json"))
s = s.get("stats", s)
def g(k): return s.get(k, float("nan"))
print(tag, "offered", offered, "thr_mrps", g("client.throughput_mrps"), "loss", g("client.loss"), "p95_us", g("client.latency.p95") / 1e3)
for c in range(8):
    p = f"system.socket0.core{c}."
    req = g(f"client.partition{c}.requests")
    busy = g(p + "cycles") - g(p + "idle_poll_cycles")
    print(c, "req", int(req), "busy_cyc/req %.0f" % (busy / req), "util %.2f" % (busy / g(p + "cycles")),
          "l1d_dem/req %.2f" % (g(p + "l1d.demand_misses") / req), "wmiss/req %.2f" % (g(p + "l1d.write_misses") / req),
          "merges/req %.2f" % (g(p + "l1d.mshr_merges") / req), "rxb %.1f" % g(f"system.nic0.queue{c}.rx_batch_mean"))
print("dram rd lat ns %.0f q %.0f util %.3f" % (g("system.socket0.mem.channel0.read_latency_avg") / 1e3,
      g("system.socket0.mem.channel0.read_queue_latency_avg") / 1e3, g("system.socket0.mem.channel0.bus_utilization")))
