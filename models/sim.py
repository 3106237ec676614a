"""Run one simulation: validate the configuration, hand it to the engine, write the run's outputs.

A run directory gets config.json (every parameter, resolved), stats.txt (gem5's text format), stats.json,
stats_series.csv (the guest's STATS_DUMP snapshots, a time series: one row per dump, one column per statistic) when
the guest took any, and stdout/stderr of the guest. Host timing (seconds, MIPS) is kept apart from the stats so
identical configurations give bit-identical stats files.

Every run directory also gets a `status` file: "running" while the run goes on, then "ok: <stop reason>",
"interrupted: ..." or "failed: <error class>: <message>". The directory is checked (created, writable) and the
files of a previous run in it are removed before the simulation starts; config.json is written first, and on a
failure or an interrupt the guest's output so far is still written beside the status.
"""

from __future__ import annotations

import csv
import json
import pathlib
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import HostMemoryError, OutputError, RunInterrupted, SimError
from .system import System

# The files a run writes (a reused outdir loses these before a new run starts).
RUN_FILES = ("config.json", "stats.json", "stats.txt", "stats_series.csv", "guest.stdout", "guest.stderr",
             "host.json", "status", "numa.csv")


class DetailedTimingNeverStarted(UserWarning):
    """A detailed run ended before detailed timing began (e.g. the program never reached ROI_BEGIN): every
    instruction ran functionally and no timing statistics exist."""


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
    # The NUMA map's placed ranges: (start, end, socket) each, sorted; every other address is on socket 0.
    numa_ranges: list[tuple[int, int, int]] = field(repr=False, default_factory=list)
    # What the guest left in its scratch directory (Workload.scratch): {absolute guest path: bytes}.
    scratch_files: dict[str, bytes] = field(repr=False, default_factory=dict)
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
    if result.numa_ranges:
        # The NUMA map's placed ranges (bytes [start, end) on socket); every other address is on socket 0.
        rows = "".join(f"{start},{end},{socket}\n" for start, end, socket in result.numa_ranges)
        (outdir / "numa.csv").write_text("start,end,socket\n" + rows)
    (outdir / "guest.stdout").write_bytes(result.stdout)
    (outdir / "guest.stderr").write_bytes(result.stderr)
    summary = {"stop_reason": result.stop_reason, "exit_code": result.exit_code, "insts": result.insts,
               "sim_seconds": result.sim_seconds, "host_seconds": result.host_seconds, "mips": result.mips}
    (outdir / "host.json").write_text(json.dumps(summary, indent=2) + "\n")


# Host bytes per cache line the timing model keeps (tag, ready time, LRU stamp, dirty bit; the LLC also a sharer
# mask for its directory), and per data-set item the ghost client keeps (its compact store model: a u32 version,
# a byte per bucket, load snapshots: 4.43 bytes an item for the Tiny set, engine store_model.rs). Measured from the
# engine's data structures (kvsim-timing cache.rs, engine store_model.rs), rounded up.
HOST_BYTES_PER_PRIVATE_LINE = 25
HOST_BYTES_PER_LLC_LINE = 33
HOST_BYTES_PER_CLIENT_ITEM = 5
# Everything else (decoded-code cache, TLBs, NIC, the first guest pages): a fixed allowance (assumed).
HOST_BYTES_BASE = 256 << 20


def host_memory_estimate(system: System) -> dict[str, int]:
    """Host memory the engine will allocate up front for this configuration, by part (bytes). Guest memory is not
    in it: its pages are allocated on touch, up to System.mem_limit, and counted as they are."""
    parts = {"engine": HOST_BYTES_BASE}
    if system.mode == "detailed":
        c = system.caches
        private = c.l1i.size + c.l1d.size + (c.l2.size if c.l2_enabled else 0)
        parts["private caches"] = system.harts * private // c.l1d.line_size * HOST_BYTES_PER_PRIVATE_LINE
        parts["LLC"] = c.llc.size // c.llc.line_size * HOST_BYTES_PER_LLC_LINE
    if system.client.enabled:
        parts["client"] = system.client.items * HOST_BYTES_PER_CLIENT_ITEM
    return parts


