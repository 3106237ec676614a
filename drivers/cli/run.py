#!/usr/bin/env python3
"""Run one simulation from a config in configs/ and print its summary (`kvsim run`, `make run`).

    kvsim run                                           # the default run (kvs_default)
    kvsim run functional_default --set harts=4 --set workload.argv='["100"]'
    kvsim run mercury --arg core_kind=a15 --arg cores=4 # arguments of the config's system()
    kvsim run xeon_e5_2697v2_socket --mcpat ../shared/tools/mcpat/mcpat   # also real McPAT on the run

Outputs go to results/<config>-<timestamp>/ (config.json, stats.txt, stats.json, stats_series.csv when the guest
dumped stats, guest output, provenance.json) unless --outdir. A detailed run is priced by the power model (power.*
in its stats; --no-power to skip) and, with --mcpat PATH or $KVSIM_MCPAT, by McPAT itself (mcpat/ in the run
folder). A live line shows the phase, instructions, simulated time, speed and, when a bound is known, the ETA;
Ctrl-C stops the run. A run restored from a checkpoint warms up with as many requests as the load it stands for
(no more than Client.warmup_requests' 400,000) unless client.warmup_requests is set.
"""

from __future__ import annotations

import argparse
import datetime
import pathlib
import re
import subprocess
import time

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

import configs
from models import param_path, stats_paths
from models.errors import OutputError, RunInterrupted, SimError
from models.params import ParamError, SimObject
from models.sim import simulate, sized_warmup_requests, write_status

from .names import parse_config_args, parse_value, path_hint, suggestion

DEFAULT_CONFIG = "kvs_default"


def apply_override(system: SimObject, assignment: str) -> None:
    """`path=value`, the path in the grammar of models/param_path.py (`caches.llc.size`, `nics[1].pcie_lanes`, also
    `nics.1.pcie_lanes`, `workload.argv[prefetch]`): value is read as JSON when it parses (numbers, lists,
    booleans), else as a string. An unknown name gets the closest parameter paths as a suggestion."""
    path, sep, text = assignment.partition("=")
    if not sep:
        raise ParamError(f"--set {assignment!r}: expected NAME=VALUE")
    refuse_shadowed(system, assignment)
    try:
        param_path.set_value(system, path.strip(), parse_value(text))
    except ParamError as err:
        unknown = "has no parameter" in str(err) or "is not an index" in str(err)
        raise ParamError(f"--set {assignment!r}: {err}" + (path_hint(system, path.strip()) if unknown else "")) \
            from None


def refuse_shadowed(system: SimObject, assignment: str) -> None:
    """A system of several sockets: each socket holds its own copy of the per-socket parameters (caches, core,
    memory, ...), so one set at the system's level would change nothing the run uses; refused, naming the sockets'
    paths."""
    sockets = getattr(system, "sockets", None)
    head = re.split(r"[.\[]", assignment.partition("=")[0].strip(), maxsplit=1)[0]
    if sockets and head in sockets[0].to_dict():
        rest = assignment.strip()[len(head):]
        raise ParamError(f"--set {assignment!r}: the {len(sockets)} sockets each have their own {head!r}, so this "
                         "would change nothing; set each socket's: " +
                         " ".join(f"--set 'sockets[{i}].{head}{rest}'" for i in range(len(sockets))))


def eta_text(done: float, total: float, seconds: float) -> str:
    """`, ETA 1m05s` from the share done so far and the host time it took ('' when nothing is done yet)."""
    if done <= 0 or total <= 0 or seconds <= 0:
        return ""
    left = max(0.0, seconds * (total - done) / done)
    return f", ETA {int(left // 60)}m{int(left % 60):02d}s" if left >= 60 else f", ETA {left:.0f}s"


def open_loop_window_ps(system) -> int:
    """The simulated time an open-loop client's detailed phase lasts (ps): its requests (and a restored run's
    warm-up) at the offered rate of every port; 0 when the client is closed loop or absent."""
    client = system.client
    if not client.enabled or client.offered_mpps <= 0:
        return 0
    ports = sum(nic.ports for nic in system.active_nics())
    rate = client.offered_mpps * 1e6 * max(1, ports) * client.requests_per_packet     # requests per second
    requests = client.requests + (client.warmup_requests if system.restore_from else 0)
    return round(requests / rate * 1e12)


