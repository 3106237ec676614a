"""Is the steady-state window's old path unchanged (drivers/window_capacity.py with options['confirm'] = False)?
Runs the sweep's capacity evaluator and the end-to-end study's on a 2-core target (4,096 items, Zipf 0.99 EREW
for the study's, so it takes 3 seeds; uniform for the plain one) restored from a checkpoint made here, with
the steady-state window (2 windows at most), and writes both records to OUT as JSON. Run it with this checkout
(--no-confirm) and with a checkout from before the confirmation (which has no such option and ignores it):
the records must be equal but for the new capacity.* keys.

Usage: confirm_off_identity.py OUT.json [--no-confirm]"""
import json
import pathlib
import sys
import tempfile

from configs import brps_target_socket
from drivers.studies import end_to_end
from drivers.sweep import evaluators
from models.sim import simulate

out = pathlib.Path(sys.argv[1])
folder = pathlib.Path(tempfile.mkdtemp(prefix="kvsim-identity-")) / "ck"


def server(rate, popularity):
    s = brps_target_socket.system(cores=2, items=4096, requests=300, offered_mpps=rate, warmup_requests=2000,
                                  popularity=popularity)
    return s


s = server(1.0, "uniform")
s.checkpoint_to = str(folder)
simulate(s)


def restored(popularity):
    def make():
        s = server(1.0, popularity)
        s.restore_from = str(folder)
        return s
    return make


options = {"resolution": 0.05, "steady": True, "steady_max_windows": 2, "power": False, "max_probes": 6,
           **({"confirm": False} if "--no-confirm" in sys.argv else {})}
plain = evaluators.evaluate_capacity(restored("uniform"), options, lambda _: None)
e2e = end_to_end.evaluate(restored("zipf"), {**options, "seeds": 3}, lambda _: None)
out.write_text(json.dumps({"plain": plain, "e2e": e2e}, indent=1, sort_keys=True, default=str))
