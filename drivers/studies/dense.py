"""The dense 3D-stacked servers (platforms.md section 3): one stack simulated at its highest sustained load, priced by
the power model, and the 1.5U server built from it (models.dense_server); the GET time breakdown; and the speed
benchmark "host seconds per simulated second of one 32-core stack at its highest sustained load".

A stack runs one memcached-class instance per core (workloads/mcd) against the ghost client speaking the memcached
binary protocol (every response checked). Its capacity is the capacity search's answer (drivers.capacity: the
highest open-loop offered load with < 1% loss, to CAPACITY_RESOLUTION). Its power is the power model's runtime
price of the cores and caches of that run (System.technology: 28 nm) plus the integrated 10 GbE MAC (120 mW,
platforms.md); each row is also priced a second way, with the source's per-core power (PUBLISHED_CORE_W). Memory
power (per GB/s the run moved), PHYs, switches and the budget are the server's (models.dense_server). Each row says which memory the run had behind the caches (the stack's, or a DDR
stand-in for a kind the engine cannot build: models.dram.ENGINE_BACKING_KINDS).

`python -m drivers.studies.dense table|breakdown|bench [--platform NAME] [--requests-per-core N]` prints the figures.
The studies' sweeps (cores, A7 vs A15, memory latency, L2, KeyVault vs Mercury, the server table) are
drivers/studies/dense_sweeps.py (the study `dense` of drivers.studies), run by `sim-scripts/figures.py --study dense`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable

import configs
from drivers import capacity as cap
from models import stats_paths as paths
from models.dense_server import DenseServer, ServerFigures, StackFigures
from models.sim import simulate
from models.system import System

MAC_POWER_W = 0.120                 # the integrated 10 GbE MAC and buffers (platforms.md: 120 mW)
CAPACITY_RESOLUTION = 0.02          # relative width of the capacity bracket (the studies' resolution)
ITEMS = 1 << 15                     # items in the data set: every instance holds its share (no eviction)
REQUESTS_PER_CORE = 300             # measured requests per core per probe
STORE_MEM = "8MiB"                  # per instance: 32 Ki Tiny items over >= 2 cores fit without eviction
GET_RATIO = 0.9                     # memcached-class mix (assumed: 90% GET, 10% SET, as the MICA STANDARD-like mix)

# The platforms of the server table: the module, the system's arguments and the stack's memory kind.
PLATFORMS: dict[str, tuple[str, dict[str, Any], str]] = {
    "Mercury-32 (A7, 1 GHz)": ("mercury", {"cores": 32, "core_kind": "a7"}, "dram3d"),
    "Mercury-32 (A15, 1.5 GHz)": ("mercury", {"cores": 32, "core_kind": "a15", "clock": "1.5GHz"}, "dram3d"),
    "Iridium-32 (A15, 1.5 GHz, L2)": ("iridium", {"cores": 32, "core_kind": "a15", "clock": "1.5GHz"}, "flash"),
    "KeyVault-16 (A15, 1.5 GHz, L2)": ("keyvault", {"cores": 16}, "dram3d"),
}


# The published power of one core (platforms.md: A7 100 mW; A15 600 mW at 1 GHz, 1000 mW at 1.5 GHz), for the
# second pricing of each row: the power model prices the run's own activity, these are the source's figures.
PUBLISHED_CORE_W = {
    "Mercury-32 (A7, 1 GHz)": 0.100,
    "Mercury-32 (A15, 1.5 GHz)": 1.000,
    "Iridium-32 (A15, 1.5 GHz, L2)": 1.000,
    "KeyVault-16 (A15, 1.5 GHz, L2)": 1.000,
}


def stack_system(name: str, rate_mpps: float = 0.0, *, requests_per_core: int = REQUESTS_PER_CORE,
                 items: int = ITEMS, cores: int | None = None) -> System:
    """One stack of platform `name` (PLATFORMS), detailed from the measured phase (the bulk load fast-forwards with
    cache warming), offered `rate_mpps` M frames/s (0: closed loop)."""
    module, kwargs, _ = PLATFORMS[name]
    kwargs = dict(kwargs)
    if cores is not None:
        kwargs["cores"] = cores
    n = kwargs["cores"]
    system = configs.load(module).system(**kwargs, store_mem=STORE_MEM, items=items, requests=n * requests_per_core,
                                         get_ratio=GET_RATIO, offered_mpps=rate_mpps)
    system.detailed_start = "roi"
    system.warm_caches = True
    return system


def memory_gbps(stats: dict[str, float]) -> float:
    """Memory traffic of the measured phase, GB/s (1e9 bytes/s): the stack's own counter, or the DDR channels'."""
    if paths.MEMORY.stat(0, "bandwidth_gbps") in stats:
        return stats[paths.MEMORY.stat(0, "bandwidth_gbps")]
    secs = stats["client.measured_ns"] * 1e-9
    moved = sum(paths.CHANNEL.values(stats, "read_bytes", socket=0) + paths.CHANNEL.values(stats, "write_bytes",
                                                                                          socket=0))
    return moved / secs / 1e9 if secs > 0 else 0.0


def priced_run(system: System, outdir: pathlib.Path | None = None) -> dict[str, float]:
    """Simulate `system` and add the power model's price of the run (power.*) to its statistics."""
    import power

    outdir = outdir or pathlib.Path(tempfile.mkdtemp(prefix="dense-"))
    result = simulate(system, outdir=outdir)
    config = json.loads((outdir / "config.json").read_text())
    stats = dict(result.stats)
    stats.update(power.price_run(result.stats, config).stats())
    stats["host_seconds"] = result.host_seconds
    return stats


