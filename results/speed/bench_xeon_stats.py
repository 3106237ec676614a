"""The bench's Xeon socket run (drivers/cli/bench.py socket_main), for a before/after comparison of its statistics.
Usage: bench_xeon_stats.py JSON (run from the checkout to compare)."""
import json
import sys

from configs import xeon_e5_2697v2_socket
from drivers import capacity
from models.sim import simulate

xeon = xeon_e5_2697v2_socket.system(cores=12, requests=3000 * 12)
xeon.client.offered_mpps = capacity.line_rate_mpps(xeon)
r = simulate(xeon)
json.dump(r.stats, open(sys.argv[1], "w"), sort_keys=True)
print(len(r.stats), r.insts)
