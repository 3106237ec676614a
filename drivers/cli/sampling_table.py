"""Sampling's validation table (issue 24, item 3): configurations drawn from the studies (drivers/studies/), each
run in full detail and sampled (`System.sampling`), on the KVS server under the target's core at a REDUCED scale
(a share of the 60-core socket with per-core resources in proportion, common.target; a data set of 256 Ki items
and 5,000 requests per core, so the whole table fits a shared host: about 3 CPU minutes).

For each configuration: the full detailed run's IPC (all cores' instructions over all their cycles in the measured
phase), throughput and p95 latency beside the sampled run's. The sampled IPC has an interval (sampling.ipc_low ..
ipc_high); throughput and latency cover the whole measured phase, whose time between windows is the estimate
(models/sampling.py), so they have no interval: the table gives their error against the full run and says so.
Both runs' host CPU seconds, and what the diagnosis of a miss needs: all the instructions the sampled run executed
over the full run's, and both runs' idle-poll instructions per request. Printed as Markdown (and written to --out);
exit status 1 if an IPC interval misses. The table of session 17, with its notes: results/speed/sampling_table_s17.md.

    .venv/bin/python sim-scripts/sampling_table.py [--only NAME,...] [--cores 8] [--items 262144]
        [--requests-per-core 5000] [--period-insts-per-hart N] [--warmup-insts-per-hart N] [--out FILE]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
from collections.abc import Callable

from drivers.studies import common, servers
from models import provenance
from models import stats_paths as paths
from models.system import System

CORES = 8                  # a reduced share of the socket (twice common.REDUCED_CORES)
ITEMS = 1 << 18            # 10 MB of log against 6 MB of LLC at 8 cores: the requests miss it, as at full scale
REQUESTS_PER_CORE = 5000   # measured requests per core: 120-360 windows a run (chosen for the host's time)


def _core(rob: int, width: int) -> Callable[[System], None]:
    """The core weight study's shape: fetch, commit and integer ALUs follow the issue width (core_weight.TIES)."""
    def change(s: System) -> None:
        s.core.rob_entries = rob
        s.core.issue_width = s.core.fetch_width = s.core.commit_width = s.core.int_alus = width
    return change


def _llc_per_core(kb: int) -> Callable[[System], None]:
    def change(s: System) -> None:
        s.caches.llc.size = kb * 1024 * s.harts
    return change


def _per_packet(n: int) -> Callable[[System], None]:
    def change(s: System) -> None:
        s.client.requests_per_packet = n
    return change


def _server_arg(arg: str) -> Callable[[System], None]:
    def change(s: System) -> None:
        name = arg.partition("=")[0] + "="
        s.workload.argv = [a for a in s.workload.argv if not a.startswith(name)] + [arg]
    return change


# name: (study, what differs from the base point, server() arguments, change). The base point is the paper's design
# (3-issue core, ROB 64, 768 KB of LLC per core, one request per packet, software prefetch on) under the STANDARD
# workload (uniform, 95% GET, EREW); each other row moves one study's axis to a point that study runs.
CONFIGS: dict[str, tuple[str, str, dict, Callable[[System], None] | None]] = {
    "base": ("(all)", "the paper's design point, uniform, EREW", {}, None),
    "inorder": ("core weight", "in-order single-issue (ROB 1, width 1)", {}, _core(1, 1)),
    "rob64-w1": ("core weight", "ROB 64, single-issue", {}, _core(64, 1)),
    "rob128-w4": ("core weight", "ROB 128, 4-issue", {}, _core(128, 4)),
    "llc256": ("LLC", "256 KB of LLC per core", {}, _llc_per_core(256)),
    "llc2048": ("LLC", "2,048 KB of LLC per core", {}, _llc_per_core(2048)),
    "batch4": ("batching", "4 requests per packet", {}, _per_packet(4)),
    "batch32": ("batching", "32 requests per packet", {}, _per_packet(32)),
    "prefetch-off": ("prefetch", "software prefetch off (prefetch=0)", {}, _server_arg("prefetch=0")),
    "zipf": ("end to end / partition load", "Zipf 0.99 popularity, EREW", {"popularity": "zipf"}, None),
    "crew": ("end to end / partition load", "uniform, CREW", {"mode": "crew"}, None),
    "zipf-crew": ("end to end / partition load", "Zipf 0.99, CREW", {"popularity": "zipf", "mode": "crew"}, None),
}


def system(name: str, sampled: bool, cores: int = CORES, items: int = ITEMS,
           requests_per_core: int = REQUESTS_PER_CORE, period: int = 0, warmup: int = -1) -> System:
    """The configuration `name` of CONFIGS, sampled or in full detail; `period` > 0 and `warmup` >= 0 replace the
    sampling's period and detailed warm-up per hart (for diagnosing a miss; the table uses the defaults)."""
    _, _, args, change = CONFIGS[name]
    s = servers.server(cores=cores, items=items, requests_per_core=requests_per_core, **args)
    if change:
        change(s)
    s.sampling.enabled = sampled
    if period:
        s.sampling.period_insts_per_hart = period
    if warmup >= 0:
        s.sampling.warmup_insts_per_hart = warmup
    return common.fit_mem_limit(s)


def figures(stats: dict) -> dict[str, float]:
    """IPC (per core: all cores' instructions over all their cycles), throughput (M req/s) and p95 (us)."""
    insts = sum(paths.CORE.values(stats, "committed_insts"))
    cycles = sum(paths.CORE.values(stats, "cycles"))
    return {"ipc": insts / cycles, "mrps": stats["client.throughput_mrps"], "p95": stats["client.latency.p95"] / 1e3}


