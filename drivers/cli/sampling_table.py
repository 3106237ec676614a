"""Sampling's validation table (issue 24, item 3): each configuration run in full detail and sampled
(`System.sampling`), the full run's IPC beside the sampled estimate and its interval, and whether the interval
covers it. Single-core programs under the target's core (configs/detailed_default.py, everything timed from the
start), with core and LLC variants, and the KVS server on 4 cores under the STANDARD workload (configs/kvs_default.py,
20,000 measured requests); one row a configuration, printed as a Markdown table. Exit status 1 if an interval misses.

    .venv/bin/python sim-scripts/sampling_table.py   (a thin wrapper of this module)
"""

from __future__ import annotations

import pathlib
import time

from configs import detailed_default
from models import stats_paths
from models.sim import simulate
from models.system import Workload

BUILD = pathlib.Path(__file__).resolve().parents[2] / "workloads" / "build"
PROGRAMS = {"kvmix x3": (BUILD / "bench" / "kvmix", ["3"]), "linpack 120": (BUILD / "glibc" / "linpack", ["120"]),
            "chase 16M": (BUILD / "micro" / "chase", ["16M", "300000"])}


def width(rob: int, w: int):
    def change(s) -> None:
        s.core.rob_entries, s.core.issue_width, s.core.fetch_width, s.core.commit_width = rob, w, w, w
    return change


def small_llc(s) -> None:
    s.caches.llc.size = 256 * 1024


CONFIGS = [*((p, "target core", None) for p in PROGRAMS),
           ("kvmix x3", "in-order 1-wide", width(1, 1)), ("kvmix x3", "ROB 128 8-wide", width(128, 8)),
           ("linpack 120", "in-order 1-wide", width(1, 1)), ("linpack 120", "ROB 128 8-wide", width(128, 8)),
           ("kvmix x3", "LLC 256 KiB", small_llc), ("chase 16M", "in-order 1-wide", width(1, 1))]


KVS = "kvs-server, 4 cores"
CONFIGS.append((KVS, "kvs_default, 20,000 requests", None))


def run(program: str, change, sampled: bool):
    if program == KVS:
        from configs import kvs_default

        system = kvs_default.system(requests=20_000)
    else:
        system = detailed_default.system()
        system.detailed_start, system.warm_caches, system.mem_limit = "start", False, "1GiB"
        binary, args = PROGRAMS[program]
        system.workload = Workload(binary=str(binary), argv=args)
    if change:
        change(system)
    system.sampling.enabled = sampled
    started = time.process_time()
    stats = simulate(system).stats
    return stats, time.process_time() - started


def main() -> int:
    print("| program | configuration | full IPC | sampled IPC [interval] | covered | host CPU s full / sampled |")
    print("|---|---|---|---|---|---|")
    misses = 0
    for program, name, change in CONFIGS:
        full, full_cpu = run(program, change, False)
        ipc = sum(stats_paths.CORE.values(full, "committed_insts")) / sum(stats_paths.CORE.values(full, "cycles"))
        sampled, sampled_cpu = run(program, change, True)
        est, low, high = (sampled[stats_paths.SAMPLING.stat(n)] for n in ("ipc", "ipc_low", "ipc_high"))
        covered = low <= ipc <= high
        misses += not covered
        print(f"| {program} | {name} | {ipc:.4f} | {est:.4f} [{low:.4f}, {high:.4f}] | {'yes' if covered else 'NO'} | "
              f"{full_cpu:.1f} / {sampled_cpu:.1f} |", flush=True)
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