class ProgressLine:
    """The live line: phase, instructions, simulated time, host speed, and the ETA when the run has a bound: its
    instruction limit; an open-loop client's simulated window (`window_ps`, from the offered load); or its
    measured requests when the engine reports the requests answered so far (a fourth argument of the callback;
    `requests` is how many the client measures)."""

    def __init__(self, name: str, max_insts: int, requests: int = 0, window_ps: int = 0):
        self.name, self.max_insts, self.requests, self.window_ps = name, max_insts, requests, window_ps
        self.started = time.perf_counter()
        self.text = Text(f"{name}: starting ...")

    def __call__(self, insts: int, sim_ticks: int, phase: str, answered: int | None = None) -> None:
        secs = time.perf_counter() - self.started
        mips = insts / secs / 1e6 if secs > 0 else 0.0
        of, eta = "", ""
        if self.max_insts:
            of = f" of {self.max_insts:,} ({100 * insts / self.max_insts:.0f}%)"
            eta = eta_text(insts, self.max_insts, secs)
        if self.window_ps and phase == "detailed":
            if self.timed_at is None:
                self.timed_at = (secs, sim_ticks)
            since, start = self.timed_at
            eta = eta_text(sim_ticks - start, self.window_ps, secs - since) or eta
        answers = ""
        if answered is not None and self.requests:
            answers = f", {answered:,} of {self.requests:,} requests answered"
            if phase == "detailed":
                if self.detailed_at is None:
                    self.detailed_at = (secs, answered)
                since, base = self.detailed_at
                eta = eta_text(answered - base, self.requests - base, secs - since) or eta
        self.text = Text.assemble((f"{self.name} ", "bold"), (f"[{phase}] ", "cyan"),
                                  f"{insts:,} instructions{of}{answers}, {sim_ticks * 1e-9:.3f} ms simulated, "
                                  f"{secs:.1f} s, {mips:.1f} MIPS{eta}")
        if self.live is not None:
            self.live.update(self.text)

    live: Live | None = None
    detailed_at: tuple[float, int] | None = None     # (host seconds, requests answered) when detailed timing began
    timed_at: tuple[float, int] | None = None        # (host seconds, simulated ticks) when detailed timing began


def run_with_progress(console: Console, name: str, system, outdir: pathlib.Path, every: int,
                      provenance: dict | None = None):
    if every <= 0 or not console.is_terminal:
        with console.status(f"simulating {name} ..."):
            return simulate(system, outdir, provenance=provenance)
    line = ProgressLine(name, system.max_insts, system.client.requests if system.client.enabled else 0,
                        open_loop_window_ps(system))
    with Live(line.text, console=console, refresh_per_second=4, transient=True) as live:
        line.live = live
        return simulate(system, outdir, progress=line, progress_every=every, provenance=provenance)


def add_power(result, system):
    """Price the finished run from its own configuration and add the power model's figures to its stats/files.
    Returns the priced result (power.price_run)."""
    import power
    from models.sim import write_outputs

    config = system.to_dict()
    priced = power.price_run(result.stats, config)
    sockets = getattr(priced, "sockets", None) or [priced]
    platform = ", ".join(sorted({s.model.platform.name for s in sockets}))
    for name, value in priced.stats().items():
        result.stats[name] = value
        result.descriptions[name] = f"power model ({platform}, as the run's config.json)"
    if result.outdir is not None:
        write_outputs(result, config, result.outdir)
    return priced


def add_mcpat(result, system, priced, mcpat: str) -> dict:
    """Run McPAT itself on the priced run (drivers/cli/mcpat_run.py) and add its totals to the run's stats."""
    from models.sim import write_outputs

    from . import mcpat_run

    totals = mcpat_run.run(priced, result.outdir, mcpat)
    for name, value in mcpat_run.stats(totals).items():
        result.stats[name] = value
        result.descriptions[name] = "McPAT 1.3 on the run's McPAT XML export (mcpat/ in the run folder)"
    write_outputs(result, system.to_dict(), result.outdir)
    return totals


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def power_rows(stats: dict[str, float]) -> list[tuple[str, str]]:
    """The priced run's power: one socket's (power.socket.*) or, on several sockets, the system's (power.system.*:
    every socket and the links between them)."""
    for total in ("socket", "system"):
        if f"power.{total}.runtime_power_W" in stats:
            return [("power (runtime)", f"{stats[f'power.{total}.runtime_power_W']:.2f} W (peak "
                                        f"{stats[f'power.{total}.peak_power_W']:.1f} W)"
                                        + (" for the whole system" if total == "system" else ""))] + \
                ([("power warnings", f"{stats['power.warnings.missing_stats']:.0f} counters the power model "
                                     "reads are missing (power.warnings.missing_stats): what they count is not "
                                     "priced")]
                 if stats.get("power.warnings.missing_stats") else [])
    return []


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
    power = power_rows(stats)
    if power:
        rows += power
        if stats.get("power.energy_per_request_J", 0) > 0 and stats.get("client.throughput_mrps"):
            rows.append(("requests/s per watt", f"{stats['power.requests_per_s_per_W']:,.0f} "
                         f"({stats['power.energy_per_request_J'] * 1e9:.1f} nJ per request)"))
    rows += [("requests checked", f"{stats['client.requests']:,.0f} ({stats['client.hits']:,.0f} GET hits, "
                                  f"{stats['client.misses']:,.0f} misses)"),
             ("instructions / request", f"{stats['client.insts_per_request']:.1f}")]
    ipc = stats_paths.CORE.values(stats, "ipc")
    if ipc:
        rows.append(("IPC (mean of cores)", f"{sum(ipc) / len(ipc):.3f}"))
    sockets = len(stats_paths.sockets(stats))
    for label, values in (("L1D MPKI (mean)", stats_paths.PRIVATE_CACHE.values(stats, "mpki", cache="l1d")),
                          ("LLC MPKI" + (f" (mean of {sockets} sockets)" if sockets > 1 else ""),
                           stats_paths.LLC.values(stats, "mpki"))):
        if values:
            rows.append((label, f"{_mean(values):.2f}"))
    batch = _mean(stats_paths.NIC_QUEUE.values(stats, "rx_batch_mean"))
    if batch is not None:
        rows.append(("RX batch (mean)", f"{batch:.1f} packets per poll"))
    return rows


