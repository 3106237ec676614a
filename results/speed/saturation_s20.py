"""What moving the window judge's saturation test onto the busiest core's load factor changes, on synthetic servers
(issue 28, session 20): the loads `window_capacity.confirm` judges from the probes' answer, with the busiest core's
service rate as the probes measured it and misstated by -20% and +25% (a short probe's rate is a few percent off,
capacity.OVERSHOOT; the reference of a ratio of rates is a guess). Every window carries its load factor and the
frames it dropped, as a simulated window does since session 19, whichever drivers judge it (the windows are built
here, so that drivers without the session 20 change judge the same windows).

Run with this checkout's drivers, or another's (PYTHONPATH=<export>/ with its drivers/), and compare:

    .venv/bin/python results/speed/saturation_s20.py OUT.json [STEP]

STEP (session 21): the judge's step up, window_capacity.STEPS (default: confirm's own default). These windows carry
no statistics, so the batch step falls back to the utilisation's on every one (saying so).
"""
import dataclasses
import json
import sys

from drivers import capacity
from drivers import window_capacity as wc
from drivers.synthetic import HotCoreWindowedServer, WindowedServer

LINE, RES, BOUND = 148.8, 0.02, 0.01
FIELDS = {f.name for f in dataclasses.fields(wc.Judged)}
STEP = {"step": sys.argv[2]} if len(sys.argv) > 2 else {}


def judged(offered, loss, busiest, factor, dropped, **kw):
    extra = {"load_factor": factor, **({"dropped": dropped} if "dropped" in FIELDS else {})}
    return wc.Judged(offered, loss, offered * (1 - loss), busiest, **kw, **extra)


def windowed(server):
    def window(x, service=None):
        loss = server.loss(x, server.window_frames)
        return judged(x, loss, min(x, server.capacity_mpps), x * (1 - loss) / server.capacity_mpps,
                      loss * server.window_frames)
    return window


def hot(server):
    def window(x, service=None):
        loss = server.loss(x)
        return judged(x, loss, min(x, server.saturates_mpps), x / server.saturates_mpps, 0.0, law=capacity.BACKLOG,
                      shares=server.shares())
    return window


CASES = {
    # start-up loss: the probes under-state the capacity; the windows move up
    "startup": (WindowedServer(10.0, startup=3.3), windowed),
    # rings that hide an 11% overload from short probes; the windows move down (dropping)
    "hidden": (WindowedServer(10.0, buffer=30.0), windowed),
}
out = {}
for name, (server, make) in CASES.items():
    res = capacity.search(server, LINE, resolution=RES)
    service = max(min(p.offered_mpps, server.capacity_mpps) for p in res.probes if not p.sustained(BOUND))
    truth = server.threshold(BOUND, server.window_frames)
    for scale in (0.8, 1.0, 1.25):
        c = wc.confirm(make(server), res.offered_mpps, LINE, resolution=RES, service=service * scale, **STEP)
        out[f"{name} x{scale}"] = {"truth": truth, "confirmed": c.confirmed, "capacity": c.offered_mpps,
                                   "loads": [round(j.offered_mpps, 4) for j in c.judged]}
# Session 19's skewed server: a hot core (6.6% of the frames) saturating at 10; its window at 10.3 drops nothing
server = HotCoreWindowedServer(10.0, 0.066)
for scale in (0.8, 1.0, 1.25):
    c = wc.confirm(hot(server), 10.3, LINE, resolution=RES, service=10.0 * scale, **STEP)
    out[f"hot core x{scale}"] = {"truth": 10.0 / (1 - BOUND), "confirmed": c.confirmed, "capacity": c.offered_mpps,
                                 "loads": [round(j.offered_mpps, 4) for j in c.judged]}
for k, v in out.items():
    print(f"{k:16s} truth {v['truth']:.4g}: {'confirmed' if v['confirmed'] else 'NOT confirmed'} {v['capacity']:.4g} "
          f"in {len(v['loads'])} loads {v['loads']}")
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1)
