#!/usr/bin/env python3
"""Speed of the engine against qemu-riscv64 on the same binary, functional and detailed (`make bench`).

    sim-scripts/bench.py [--rounds N] [--pairs P] [--chase-loads N] [--no-detailed]

Runs workloads/build/bench/kvmix (hashing, a hash table, sorting, atomics; ~5.5 million instructions per
round) in the engine and under qemu-riscv64, in P pairs (default 11) alternating the two (engine, qemu, engine,
qemu, ...), checks that both print the same checksum and exit status in every pair, and prints each side's median
CPU and wall seconds with their ranges and simulated MIPS (qemu does not count instructions, so it is credited with
the engine's count for the same binary and arguments). The engine/qemu ratio is a statistic of the pairs: the median
of the P per-pair ratios, with their min and max, by CPU time (the engine's process time against the qemu child's
user + system time, which a loaded machine disturbs less than wall time) and by wall time. Exit status 1 when the
outputs differ.

Then the same comparison on an FP-heavy program: workloads/build/glibc/linpack (a static glibc program, LU
factorisation and solve in double precision: FMAs, divides, compares, conversions), functional, with the qemu ratio
beside it (--fp-n sets the matrix order).

Then detailed mode (every instruction timed by the core, cache and DRAM models of the billion-RPS target's core,
configs/detailed_default.py), on two programs: workloads/build/micro/chase over 64 MB (memory-intensive: building a
random cycle of 1 Mi lines, then following it, nearly every load a DRAM miss) and kvmix. Detailed speed is
simulated MIPS per host core (the engine runs on one host thread).
"""

from __future__ import annotations

import argparse
import math
import pathlib
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

from rich.console import Console
from rich.table import Table

from models import stats_paths
from models.sim import simulate
from models.system import System, Workload

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Issue 24's goal for the functional engine against qemu-riscv64 on the same program, measured in the same run.
FUNCTIONAL_GOAL = 0.25

BENCH = ROOT / "workloads" / "build" / "bench" / "kvmix"
CHASE = ROOT / "workloads" / "build" / "micro" / "chase"
LINPACK = ROOT / "workloads" / "build" / "glibc" / "linpack"


