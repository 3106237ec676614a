"""One steady-state window long enough that its progress interval passes the engine's 2 M-instruction signal check
(over 262,144 measured requests: steady_state.simulated_window samples about every 7.8 instructions a request),
issue 24: where the report grid's restart at the measured phase's start moves a window's samples, so its batch
means, though not its run's statistics. The 2-core target socket loading 4,096 items, at 2 M frames/s a port.
Writes OUT (JSON): the window's batch means, throughput, p95 and statistics.

Usage: long_window.py OUT REQUESTS"""
import json
import sys

from configs import brps_target_socket
from drivers import steady_state as ss

out, requests = sys.argv[1], int(sys.argv[2])
w = ss.simulated_window(lambda n: brps_target_socket.system(cores=2, items=4096, requests=n, offered_mpps=2.0),
                        None)(requests)
with open(out, "w") as f:
    json.dump({"requests": requests, "batch_rates": w.batch_rates.tolist(), "throughput": w.throughput,
               "p95": w.p95, "p95_half_width": w.p95_half_width, "stats": w.stats}, f, sort_keys=True)
print(json.dumps({"requests": requests, "throughput": w.throughput}))