@dataclass
class StackResult:
    name: str
    memory: str                     # what the run had behind the caches: 'dram3d', 'flash' or 'ddr' (stand-in)
    search: cap.SearchResult
    stats: dict[str, float]         # the best probe's
    figures: StackFigures


def measure_stack(name: str, *, requests_per_core: int = REQUESTS_PER_CORE, cores: int | None = None,
                  progress: Callable[[cap.Probe], None] | None = None) -> StackResult:
    """The stack's capacity (capacity search), and its figures at that load."""
    def make(rate: float) -> System:
        return stack_system(name, rate, requests_per_core=requests_per_core, cores=cores)

    search = cap.capacity(make, resolution=CAPACITY_RESOLUTION, simulate_fn=priced_run, progress=progress)
    if search.best is None:
        raise RuntimeError(f"{name}: no offered load was sustained")
    st = search.best.stats
    system = make(search.best.offered_mpps)
    module = configs.load(PLATFORMS[name][0])
    logic_w = st["power.cores.runtime_power_W"] + st["power.caches.runtime_power_W"] + MAC_POWER_W
    figures = StackFigures(requests_per_s=st["client.throughput_mrps"] * 1e6, logic_power_w=logic_w,
                           memory_gbps=memory_gbps(st), capacity_bytes=module.stack(system.harts).capacity(),
                           memory=PLATFORMS[name][2])
    return StackResult(name, system.memory.kind, search, st, figures)


def server_figures(name: str, figures: StackFigures) -> ServerFigures:
    """Platform `name`'s 1.5U server of stacks like `figures`: its stack count, or fewer if the power budget allows
    fewer."""
    server: DenseServer = configs.load(PLATFORMS[name][0]).server()
    stacks = min(server.stacks, server.max_stacks(figures))
    return server.evaluate(figures, stacks=stacks)


def published_figures(name: str, figures: StackFigures) -> StackFigures:
    """The same stack with its logic priced at the source's per-core power (PUBLISHED_CORE_W) plus the MAC."""
    cores = PLATFORMS[name][1]["cores"]
    return dataclasses.replace(figures, logic_power_w=cores * PUBLISHED_CORE_W[name] + MAC_POWER_W)


def table_rows(results: list[StackResult]) -> list[dict[str, Any]]:
    rows = []
    for r in results:
        f = server_figures(r.name, r.figures)
        pub = server_figures(r.name, published_figures(r.name, r.figures))
        st = r.stats
        rows.append({
            "platform": r.name, "memory run": r.memory,
            "stack M req/s": r.figures.requests_per_s / 1e6,
            "p95 us": st["client.latency.p95"] / 1e3,
            "offered Mfps/port": r.search.offered_mpps, "line limited": r.search.line_limited,
            "stack logic W": r.figures.logic_power_w, "stack mem GB/s": r.figures.memory_gbps,
            "stack W": f.stack_power_w, "stacks": f.stacks, "server W": f.power_w,
            "server M req/s": f.requests_per_s / 1e6, "req/s per W": f.requests_per_s_per_w,
            "req/s per GB": f.requests_per_s_per_gb, "GB per server": f.capacity_gb,
            "insts/request": st.get("client.insts_per_request", 0.0),
            "published: stack W": pub.stack_power_w, "published: stacks": pub.stacks,
            "published: server W": pub.power_w, "published: server M req/s": pub.requests_per_s / 1e6,
            "published: req/s per W": pub.requests_per_s_per_w, "published: GB per server": pub.capacity_gb,
        })
    return rows


