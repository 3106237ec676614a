"""One capacity point whose answer steady-state windows confirm (drivers/window_capacity.py, issue 28), reduced: the
target socket with CORES cores loading ITEMS items (--zipf: Zipf 0.99, EREW; else uniform keys), 25,000 warm-up
and 300 measured requests a core, 2% resolution (the studies' at the paper's conditions). The probes' search
(capacity.capacity with restore=True: the first probe loads the store and checkpoints it, the others restore it)
runs through one SharedWarmup, and the windows fork from the same warm-up: first the windows judge the search's
answer and move the load (window_capacity.at_capacity), then the steady-state rule runs at the load they confirm;
--no-confirm runs the rule at the search's answer only (the old path). --windowed divides the measured requests by
the hottest core's expected load relative to the mean, as the end-to-end study does under skew (end_to_end.windowed:
its hottest core then gets about 300). --seeds K repeats the rule's windows for K
seeds at the end (each seed its own warm-up). --max-windows N caps the rule's windows (steady_max_windows). --step
batch predicts the judge's step up from the busy poll's fixed part (window_capacity.STEPS, confirm_step; session 21).
--resolution R: the search's and the windows' relative resolution (default the studies' 2%). --search saturated
(the default since session 24, as the studies' points) stops the probes' search at its saturated probe and the
windows start from its prediction (capacity.search's refine=False; session 22); refined is the full probes' search
(the default before session 24). --judge-window rule judges each load on
the steady-state rule's window, not the first within its interval target (window_capacity.JUDGE_WINDOWS,
confirm_window; session 22).

Prints and writes (--json OUT) the search's answer, the loads the windows judged with their losses, the capacity
confirmed (or not), which seeds' windows sustained there, the windows simulated, the steady-state throughput and its interval, and the CPU seconds (this
process and its reaped children: the shared warm-up's server and its forked runs) of the search and of the windows.

--journal FILE journals every probe and window as it finishes (drivers/sweep/journal.py, as a sweep's point does in
its store) under a key of this point (the arguments, the engine's and the server binary's content): run again after
a stop, it replays them and simulates the rest (the record's `replayed_units`; the first probe, which loads the store
and checkpoints it, always runs again: the others restore its checkpoint).

Usage: capacity_confirmed.py CORES ITEMS [--zipf] [--windowed] [--no-confirm] [--seeds K] [--max-windows N] [--json OUT]
       [--journal FILE] [--step utilization|batch] [--resolution R]
       [--search refined|saturated] [--judge-window short|rule]"""
import argparse
import json
import pathlib
import shutil
import tempfile

from configs import brps_target_socket
from drivers import capacity, window_capacity
from drivers.shared_warmup import SharedWarmup, cpu_seconds
from drivers.studies import common, end_to_end

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], usage=__doc__.rsplit("Usage: ", 1)[1])
parser.add_argument("cores", type=int)
parser.add_argument("items", type=int)
parser.add_argument("--zipf", action="store_true")
parser.add_argument("--windowed", action="store_true")
parser.add_argument("--no-confirm", dest="confirm", action="store_false")
parser.add_argument("--seeds", type=int, default=1)
parser.add_argument("--max-windows", type=int)
parser.add_argument("--json")
parser.add_argument("--journal")
parser.add_argument("--step", choices=window_capacity.STEPS, default=window_capacity.STEP_UTILIZATION)
parser.add_argument("--resolution", type=float, default=common.CAPACITY_RESOLUTION)
parser.add_argument("--search", choices=("refined", "saturated"), default="saturated")
parser.add_argument("--judge-window", choices=window_capacity.JUDGE_WINDOWS, default=window_capacity.JUDGE_SHORT)
a = parser.parse_args()
cores, items, zipf, confirm, seeds, max_windows, out_json = (a.cores, a.items, a.zipf, a.confirm, a.seeds,
                                                            a.max_windows, a.json)
requests = 300 * cores
if a.windowed:        # as the end-to-end study measures a skewed point (end_to_end.windowed)
    requests = max(cores, round(requests / end_to_end.hottest_load(brps_target_socket.system(
        cores=cores, items=items, requests=requests, popularity="zipf" if zipf else "uniform"))))
