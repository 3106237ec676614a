"""Run one simulation: validate the configuration, hand it to the engine, write the run's outputs.

A run directory gets config.json (every parameter, resolved), stats.txt (gem5's text format), stats.json, and
stdout/stderr of the guest. Host timing (seconds, MIPS) is kept apart from the stats so identical configurations
give bit-identical stats files.
"""

from __future__ import annotations

import json
import pathlib
import time
from dataclasses import dataclass, field
from typing import Any

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
    (outdir / "guest.stdout").write_bytes(result.stdout)
    (outdir / "guest.stderr").write_bytes(result.stderr)
    summary = {"stop_reason": result.stop_reason, "exit_code": result.exit_code, "insts": result.insts,
               "sim_seconds": result.sim_seconds, "host_seconds": result.host_seconds, "mips": result.mips}
    (outdir / "host.json").write_text(json.dumps(summary, indent=2) + "\n")


def simulate(system: System, outdir: str | pathlib.Path | None = None) -> RunResult:
    """Run `system` to completion (or to its instruction/time limit). Raises a models.errors.SimError subclass
    naming the hart, PC and reason when the guest faults. With `outdir`, writes the run's files there."""
    from . import _engine  # the Rust extension, built by `make engine`

    system.validate()
    config = system.to_dict()
    started = time.perf_counter()
    raw = _engine.run(json.dumps(config))
    host_seconds = time.perf_counter() - started
    stats = {name: value for name, value, _ in raw["stats"]}
    result = RunResult(stop_reason=raw["stop_reason"], exit_code=raw["exit_code"], stdout=raw["stdout"],
                       stderr=raw["stderr"], sim_ticks=raw["sim_ticks"], harts=raw["harts"], stats=stats,
                       descriptions={name: desc for name, _, desc in raw["stats"]}, host_seconds=host_seconds)
    if outdir is not None:
        result.outdir = pathlib.Path(outdir)
        write_outputs(result, config, result.outdir)
    return result
