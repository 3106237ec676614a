"""The standard runs whose statistics a mend must leave bit-identical: kvs_default (one socket, as `kvsim run
kvs_default --no-power`) and the 2 x 2 and 4 x 1 KVS runs (tests/conftest.py::kvs_on_sockets; reduced runs).
Writes results/mend-s23/<tag>_<run>.json (stop reason and every statistic)."""
import json
import subprocess
import sys

sys.path.insert(0, "tests")
from models.sim import simulate  # noqa: E402

from conftest import kvs_on_sockets  # noqa: E402

tag = sys.argv[1]
out = f"results/mend-s23/{tag}_kvs_default"
subprocess.run([".venv/bin/kvsim", "run", "kvs_default", "--no-power", "--outdir", out], check=True)
for sockets, cores in ((2, 2), (4, 1)):
    r = simulate(kvs_on_sockets(sockets, cores))
    with open(f"results/mend-s23/{tag}_kvs{sockets}x{cores}.json", "w") as f:
        json.dump({"stop": r.stop_reason, "stats": r.stats}, f, indent=0, sort_keys=True)
    print(tag, sockets, cores, r.stop_reason, r.stats["client.throughput_mrps"], flush=True)