def host_memory_available() -> int | None:
    """Memory the host can give this process now (Linux MemAvailable), or None when unknown."""
    try:
        for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_host_memory(system: System) -> None:
    """Refuse, before anything is allocated, a configuration whose up-front host memory exceeds what is free."""
    parts = host_memory_estimate(system)
    need, have = sum(parts.values()), host_memory_available()
    if have is not None and need > have:
        detail = ", ".join(f"{name} {size / 2**30:.2f} GiB" for name, size in parts.items())
        raise HostMemoryError(f"this configuration needs about {need / 2**30:.1f} GiB of host memory ({detail}); "
                              f"the host has {have / 2**30:.1f} GiB available: reduce the caches, harts or items")


def prepare_outdir(outdir: pathlib.Path) -> None:
    """Before any simulation: create the folder, prove it writable, and remove a previous run's files."""
    try:
        outdir.mkdir(parents=True, exist_ok=True)
        if not outdir.is_dir():
            raise OutputError(f"output folder {outdir} is not a directory")
        probe = outdir / ".kvsim-write-test"
        probe.write_bytes(b"")
        probe.unlink()
        for name in RUN_FILES:
            (outdir / name).unlink(missing_ok=True)
    except OSError as err:
        raise OutputError(f"cannot write the run's outputs to {outdir}: {err.strerror or err}") from None


def write_status(outdir: pathlib.Path, text: str) -> None:
    (outdir / "status").write_text(text.rstrip("\n") + "\n")


def result_from_raw(raw: dict[str, Any], host_seconds: float) -> RunResult:
    stats = {name: value for name, value, _ in raw["stats"]}
    return RunResult(stop_reason=raw["stop_reason"], exit_code=raw["exit_code"], stdout=raw["stdout"],
                     stderr=raw["stderr"], sim_ticks=raw["sim_ticks"], harts=raw["harts"], stats=stats,
                     descriptions={name: desc for name, _, desc in raw["stats"]}, host_seconds=host_seconds,
                     stat_dumps=[(ticks, dict(values)) for ticks, values in raw["stat_dumps"]],
                     numa_ranges=[tuple(r) for r in raw.get("numa_ranges", [])],
                     scratch_files={path: bytes(data) for path, data in raw.get("scratch_files", [])})


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
    results.

    Ctrl-C (SIGINT) stops the run between turns: the results so far are written (with `outdir`) and
    `RunInterrupted` (a KeyboardInterrupt) is raised carrying them as `.result`. A SimError carries the partial
    results as `.result` too (None when the run never started), and the outdir keeps the guest's output so far."""
    from . import _engine  # the Rust extension, built by `make engine`

    system.validate()
    check_host_memory(system)
    config = system.to_dict()
    out = pathlib.Path(outdir) if outdir is not None else None
    if out is not None:
        prepare_outdir(out)
        (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        write_status(out, "running")
    started = time.perf_counter()
    try:
        if progress is None:
            raw = _engine.run(json.dumps(config))
        else:
            raw = _engine.run(json.dumps(config), progress, progress_every)
    except SimError as err:
        partial = getattr(err, "partial", None)
        err.result = result_from_raw(partial, time.perf_counter() - started) if partial else None
        if out is not None:
            if err.result is not None:
                (out / "guest.stdout").write_bytes(err.result.stdout)
                (out / "guest.stderr").write_bytes(err.result.stderr)
            write_status(out, f"failed: {type(err).__name__}: {err}")
        raise
    except BaseException as err:
        if out is not None:
            write_status(out, f"failed: {type(err).__name__}: {err}")
        raise
    result = result_from_raw(raw, time.perf_counter() - started)
    if system.mode == "detailed" and "system.timing.start_ticks" not in result.stats \
            and result.stop_reason != "interrupted":
        warnings.warn(f"detailed timing never started (detailed_start={system.detailed_start!r}; the run ended "
                      f"with {result.stop_reason!r} after {result.insts:,} instructions): every instruction ran "
                      "functionally and there are no timing statistics", DetailedTimingNeverStarted, stacklevel=2)
    if out is not None:
        result.outdir = out
        write_outputs(result, config, out)
        if result.stop_reason == "interrupted":
            write_status(out, f"interrupted: stopped by a signal after {result.insts:,} instructions; the files "
                              "hold the results so far")
        else:
            write_status(out, f"ok: {result.stop_reason}")
    if result.stop_reason == "interrupted":
        raise RunInterrupted(result)
    return result
