"""Reduced probe of the DRAM read latency at 1 and 4 requests a packet (issue 28, session 27, dram-s27): the target
socket's share at a fixed open-loop load, with every channel's read latency, bandwidth and reversed reads by cause.

    [CORES=60] [ITEMS=4194304] [RPC=3000] [RPP=4] [QUANTUM=1000] [PREFETCH=1] \\
        .venv/bin/python results/dram_s27/probe_s27.py OFFERED_MFRAMES_PER_PORT OUTDIR

Defaults are reduced (4 Mi items, 3,000 requests a core). Prints one line of headline figures."""
import json
import os
import pathlib
import sys

from drivers.studies.common import target
from models.sim import simulate

offered, out = float(sys.argv[1]), pathlib.Path(sys.argv[2])
cores = int(os.environ.get("CORES", "60"))
server_args = [] if os.environ.get("PREFETCH", "1") == "1" else ["prefetch=0"]
system = target(cores=cores, items=int(os.environ.get("ITEMS", 1 << 22)),
                requests_per_core=int(os.environ.get("RPC", 3000)),
                requests_per_packet=int(os.environ.get("RPP", 4)), offered_mpps=offered,
                warm_last_insts=20_000_000, server_args=server_args)
if os.environ.get("QUANTUM"):
    system.quantum = int(os.environ["QUANTUM"])
    system.client.stall_rounds = max(system.client.stall_rounds, -(-system.client.stall_rounds * 1000 // system.quantum))
simulate(system, out)
stats = json.load(open(out / "stats.json"))
stats = stats.get("stats", stats)
ch = [k[: -len(".reads")] for k in stats if k.startswith("system.socket0.mem.channel") and k.endswith(".reads")]


def total(name):
    return sum(stats.get(f"{c}.{name}", 0.0) for c in ch)


reads = total("reads")
lat = sum(stats[f"{c}.read_latency_avg"] * stats[f"{c}.reads"] for c in ch) / reads / 1e3
queue = sum(stats[f"{c}.read_queue_latency_avg"] * stats[f"{c}.reads"] for c in ch) / reads / 1e3
causes = {k: total(f"reversed_{k}") / reads for k in ("short", "history", "other")}
print(out.name, "offered", offered, "mrps %.1f" % stats["client.throughput_mrps"], "loss %.4f" % stats["client.loss"],
      "p95_us %.2f" % (stats["client.latency.p95"] / 1e3), "dram_reads", int(reads),
      "read_bw_GBps %.1f" % (stats["system.socket0.mem.read_bw"] / 1e9),
      "rd_lat_ns %.1f" % lat, "rd_queue_ns %.1f" % queue, "reversed %.3f" % (total("reversed_reads") / reads),
      " ".join("%s %.3f" % kv for kv in causes.items()), "bus_util_max %.3f" % max(stats[f"{c}.bus_utilization"] for c in ch),
      "row_hit %.3f" % (total("row_hits") / max(1.0, total("row_hits") + total("row_misses") + total("row_conflicts"))))
