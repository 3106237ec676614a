"""Sampling's validation table (issue 24, item 3): configurations drawn from the studies (drivers/studies/), each
run in full detail and sampled (`System.sampling`), on the KVS server under the target's core at a REDUCED scale
(a share of the 60-core socket with per-core resources in proportion, common.target; a data set of 256 Ki items
and 5,000 requests per core, so the whole table fits a shared host: about 6 CPU minutes). Each run measures the
server in steady state, after a warm-up of the measured mix (`system`'s `steady`; --no-warmup: right after the
load, as the tables of sessions 17-22 did).

For each configuration: the full detailed run's throughput, p95 latency, IPC (all cores' instructions over all their
cycles in the measured phase) and LLC misses per 1,000 instructions beside the sampled run's, with the sampled run's
interval at the sampling's confidence (99.7%) and whether it covers the full run's value. The sampling units are
the windows (SMARTS), so every interval carries the spread ACROSS the windows (`windows` of them, a column):
- IPC and LLC MPKI from the windows alone (sampling.ipc_low .. ipc_high, sampling.llc_mpki +- llc_mpki_ci: the
  normal quantile times the standard error of the windows' mean, each window one sample);
- throughput and p95 cover the whole measured phase, whose time between windows runs at rates taken from the
  windows (models/sampling.py): their half-width is the batch means' of drivers/steady_state.py over the sampled
  run's phase (the run's own noise, within it) and the windows' sampling error carried to them (the estimate
  times the windows' CPI half-width over their CPI, `sampling_share`), added in quadrature. Until session 23 the
  batch means alone: a row whose clock was off by the windows' own sampling error missed where its run is steady.
Both runs' host CPU seconds, and what the diagnosis of a miss needs: all the instructions the sampled run executed
over the full run's, and both runs' idle-poll instructions per request. Printed as Markdown (and written to --out);
exit status 1 if an interval misses or is too wide to count: a throughput or p95 interval whose half-width exceeds a
quarter of its value (the table's rule, TOO_WIDE_SHARE), or any interval that is infinite (fewer than two windows),
is reported "TOO WIDE", neither covering nor missing, and the totals say how many rows were too wide. The tables of sessions 17 and 18, with their
notes: results/speed/sampling_table_s17.md, results/speed/sampling_table_s18.md.

    .venv/bin/python sim-scripts/sampling_table.py [--only NAME,...] [--cores 8] [--items 262144]
        [--requests-per-core 5000] [--period-insts-per-hart N] [--warmup-insts-per-hart N] [--seed 1]
        [--client-seed 1] [--no-warmup] [--out FILE]
"""

from __future__ import annotations

import argparse
import math
import pathlib
import re
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
           requests_per_core: int = REQUESTS_PER_CORE, period: int = 0, warmup: int = -1, seed: int = 1,
           client_seed: int = 1, steady: bool = False) -> System:
    """The configuration `name` of CONFIGS, sampled or in full detail, under the run's `seed` (System.seed: where the
    sampled run's windows fall) and the client's `client_seed` (its keys and operations); `period` > 0 and
    `warmup` >= 0 replace the sampling's period and detailed warm-up per hart (for diagnosing a miss; the table uses
    the defaults). `steady`: the measured phase follows a warm-up of the measured mix after the load
    (Client.warmup_after_load, as many requests as a restored study run warms with, sim.sized_warmup_requests), so
    it measures the server in steady state as the studies do; without it (sessions 17-22's tables) the measured
    phase starts right after the load and writes back the load's dirty log lines as it runs: its CPI falls by a
    third across the phase (results/speed/README.md "Session 23")."""
    _, _, args, change = CONFIGS[name]
    s = servers.server(cores=cores, items=items, requests_per_core=requests_per_core, **args)
    if change:
        change(s)
    s.sampling.enabled = sampled
    s.seed = seed
    s.client.seed = client_seed
    if period:
        s.sampling.period_insts_per_hart = period
    if warmup >= 0:
        s.sampling.warmup_insts_per_hart = warmup
    if steady:
        from models.sim import sized_warmup_requests

        s.client.warmup_after_load = True
        s.client.warmup_requests = sized_warmup_requests(s)
    return common.fit_mem_limit(s)


