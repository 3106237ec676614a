"""Session 24 (search-s24): runs a point (probes + window loads) at 1% on the capacity search's synthetic servers
(tests/test_capacity.py: SYNTHETIC, SKEWED, UNDER_STATED, and PACED, the Zipf-like servers whose cores are paced
by the hottest queue), each a point whose windows see what its probes see (tests/test_window_capacity.py
_window_of), for the search of whichever tree is first on PYTHONPATH: run it once with the branch's, once with
98a3949's (/tmp/search-s24-base). The servers are the branch's (drivers/synthetic.py, loaded from this worktree);
on the base tree a run carries no core rates (its Outcome has none). Prints one JSON line a case: the saturated
search's runs (the windows from its prediction) and the refined search's (the probes to the resolution, then the
windows), and whether each answer is within the resolution of the true threshold (a sustained window, one a
resolution above it failed).

Usage: PYTHONPATH=TREE python results/speed/s24_search/synthetic.py > OUT.jsonl"""
import importlib.util
import json
import pathlib
import sys

from drivers import capacity
from drivers import window_capacity as wc

WT = pathlib.Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location("drivers.synthetic_s24", WT / "drivers" / "synthetic.py")
syn = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = syn
spec.loader.exec_module(syn)
base = "core_rates" not in capacity.Outcome.__dataclass_fields__
if base:                      # 98a3949: no core rates in an outcome
    syn.Outcome = lambda *a, core_rates=(), **k: capacity.Outcome(*a, **k)

LINE, RES, BOUND = 148.8, 0.01, 0.01
cases = {"synthetic": [syn.QueueServer(c) for c in (0.05, 0.8, 1.7, 10.0, 37.0, 120.0, 146.0, 1000.0)] +
         [syn.QueueServer(20.0, background_loss=0.004), syn.QueueServer(20.0, knee=0.3)] +
         [syn.BacklogServer(c) for c in (0.05, 1.1, 8.0, 30.0, 120.0)],
         "skewed": [syn.SkewedServer(rate, syn.zipf_shares(cores, alpha)) for cores, rate, alpha in
                    ((8, 3.0, 0.99), (16, 4.0, 1.2), (60, 1.2, 0.5), (60, 1.2, 0.99), (60, 2.0, 0.9), (120, 0.6, 0.99))],
         "under-stated": [syn.BacklogServer(c, slowdown) for c in (0.05, 1.1, 8.0, 30.0, 120.0)
                          for slowdown in (0.02, 0.05)],
         "paced": [syn.SkewedServer(rate, syn.zipf_shares(cores, alpha), slowdown=slowdown, paced=True)
                   for cores, rate, alpha, slowdown in ((8, 2.0, 0.99, 0.0), (8, 2.0, 0.99, 0.05), (60, 1.2, 0.99, 0.0),
                                                        (16, 3.0, 1.2, 0.02))]}


def window_of(server):
    def window(x, service=None):
        out = server(x)
        return wc.Judged(x, out.loss, out.answered_mpps, float("nan"), out.law, out.shares)
    return window


def point(server, refine):
    res = capacity.search(server, LINE, resolution=RES, refine=refine)
    if res.line_limited:
        return len(res.probes), True, res.offered_mpps
    c = wc.confirm(window_of(server), res.start_mpps, LINE, resolution=RES,
                   predicted=None if res.refined else res.predicted_mpps)
    ok = c.confirmed and server(c.offered_mpps).loss < BOUND <= server(c.upper_mpps).loss and \
        c.upper_mpps <= c.offered_mpps * (1 + RES) * (1 + 1e-9)
    return len(res.probes) + len(c.judged), ok, c.offered_mpps


for kind, servers in cases.items():
    for server in servers:
        row = {"tree": "98a3949" if base else "branch", "kind": kind, "server": repr(server)[:80]}
        for name, refine in (("saturated", False), ("refined", True)):
            runs, ok, answer = point(server, refine)
            row.update({f"{name}_runs": runs, f"{name}_within": ok, f"{name}_mpps": answer})
        print(json.dumps(row))
sys.stdout.flush()
