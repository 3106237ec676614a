"""The bench's Xeon socket (drivers/cli/bench.py socket_main: 12 cores, open loop at line rate), REQUESTS a core
(default 300), for callgrind: count its detailed phase alone with --toggle-collect='*detailed_phase*' (as
callgrind_target.py does for the target socket); the phase's guest instructions are system.roi.insts."""
import sys

from configs import xeon_e5_2697v2_socket
from drivers import capacity
from models.sim import simulate

n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
xeon = xeon_e5_2697v2_socket.system(cores=12, requests=n * 12)
xeon.client.offered_mpps = capacity.line_rate_mpps(xeon)
r = simulate(xeon)
print("insts", r.insts, {k: v for k, v in r.stats.items() if k.startswith("system.roi") or k == "system.insts"})