def breakdown(gets: int, core_kind: str = "a7", clock: str | None = None, l2: bool = False,
              outdir: pathlib.Path | None = None, transport: str = "udp") -> dict[str, dict[str, float]]:
    """The time of a GET split into hashing, network stack and memcached, measured by the server's bench mode
    (workloads/mcd/main_riscv.c: N GETs timed three ways between stats dumps, detailed from its ROI) on one core of
    a Mercury stack, over UDP or TCP (`transport`). Per GET: simulated ns and instructions of each phase;
    memcached = whole - network - hash."""
    system = configs.load("mercury").system(cores=1, core_kind=core_kind, clock=clock, l2=l2, store_mem="8MiB")
    system.workload.argv = ["bench=%d" % gets, "buckets=12"] + (["bench_tcp=1"] if transport == "tcp" else [])
    system.detailed_start = "roi"
    system.nic.enabled = False
    system.client.enabled = False                # the bench makes its own frames
    result = simulate(system, outdir=outdir or pathlib.Path(tempfile.mkdtemp(prefix="dense-breakdown-")))
    if result.exit_code != 0 or f"mcd bench: {gets} GETs per phase, {gets} hits".encode() not in result.stdout:
        raise RuntimeError(f"the GET benchmark failed:\n{result.stdout.decode()}\n{result.stderr.decode()}")
    dumps = result.stat_dumps
    if len(dumps) != 4:
        raise RuntimeError(f"the GET benchmark made {len(dumps)} stats dumps, not 4")
    out: dict[str, dict[str, float]] = {}
    for i, phase in enumerate(("hash", "network stack", "whole GET")):
        (t0, s0), (t1, s1) = dumps[i], dumps[i + 1]
        out[phase] = {"ns": (t1 - t0) / 1e3 / gets,
                      "insts": (s1[paths.HART.stat(0, "insts")] - s0[paths.HART.stat(0, "insts")]) / gets}
    out["memcached"] = {k: out["whole GET"][k] - out["network stack"][k] - out["hash"][k] for k in ("ns", "insts")}
    return out


def bench(name: str = "Mercury-32 (A7, 1 GHz)", rate_mpps: float | None = None,
          requests_per_core: int = REQUESTS_PER_CORE) -> dict[str, float]:
    """Host seconds per simulated second of one stack at `rate_mpps` (default: its capacity, searched first), for
    the detailed measured phase and for the whole run (functional bulk load with cache warming included); wall
    time, and the process's CPU time (what a busy shared host does not inflate)."""
    if rate_mpps is None:
        rate_mpps = measure_stack(name, requests_per_core=requests_per_core).search.offered_mpps
    system = stack_system(name, rate_mpps, requests_per_core=requests_per_core)
    marks: list[tuple[float, float, int, int]] = []

    def progress(insts: int, ticks: int, phase: str) -> None:
        if phase == "detailed" and not marks:
            marks.append((time.perf_counter(), time.process_time(), insts, ticks))

    started, started_cpu = time.perf_counter(), time.process_time()
    r = simulate(system, progress=progress, progress_every=1_000_000)
    ended, ended_cpu = time.perf_counter(), time.process_time()
    out = {"offered_mpps": rate_mpps, "throughput_mrps": r.stats["client.throughput_mrps"],
           "loss": r.stats["client.loss"], "whole_host_s": ended - started, "whole_sim_s": r.sim_ticks * 1e-12,
           "whole_insts": float(r.insts), "whole_cpu_s": ended_cpu - started_cpu}
    out["whole_host_s_per_sim_s"] = out["whole_host_s"] / out["whole_sim_s"]
    if marks:
        t0, c0, i0, k0 = marks[0]
        out["detailed_host_s"] = ended - t0
        out["detailed_cpu_s"] = ended_cpu - c0
        out["detailed_cpu_s_per_sim_s"] = out["detailed_cpu_s"] / ((r.sim_ticks - k0) * 1e-12)
        out["detailed_sim_s"] = (r.sim_ticks - k0) * 1e-12
        out["detailed_insts"] = float(r.insts - i0)
        out["detailed_host_s_per_sim_s"] = out["detailed_host_s"] / out["detailed_sim_s"]
        out["detailed_mips"] = out["detailed_insts"] / out["detailed_host_s"] / 1e6
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("table", "breakdown", "bench"))
    parser.add_argument("--platform", action="append", help="a PLATFORMS name (default: all); repeatable")
    parser.add_argument("--requests-per-core", type=int, default=REQUESTS_PER_CORE)
    parser.add_argument("--gets", type=int, default=2000, help="GETs per phase of the breakdown")
    parser.add_argument("--rate", type=float, help="bench: offered M frames/s per port (default: search)")
    args = parser.parse_args(argv)
    if args.what == "table":
        results = []
        for name in args.platform or list(PLATFORMS):
            def show(p: cap.Probe, name: str = name) -> None:
                print(f"  {name}: {p.stage} {p.offered_mpps:.3f} Mfps -> loss {p.loss:.3f}", flush=True)
            results.append(measure_stack(name, requests_per_core=args.requests_per_core, progress=show))
            for row in table_rows(results[-1:]):
                print(json.dumps(row), flush=True)
        return 0
    if args.what == "breakdown":
        for label, kind, clock, l2 in (("A7, 1 GHz", "a7", None, False), ("A15, 1 GHz", "a15", None, False),
                                       ("A15, 1.5 GHz", "a15", "1.5GHz", False)):
            b = breakdown(args.gets, kind, clock, l2)
            print(label, json.dumps(b), flush=True)
        return 0
    for name in args.platform or ["Mercury-32 (A7, 1 GHz)"]:
        print(name, json.dumps(bench(name, args.rate, args.requests_per_core)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
