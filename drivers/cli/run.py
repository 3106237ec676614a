#!/usr/bin/env python3
"""Run one simulation from a config in configs/ and print its summary.

    sim-scripts/run.py                                  # the default run
    sim-scripts/run.py functional_default --set harts=4 --set workload.argv='["100"]'
    sim-scripts/run.py --list

Outputs go to results/<config>-<timestamp>/ (config.json, stats.txt, stats.json, stats_series.csv when the guest
dumped stats, guest output) unless --outdir. A live line shows the instructions run, simulated time, the mode
(fast-forward, warming, detailed) and the speed, updated every --progress-every instructions; Ctrl-C stops the run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import time

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

import configs
from models.errors import OutputError, RunInterrupted, SimError
from models.params import ParamError, SimObject
from models.sim import simulate
from models.socket import socket_path

DEFAULT_CONFIG = "kvs_default"


def apply_override(system: SimObject, assignment: str) -> None:
    """`a.b.c=value` (`nics.1.x`: an element of a list): value is read as JSON when it parses (numbers, lists,
    booleans), else as a string."""
    path, sep, text = assignment.partition("=")
    if not sep:
        raise ParamError(f"--set {assignment!r}: expected NAME=VALUE")
    *parents, leaf = path.strip().split(".")
    target = system
    for part in parents:
        if isinstance(target, list):
            # An entry of a list of parameter objects: `nics.1.port_gbps`.
            if not part.isdigit() or int(part) >= len(target):
                raise ParamError(f"--set {assignment!r}: {part!r} is not an index of that list (it has "
                                 f"{len(target)} entries)")
            target = target[int(part)]
            continue
        param = target._params.get(part)
        if param is None or param.kind != "child":
            children = [n for n, p in target._params.items() if p.kind == "child"]
            raise ParamError(f"--set {assignment!r}: {type(target).__name__} has no parameter object {part!r} "
                             f"(its parameter objects: {', '.join(children) or 'none'})")
        target = getattr(target, part)
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = text
    setattr(target, leaf, value)


class ProgressLine:
    """The live line: phase, instructions, simulated time, host speed. Called by the engine between turns."""

    def __init__(self, name: str, max_insts: int):
        self.name, self.max_insts = name, max_insts
        self.started = time.perf_counter()
        self.text = Text(f"{name}: starting ...")

    def __call__(self, insts: int, sim_ticks: int, phase: str) -> None:
        secs = time.perf_counter() - self.started
        mips = insts / secs / 1e6 if secs > 0 else 0.0
        of = f" of {self.max_insts:,} ({100 * insts / self.max_insts:.0f}%)" if self.max_insts else ""
        self.text = Text.assemble((f"{self.name} ", "bold"), (f"[{phase}] ", "cyan"),
                                  f"{insts:,} instructions{of}, {sim_ticks * 1e-9:.3f} ms simulated, "
                                  f"{secs:.1f} s, {mips:.1f} MIPS")
        if self.live is not None:
            self.live.update(self.text)

    live: Live | None = None


def run_with_progress(console: Console, name: str, system, outdir: pathlib.Path, every: int):
    if every <= 0 or not console.is_terminal:
        with console.status(f"simulating {name} ..."):
            return simulate(system, outdir)
    line = ProgressLine(name, system.max_insts)
    with Live(line.text, console=console, refresh_per_second=4, transient=True) as live:
        line.live = live
        return simulate(system, outdir, progress=line, progress_every=every)


def add_power(result, system) -> None:
    """Price the finished run from its own configuration and add the power model's figures to its stats/files."""
    import power
    from models.sim import write_outputs

    config = system.to_dict()
    priced = power.price_run(result.stats, config)
    for name, value in priced.stats().items():
        result.stats[name] = value
        result.descriptions[name] = f"power model ({priced.model.platform.name}, as the run's config.json)"
    if result.outdir is not None:
        write_outputs(result, config, result.outdir)


def _mean(stats: dict[str, float], prefix: str, suffix: str) -> float | None:
    values = [v for k, v in stats.items() if k.startswith(prefix) and k.endswith(suffix)]
    return sum(values) / len(values) if values else None


def _socket_prefixes(stats: dict[str, float]) -> list[str]:
    """The statistics prefix of every socket the run reported (`system.socket0.`, `system.socket1.`, ...)."""
    prefixes = []
    while any(k.startswith(f"{socket_path(len(prefixes))}.") for k in stats):
        prefixes.append(f"{socket_path(len(prefixes))}.")
    return prefixes


def _core_ipcs(stats: dict[str, float]) -> list[float]:
    """Every core's IPC, socket by socket."""
    return [v for prefix in _socket_prefixes(stats) for k, v in stats.items()
            if k.startswith(f"{prefix}core") and k.endswith(".ipc")]


def _socket_mean(stats: dict[str, float], suffix: str) -> float | None:
    """The mean over every socket's statistics ending in `suffix`."""
    values = [v for prefix in _socket_prefixes(stats) for k, v in stats.items()
              if k.startswith(prefix) and k.endswith(suffix)]
    return sum(values) / len(values) if values else None