def fs_summary(stats: dict[str, float]) -> list[tuple[str, str]]:
    """An FS-mode run's figures (empty otherwise): each hart's instructions and time by privilege level, the
    firmware calls and the console."""
    if stats_paths.FULL_SYSTEM.stat("sbi_calls") not in stats:
        return []
    rows = []
    for (hart,) in stats_paths.HART.instances(stats, "insts"):
        insts = {lv: stats[stats_paths.HART_LEVEL.stat(hart, lv, "insts")] for lv in stats_paths.PRIVILEGE_LEVELS}
        ticks = {lv: stats[stats_paths.HART_LEVEL.stat(hart, lv, "ticks")] for lv in stats_paths.PRIVILEGE_LEVELS}
        total_i, total_t = sum(insts.values()) or 1, sum(ticks.values()) or 1
        rows.append((f"hart {hart} by level", ", ".join(
            f"{lv} {insts[lv]:,.0f} insts ({100 * insts[lv] / total_i:.1f}%), {ticks[lv] / 1e9:.3f} ms "
            f"({100 * ticks[lv] / total_t:.1f}%)" for lv in stats_paths.PRIVILEGE_LEVELS)))
    rows.append(("firmware (SBI) calls", f"{stats[stats_paths.FULL_SYSTEM.stat('sbi_calls')]:,.0f}"))
    rows.append(("console", f"{stats[stats_paths.FULL_SYSTEM.stat('console_bytes')]:,.0f} bytes (guest.stdout)"))
    return rows


def mcpat_rows(totals: dict) -> list[tuple[str, str]]:
    rows = []
    for socket, both in totals.items():
        m, k = both["mcpat"], both["model"]
        rows.append((f"McPAT {socket}", f"runtime dynamic {m['runtime_dynamic_W']:.2f} W (model "
                     f"{k['runtime_dynamic_W']:.2f} W), peak dynamic {m['peak_dynamic_W']:.1f} W (model "
                     f"{k['peak_dynamic_W']:.1f} W), area {m['area_mm2']:.0f} mm2 (model {k['area_mm2']:.0f})"))
        rows += [(f"McPAT {socket} input", text) for text in both["export_warnings"]]
    return rows


