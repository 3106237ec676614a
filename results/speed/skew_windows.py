"""Steady-state windows of the 60-core target socket at fixed loads, to see where a skewed point loses frames
(issue 28, session 19). The point is capacity_point.py's (servers.server: 60 cores, ITEMS items restored from
CHECKPOINT, 25,000 warm-up requests a core, EREW; --zipf: Zipf 0.99 and the end-to-end study's skewed window,
end_to_end.windowed), its system built the same way; one shared warm-up (drivers/shared_warmup.py), then one
window (window_capacity.Windows.window, the confirmation's own) at each LOAD (M frames/s a port), REQUESTS measured
requests (default: the confirmation's first window, twice the probes'; LOAD:K runs K times that). No search, no
confirmation.

For each window it prints and writes (--json OUT) the loss as the capacity rule reads it (capacity.outcome_from_stats)
and its parts: the frames the client counted lost (client.loss: frames the NIC dropped, or never answered), and the
shortfall of the answered rate over the span (1 - answered fraction); where the NIC dropped frames (each port's RX
FIFO overflows, frames without a steering match, each queue's drops); each queue's frames; each hart's polls and
poll instructions (busy: polls that found frames; idle: polls that found none); each core's cycles and the cycles
of its idle polls (system.socket0.core<c>.idle_poll_cycles, session 19: absent from older engines). The full statistics of each window go to
--stats-dir DIR as <load>.json when given.

Usage: skew_windows.py CHECKPOINT ITEMS LOAD[,LOAD...] [--zipf] [--requests N] [--seed K] [--json OUT]
       [--stats-dir DIR]"""
import argparse
import json
import pathlib
import time

from drivers import capacity, window_capacity
from drivers.shared_warmup import SharedWarmup, cpu_seconds
from drivers.studies import common, end_to_end, servers
from models import stats_paths as paths

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], usage=__doc__.rsplit("Usage: ", 1)[1])
parser.add_argument("checkpoint")
parser.add_argument("items", type=int)
parser.add_argument("loads")
parser.add_argument("--zipf", action="store_true")
parser.add_argument("--requests", type=int)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--json")
parser.add_argument("--stats-dir")
a = parser.parse_args()
loads = [(float(x.split(":")[0]), int(x.split(":")[1]) if ":" in x else 1) for x in a.loads.split(",")]


def system():
    s = servers.server(sockets=1, items=a.items, requests_per_core=end_to_end.REDUCED.requests_per_core,
                       popularity="zipf" if a.zipf else "uniform",
                       warmup_requests=common.WARMUP_REQUESTS_PER_CORE * servers.CORES_PER_SOCKET)
    s.restore_from = a.checkpoint
    return s


point = end_to_end.windowed(system)


def make(rate):
    s = point()
    s.client.offered_mpps = rate
    return s


def summary(stats: dict, load: float) -> dict:
    out = capacity.outcome_from_stats(stats, load)
    offered, span = stats["client.offered_mpps"], stats["client.measured_ns"]
    packets = stats.get("client.packets", 0.0)
    per_frame = (stats["client.requests"] + stats["client.lost_requests"]) / packets if packets else 1.0
    answered_plain = stats["client.throughput_mrps"] / per_frame / offered if offered else float("nan")
    row = {"load": load, "loss": out.loss, "law": out.law, "answered_mpps": out.answered_mpps,
           "client_loss": stats.get("client.loss", 0.0), "lost_packets": stats.get("client.lost_packets", 0.0),
           "packets": packets, "answered_fraction_plain": answered_plain, "measured_ns": span,
           "latency_mean_ns": stats.get("client.latency.mean"), "p95_ns": stats.get("client.latency.p95"),
           "p999_ns": stats.get("client.latency.p999"), "requests": stats["client.requests"]}
    for name in ("rx_frames", "rx_drops", "rx_fifo_overflows", "rx_no_match", "rx_too_long", "tx_frames"):
        row[f"port.{name}"] = paths.NIC_PORT.values(stats, name)
    for name in ("rx_frames", "rx_drops", "tx_frames", "rx_batch_max", "rx_batch_mean"):
        row[f"queue.{name}"] = paths.NIC_QUEUE.values(stats, name)
    for name in ("polls_busy", "polls_idle", "busy_poll_insts", "idle_poll_insts", "insts"):
        row[f"hart.{name}"] = [stats.get(f"system.hart{h}.{name}") for h in range(60)]
    for name in ("cycles", "idle_poll_cycles"):
        row[f"core.{name}"] = [stats.get(f"system.socket0.core{h}.{name}") for h in range(60)]
    row["client_core_requests"] = [stats.get(f"client.core{c}.requests") for c in range(60)]
    return row


c0, w0 = cpu_seconds(), time.time()
rows = []
with SharedWarmup() as shared:
    windows = window_capacity.Windows(make, runner=shared)
    for load, times in loads:
        first = (a.requests or 2 * make(load).client.requests) * times
        w = windows.window(load, first, a.seed)
        row = summary(w.stats, load)
        row.update(window_requests=first, throughput_mrps=w.throughput, cpu_s=cpu_seconds() - c0,
                   wall_s=time.time() - w0)
        rows.append(row)
        if a.stats_dir:
            pathlib.Path(a.stats_dir).mkdir(parents=True, exist_ok=True)
            with open(pathlib.Path(a.stats_dir) / f"{load:.4f}x{times}.json", "w") as f:
                json.dump(w.stats, f, sort_keys=True)
        print(json.dumps({k: v for k, v in row.items() if not isinstance(v, list)}), flush=True)
    run_cpu = shared.run_cpu
record = {"checkpoint": a.checkpoint, "items": a.items, "zipf": a.zipf, "seed": a.seed, "windows": rows,
          "cpu_total_s": cpu_seconds() - c0, "forked_runs_cpu_s": run_cpu, "wall_s": time.time() - w0}
print(json.dumps({k: record[k] for k in ("cpu_total_s", "forked_runs_cpu_s", "wall_s")}))
if a.json:
    with open(a.json, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