def kvs_summary(stats: dict[str, float]) -> list[tuple[str, str]]:
    """The KVS figures of a run with the ghost client (empty otherwise): first what a user came for (throughput,
    loss, latency, power and requests/s per watt when priced), then the figures that explain it."""
    if "client.requests" not in stats:
        return []
    rows = []
    if stats.get("client.throughput_mrps"):
        rows.append(("throughput", f"{stats['client.throughput_mrps'] * 1e6:,.0f} requests/s"))
    if "client.offered_mpps" in stats:
        offered = stats["client.offered_mpps"]
        rows.append(("loss", f"{100 * stats.get('client.loss', 0.0):.2f}% of frames" +
                     (f" (offered {offered:.3f} M frames/s)" if offered > 0 else " (closed loop)")))
    if stats.get("client.latency.samples"):
        rows.append(("latency p50 / p95 / p99", " / ".join(f"{stats[f'client.latency.{p}'] / 1e3:.2f}"
                                                          for p in ("p50", "p95", "p99")) + " us round trip"))
    if "power.socket.runtime_power_W" in stats:
        rows.append(("power (runtime)", f"{stats['power.socket.runtime_power_W']:.2f} W (peak "
                                        f"{stats.get('power.socket.peak_power_W', 0.0):.1f} W)"))
        if stats.get("power.energy_per_request_J", 0) > 0 and stats.get("client.throughput_mrps"):
            rows.append(("requests/s per watt", f"{stats['power.requests_per_s_per_W']:,.0f} "
                         f"({stats['power.energy_per_request_J'] * 1e9:.1f} nJ per request)"))
    rows += [("requests checked", f"{stats['client.requests']:,.0f} ({stats['client.hits']:,.0f} GET hits, "
                                  f"{stats['client.misses']:,.0f} misses)"),
             ("instructions / request", f"{stats['client.insts_per_request']:.1f}")]
    ipc = _core_ipcs(stats)
    if ipc:
        rows.append(("IPC (mean of cores)", f"{sum(ipc) / len(ipc):.3f}"))
    sockets = len(_socket_prefixes(stats))
    for label, suffix in (("L1D MPKI (mean)", ".l1d.mpki"),
                          ("LLC MPKI" + (f" (mean of {sockets} sockets)" if sockets > 1 else ""), "llc.mpki")):
        value = _socket_mean(stats, suffix)
        if value is not None:
            rows.append((label, f"{value:.2f}"))
    batch = _mean(stats, "system.nic", ".rx_batch_mean")
    if batch is not None:
        rows.append(("RX batch (mean)", f"{batch:.1f} packets per poll"))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", nargs="?", default=DEFAULT_CONFIG, help="a module of configs/")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a parameter")
    parser.add_argument("--outdir", help="where to write the run's files (default results/<config>-<time>)")
    parser.add_argument("--list", action="store_true", help="list the configs and exit")
    parser.add_argument("--power", action="store_true", help="price the run with the power model from its own "
                        "configuration (System.technology holds the power-only values); adds power.* to the stats")
    parser.add_argument("--progress-every", type=int, default=10_000_000, metavar="N",
                        help="update the progress line every N instructions (0: no progress line)")
    args = parser.parse_args(argv)
    console = Console()
    if args.list:
        for name in configs.available():
            console.print(f"[bold]{name}[/]: {' '.join((configs.load(name).__doc__ or '').split('. ')[0].split()).rstrip('.')}.")
        return 0
    try:
        system = configs.load(args.config).system()
        for assignment in args.set:
            apply_override(system, assignment)
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        outdir = pathlib.Path(args.outdir or configs.ROOT / "results" / f"{args.config}-{stamp}")
        if args.power and system.mode != "detailed":
            raise ParamError("--power needs a detailed run: System.mode is 'functional' (try --set mode=detailed)")
        result = run_with_progress(console, args.config, system, outdir, args.progress_every)
        if args.power:
            add_power(result, system)
    except (ParamError, SimError, ValueError) as err:
        console.print(f"[bold red]{type(err).__name__}[/]: ", end="")
        console.print(str(err), markup=False, highlight=False)
        status = outdir / "status" if "outdir" in locals() else None
        if status is not None and status.is_file() and status.read_text().startswith("ok"):
            # The simulation finished but a later step (pricing) failed: the folder must not look finished.
            status.write_text(f"failed: {type(err).__name__}: {err}\n")
        if isinstance(err, SimError) and not isinstance(err, OutputError) and 'outdir' in locals():
            console.print(f"the guest's output so far and the status are in {outdir}", markup=False)
        return 2
    except RunInterrupted as stop:
        console.print(f"[bold red]interrupted[/]: stopped after {stop.result.insts:,} instructions; the results so "
                      f"far are in {outdir}")
        return 130
    except KeyboardInterrupt:
        console.print("[bold red]interrupted[/]")
        return 130
    table = Table(title=f"kvsim: {args.config}", show_header=False)
    for label, row in kvs_summary(result.stats):
        table.add_row(label, row)
    table.add_row("stopped by", result.stop_reason)
    table.add_row("exit code", str(result.exit_code))
    table.add_row("harts", str(len(result.harts)))
    table.add_row("instructions", f"{result.insts:,}")
    table.add_row("simulated time", f"{result.sim_seconds * 1e3:.3f} ms")
    table.add_row("host time", f"{result.host_seconds:.2f} s")
    table.add_row("speed", f"{result.mips:.1f} simulated MIPS")
    ipc = _core_ipcs(result.stats)
    if ipc:
        table.add_row("mode", f"detailed (timing from {system.detailed_start})")
        if len(ipc) <= 16:
            table.add_row("IPC per core", ", ".join(f"{v:.3f}" for v in ipc))
        else:
            table.add_row("IPC per core", f"min {min(ipc):.3f}, mean {sum(ipc) / len(ipc):.3f}, max {max(ipc):.3f} "
                                          f"over {len(ipc)} cores")
    table.add_row("outputs", str(outdir))
    console.print(table)
    guest_out = result.stdout.decode(errors="replace").strip()
    if guest_out:
        console.print("[bold]guest stdout[/] (last lines):")
        console.print("\n".join(guest_out.splitlines()[-8:]), markup=False, highlight=False)
    return 0 if result.exit_code in (0, None) else 1


if __name__ == "__main__":
    raise SystemExit(main())