def build_system(name: str, config_args: list[str], overrides: list[str]):
    """The config's system with its --arg arguments and --set overrides; unknown names are refused with the
    closest known ones. Returns (system, the system() arguments, whether client.warmup_requests was set)."""
    if name not in configs.available():
        raise configs.UnknownConfig(f"no config named {name!r}; {suggestion(name, configs.available())}")
    module = configs.load(name)
    kwargs = parse_config_args(module, config_args)
    system = module.system(**kwargs)
    for assignment in overrides:
        apply_override(system, assignment)
    warmup_set = any(a.partition("=")[0].strip() == "client.warmup_requests" for a in overrides) \
        or "warmup_requests" in kwargs
    return system, kwargs, warmup_set


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kvsim run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", nargs="?", default=DEFAULT_CONFIG, help="a module of configs/ (kvsim configs)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="override a parameter (kvsim params lists them)")
    parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE",
                        help="an argument of the config's system() (kvsim configs NAME lists them)")
    parser.add_argument("--outdir", help="where to write the run's files (default results/<config>-<time>)")
    parser.add_argument("--list", action="store_true", help="list the configs and exit (as kvsim configs)")
    parser.add_argument("--power", action="store_true", help="require pricing: refuse a run that cannot be priced "
                        "(a detailed run is priced by default)")
    parser.add_argument("--no-power", action="store_true", help="do not price the run")
    parser.add_argument("--mcpat", metavar="PATH", help="also run McPAT (this binary) on the run's McPAT XML "
                        "export; default $KVSIM_MCPAT when set")
    parser.add_argument("--progress-every", type=int, default=10_000_000, metavar="N",
                        help="update the progress line every N instructions (0: no progress line)")
    args = parser.parse_args(argv)
    console = Console()
    if args.list:
        from .params import list_configs

        list_configs(console)
        return 0
    outdir = None
    notes: list[tuple[str, str]] = []
    try:
        from . import mcpat_run

        if args.no_power and (args.mcpat or args.power):
            raise ParamError("--no-power cannot be combined with --power or --mcpat")
        mcpat = None if args.no_power else mcpat_run.mcpat_path(args.mcpat)
        system, config_args, warmup_set = build_system(args.config, args.arg, args.set)
        if system.restore_from and not warmup_set:
            system.client.warmup_requests = sized_warmup_requests(system)
        if system.restore_from:
            notes.append(("warm-up after restore", f"{system.client.warmup_requests:,} requests" +
                          ("" if warmup_set else " (sized to the run: its items, at most 400,000)")))
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        outdir = pathlib.Path(args.outdir or configs.ROOT / "results" / f"{args.config}-{stamp}")
        if (args.power or mcpat) and system.mode != "detailed":
            raise ParamError(f"{'--power' if args.power else '--mcpat'} needs a detailed run: System.mode is "
                             "'functional' (try --set mode=detailed)")
        result = run_with_progress(console, args.config, system, outdir, args.progress_every,
                                   {"config_name": args.config, "config_args": config_args})
        priced = None
        if system.mode == "detailed" and not args.no_power:
            try:
                priced = add_power(result, system)
            except (ValueError, KeyError) as err:
                if args.power or mcpat:
                    raise
                notes.append(("power", f"not priced: {type(err).__name__}: {err}"))
        if mcpat:
            notes += mcpat_rows(add_mcpat(result, system, priced, mcpat))
    except (ParamError, SimError, ValueError, OSError, RuntimeError, subprocess.SubprocessError) as err:
        console.print(f"[bold red]{type(err).__name__}[/]: ", end="")
        console.print(str(err), markup=False, highlight=False)
        status = outdir / "status" if outdir is not None else None
        if status is not None and status.is_file() and status.read_text().startswith("ok"):
            # The simulation finished but a later step (pricing, McPAT) failed: the folder must not look finished.
            write_status(outdir, f"failed: {type(err).__name__}: {err}")
        if isinstance(err, SimError) and not isinstance(err, OutputError) and outdir is not None:
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
    rows = kvs_summary(result.stats) + fs_summary(result.stats)
    rows += [] if any(label.startswith("power") for label, _ in rows) else power_rows(result.stats)
    for label, row in rows + notes:
        table.add_row(label, row)
    table.add_row("stopped by", result.stop_reason)
    table.add_row("exit code", str(result.exit_code))
    table.add_row("harts", str(len(result.harts)))
    if "sim_seconds" in result.stats:
        table.add_row("measured interval", f"{result.stats['sim_seconds'] * 1e3:.3f} ms, "
                                           f"{result.stats.get('sim_insts', 0):,.0f} instructions (stats.txt)")
    table.add_row("instructions (whole run)", f"{result.insts:,}")
    table.add_row("simulated time (whole run)", f"{result.sim_seconds * 1e3:.3f} ms")
    table.add_row("host time", f"{result.host_seconds:.2f} s")
    table.add_row("speed", f"{result.mips:.1f} simulated MIPS")
    ipc = stats_paths.CORE.values(result.stats, "ipc")
    if ipc:
        table.add_row("mode", f"detailed (timing from {system.detailed_start})")
    if result.stats.get(stats_paths.SAMPLING.stat("enabled")):
        st = lambda name: result.stats[stats_paths.SAMPLING.stat(name)]  # noqa: E731
        table.add_row("SAMPLED", f"{st('windows'):.0f} windows of {st('window_insts'):,.0f} instructions; counters "
                                 f"cover the windows only; IPC {st('ipc'):.3f} in [{st('ipc_low'):.3f}, "
                                 f"{st('ipc_high'):.3f}] at {st('confidence'):.1%}")
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
