"""Reduced reproduction of the 32-requests-a-packet point (issue 28, session 25): a share of the target socket at a
fixed open-loop load, with per-core cost, L1D misses, RX batch and DRAM latency printed.

    [CORES=8] [ITEMS=1048576] [RPC=20000] [RPP=32] [CH=..] [L1D=64KiB] [L1MSHR=..] [DDIO=0.5] \
        .venv/bin/python batch32_repro_s25.py OFFERED_MFRAMES_PER_PORT TAG [server_arg=value ...]

Writes the run to /tmp/b32/TAG. Defaults: the 8-core share, 1 Mi items (both reduced), 32 requests a packet."""
import json
import os
import pathlib
import sys

from drivers.studies.common import target
from models.sim import simulate

offered, tag, server_args = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
cores = int(os.environ.get("CORES", "8"))
system = target(cores=cores, items=int(os.environ.get("ITEMS", 1 << 20)),
                requests_per_core=int(os.environ.get("RPC", 20000)),
                requests_per_packet=int(os.environ.get("RPP", 32)), offered_mpps=offered,
                warm_last_insts=20_000_000, server_args=server_args)
if os.environ.get("L1D"):
    system.caches.l1d.size = os.environ["L1D"]
if os.environ.get("L1MSHR"):
    system.caches.l1d.mshrs = int(os.environ["L1MSHR"])
if os.environ.get("CH"):
    system.memory.channels = int(os.environ["CH"])
if os.environ.get("DDIO"):
    for nic in system.nics:
        nic.ddio_ways = float(os.environ["DDIO"])
out = pathlib.Path(f"/tmp/b32/{tag}")
simulate(system, out)
stats = json.load(open(out / "stats.json"))
stats = stats.get("stats", stats)


def g(key):
    return stats.get(key, float("nan"))


print(tag, "offered", offered, "thr_mrps", g("client.throughput_mrps"), "loss", g("client.loss"),
      "p95_us", g("client.latency.p95") / 1e3)
for c in range(cores):
    p = f"system.socket0.core{c}."
    req = g(f"client.partition{c}.requests")
    busy = g(p + "cycles") - g(p + "idle_poll_cycles")
    print(c, "req", int(req), "busy_cyc/req %.0f" % (busy / req), "util %.2f" % (busy / g(p + "cycles")),
          "l1d_dem/req %.2f" % (g(p + "l1d.demand_misses") / req), "wmiss/req %.2f" % (g(p + "l1d.write_misses") / req),
          "merges/req %.2f" % (g(p + "l1d.mshr_merges") / req),
          "rxb %.1f" % g(f"system.nic{c // 20}.queue{c % 20}.rx_batch_mean"))
print("dram rd lat ns %.0f q %.0f util %.3f" % (g("system.socket0.mem.channel0.read_latency_avg") / 1e3,
      g("system.socket0.mem.channel0.read_queue_latency_avg") / 1e3, g("system.socket0.mem.channel0.bus_utilization")))
