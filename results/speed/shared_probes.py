"""Probes of the target socket's capacity point sharing one warm-up (drivers/shared_warmup.py, issue 24): the point
of probe_phases.py (servers.server: 60 cores, the paper's conditions), restored from CHECKPOINT of ITEMS items, at
each RATE in turn (M frames/s a port). Prints the CPU time of the whole (this process and its reaped children: the
warm-up's server and the probes) and each probe's wall time after its fork; --stats DIR writes each probe's
statistics to DIR/probe-RATE.json.

Usage: shared_probes.py CHECKPOINT ITEMS RATE [RATE ...] [--stats DIR]"""
import json
import pathlib
import sys

from drivers.shared_warmup import SharedWarmup, cpu_seconds
from drivers.studies import common, servers

args = sys.argv[1:]
out = None
if "--stats" in args:
    i = args.index("--stats")
    out = pathlib.Path(args[i + 1])
    del args[i:i + 2]
    out.mkdir(parents=True, exist_ok=True)
checkpoint, items, rates = args[0], int(args[1]), [float(r) for r in args[2:]]


def system(rate):
    s = servers.server(sockets=1, items=items, requests_per_core=300,
                       warmup_requests=common.WARMUP_REQUESTS_PER_CORE * servers.CORES_PER_SOCKET)
    s.client.offered_mpps = rate
    s.restore_from = checkpoint
    return s


c0 = cpu_seconds()
probes = []
with SharedWarmup() as shared:
    for rate in rates:
        r = shared(system(rate))
        probes.append({"rate": rate, "probe_wall_s": r.host_seconds, "cpu_so_far_s": cpu_seconds() - c0,
                       "throughput_mrps": r.stats.get("client.throughput_mrps"), "loss": r.stats.get("client.loss")})
        if out is not None:
            (out / f"probe-{rate:g}.json").write_text(json.dumps(r.stats, indent=1, sort_keys=True))
    warmups = shared.warmups
print(json.dumps({"checkpoint": checkpoint, "items": items, "warmups": warmups, "cpu_total_s": cpu_seconds() - c0,
                  "probes": probes}, indent=1))
