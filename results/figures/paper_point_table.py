#!/usr/bin/env python3
"""The figures of full-condition capacity points, one Markdown table row each, from their sweep stores
(results/figures/paper_192Mi.md). Run with the worktree's interpreter: `.venv/bin/python
results/figures/paper_point_table.py STORE [STORE ...]` (each STORE a sweep's folder, e.g.
results/sweeps-paper/e2e-1s-60c-192Mi-key).

Columns: the data set; the steady window's throughput with its 95% half-width, window size and p95 with its
half-width (drivers/steady_state.py); the capacity search's probes and offered load; from the search's best probe
(its 18,000 measured requests: the point's stats): LLC MPKI split (demand, software prefetch, DMA/DDIO), the LLC's
and the L1D's miss rates (the target has no L2: its L2 is the shared LLC), instructions per request (all, and the
polls that found work and those that found none), IPC; and the point's worker CPU seconds."""

from __future__ import annotations

import sys

from analysis.sweeps import load_sweep
from drivers.studies import common
from models import stats_paths as paths

COLUMNS = ["items", "M req/s (95%)", "window", "p95 us (95%)", "probes", "capacity M frames/s per port",
           "LLC MPKI demand / sw prefetch / DMA", "LLC miss rate (demand)", "L1D miss rate (demand)",
           "insts/request (work + idle)", "IPC", "point CPU s"]


def row(r) -> list[str]:
    f = common.figures_of(r)
    s = {k[5:]: v for k, v in r.items() if isinstance(k, str) and k.startswith("stat.")}
    nan = float("nan")
    l1d = common.mean_of(s, paths.PRIVATE_CACHE, "miss_rate", socket=0, cache="l1d")
    l1d_demand = common.mean_of(s, paths.PRIVATE_CACHE, "demand_miss_rate", socket=0, cache="l1d")
    items = int(r["cfg.client.items"])
    return [f"{items >> 20} Mi", f"{f['throughput_mrps']:.2f} +- {f['throughput_ci_mrps']:.2f}",
            f"{f['window_requests']:,.0f}", f"{f['p95_steady_us']:.2f} +- {f['p95_steady_ci_us']:.2f}",
            f"{f['probes']:.0f}", f"{f['capacity_mpps_per_port']:.2f}",
            f"{f['llc_demand_mpki']:.3f} / {f['llc_sw_prefetch_mpki']:.3f} / {f['llc_dma_mpki']:.2e}",
            f"{s.get(paths.LLC.stat(0, 'miss_rate'), nan):.3f} ({s.get(paths.LLC.stat(0, 'demand_miss_rate'), nan):.3f})",
            f"{l1d:.4f} ({l1d_demand:.4f})",
            f"{s.get('client.insts_per_request', nan):.0f} ({s.get('client.insts_per_request_work', nan):.0f} + "
            f"{s.get('client.insts_per_request_idle', nan):.0f})", f"{f['ipc']:.2f}", f"{f['cpu_seconds']:.0f}"]


def main(stores: list[str]) -> int:
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for store in stores:
        table = load_sweep(store)
        for _, r in table[table.status == "ok"].iterrows():
            print("| " + " | ".join(row(r)) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
