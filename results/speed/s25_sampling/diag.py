"""Scratch: one configuration's full / sampled / shadow runs with per-phase, per-class CPI (KVSIM_SAMPDIAG)."""
import json
import os
import sys

sys.path.insert(0, os.getcwd())
from drivers.cli import sampling_table as t

name, mode, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
cseed = int(sys.argv[4]) if len(sys.argv) > 4 else seed
extra = dict(a.split("=") for a in sys.argv[5:])
scale = dict(seed=seed, client_seed=cseed, steady=True, **{k: int(v) for k, v in extra.items()})
stats, cpu = t.run(name, mode != "full", **scale)
f = t.figures(stats)
out = {"name": name, "mode": mode, "seed": seed, "cpu": cpu, **f, "idle_per_req": stats[t.IDLE],
       "insts": sum(t.paths.CORE.values(stats, "committed_insts"))}
if mode != "full":
    for n in ("ipc", "cpi", "cpi_ci", "windows", "warming_cpi", "timed_insts", "warmed_insts", "llc_mpki"):
        out["s_" + n] = stats[t.paths.SAMPLING.stat(n)]
print("RESULT", json.dumps(out), flush=True)
