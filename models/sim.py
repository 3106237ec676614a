"""Run one simulation: validate the configuration, hand it to the engine, write the run's outputs.

A run directory gets config.json (every parameter, resolved), stats.txt (gem5's text format), stats.json,
stats_series.csv (the guest's STATS_DUMP snapshots, a time series: one row per dump, one column per statistic) when
the guest took any, and stdout/stderr of the guest. Host timing (seconds, MIPS) is kept apart from the stats so
identical configurations give bit-identical stats files.
"""

from __future__ import annotations

import csv
import json
import pathlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .system import System


@dataclass
class RunResult:
    stop_reason: str
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    sim_ticks: int
    harts: list[dict[str, Any]]
    stats: dict[str, float]
    descriptions: dict[str, str] = field(repr=False, default_factory=dict)
    # The guest's STATS_DUMP snapshots: (sim_ticks, {name: value}) each, in order.
    stat_dumps: list[tuple[int, dict[str, float]]] = field(repr=False, default_factory=list)
    host_seconds: float = 0.0
    outdir: pathlib.Path | None = None

    @property
    def insts(self) -> int:
        return sum(h["insts"] for h in self.harts)

    @property
    def mips(self) -> float:
        """Simulated instructions per host second, in millions."""
        return self.insts / self.host_seconds / 1e6 if self.host_seconds > 0 else float("nan")

    @property
    def sim_seconds(self) -> float:
        return self.sim_ticks * 1e-12


def format_stats_txt(stats: dict[str, float], descriptions: dict[str, str]) -> str:
    """gem5's stats.txt layout: a begin marker, one `name value # description` line per statistic, an end marker."""
    lines = ["", "---------- Begin Simulation Statistics ----------"]
    width = max((len(name) for name in stats), default=0) + 2
    for name, value in stats.items():
        text = f"{int(value)}" if float(value).is_integer() else f"{value:.6f}"
        lines.append(f"{name:<{width}}{text:>20}   # {descriptions.get(name, '')}".rstrip())
    lines += ["", "---------- End Simulation Statistics   ----------", ""]
    return "\n".join(lines)


def write_outputs(result: RunResult, config: dict[str, Any], outdir: pathlib.Path) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    (outdir / "stats.json").write_text(json.dumps(result.stats, indent=1) + "\n")
    (outdir / "stats.txt").write_text(format_stats_txt(result.stats, result.descriptions))
    if result.stat_dumps:
        write_stats_series(result.stat_dumps, outdir / "stats_series.csv")
    (outdir / "guest.stdout").write_bytes(result.stdout)
    (outdir / "guest.stderr").write_bytes(result.stderr)
    summary = {"stop_reason": result.stop_reason, "exit_code": result.exit_code, "insts": result.insts,
               "sim_seconds": result.sim_seconds, "host_seconds": result.host_seconds, "mips": result.mips}
    (outdir / "host.json").write_text(json.dumps(summary, indent=2) + "\n")


def write_stats_series(dumps: list[tuple[int, dict[str, float]]], path: pathlib.Path) -> None:
    """The STATS_DUMP snapshots as CSV: columns dump, sim_ticks, then every statistic any snapshot has (in first
    appearance order; empty where a snapshot lacks it, e.g. timing stats before detailed timing started)."""
    names: dict[str, None] = {}
    for _, values in dumps:
        names.update(dict.fromkeys(values))
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["dump", "sim_ticks", *names])
        for i, (ticks, values) in enumerate(dumps):
            out.writerow([i, ticks, *(repr(values[n]) if n in values else "" for n in names)])


# progress(insts, sim_ticks, phase): called about every `progress_every` instructions during a run.
ProgressFn = Callable[[int, int, str], None]


def simulate(system: System, outdir: str | pathlib.Path | None = None, *, progress: ProgressFn | None = None,
             progress_every: int = 10_000_000) -> RunResult:
    """Run `system` to completion (or to its instruction/time limit). Raises a models.errors.SimError subclass
    naming the hart, PC and reason when the guest faults. With `outdir`, writes the run's files there. With
    `progress`, calls progress(insts, sim_ticks, phase) about every `progress_every` instructions (an exception
    it raises stops the run and propagates); reports happen between scheduling turns, so they never change the
    results."""
    from . import _engine  # the Rust extension, built by `make engine`

    system.validate()
    config = system.to_dict()
    started = time.perf_counter()
    if progress is None:
        raw = _engine.run(json.dumps(config))
    else:
        raw = _engine.run(json.dumps(config), progress, progress_every)
    host_seconds = time.perf_counter() - started
    stats = {name: value for name, value, _ in raw["stats"]}
    result = RunResult(stop_reason=raw["stop_reason"], exit_code=raw["exit_code"], stdout=raw["stdout"],
                       stderr=raw["stderr"], sim_ticks=raw["sim_ticks"], harts=raw["harts"], stats=stats,
                       descriptions={name: desc for name, _, desc in raw["stats"]}, host_seconds=host_seconds,
                       stat_dumps=[(ticks, dict(values)) for ticks, values in raw["stat_dumps"]])
    if outdir is not None:
        result.outdir = pathlib.Path(outdir)
        write_outputs(result, config, result.outdir)
    return result