def run_qemu(args: list[str], binary: pathlib.Path = BENCH) -> tuple[float, bytes, int, float]:
    """One qemu-riscv64 run: (wall seconds, stdout, exit status, CPU seconds of the child, user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(["qemu-riscv64", str(binary), *args], capture_output=True, env={})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, proc.stdout, proc.returncode, cpu


def simulate_timed(system: System):
    """simulate(system) and the CPU seconds it took (this process's: the engine runs on one host thread)."""
    started = time.process_time()
    result = simulate(system)
    return result, time.process_time() - started


@dataclass(frozen=True)
class Side:
    """One run of one side of a pair: its host wall and CPU seconds and what it printed (stdout, exit status)."""
    wall: float
    cpu: float
    output: tuple[bytes, int]


@dataclass
class Pairs:
    """Engine and qemu runs of the same program, alternated: engine, qemu, engine, qemu, ... Each pair's ratio
    (qemu's time over the engine's: the engine's speed as a fraction of qemu's, both credited with the same
    instruction count) compares two runs made next to each other, so a change in the host's load between pairs
    moves both sides of a ratio rather than one figure."""
    engine: list[Side] = field(default_factory=list)
    qemu: list[Side] = field(default_factory=list)

    def ratios(self, by: str = "cpu") -> list[float]:
        return [getattr(q, by) / getattr(e, by) for e, q in zip(self.engine, self.qemu)]

    def summary(self, by: str = "cpu") -> tuple[float, float, float]:
        """(median, min, max) of the pairs' ratios by `by` ("cpu" or "wall")."""
        ratios = self.ratios(by)
        return statistics.median(ratios), min(ratios), max(ratios)


def median_interval_confidence(pairs: int) -> float:
    """The confidence that [min, max] of `pairs` independent ratios covers their distribution's median (a sign
    test: it fails only if every ratio falls on the same side of the median), 1 - 2^(1 - n)."""
    return 1.0 - 2.0 ** (1 - pairs)


# The confidence the benchmark asks of its interval for the median ratio.
MEDIAN_CONFIDENCE = 0.90


def median_interval(values: list[float], confidence: float = MEDIAN_CONFIDENCE) -> tuple[float, float, float]:
    """A distribution-free interval for the median of the distribution `values` are drawn from: the k-th smallest
    and k-th largest value, with the largest k whose coverage, 1 - 2 P(Binomial(n, 1/2) < k), is at least
    `confidence` (or k = 1, [min, max], when n is too small for it). Returns (low, high, coverage)."""
    ordered, n = sorted(values), len(values)
    below = [math.comb(n, i) / 2.0 ** n for i in range(n)]
    k = 1
    while k + 1 <= (n + 1) // 2 and 1 - 2 * sum(below[:k + 1]) >= confidence:
        k += 1
    return ordered[k - 1], ordered[n - k], 1 - 2 * sum(below[:k])


def run_pairs(pairs: int, engine: Callable[[], Side], qemu: Callable[[], Side]) -> Pairs:
    """`pairs` alternating runs of `engine` and `qemu`, engine first in each pair. Stops with OutputsDiffer at the
    first pair whose two outputs differ (a speed figure of two different computations means nothing)."""
    if pairs < 1:
        raise ValueError(f"--pairs must be at least 1, got {pairs}")
    done = Pairs()
    for _ in range(pairs):
        done.engine.append(engine())
        done.qemu.append(qemu())
        if done.engine[-1].output != done.qemu[-1].output:
            raise OutputsDiffer(done.engine[-1].output, done.qemu[-1].output)
    return done


class BenchFailed(Exception):
    """A run that gives no speed figure: the engine did not reach the program's exit, or the outputs differ."""


class OutputsDiffer(BenchFailed):
    def __init__(self, engine: tuple[bytes, int], qemu: tuple[bytes, int]):
        super().__init__(f"outputs differ: engine exit {engine[1]}, qemu exit {qemu[1]}")
        self.engine, self.qemu = engine, qemu


def seconds_range(sides: list[Side], by: str) -> str:
    values = [getattr(s, by) for s in sides]
    return f"{statistics.median(values):.3f} s ({min(values):.3f}-{max(values):.3f})"


def ratio_text(done: Pairs, by: str) -> str:
    median, low, high = done.summary(by)
    i_low, i_high, coverage = median_interval(done.ratios(by))
    return (f"{median:.3f}, {coverage:.1%} interval for the median [{i_low:.3f}, {i_high:.3f}] (min {low:.3f}, "
            f"max {high:.3f})")


def functional_pairs(console: Console, title: str, binary: pathlib.Path, args: list[str], pairs: int,
                     describe=None) -> tuple[Pairs, int] | None:
    """The engine and qemu-riscv64 on `binary args` in `pairs` alternating pairs, and its table: the engine's
    instruction count, each side's median CPU and wall seconds with their ranges, the simulated MIPS from the
    medians, and the median engine/qemu ratio by CPU time (the steadier figure on a loaded host) and by wall time,
    each with its min and max over the pairs. None (after printing why) if a run failed or the outputs differ."""
    results = []

    def engine() -> Side:
        result, cpu = simulate_timed(System(workload=Workload(binary=str(binary), argv=args)))
        if result.stop_reason != "exit":
            raise BenchFailed(f"the engine stopped with {result.stop_reason}")
        results.append(result)
        return Side(result.host_seconds, cpu, (bytes(result.stdout), result.exit_code))

    def qemu() -> Side:
        wall, out, code, cpu = run_qemu(args, binary)
        return Side(wall, cpu, (out, code))

    try:
        done = run_pairs(pairs, engine, qemu)
    except BenchFailed as err:
        console.print(f"[red]{title}: {err}")
        return None
    insts = results[0].insts
    heading = f"{title}: {insts:,} instructions" + (f", {describe(results[0])}" if describe else "")
    table = Table(title=f"{heading}; {pairs} pairs of runs, engine and qemu alternated, all in this run")
    for col in ("runner", "CPU seconds, median (min-max)", "wall seconds, median (min-max)",
                "simulated MIPS by median CPU"):
        table.add_column(col, justify="right" if col != "runner" else "left")
    for name, sides in (("kvsim engine (functional)", done.engine), ("qemu-riscv64", done.qemu)):
        cpu = statistics.median(s.cpu for s in sides)
        table.add_row(name, seconds_range(sides, "cpu"), seconds_range(sides, "wall"), f"{insts / cpu / 1e6:,.1f}")
    console.print(table)
    console.print(f"output (same from both, every pair): {done.engine[0].output[0].decode(errors='replace').strip()}")
    console.print(f"engine / qemu speed, median of {pairs} pairs: by CPU time {ratio_text(done, 'cpu')}; by wall time "
                  f"{ratio_text(done, 'wall')}  (goal >= {FUNCTIONAL_GOAL}; intervals from order statistics, no "
                  f"assumed distribution)")
    console.print("the pairs' ratios by CPU time: " + " ".join(f"{r:.3f}" for r in done.ratios("cpu")))
    return done, insts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=50, help="kvmix rounds (~5.5 M instructions each)")
    parser.add_argument("--pairs", type=int, default=11, help="alternating engine/qemu run pairs per program "
                        "(11: the 3rd and 9th of the ratios bound their median with 93.5%% confidence)")
    parser.add_argument("--chase-loads", type=int, default=1_000_000, help="detailed run: pointer-chase loads")
    parser.add_argument("--detailed-rounds", type=int, default=5, help="detailed run: kvmix rounds")
    parser.add_argument("--no-detailed", action="store_true", help="skip the detailed-mode runs")
    parser.add_argument("--fp-n", type=int, default=200, help="FP run: linpack matrix order")
    opts = parser.parse_args(argv)
    console = Console()
    if opts.pairs < 1:
        console.print(f"[red]--pairs must be at least 1, got {opts.pairs}")
        return 2
    for binary in (BENCH, LINPACK):
        if not binary.is_file():
            console.print(f"[red]{binary} is missing: run `make workloads`")
            return 2
    kvmix = functional_pairs(console, f"kvmix, {opts.rounds} rounds", BENCH, [str(opts.rounds)], opts.pairs)
    if kvmix is None:
        return 1

    def fp_share(result) -> str:
        fp_ops = sum(v for k, v in result.stats.items() if k.endswith(".fp_ops"))
        return f"{fp_ops / result.insts:.0%} F/D computational"

    fp = functional_pairs(console, f"linpack n={opts.fp_n} (FP-heavy, static glibc)", LINPACK, [str(opts.fp_n)],
                          opts.pairs, fp_share)
    if fp is None:
        return 1
    if not opts.no_detailed:
        done, insts = kvmix
        detailed_bench(console, opts, insts / statistics.median(s.cpu for s in done.engine) / 1e6,
                       insts / statistics.median(s.cpu for s in done.qemu) / 1e6)
    return 0