folder = pathlib.Path(tempfile.mkdtemp(prefix="kvsim-confirmed-"))
print(f"checkpoint folder {folder}", flush=True)      # removed at the end (by hand, after a kill)


def make(rate):
    return brps_target_socket.system(cores=cores, items=items, requests=requests, offered_mpps=rate,
                                     warmup_requests=common.WARMUP_REQUESTS_PER_CORE * cores,
                                     popularity="zipf" if zipf else "uniform")


def restoring(rate):
    system = make(rate)
    system.restore_from = str(folder / "data-set")
    return system


def report(text):
    print(f"[{cpu_seconds() - c0:7.1f} s] {text}", flush=True)


options = {"confirm": confirm, **({"steady_max_windows": int(max_windows)} if max_windows else {}),
           **({"confirm_step": a.step} if a.step != window_capacity.STEP_UTILIZATION else {}),
           **({"confirm_window": a.judge_window} if a.judge_window != window_capacity.JUDGE_SHORT else {})}
journal = None
if a.journal:
    from drivers.sweep import store
    from drivers.sweep.journal import PointJournal

    # The search and resolution join the key only when not the defaults, so that older journals keep their keys.
    extra = {**({"search": a.search} if a.search != "refined" else {}),
             **({"resolution": a.resolution} if a.resolution != common.CAPACITY_RESOLUTION else {})}
    key = store.point_key(make(1.0).to_dict(), {"script": "capacity_confirmed", "windowed": a.windowed,
                                                "seeds": seeds, "options": options, **extra})
    journal = PointJournal(a.journal, key, report)
    print(f"journal {a.journal} (point {key}): {len(journal)} units journaled", flush=True)
c0 = cpu_seconds()
try:
    with SharedWarmup() as shared:
        res = capacity.capacity(make, restore=True, checkpoint=folder, resolution=a.resolution,
                                runner=shared, refine=a.search == "refined",
                                progress=lambda p: report(f"probe at {p.offered_mpps:.4f}: loss "
                                                                           f"{100 * p.loss:.2f}%"), journal=journal)
        searched = cpu_seconds() - c0
        got = window_capacity.at_capacity(restoring, res, seeds, options, report, runner=shared, journal=journal)
        warmups = shared.warmups
finally:
    shutil.rmtree(folder, ignore_errors=True)
cpu = cpu_seconds() - c0
st = got["stats"]
rec = {"search": a.search, "resolution": a.resolution, "search_probes": len(res.probes),
       "cores": cores, "items": items, "zipf": zipf, "requests": requests, "confirm": confirm, "seeds": seeds, "options": options,
       "search_mpps_per_port": res.offered_mpps, "search_upper_mpps_per_port": res.upper_mpps,
       "capacity_mpps_per_port": st["capacity.mpps_per_port"], "upper_mpps_per_port":
       st["capacity.upper_mpps_per_port"], "confirmed": bool(st["capacity.confirmed"]),
       "window_loads": int(st["capacity.window_loads"]), "windows": int(st["capacity.windows"]),
       "seed_losses": {k: st[f"steady.seed{k}.loss"] for k in range(seeds)},
       "seeds_sustained": [k for k in range(seeds) if st[f"steady.seed{k}.loss"] < res.max_loss],
       "steady": {k: v for k, v in st.items() if k.startswith("steady.")}, "loads": got.get("loads"),
       "probes": res.table(), "warmups": warmups, "cpu_search_s": searched, "cpu_windows_s": cpu - searched,
       "cpu_s": cpu, "replayed_units": journal.replayed if journal else 0, "stats": st}
sat = res.probes[0].stats     # the saturated probe's queues (each core serves one) and the cores' expected shares
rec["saturated_probe"] = {"offered_all_mpps": sat.get("client.offered_mpps"), "measured_ns": sat.get("client.measured_ns"),
                          "tx_frames": [v for k, v in sorted(sat.items()) if k.endswith(".tx_frames") and "queue" in k],
                          "shares": list(res.probes[0].shares), "predicted_mpps": res.predicted_mpps}
print(json.dumps({k: v for k, v in rec.items() if k not in ("stats", "steady", "probes")}, indent=1))
if out_json:
    pathlib.Path(out_json).write_text(json.dumps(rec, indent=1, sort_keys=True))
