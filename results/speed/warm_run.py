"""An 8-core target socket (262,144 items, 4,000 requests at 10 M frames/s a port) for callgrind of cache warming
(issue 24): restored from checkpoint CK with a warm-up of WARMUP requests, or with CK '-' a fresh run whose load of
ITEMS items warms the caches. Usage: warm_run.py CK WARMUP [ITEMS] [STATS_JSON]. The warming guest instructions of a
restored run are insts less the checkpoint's (its manifest's `insts`) less system.roi.insts. Figures: README.md."""
import json
import sys

from configs import brps_target_socket
from models.sim import simulate

ck, warmup = sys.argv[1], int(sys.argv[2])
items = int(sys.argv[3]) if len(sys.argv) > 3 else 262144
s = brps_target_socket.system(cores=8, items=items, requests=4000 if ck != "-" else 200, offered_mpps=10.0)
if ck != "-":
    s.restore_from, s.client.warmup_requests = ck, warmup
r = simulate(s)
print("insts", r.insts, "roi", r.stats.get("system.roi.insts"))
if len(sys.argv) > 4:
    json.dump(r.stats, open(sys.argv[4], "w"), sort_keys=True)