def run(name: str, sampled: bool, **scale: int) -> tuple[dict, float]:
    from models.sim import simulate

    started = time.process_time()
    stats = simulate(system(name, sampled, **scale)).stats
    return stats, time.process_time() - started


def _err(est: float, full: float) -> str:
    return f"{100 * (est / full - 1):+.1f}%"


HEADER = ("| configuration | study | full IPC | sampled IPC [interval] | IPC covered | full M req/s | sampled M req/s "
          "(error; no interval) | full p95 us | sampled p95 us (error; no interval) | windows | host CPU s full / "
          "sampled | instructions sampled / full | idle-poll instructions per request full / sampled |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|")


IDLE = "client.insts_per_request_idle"   # the server's polls that found no frame, per request


def row(name: str, full: dict, sampled: dict, cpu: tuple[float, float]) -> tuple[str, bool]:
    """One table row and whether the sampled IPC interval covers the full run's IPC."""
    f, s = figures(full), figures(sampled)
    est, low, high = (sampled[paths.SAMPLING.stat(n)] for n in ("ipc", "ipc_low", "ipc_high"))
    covered = low <= f["ipc"] <= high
    # All the instructions the sampled run executed (timed and warmed) over the full run's, for the same requests:
    # above 1 when the sampled run's cores spun more in their poll loops (see the results' notes).
    insts = sum(sampled[paths.SAMPLING.stat(n)] for n in ("timed_insts", "warmed_insts")) / \
        sum(paths.CORE.values(full, "committed_insts"))
    study, what, _, _ = CONFIGS[name]
    return (f"| {name}: {what} | {study} | {f['ipc']:.4f} | {est:.4f} [{low:.4f}, {high:.4f}] | "
            f"{'yes' if covered else 'NO'} | {f['mrps']:.3f} | {s['mrps']:.3f} ({_err(s['mrps'], f['mrps'])}) | "
            f"{f['p95']:.2f} | {s['p95']:.2f} ({_err(s['p95'], f['p95'])}) | "
            f"{int(sampled[paths.SAMPLING.stat('windows')])} | {cpu[0]:.1f} / {cpu[1]:.1f} | {insts:.3f} | "
            f"{full[IDLE]:.1f} / {sampled[IDLE]:.1f} |"), covered


def selected(only: str | None) -> list[str]:
    """The configurations named in `only` (comma-separated; None: all), refusing unknown names before any run."""
    if only is None:
        return list(CONFIGS)
    names = [n.strip() for n in only.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown or not names:
        raise SystemExit(f"sampling_table: unknown configuration(s) {', '.join(unknown) or '(none given)'}; "
                         f"known: {', '.join(CONFIGS)}")
    return names


def _sampling_text(s: System) -> str:
    p = s.sampling
    return (f"sampling: a window of {p.window_insts_per_hart:,} instructions per hart after {p.warmup_insts_per_hart:,} "
            f"of detailed warm-up, every {p.period_insts_per_hart:,}" +
            (" (the model's defaults)." if p.to_dict() == type(p)(enabled=True).to_dict() else " (NOT the defaults)."))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated configuration names (default: all): " + ", ".join(CONFIGS))
    ap.add_argument("--cores", type=int, default=CORES)
    ap.add_argument("--items", type=int, default=ITEMS)
    ap.add_argument("--requests-per-core", type=int, default=REQUESTS_PER_CORE)
    ap.add_argument("--period-insts-per-hart", type=int, default=0,
                    help="replace the sampling's period (a diagnosis of a miss; default: the model's)")
    ap.add_argument("--warmup-insts-per-hart", type=int, default=-1,
                    help="replace the sampling's detailed warm-up (a diagnosis of a miss; default: the model's)")
    ap.add_argument("--out", type=pathlib.Path, help="also write the table (with its conditions) here")
    a = ap.parse_args(argv)
    names = selected(a.only)
    for flag, value in (("--cores", a.cores), ("--items", a.items), ("--requests-per-core", a.requests_per_core)):
        if value < 1:
            raise SystemExit(f"sampling_table: {flag} = {value} must be at least 1")
    scale = {"cores": a.cores, "items": a.items, "requests_per_core": a.requests_per_core,
             "period": a.period_insts_per_hart, "warmup": a.warmup_insts_per_hart}
    for name in names:
        system(name, True, **scale).validate()   # bad settings are refused before the first run (ParamError)
    rev = provenance.source_revision()
    head = [f"Reduced: {common.scale_text(a.cores)}; {a.items:,} tiny items; {a.requests_per_core * a.cores:,} "
            f"measured requests ({a.requests_per_core:,} per core); closed loop (window 32 per queue); seed 1; "
            + _sampling_text(system(names[0], True, **scale)),
            "", f"Command: `{' '.join(['sim-scripts/sampling_table.py', *sys.argv[1:]])}`; commit "
            f"{rev['commit']}{' (uncommitted changes)' if rev['dirty'] else ''}.", ""]
    print("\n".join(head) + HEADER, flush=True)
    lines, misses, total = [HEADER], [], 0.0
    for name in names:
        full, full_cpu = run(name, False, **scale)
        sampled, sampled_cpu = run(name, True, **scale)
        total += full_cpu + sampled_cpu
        line, covered = row(name, full, sampled, (full_cpu, sampled_cpu))
        misses += [] if covered else [name]
        lines.append(line)
        print(line, flush=True)
    tail = ["", f"Host CPU time of the runs: {total:.0f} s. IPC intervals covering the full run: "
            f"{len(names) - len(misses)} of {len(names)}" + (f" (missed: {', '.join(misses)})." if misses else ".")]
    print("\n".join(tail), flush=True)
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text("\n".join(head + lines + tail) + "\n")
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