def figures(stats: dict) -> dict[str, float]:
    """IPC (per core: all cores' instructions over all their cycles), throughput (M req/s), p95 (us) and LLC misses
    per 1,000 instructions (every slice's misses over all cores' instructions)."""
    insts = sum(paths.CORE.values(stats, "committed_insts"))
    cycles = sum(paths.CORE.values(stats, "cycles"))
    misses = sum(v for k, v in stats.items() if LLC_MISSES.fullmatch(k))
    return {"ipc": insts / cycles, "mrps": stats["client.throughput_mrps"], "p95": stats["client.latency.p95"] / 1e3,
            "mpki": 1000 * misses / insts}


LLC_MISSES = re.compile(r"system\.socket\d+\.llc\.slice\d+\.misses")


def run(name: str, sampled: bool, **scale: int) -> tuple[dict, float]:
    """The run's statistics (with its throughput's batch means, `BATCH_RATES`) and its host CPU seconds."""
    from drivers.steady_state import batch_rates, measured_reports, reports_in_order
    from models.sim import simulate

    s = system(name, sampled, **scale)
    reports: list[tuple[str, float, float]] = []

    def progress(insts: int, ticks: int, phase: str, answered: int | None) -> None:
        if answered is not None:
            reports.append((phase, float(ticks), float(answered)))

    # About 8 reports a batch (drivers/steady_state.py simulated_window's rule).
    every = max(20_000, scale.get("requests_per_core", REQUESTS_PER_CORE) * s.harts * 2000 // ((BATCHES + 2) * 8) // s.harts)
    started = time.process_time()
    stats = dict(simulate(s, progress=progress, progress_every=every).stats)
    t, n = reports_in_order(*measured_reports(*zip(*reports)))
    stats[BATCH_RATES] = batch_rates(t * 1e-12, n, BATCHES)[0] / 1e6
    return stats, time.process_time() - started


BATCH_RATES = "table.batch_rates_mrps"   # not an engine statistic: the run's throughput batch means (M req/s)
BATCHES = 30                             # drivers/steady_state.py's batch count


def sampling_share(sampled: dict) -> float:
    """The windows' sampling error as a share of the estimate: the half-width of their mean CPI at the sampling's
    confidence (the normal quantile times the standard error across sampling.windows windows, each one sample) over
    that CPI. The clock between windows runs at rates taken from the same windows, so a measure of the whole phase
    (its time, hence its throughput and latencies) carries this share of error beside its own noise."""
    cpi, half = (sampled[paths.SAMPLING.stat(n)] for n in ("cpi", "cpi_ci"))
    return half / cpi


def intervals(sampled: dict) -> dict[str, tuple[float, float]]:
    """The sampled run's (low, high) for throughput (M req/s), p95 (us), IPC and LLC misses per 1,000 instructions,
    each at the sampling's confidence (the module doc): IPC and misses from its windows (sampling.*); throughput and
    p95 from the batch means over the whole measured phase (drivers/steady_state.py: the same rule as the studies'
    windows) and the windows' sampling error (`sampling_share`), in quadrature."""
    from drivers.steady_state import interval, p95_interval

    conf = sampled[paths.SAMPLING.stat("confidence")]
    share = sampling_share(sampled)
    mean, batch_half = interval(sampled[BATCH_RATES], conf)
    p95, p95_batch_half, _ = p95_interval(sampled, conf)
    mpki, mpki_half = (sampled[paths.SAMPLING.stat(n)] for n in ("llc_mpki", "llc_mpki_ci"))
    tput = sampled["client.throughput_mrps"]
    half, p95_half = math.hypot(batch_half, share * tput), math.hypot(p95_batch_half, share * p95)
    return {"mrps": (tput - half, tput + half), "p95": ((p95 - p95_half) / 1e3, (p95 + p95_half) / 1e3),
            "ipc": tuple(sampled[paths.SAMPLING.stat(n)] for n in ("ipc_low", "ipc_high")),
            "mpki": (mpki - mpki_half, mpki + mpki_half)}


# The table's rule for a meaningful interval of throughput and p95: a half-width at most a quarter of the sampled
# value. A wider one cannot tell a sampled run that is right from one off by a quarter, the size of the worst error
# the table has measured (batch32's throughput -20 to -26%, results/speed/README.md "Session 23"), so it covers by
# its width, not by the sampling's accuracy (batch32's [-8.4, 56.9] M req/s). Those two intervals carry the windows'
# CPI error into a figure of the whole phase (`intervals`), which is what made them wide. The share is the table's
# choice (assumed, not a published figure); the widest such interval judged meaningful in session 23's steady
# tables is batch4's throughput, +-8.8%. IPC and LLC MPKI keep SMARTS's intervals from the windows as they are
# (not judged by the share: at the fixed point of tests/test_sampling.py one placement's MPKI is +-30%). Any
# interval that is infinite or NaN (fewer than two windows: the engine's sampling.cpi_ci; a p95 without batches) is
# too wide whatever the metric.
TOO_WIDE_SHARE = 0.25
SHARE_RULED = ("mrps", "p95")

COVERED, MISSED, TOO_WIDE = "covered", "missed", "too wide"


def too_wide(value: float, low: float, high: float, share: float = TOO_WIDE_SHARE) -> bool:
    """Whether the interval (low, high) around the sampled `value` is not meaningful: infinite or NaN, or a
    half-width above `share` of the value."""
    half = (high - low) / 2
    if not (math.isfinite(half) and math.isfinite(value)):
        return True
    # An infinite share rules nothing finite (not `share * abs(value)`: inf x 0 is NaN, which would call a finite
    # interval around a sampled 0, an LLC without misses, too wide).
    return math.isfinite(share) and half > share * abs(value)


def verdict(metric: str, value: float, low: float, high: float, full: float) -> str:
    """TOO_WIDE when the interval is not meaningful (`too_wide`, with the share for SHARE_RULED metrics), else
    whether it covers the full run's value."""
    if too_wide(value, low, high, TOO_WIDE_SHARE if metric in SHARE_RULED else math.inf):
        return TOO_WIDE
    return COVERED if low <= full <= high else MISSED


def _err(est: float, full: float) -> str:
    return f"{100 * (est / full - 1):+.1f}%"


METRICS = (("mrps", "M req/s", 3), ("p95", "p95 us", 2), ("ipc", "IPC", 4), ("mpki", "LLC MPKI", 3))

HEADER = ("| configuration | study | " + " | ".join(f"{h} full / sampled [interval] (error)" for _, h, _ in METRICS) +
          " | windows (their CPI's half-width); CPI between windows / in them | host CPU s full / sampled | "
          "instructions sampled / full | idle-poll instructions per request full / sampled |\n|" + "---|" * (2 + len(METRICS) + 4))


# The server's polls that found no frame, per request: a diagnosis column, without an interval. It is a small residual
# of the closed loop (about 3% of the cores' time at tests/test_sampling.py's 4-core point), so noisy in the full run
# itself: 30.7 to 47.1 across six client seeds there, while the throughput varied 0.9% (results/speed/s27_sampling).
IDLE = "client.insts_per_request_idle"


def row(name: str, full: dict, sampled: dict, cpu: tuple[float, float]) -> tuple[str, dict[str, str]]:
    """One table row and, per metric, the `verdict` on the sampled run's interval: COVERED or MISSED (the full run's
    value inside it or not), or TOO_WIDE (wider than the table's rule, TOO_WIDE_SHARE: it neither covers nor misses;
    marked "TOO WIDE" in the row)."""
    f, s, iv = figures(full), figures(sampled), intervals(sampled)
    s["ipc"] = sampled[paths.SAMPLING.stat("ipc")]
    s["mpki"] = sampled[paths.SAMPLING.stat("llc_mpki")]
    verdicts = {m: verdict(m, s[m], *iv[m], f[m]) for m, _, _ in METRICS}
    marks = {COVERED: "", MISSED: " NO", TOO_WIDE: " TOO WIDE"}
    # All the instructions the sampled run executed (timed and warmed) over the full run's, for the same requests:
    # above 1 when the sampled run's cores spun more in their poll loops (see the results' notes).
    insts = sum(sampled[paths.SAMPLING.stat(n)] for n in ("timed_insts", "warmed_insts")) / \
        sum(paths.CORE.values(full, "committed_insts"))
    study, what, _, _ = CONFIGS[name]
    cells = [f"{f[m]:.{d}f} / {s[m]:.{d}f} [{iv[m][0]:.{d}f}, {iv[m][1]:.{d}f}] ({_err(s[m], f[m])})"
             f"{marks[verdicts[m]]}" for m, _, d in METRICS]
    return (f"| {name}: {what} | {study} | " + " | ".join(cells) +
            f" | {int(sampled[paths.SAMPLING.stat('windows')])} (+-{100 * sampling_share(sampled):.1f}%); "
            f"{sampled[paths.SAMPLING.stat('warming_cpi')]:.4f} / "
            f"{sampled[paths.SAMPLING.stat('cpi')]:.4f} | "
            f"{cpu[0]:.1f} / {cpu[1]:.1f} | {insts:.3f} | "
            f"{full[IDLE]:.1f} / {sampled[IDLE]:.1f} |"), verdicts


def totals(verdicts: dict[str, dict[str, str]]) -> str:
    """The table's totals from each row's verdicts (`row`): per metric, how many of the rows with a meaningful
    interval it covered, which it missed, and how many rows' intervals were too wide to count (the rule,
    TOO_WIDE_SHARE)."""
    out = [f"Intervals covering the full run, of the rows whose interval is meaningful (from two windows or more; "
           f"throughput's and p95's with a half-width at most {100 * TOO_WIDE_SHARE:.0f}% of the sampled value; "
           "wider is too wide):"]
    for m, h, _ in METRICS:
        named = {v: [n for n, row_verdicts in verdicts.items() if row_verdicts[m] == v]
                 for v in (COVERED, MISSED, TOO_WIDE)}
        meaningful = len(named[COVERED]) + len(named[MISSED])
        out.append(f"- {h}: {len(named[COVERED])} of {meaningful}"
                   + (f" (missed: {', '.join(named[MISSED])})" if named[MISSED] else "")
                   + f"; too wide: {len(named[TOO_WIDE])} of {len(verdicts)} rows"
                   + (f" ({', '.join(named[TOO_WIDE])})." if named[TOO_WIDE] else "."))
    return "\n".join(out)


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
    ap.add_argument("--seed", type=int, default=1,
                    help="System.seed: where the sampled run's windows fall (default 1)")
    ap.add_argument("--client-seed", type=int, default=1,
                    help="client.seed: the client's keys and operations, in the full and sampled runs alike (default 1)")
    ap.add_argument("--no-warmup", action="store_true",
                    help="measure right after the load, without the warm-up of the measured mix (the tables of "
                         "sessions 17-22; default: warm up, the server in steady state as in the studies)")
    ap.add_argument("--out", type=pathlib.Path, help="also write the table (with its conditions) here")
    a = ap.parse_args(argv)
    names = selected(a.only)
    for flag, value in (("--cores", a.cores), ("--items", a.items), ("--requests-per-core", a.requests_per_core),
                        ("--seed", a.seed), ("--client-seed", a.client_seed)):
        if value < 1:
            raise SystemExit(f"sampling_table: {flag} = {value} must be at least 1")
    scale = {"cores": a.cores, "items": a.items, "requests_per_core": a.requests_per_core,
             "period": a.period_insts_per_hart, "warmup": a.warmup_insts_per_hart, "seed": a.seed,
             "client_seed": a.client_seed, "steady": not a.no_warmup}
    for name in names:
        system(name, True, **scale).validate()   # bad settings are refused before the first run (ParamError)
    rev = provenance.source_revision()
    head = [f"Reduced: {common.scale_text(a.cores)}; {a.items:,} tiny items; {a.requests_per_core * a.cores:,} "
            f"measured requests ({a.requests_per_core:,} per core); closed loop (window 32 per queue); seed {a.seed} "
            f"(the windows' placement), client seed {a.client_seed}; "
            + ("measured right after the load (no warm-up); " if a.no_warmup else
               f"measured after {system(names[0], False, **scale).client.warmup_requests:,} warm-up requests of "
               "the measured mix (steady state); ")
            + _sampling_text(system(names[0], True, **scale)),
            "", f"Command: `{' '.join(['sim-scripts/sampling_table.py', *sys.argv[1:]])}`; commit "
            f"{rev['commit']}{' (uncommitted changes)' if rev['dirty'] else ''}.", ""]
    print("\n".join(head) + HEADER, flush=True)
    lines, verdicts, total = [HEADER], {}, 0.0
    for name in names:
        full, full_cpu = run(name, False, **scale)
        sampled, sampled_cpu = run(name, True, **scale)
        total += full_cpu + sampled_cpu
        line, verdicts[name] = row(name, full, sampled, (full_cpu, sampled_cpu))
        lines.append(line)
        print(line, flush=True)
        if a.out:   # each finished row is kept (a long table may be stopped)
            a.out.parent.mkdir(parents=True, exist_ok=True)
            a.out.write_text("\n".join(head + lines) + "\n")
    tail = ["", f"Host CPU time of the runs: {total:.0f} s. " + totals(verdicts)]
    print("\n".join(tail), flush=True)
    if a.out:
        a.out.write_text("\n".join(head + lines + tail) + "\n")
    return 0 if all(v == COVERED for row_verdicts in verdicts.values() for v in row_verdicts.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
