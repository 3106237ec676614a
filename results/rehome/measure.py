"""Stats of the 2 x 2 and 4 x 1 KVS runs (tests/conftest.py::kvs_on_sockets), written as JSON (reduced runs)."""
import json
import sys

sys.path.insert(0, "tests")
from models.sim import simulate  # noqa: E402

from conftest import kvs_on_sockets  # noqa: E402

tag = sys.argv[1]
for sockets, cores in ((2, 2), (4, 1)):
    r = simulate(kvs_on_sockets(sockets, cores))
    with open(f"results/rehome/{tag}_kvs{sockets}x{cores}.json", "w") as f:
        json.dump({"stop": r.stop_reason, "stats": r.stats}, f, indent=0, sort_keys=True)
    print(tag, sockets, cores, r.stop_reason, flush=True)
