"""Probes and loads a capacity point takes on the synthetic servers, today's search (the probes' search refined to
the resolution, then the steady-state windows from its answer) against a search stopped at its saturated probe whose
prediction the windows start from (capacity.search(refine=False), session 22). No simulation: the servers are
drivers/synthetic.py's, as in tests/test_capacity.py and tests/test_window_capacity.py.

A server with a window model of its own (WindowedServer, TransientBacklogServer: a short probe and a long window
see different losses) is judged by its windows; the others' windows are their probes (a window that sees what a probe
sees). The busiest core's service rate passed to the judge is the failed probes' highest served rate (as the tests'
`searched`), NaN-free; a window whose busiest core's rate is unknown (the plain servers) steps up a resolution at a
time when it sustains.

    .venv/bin/python results/speed/saturated_s22.py OUT.json [RESOLUTION ...]     # default 0.01 and 0.02
"""
import json
import math
import statistics
import sys

from drivers import capacity
from drivers import window_capacity as wc
from drivers.synthetic import (
    BacklogServer,
    QueueServer,
    SkewedServer,
    TransientBacklogServer,
    WindowedServer,
    zipf_shares,
)

LINE, BOUND = 148.8, 0.01
TRANSIENT_WINDOW = 100 * 90.0 * 4      # a TransientBacklogServer's window: the recheck's length in its tests

PLAIN = [QueueServer(c) for c in (0.05, 0.8, 1.7, 10.0, 37.0, 120.0, 146.0)] + \
    [QueueServer(20.0, background_loss=0.004), QueueServer(20.0, knee=0.3)] + \
    [BacklogServer(c) for c in (0.05, 1.1, 8.0, 30.0, 120.0)]
UNDER_STATED = [BacklogServer(c, slowdown) for c in (0.05, 1.1, 8.0, 30.0, 120.0) for slowdown in (0.02, 0.05)]
SKEWED = [SkewedServer(rate, zipf_shares(cores, alpha)) for cores, rate, alpha in
          ((8, 3.0, 0.99), (16, 4.0, 1.2), (60, 1.2, 0.5), (60, 1.2, 0.99), (60, 2.0, 0.9), (120, 0.6, 0.99))]
WINDOWED = [WindowedServer(10.0, buffer=30.0), WindowedServer(10.0, startup=3.3),
            TransientBacklogServer(10.0, backlog=216.0, frames_per_request=90.0)]


def truth_of(server) -> float:
    if isinstance(server, WindowedServer):
        return server.threshold(BOUND, server.window_frames)
    if isinstance(server, TransientBacklogServer):
        return server.threshold(BOUND, TRANSIENT_WINDOW)
    return server.threshold(BOUND) if not getattr(server, "knee", 0) else _bisect(server)


def _bisect(server) -> float:
    low, high = 1e-6, LINE
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if server(mid).loss < BOUND else (low, mid)
    return low


def window_of(server):
    if isinstance(server, WindowedServer):
        return server.window
    if isinstance(server, TransientBacklogServer):
        def window(x, service=None, frames=TRANSIENT_WINDOW):
            loss = server.loss(x, frames)
            return wc.Judged(x, loss, x * (1 - loss), min(x, server.capacity_mpps), capacity.BACKLOG,
                             dropped=server.dropped(x, frames))
        return window

    def window(x, service=None):
        out = server(x)
        return wc.Judged(x, out.loss, out.answered_mpps, math.nan, out.law, out.shares)
    return window


def point(server, resolution: float, refine: bool) -> dict:
    res = capacity.search(server, LINE, resolution=resolution, refine=refine)
    if res.line_limited:
        return {"probes": len(res.probes), "loads": 0, "capacity": LINE, "confirmed": True}
    failed = [p for p in res.probes if not p.sustained(BOUND)]
    service = max(min(p.offered_mpps, getattr(server, "capacity_mpps", math.inf)) for p in failed) \
        if hasattr(server, "capacity_mpps") else None
    c = wc.confirm(window_of(server), res.start_mpps, LINE, resolution=resolution, service=service,
                   predicted=None if res.refined else res.predicted_mpps)
    return {"probes": len(res.probes), "loads": len(c.judged), "capacity": c.offered_mpps, "confirmed": c.confirmed,
            "upper": c.upper_mpps, "start": res.start_mpps}


out = {}
for resolution in [float(r) for r in sys.argv[2:]] or [0.01, 0.02]:
    rows = []
    for group, servers in (("plain", PLAIN), ("under-stated", UNDER_STATED), ("skewed", SKEWED),
                           ("windowed", WINDOWED)):
        for server in servers:
            truth = truth_of(server)
            row = {"group": group, "server": repr(server)[:80], "truth": truth}
            for name, refine in (("today", True), ("saturated", False)):
                p = point(server, resolution, refine)
                p["within"] = p["capacity"] < truth <= p["capacity"] * (1 + resolution) * (1 + 1e-9)
                row[name] = p
            rows.append(row)
    out[resolution] = rows
    print(f"resolution {resolution:g}:")
    for r in rows:
        t, s = r["today"], r["saturated"]
        print(f"  {r['group']:12s} {r['server'][:44]:44s} truth {r['truth']:9.4f} | today {t['probes']}+{t['loads']} "
              f"{t['capacity']:9.4f} {'ok' if t['within'] else 'OFF'} | saturated {s['probes']}+{s['loads']} "
              f"{s['capacity']:9.4f} {'ok' if s['within'] else 'OFF'}")
    for name in ("today", "saturated"):
        n = [r[name]["probes"] + r[name]["loads"] for r in rows]
        print(f"  {name}: mean {statistics.mean(n):.2f} runs a point (probes + window loads), "
              f"{sum(r[name]['within'] for r in rows)} of {len(rows)} within the resolution")
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1)