def detailed_bench(console: Console, opts, functional_mips: float, qemu_mips: float) -> None:
    from configs import detailed_default

    table = Table(title="detailed mode (timing every instruction; billion-RPS target core, 1 core)")
    for col in ("program", "instructions", "host seconds", "simulated MIPS", "L1D MPKI", "LLC MPKI", "IPC"):
        table.add_column(col, justify="left" if col == "program" else "right")
    # The 16 KB chase fits the 32 KB L1D: every load an L1D hit (the timed load path and the L1 hit alone).
    runs = [("chase 16 KB (L1D hits)", CHASE, ["16K", str(opts.chase_loads)]),
            ("chase 64 MB", CHASE, ["64M", str(opts.chase_loads)]),
            (f"kvmix x{opts.detailed_rounds}", BENCH, [str(opts.detailed_rounds)])]
    for label, binary, args in runs:
        system = detailed_default.system()
        system.detailed_start, system.warm_caches = "start", False   # time everything, set-up included
        system.mem_limit = "1GiB"
        system.workload = Workload(binary=str(binary), argv=args)
        result = simulate(system)
        st = result.stats
        # Stats count from the program's ROI_BEGIN (a stats reset); MPKI and IPC describe that region.
        table.add_row(label, f"{result.insts:,}", f"{result.host_seconds:.2f}", f"{result.mips:,.1f}",
                      f"{st[stats_paths.PRIVATE_CACHE.stat(0, 0, 'l1d', 'mpki')]:.1f}",
                      f"{st[stats_paths.LLC.stat(0, 'mpki')]:.1f}", f"{st[stats_paths.CORE.stat(0, 0, 'ipc')]:.3f}")
    table.caption = "MPKI and IPC: the program's measured region (from ROI_BEGIN); MIPS: the whole run"
    Console(width=max(console.width, 112)).print(table)
    console.print(f"for comparison, by median CPU time: functional {functional_mips:,.1f} MIPS, qemu-riscv64 "
                  f"{qemu_mips:,.1f} MIPS "
                  f"(goal for detailed: >= {DETAILED_GOAL_MIPS} MIPS per host core on the target socket)")


