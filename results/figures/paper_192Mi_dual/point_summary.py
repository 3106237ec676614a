"""Summarise the dual server's 192 Mi end-to-end points from their sweep records (issue 28, session 16): the search's
probes, each steady-state window, and the counters the study's definitions name, one JSON per point.

    .venv/bin/python results/figures/paper_192Mi_dual/point_summary.py STORE/e2e-2s-60c-192Mi-key/points OUTDIR
"""

import json
import pathlib
import sys

KEEP = ("client.throughput_mrps", "client.insts_per_request", "client.insts_per_request_work",
        "client.insts_per_request_idle", "client.gets", "client.misses", "client.latency.p50", "client.latency.p95",
        "system.socket0.llc.mpki", "system.socket1.llc.mpki", "system.link0_1.utilization",
        "system.link1_0.utilization")


def main(points: str, out: str) -> None:
    outdir = pathlib.Path(out)
    for path in sorted(pathlib.Path(points).glob("*.json")):
        record = json.loads(path.read_text())
        stats = record["stats"]
        summary = {
            "params": record["params"], "status": record["status"], "data_set": record["data_set"],
            "cpu_seconds": record["cpu_seconds"], "host_seconds": record["host_seconds"],
            "server_argv": record["config"]["workload"]["argv"],
            "warmup_requests": record["config"]["client"]["warmup_requests"],
            "probes": record["probes"],
            "windows": [{k: v for k, v in w.items() if k != "stats"} for w in record["windows"]],
            # The LLC MPKI split the study defines (demand, software prefetch, DMA), each socket's, where reported.
            "stats": {k: stats[k] for k in sorted(stats) if k in KEEP or k.endswith("_mpki") and k.count(".") == 3 and ".llc." in k},
        }
        p = record["params"]
        name = f"{p['client.mode']}-{p['client.popularity']}-get{p['client.get_ratio']}.json"
        (outdir / name).write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
        print(outdir / name)


if __name__ == "__main__":
    main(*sys.argv[1:3])
