"""The test point of tests/test_sampling.py (4 cores, 65,536 items, 2,000 requests a core; reduced): for each client
seed, the full run, then each placement (System.seed) sampled, with its figures and each interval's verdict.
From the repository root: .venv/bin/python results/speed/s27_sampling/repro.py CLIENT_SEEDS [SEEDS] [REQUESTS_PER_CORE],
e.g. repro.py 1,2,3 1,2,3"""
import sys

from drivers.cli import sampling_table as table
from models import stats_paths as paths

scale = {"cores": 4, "items": 1 << 16, "requests_per_core": int(sys.argv[3]) if len(sys.argv) > 3 else 2000}
cseeds = [int(x) for x in sys.argv[1].split(",")]
seeds = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 and sys.argv[2] else []
for cs in cseeds:
    full, cpu = table.run("base", False, client_seed=cs, **scale)
    f = table.figures(full)
    print(f"client {cs} FULL idle {full[table.IDLE]:.1f} work {full['client.insts_per_request_work']:.1f} "
          f"mrps {f['mrps']:.3f} p95 {f['p95']:.2f} ipc {f['ipc']:.4f} mpki {f['mpki']:.3f} cpu {cpu:.1f}", flush=True)
    for sd in seeds:
        s, cpu = table.run("base", True, seed=sd, client_seed=cs, **scale)
        iv = table.intervals(s)
        line, verdicts = table.row("base", full, s, (0, cpu))
        sf = table.figures(s)
        print(f"  seed {sd} idle {s[table.IDLE]:.1f} work {s['client.insts_per_request_work']:.1f} mrps {sf['mrps']:.3f} "
              f"p95 {sf['p95']:.2f} ipc {s[paths.SAMPLING.stat('ipc')]:.4f} windows {s[paths.SAMPLING.stat('windows')]:.0f} "
              f"warming_cpi {s[paths.SAMPLING.stat('warming_cpi')]:.4f} cpi {s[paths.SAMPLING.stat('cpi')]:.4f} cpu {cpu:.1f}", flush=True)
        print("   ", {m: (round(iv[m][0], 4), round(iv[m][1], 4), verdicts[m]) for m in iv}, flush=True)