def kvs_main(requests: int = 100_000, per_op_requests: int = 30_000) -> int:
    """The KVS figures: functional speed of the engine on the KVS server with the NIC and the ghost client
    (configs/kvs_functional: 4 harts, Tiny, Uniform, 95% GET), and instructions per GET and per PUT on Tiny items
    with the software prefetch pipeline on and off (1 hart, 120 frames in flight so the server never idles:
    client.insts_per_request of runs with get_ratio 1.0 and 0.0)."""
    from configs import kvs_functional
    from models.errors import SimError

    console = Console()
    if not kvs_functional.KVS_SERVER.is_file():
        console.print(f"[red]{kvs_functional.KVS_SERVER} is missing: run `make workloads`")
        return 2
    try:
        speed = simulate(kvs_functional.system(requests=requests))
        table = Table(title=f"KVS server, functional: 4 harts, Tiny, Uniform, 95% GET, {requests:,} requests "
                            f"after a load of {int(speed.stats['client.items']):,} items")
        for col in ("instructions", "host seconds", "simulated MIPS", "requests / host s (measured)",
                    "requests / host s (load + measured)"):
            table.add_column(col, justify="right")
        answered = speed.stats["client.requests"]
        table.add_row(f"{speed.insts:,}", f"{speed.host_seconds:.3f}", f"{speed.mips:,.1f}",
                      f"{answered / speed.host_seconds:,.0f}",
                      f"{(answered + speed.stats['client.load.requests']) / speed.host_seconds:,.0f}")
        console.print(table)
        per_op = Table(title=f"instructions per request, Tiny items, 1 hart, {per_op_requests:,} requests each")
        for col in ("prefetch", "GET", "PUT", "bulk-load PUT (32 per frame)"):
            per_op.add_column(col, justify="right")
        for prefetch in (1, 0):
            row = []
            for get_ratio in (1.0, 0.0):
                system = kvs_functional.system(harts=1, requests=per_op_requests, get_ratio=get_ratio, window=120,
                                               server_args=("log_mib=16", "buckets=16384", f"prefetch={prefetch}"))
                r = simulate(system)
                row.append(r.stats)
            per_op.add_row("on" if prefetch else "off", f"{row[0]['client.insts_per_request']:.1f}",
                           f"{row[1]['client.insts_per_request']:.1f}", f"{row[0]['client.load.insts_per_put']:.1f}")
        console.print(per_op)
    except SimError as err:
        console.print(f"[red]KVS run failed: {type(err).__name__}: {err}")
        return 1
    return 0


# The target socket's highest sustained load: the offered load per port (M frames/s) with less than 1% loss found
# once (70.3, with the loss bisection that drivers/capacity.py has since replaced; `sim-scripts/target_load.py`
# repeats the search);
# the benchmark runs at this fixed load rather than repeating the search.
TARGET_OFFERED_MPPS = 70.0
# Issue 24's goal for detailed speed on the target socket's measured phase (MIPS per host core).
DETAILED_GOAL_MIPS = 40


def socket_speed(system, console: Console) -> tuple[list[tuple], dict] | None:
    """Run `system` (a socket under the STANDARD workload, detailed network path) and return its table rows: for
    the detailed phase (from the first progress report in it) and for the whole run (the functional bulk load and
    cache warming included), the instructions, host seconds, simulated MIPS per host core (the engine runs on one
    host thread) and simulated requests per host second; with the simulated throughput, p95 and loss. And the
    run's statistics (for the power model's pricing time)."""
    from models.errors import SimError

    marks: list[tuple[float, float, int]] = []

    def progress(insts: int, _ticks: int, phase: str) -> None:
        if phase == "detailed" and not marks:
            marks.append((time.perf_counter(), time.process_time(), insts))

    try:
        started, cpu_started = time.perf_counter(), time.process_time()
        r = simulate(system, progress=progress, progress_every=1_000_000)
        ended, cpu_ended = time.perf_counter(), time.process_time()
    except SimError as err:
        console.print(f"[red]socket run failed: {type(err).__name__}: {err}")
        return None
    answered = r.stats["client.requests"]
    rows = []
    phase = "sampled phase" if r.stats.get(stats_paths.SAMPLING.stat("enabled")) else "measured phase"
    if marks:
        t0, c0, i0 = marks[0]
        rows.append((f"detailed ({phase})", r.insts - i0, ended - t0, cpu_ended - c0, answered))
    rows.append(("whole run (load + warming + detailed)", r.insts, ended - started, cpu_ended - cpu_started, answered))
    sim = (f"{r.stats['client.throughput_mrps']:.1f} M req/s, p95 {r.stats['client.latency.p95'] / 1e3:.1f} us, "
           f"loss {r.stats['client.loss']:.3f}, IPC {ipc_text(r.stats)}")
    return [(*row, sim) for row in rows], r.stats


