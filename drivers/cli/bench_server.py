#!/usr/bin/env python3
"""Simulator speed and memory on the whole billion-RPS server (`make bench-server`): 1 ms of simulated time of the
quad-socket target (configs/brps_target_quad.py: 240 cores, 12 x 100 GbE) at its highest sustained load, about a
million requests; the goal is under 2 minutes of host time and under 8 GB of host memory.

    sim-scripts/bench_server.py [--sockets 1|2|4] [--offered MPPS] [--sim-ms 1.0] [--items N]
                                [--schedule global|partitioned] [--partition-order socket|reversed]
                                [--host-threads N] [--seed N]
                                [--stats-json PATH]

The offered load per port is `--offered`, by default the server's capacity found by the end-to-end study's search
(Uniform, 95% GET, EREW; read from its sweep store when it has run) or else SUSTAINED_MPPS, a load found once.
The measured requests are offered load x ports x simulated time, so the measured phase lasts about `--sim-ms`.

Printed: host seconds (wall clock, and CPU time, which a busy shared host inflates less) of the whole run and of each phase (bulk load with cache warming, then the detailed
measured phase; phase times are to within one progress report, every 20 M instructions), simulated time of the
measured phase, requests, simulated instructions per host second, and peak host memory (VmHWM of this process,
which holds the engine, and ru_maxrss)."""

from __future__ import annotations

import argparse
import json
import pathlib
import resource
import time

from drivers.studies import servers
from models.sim import simulate

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Offered M frames/s per port the target sustains with < 1% loss when no search result is stored: the one-socket
# target's capacity (issue 10/11's closing note: 70.3 M frames/s per port at 60 cores). Each socket has its own
# NICs and memory, so the same per-port load is the multi-socket servers' starting point.
SUSTAINED_MPPS = 70.0
GOAL_SECONDS, GOAL_BYTES = 120.0, 8e9


def stored_capacity(sockets: int, items: int) -> float | None:
    """The capacity per port of the e2e study's Uniform / 95% GET / EREW point for this server and item count, if
    stored (the most recent one)."""
    found = []
    for store in sorted((ROOT / "results" / "sweeps").glob(f"e2e-{sockets}s*")):
        if store.name.endswith("-T"):          # the DVFS + turbo runs
            continue
        for path in (store / "points").glob("*.json"):
            rec = json.loads(path.read_text())
            p = rec.get("params", {})
            if rec.get("status") == "ok" and p.get("client.popularity") == "uniform" and \
                    p.get("client.get_ratio") == 0.95 and p.get("client.mode") == "erew" and \
                    rec.get("config", {}).get("client", {}).get("items") == items:
                mpps = rec["stats"].get("capacity.mpps_per_port", 0.0)
                if mpps > 0:
                    found.append((path.stat().st_mtime, float(mpps)))
    return max(found)[1] if found else None


def vm_hwm_bytes() -> int:
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def bench_system(opts: argparse.Namespace, offered: float, requests: int):
    """The server the benchmark runs. `--seed` sets the client's seed too: System.seed alone leaves the client's
    keys and operations, and so every statistic of the server, as they were."""
    system = servers.server(opts.sockets, items=opts.items, requests_per_core=1, offered_mpps=offered)
    system.client.requests = requests
    system.schedule, system.host_threads = opts.schedule, opts.host_threads
    system.partition_order = opts.partition_order
    if opts.seed:
        system.seed = system.client.seed = opts.seed
    return system


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sockets", type=int, default=4, choices=sorted(servers.SERVER_CONFIGS))
    parser.add_argument("--offered", type=float, default=None, help="offered M frames/s per port")
    parser.add_argument("--sim-ms", type=float, default=1.0, help="simulated milliseconds of the measured phase")
    parser.add_argument("--items", type=int, default=1 << 16, help="items in the data set")
    parser.add_argument("--schedule", choices=("global", "partitioned"), default="global",
                        help="System.schedule: the order of the harts' turns in detailed timing")
    parser.add_argument("--host-threads", type=int, default=1, help="System.host_threads (only 1 is built)")
    parser.add_argument("--partition-order", choices=("socket", "reversed"), default="socket",
                        help="System.partition_order: the partitioned schedule's order of sockets in a window")
    parser.add_argument("--seed", type=int, default=0, help="the run's seed: System.seed and the client's "
                        "client.seed, whose random choices (keys, operations) are what a seed varies (0: the config's)")
    parser.add_argument("--stats-json", default="", help="also write the run's statistics to this JSON file "
                        "(sim-scripts/partition_difference.py compares two)")
    opts = parser.parse_args(argv)
    if not servers.available(opts.sockets):
        print(f"configs/{servers.SERVER_CONFIGS[opts.sockets]}.py is not in this checkout")
        return 2
    stored = stored_capacity(opts.sockets, opts.items)
    offered = opts.offered or stored or SUSTAINED_MPPS
    source = "--offered" if opts.offered else "the e2e study's search" if stored else "SUSTAINED_MPPS (found once)"
    probe = servers.server(opts.sockets, items=opts.items, requests_per_core=1)
    ports = sum(n.ports for n in probe.active_nics())
    requests = int(offered * 1e6 * ports * opts.sim_ms * 1e-3)
    system = bench_system(opts, offered, requests)
    print(f"{opts.sockets}-socket target, {system.harts} cores, {ports} ports; offered {offered:.2f} M frames/s per "
          f"port ({source}); {requests:,} measured requests (~{opts.sim_ms:g} ms simulated); schedule "
          f"{opts.schedule}, {opts.host_threads} host thread(s)", flush=True)

    phases: dict[str, list[float]] = {}
    started = time.perf_counter()

    def progress(insts: int, ticks: int, phase: str) -> None:
        now = time.perf_counter() - started
        phases.setdefault(phase, [now, now])[1] = now

    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    result = simulate(system, progress=progress, progress_every=20_000_000)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime
    s = result.stats
    if opts.stats_json:
        pathlib.Path(opts.stats_json).write_text(json.dumps(s, indent=0, sort_keys=True))
    hwm, maxrss = vm_hwm_bytes(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    sim_ms = s.get("client.measured_ns", 0.0) / 1e6
    print(f"stop: {result.stop_reason}; measured phase {sim_ms:.3f} ms simulated, {s.get('client.requests', 0):,.0f} "
          f"requests answered, {s.get('client.throughput_mrps', 0):.1f} M requests/s, loss "
          f"{s.get('client.loss', 0):.4f}, p95 {s.get('client.latency.p95', 0) / 1e3:.1f} us")
    print(f"host: {wall:.1f} s in all ({result.insts / 1e6:,.0f} M instructions, {result.mips:.1f} MIPS); "
          f"{cpu:.1f} s of CPU (user + system: the engine runs on one thread, so on a host shared with other work "
          "this is the time a free core would take)")
    order = list(phases)
    for i, name in enumerate(order):
        begin = phases[name][0] if i else 0.0
        end = phases[order[i + 1]][0] if i + 1 < len(order) else wall
        print(f"  phase {name}: ~{end - begin:.1f} s")
    if sim_ms > 0:
        print(f"  host seconds per simulated ms: {wall / sim_ms:.1f}; simulated requests per host second: "
              f"{s.get('client.requests', 0) / wall:,.0f}")
    print(f"peak host memory: VmHWM {hwm / 1e9:.2f} GB, ru_maxrss {maxrss / 1e9:.2f} GB")
    ok = wall < GOAL_SECONDS and hwm < GOAL_BYTES
    print(f"goal (< {GOAL_SECONDS:.0f} s, < {GOAL_BYTES / 1e9:.0f} GB): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
