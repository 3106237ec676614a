"""The bench's target socket runs (drivers/cli/bench.py socket_main), full and sampled, for a before/after comparison
of their statistics. Usage: bench_target_stats.py FULL_JSON SAMPLED_JSON (run from the checkout to compare)."""
import json
import sys

from configs import brps_target_socket
from models.sim import simulate

for path, sampled in ((sys.argv[1], False), (sys.argv[2], True)):
    s = brps_target_socket.system(requests=140_000, offered_mpps=70.0)
    s.sampling.enabled = sampled
    r = simulate(s)
    json.dump(r.stats, open(path, "w"), sort_keys=True)
    print(len(r.stats), r.insts)
