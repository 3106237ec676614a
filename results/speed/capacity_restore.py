"""One capacity search with restore=True (drivers/capacity.py, issue 24): the target socket with CORES cores
loading ITEMS items (uniform keys; --zipf: Zipf 0.99, EREW), at the paper's per-core warm-up (25,000 requests a
core; --warmup-per-core N) and measured requests (300 a core), resolution 1%. The first probe loads the store and checkpoints it; the others restore it. Prints and writes the
probes, the capacity and the CPU time (this process and its reaped children: a shared warm-up's server and
probes), the total and after each probe; --stats DIR writes each probe's statistics to DIR/probe-I.json.
--alone warms each restored probe itself (share_warmup=False; on a checkout before it existed, the flag is not
passed, and every restored probe warms itself anyway).

Usage: capacity_restore.py CORES ITEMS [--zipf] [--warmup-per-core N] [--alone] [--json OUT] [--stats DIR]"""
import inspect
import json
import pathlib
import sys

from configs import brps_target_socket
from drivers import capacity
from drivers.shared_warmup import cpu_seconds
from drivers.studies import common

args = sys.argv[1:]


def option(name):
    if name not in args:
        return None
    i = args.index(name)
    value = args[i + 1]
    del args[i:i + 2]
    return value


out_json, out_stats = option("--json"), option("--stats")
warmup_per_core = int(option("--warmup-per-core") or common.WARMUP_REQUESTS_PER_CORE)
alone, zipf = "--alone" in args, "--zipf" in args
args = [a for a in args if a not in ("--alone", "--zipf")]
cores, items = int(args[0]), int(args[1])


def make(rate):
    return brps_target_socket.system(cores=cores, items=items, requests=300 * cores, offered_mpps=rate,
                                     warmup_requests=warmup_per_core * cores,
                                     popularity="zipf" if zipf else "uniform")


c0 = cpu_seconds()
marks = []


def progress(p):
    marks.append(cpu_seconds() - c0)
    print(f"probe at {p.offered_mpps:.4f}: loss {p.loss:.4f}, CPU so far {marks[-1]:.1f} s", flush=True)


extra = {"share_warmup": False} if alone and "share_warmup" in inspect.signature(capacity.capacity).parameters \
    else {}
res = capacity.capacity(make, restore=True, progress=progress, **extra)
cpu = cpu_seconds() - c0
rec = {"cores": cores, "items": items, "zipf": zipf, "warmup_per_core": warmup_per_core, "alone": alone, "cpu_s": cpu, "cpu_after_each_probe_s": marks,
       "capacity_mpps_per_port": res.offered_mpps, "upper_mpps_per_port": res.upper_mpps,
       "warmups": getattr(res, "warmups", None), "probes": res.table()}
print(json.dumps(rec, indent=1))
if out_json:
    pathlib.Path(out_json).write_text(json.dumps(rec, indent=1))
if out_stats:
    folder = pathlib.Path(out_stats)
    folder.mkdir(parents=True, exist_ok=True)
    for i, p in enumerate(res.probes):
        (folder / f"probe-{i}.json").write_text(json.dumps(p.stats, indent=1, sort_keys=True))