# A sweep prices every point it runs, so pricing one must stay far below a point's host time (a reduced point
# takes seconds): 50 ms of CPU a configuration is the power model's own goal (assumed, as the study sweeps need it).
PRICING_GOAL_S = 0.05


def pricing_seconds(stats: dict, config: dict, repeats: int = 5) -> float:
    """The least CPU time of `repeats` pricings of one run (power.price_run and its table) by the power model,
    after one untimed pricing (imports and caches): CPU, not wall, time, as the host is shared."""
    import power

    power.price_run(stats, config)
    times = []
    for _ in range(repeats):
        started = time.process_time()
        power.price_run(stats, config).dataframe()
        times.append(time.process_time() - started)
    return min(times)


def ipc_text(stats: dict) -> str:
    """The run's IPC per core (all cores' instructions over their cycles); a sampled run's estimate and interval."""
    if stats.get(stats_paths.SAMPLING.stat("enabled")):
        st = lambda name: stats[stats_paths.SAMPLING.stat(name)]  # noqa: E731
        return f"{st('ipc'):.3f} in [{st('ipc_low'):.3f}, {st('ipc_high'):.3f}] (sampled)"
    cycles = sum(stats_paths.CORE.values(stats, "cycles"))
    return f"{sum(stats_paths.CORE.values(stats, 'committed_insts')) / cycles:.3f}" if cycles else "-"


def socket_main(xeon_cores: int = 12, xeon_requests_per_core: int = 3000, target_requests: int = 140_000) -> int:
    """The timed network path at scale, STANDARD workload: the 60-core billion-RPS target socket
    (configs/brps_target_socket.py: 30 clusters on a 6 x 5 mesh, coherent MOESI directory, 3 x 100 GbE) at its
    highest sustained load (TARGET_OFFERED_MPPS), and the 12-core Xeon E5-2697 v2 socket
    (configs/xeon_e5_2697v2_socket.py: ring, 6 x 10 GbE, PCIe 2.0, DDIO) open loop at line rate."""
    from configs import brps_target_socket, xeon_e5_2697v2_socket
    from drivers import capacity

    console = Console()
    target = brps_target_socket.system(requests=target_requests, offered_mpps=TARGET_OFFERED_MPPS)
    sampled = brps_target_socket.system(requests=target_requests, offered_mpps=TARGET_OFFERED_MPPS)
    sampled.sampling.enabled = True
    xeon = xeon_e5_2697v2_socket.system(cores=xeon_cores, requests=xeon_requests_per_core * xeon_cores)
    xeon.client.offered_mpps = capacity.line_rate_mpps(xeon)
    runs = [(f"target, {target.harts} cores, {TARGET_OFFERED_MPPS} Mpps/port", target),
            (f"target, {target.harts} cores, SAMPLED (System.sampling)", sampled),
            (f"Xeon, {xeon.harts} cores, line rate", xeon)]
    table = Table(title="sockets under the STANDARD workload, detailed network path (one host thread); goal: "
                        f">= {DETAILED_GOAL_MIPS} MIPS per host core on the target's measured phase")
    for col in ("socket", "phase", "instructions", "host seconds", "host CPU s", "simulated MIPS per host core "
                "(wall / CPU)", "requests / host s", "simulated"):
        table.add_column(col, justify="left" if col in ("socket", "phase", "simulated") else "right")
    priced = None
    for name, system in runs:
        done = socket_speed(system, console)
        if done is None:
            return 1
        rows, stats = done
        if system is target:
            priced = pricing_seconds(stats, system.to_dict())
        for phase, insts, secs, cpu, answered, sim in rows:
            table.add_row(name, phase, f"{insts:,}", f"{secs:.2f}", f"{cpu:.2f}",
                          f"{insts / secs / 1e6:,.1f} / {insts / cpu / 1e6:,.1f}", f"{answered / secs:,.0f}", sim)
    table.caption = ("the sampled run's IPC interval beside the full run's IPC, both measured here; the machine may "
                     "be loaded, so CPU time is the steadier figure")
    Console(width=max(console.width, 180)).print(table)
    if priced is not None:
        console.print(f"power model: pricing the target socket's run (60 cores, its own counters) {priced * 1e3:.1f} "
                      f"ms of CPU, least of 5 (goal < {PRICING_GOAL_S * 1e3:.0f} ms a configuration)")
    return 0


def run_all(argv: list[str] | None = None) -> int:
    """`make bench`: the instruction-speed table, then the KVS and the sockets under the STANDARD workload."""
    return max(main(argv), kvs_main(), socket_main())


if __name__ == "__main__":
    sys.exit(run_all())
