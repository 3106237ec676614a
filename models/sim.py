"""Run one simulation: validate the configuration, hand it to the engine, write the run's outputs.

A run directory gets config.json (every parameter, resolved), stats.txt (gem5's text format), stats.json,
stats_series.csv (the guest's STATS_DUMP snapshots, a time series: one row per dump, one column per statistic) when
the guest took any, and stdout/stderr of the guest. Host timing (seconds, MIPS) is kept apart from the stats so
identical configurations give bit-identical stats files.

stats.txt holds two sections, as a gem5 user expects: the measured interval (every counter since the last stats
reset, which the client's measured phase or the guest's ROI_BEGIN/STATS_RESET makes; `sim_seconds`, `sim_ticks`
and `sim_insts` are that interval's, so a rate computed from the section is right) and the whole run (figures that
are not reset: the latest hart's time `system.sim_ticks`, the bulk load, pages touched, ...). Descriptions carry
units. stats.json keeps every figure under the same names, flat.

Every run directory also gets a `status` file: "running" while the run goes on, then "ok: <stop reason>",
"incomplete: ..." (run_status), "interrupted: ..." or "failed: <error class>: <message>". Its files are written
atomically and listed with their SHA-256 in checksums.sha256 (models/durable.py). The directory is checked (created, writable) and the
files of a previous run in it are removed before the simulation starts; config.json is written first, and on a
failure or an interrupt the guest's output so far is still written beside the status. `provenance.json`
(models/provenance.py) records the command, config, commit, engine and guest hashes, host and the same status.
"""

from __future__ import annotations

import csv
import inspect
import json
import pathlib
import re
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from . import provenance, stats_paths
from .client import ServerEvicts, kvs_eviction_warning, kvs_server_capacity
from .durable import CHECKSUMS, atomic_write, remove_dead_partials, verify_checksums, write_checksums
from .errors import HostMemoryError, OutputError, RunInterrupted, SimError
from .params import ParamError
from .system import System

# The files a run writes (a reused outdir loses these before a new run starts).
RUN_FILES = ("config.json", "stats.json", "stats.txt", "stats_series.csv", "guest.stdout", "guest.stderr",
             "host.json", "status", "numa.csv", provenance.FILE, CHECKSUMS)


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
    # "ok: <stop reason>" (with a warning appended when GETs missed), or "incomplete: ..." when the client's
    # measured phase did not finish (run_status); the run folder's `status` says the same.
    status: str = ""

    @property
    def insts(self) -> int:
        return sum(h["insts"] for h in self.harts)

    @property
    def mips(self) -> float:
        """Simulated instructions per host second, in millions."""
        return self.insts / self.host_seconds / 1e6 if self.host_seconds > 0 else float("nan")

    @property
    def sim_seconds(self) -> float:
        """The whole run's simulated time (the latest hart's). The measured interval's, which rates use, is
        stats["sim_seconds"]."""
        return self.sim_ticks * 1e-12


# Figures that are not reset with the stats (they cover the whole run, from the first instruction) or describe the
# configuration rather than count: stats.txt puts them in their own section, after the measured interval.
WHOLE_RUN_STATS = re.compile(
    r"^(system\.sim_ticks|system\.hart\d+\.sim_ticks|system\.timing\.start_ticks|system\.mem\..*|system\.roi\..*"
    r"|system\.stats_(dumps|resets)|system\.numa\..*|client\.(items|key_size|value_size|responses_checked)"
    r"|client\.load\..*|client\.fuzz\..*)$")
TICKS_PER_SECOND = 10**12   # one tick is a picosecond

# Units by name, for descriptions that do not give one (gem5 prints `# description (Unit)`).
_UNITS = ((re.compile(r"(_ticks|_ps)$"), "ps"), (re.compile(r"^sim_seconds$|_seconds$"), "s"),
          (re.compile(r"(_ns|latency\.(mean|p\d+))$"), "ns"), (re.compile(r"_W$"), "W"),
          (re.compile(r"_J$"), "J"), (re.compile(r"_mm2$"), "mm^2"), (re.compile(r"_mrps$"), "M requests/s"),
          (re.compile(r"_mpps$"), "M frames/s"), (re.compile(r"_per_s$"), "1/s"), (re.compile(r"_gbps$"), "Gbit/s"),
          (re.compile(r"\.ipc$"), "instructions/cycle"), (re.compile(r"mpki$"), "misses/1000 instructions"),
          (re.compile(r"cycles$"), "cycles"), (re.compile(r"bytes(\.\w+)?$"), "bytes"),
          (re.compile(r"(miss_rate|loss|utilization\w*|_fraction)$"), "fraction"), (re.compile(r"sim_freq$"), "ticks/s"),
          (re.compile(r"\.clock$|_hz$"), "Hz"))
# Names of figures that are means, ratios or shares, not counts (no unit is guessed for them).
_NOT_COUNTS = re.compile(r"(mean|avg|rate|ratio|per_|util|frac|occupancy|share|_bw)")


def unit_of(name: str, value: float) -> str | None:
    """The unit of statistic `name`: from its name's suffix, else 'count' for a whole number that is not a mean or
    a ratio; None when it cannot be told."""
    for pattern, unit in _UNITS:
        if pattern.search(name):
            return unit
    if float(value).is_integer() and not _NOT_COUNTS.search(name.rsplit(".", 1)[-1]):
        return "count"
    return None


def with_unit(description: str, name: str, value: float) -> str:
    """`description (unit)` unless the description already names its unit in parentheses."""
    unit = unit_of(name, value)
    # A short unit (s, ns, W) counts as given only in parentheses; a longer one (Gbit/s, cycles) anywhere.
    given = rf"\([^)]*\b{re.escape(unit)}\b" if unit and len(unit) <= 2 else rf"(?<!\w){re.escape(unit or '')}"
    if unit is None or re.search(given, description):
        return description
    return f"{description} ({unit})" if description else f"({unit})"


def interval_stats(stats: dict[str, float]) -> dict[str, float]:
    """gem5's interval figures for the measured interval (since the last stats reset): sim_ticks (its length; known
    when detailed timing ran, or when nothing was reset and the interval is the whole run), sim_freq and sim_insts
    (the instructions of every hart in it)."""
    out: dict[str, float] = {}
    if "sim_seconds" in stats:
        out["sim_ticks"] = round(stats["sim_seconds"] * TICKS_PER_SECOND)
    elif stats.get("system.stats_resets", 0) == 0 and "system.sim_ticks" in stats:
        out["sim_ticks"] = stats["system.sim_ticks"]
        out["sim_seconds"] = stats["system.sim_ticks"] / TICKS_PER_SECOND
    out["sim_freq"] = TICKS_PER_SECOND
    if "system.insts" in stats:
        out["sim_insts"] = stats["system.insts"]
    return out


INTERVAL_DESCRIPTIONS = {
    "sim_seconds": "simulated seconds of the measured interval (since the last stats reset)",
    "sim_ticks": "simulated ticks of the measured interval (since the last stats reset)",
    "sim_freq": "ticks per simulated second",
    "sim_insts": "instructions of every hart in the measured interval",
}


def format_stats_txt(stats: dict[str, float], descriptions: dict[str, str]) -> str:
    """gem5's stats.txt layout: the measured interval between gem5's begin and end markers (one
    `name value # description (unit)` line per statistic, sim_* first), then the whole-run figures in a section of
    their own (gem5's parsers read the first and skip it)."""
    names = sorted(stats, key=lambda n: (not n.startswith("sim_"), 0))
    interval = [n for n in names if not WHOLE_RUN_STATS.match(n)]
    whole = [n for n in names if WHOLE_RUN_STATS.match(n)]
    width = max((len(name) for name in stats), default=0) + 2

    def line(name: str) -> str:
        value = stats[name]
        # 12 significant digits: a rate computed from the file agrees with one from stats.json.
        text = f"{int(value)}" if float(value).is_integer() else f"{value:.12g}"
        desc = with_unit(descriptions.get(name) or INTERVAL_DESCRIPTIONS.get(name, ""), name, value)
        return f"{name:<{width}}{text:>20}   # {desc}".rstrip()

    lines = ["", "---------- Begin Simulation Statistics ----------", *map(line, interval),
             "", "---------- End Simulation Statistics   ----------", ""]
    if whole:
        lines += ["---------- Begin Whole-Run Statistics ----------",
                  "# not reset with the stats: from the first instruction to the end of the run", *map(line, whole),
                  "", "---------- End Whole-Run Statistics   ----------", ""]
    return "\n".join(lines)


def write_outputs(result: RunResult, config: dict[str, Any], outdir: pathlib.Path) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    atomic_write(outdir / "config.json", json.dumps(config, indent=2) + "\n")
    atomic_write(outdir / "stats.json", json.dumps(result.stats, indent=1) + "\n")
    atomic_write(outdir / "stats.txt", format_stats_txt(result.stats, result.descriptions))
    if result.stat_dumps:
        write_stats_series(result.stat_dumps, outdir / "stats_series.csv")
    if result.numa_ranges:
        # The NUMA map's placed ranges (bytes [start, end) on socket); every other address is on socket 0.
        rows = "".join(f"{start},{end},{socket}\n" for start, end, socket in result.numa_ranges)
        atomic_write(outdir / "numa.csv", "start,end,socket\n" + rows)
    atomic_write(outdir / "guest.stdout", result.stdout)
    atomic_write(outdir / "guest.stderr", result.stderr)
    summary = {"stop_reason": result.stop_reason, "exit_code": result.exit_code, "insts": result.insts,
               "sim_seconds": result.sim_seconds, "host_seconds": result.host_seconds, "mips": result.mips}
    atomic_write(outdir / "host.json", json.dumps(summary, indent=2) + "\n")
    # status and provenance.json change after this (the final status), so they are not sealed
    write_checksums(outdir, [name for name in RUN_FILES if name not in ("status", provenance.FILE, CHECKSUMS)])


# Host bytes per cache line the timing model keeps (tag, ready time, LRU stamp, dirty bit; the LLC also a sharer
# mask for its directory), and per data-set item the ghost client keeps (its compact store model: a bit per item
# and a map of versions above 1, a byte per bucket, load snapshots: 0.56 bytes an item for the Tiny set's 192 Mi
# items on 60 partitions, engine store_model.rs). Measured from the engine's data structures (kvsim-timing cache.rs,
# engine store_model.rs), rounded up.
HOST_BYTES_PER_PRIVATE_LINE = 25
HOST_BYTES_PER_LLC_LINE = 33
HOST_BYTES_PER_CLIENT_ITEM = 1
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


def run_status(system: System, result: RunResult) -> str:
    """A finished run's status. With the client on, a run is complete only when it stopped because every measured
    request was answered ("client_done"); any other stop (max_insts, max_time, the guest's exit) left the measured
    phase unfinished and is "incomplete: ...". GET misses (evictions the client accepted) are flagged in the status
    and as a ServerEvicts warning naming the server's sizes."""
    if system.client.enabled and result.stop_reason != "client_done":
        answered = result.stats.get("client.requests", 0)
        return (f"incomplete: stopped by {result.stop_reason} (exit code {result.exit_code}) after "
                f"{result.insts:,} instructions, before the client's measured phase finished ({answered:,.0f} of "
                f"{system.client.requests:,} measured requests answered); its statistics do not describe the "
                "configured run")
    status = f"ok: {result.stop_reason}"
    misses = result.stats.get("client.misses", 0)
    if system.serves_kvs() and misses > 0:
        argv = system.server_argv()
        log, buckets, _ = kvs_server_capacity(argv)
        why = kvs_eviction_warning(argv, system.client, system.harts) or "the sizes should have held the data set"
        text = (f"{misses:,.0f} of {result.stats.get('client.gets', 0):,.0f} measured GETs missed: the server "
                f"evicted items (log {log / 2**20:g} MiB and {buckets:,} buckets per partition; {why})")
        warnings.warn(text, ServerEvicts, stacklevel=3)
        status += f"; warning: {text}"
    return status


def check_checkpoint_files(system: System) -> None:
    """Before a run: a checkpoint to restore whose manifest changed since it was written (the engine checks the
    other files' CRC-32s, but not the manifest's stored configuration) is refused naming it; what killed writers
    of the checkpoint to write left behind is removed."""
    if system.restore_from and pathlib.Path(system.restore_from).is_dir():
        verify_checksums(system.restore_from, missing_ok=True)     # no manifest: the engine says what it is
    if system.checkpoint_to:
        remove_dead_partials(system.checkpoint_to)


def seal_checkpoint(system: System) -> None:
    """After a run that wrote a checkpoint: the SHA-256 of its manifest beside it (checksums.sha256)."""
    target = pathlib.Path(system.checkpoint_to) if system.checkpoint_to else None
    if target is not None and (target / "manifest.json").is_file() and not (target / CHECKSUMS).exists():
        write_checksums(target, ["manifest.json"])


def write_status(outdir: pathlib.Path, text: str) -> None:
    atomic_write(outdir / "status", text.rstrip("\n") + "\n")
    provenance.set_status(outdir, text.strip())


def start_provenance(out: pathlib.Path, config: dict[str, Any], extra: dict[str, Any] | None) -> None:
    """Write provenance.json as the run starts; `extra` (config_name, config_args, command) comes from the front
    end that knows them."""
    provenance.write(out, provenance.collect(config, **(extra or {})))


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


# progress(insts, sim_ticks, phase[, answered]): called about every `progress_every` instructions during a run;
# a callback that takes a fourth argument also gets the measured requests answered so far (None without a client).
ProgressFn = Callable[..., None]


def _engine_progress(progress: ProgressFn) -> Callable[[int, int, str, int | None], None]:
    """The engine calls back with four arguments; a three-argument callback (the API before `answered`) is
    adapted, so existing callers keep working."""
    try:
        params = inspect.signature(progress).parameters.values()
    except (TypeError, ValueError):       # a builtin without a signature: give it what it was always given
        return lambda insts, ticks, phase, answered: progress(insts, ticks, phase)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) >= 4 or any(p.kind == p.VAR_POSITIONAL for p in params):
        return progress
    return lambda insts, ticks, phase, answered: progress(insts, ticks, phase)


def simulate(system: System, outdir: str | pathlib.Path | None = None, *, progress: ProgressFn | None = None,
             progress_every: int = 10_000_000, provenance: dict[str, Any] | None = None,
             at_measure: Callable[[], tuple[float, int] | None] | None = None) -> RunResult:
    """Run `system` to completion (or to its instruction/time limit). Raises a models.errors.SimError subclass
    naming the hart, PC and reason when the guest faults. With `outdir`, writes the run's files there. With
    `progress`, calls progress(insts, sim_ticks, phase) (or progress(insts, sim_ticks, phase, answered), the measured
    requests answered so far, when it takes four arguments) about every `progress_every` instructions (an exception
    it raises stops the run and propagates); reports happen between scheduling turns, so they never change the
    results.

    Ctrl-C (SIGINT) stops the run between turns: the results so far are written (with `outdir`) and
    `RunInterrupted` (a KeyboardInterrupt) is raised carrying them as `.result`. A SimError carries the partial
    results as `.result` too (None when the run never started), and the outdir keeps the guest's output so far.

    `provenance` adds what only the caller knows to the folder's provenance.json: config_name, config_args (the
    arguments of the config's system()) and command (default: this process's command line).

    `at_measure` (SE mode) is called once where detailed timing is about to start, with no engine thread running
    (the caller may fork there: drivers/shared_warmup.py); it returns None, or (Client.offered_mpps,
    Client.requests) for the measured phase, the only parameters nothing before that phase reads."""
    from . import _engine  # the Rust extension, built by `make engine`

    if at_measure is not None and system.os_level != "se":
        raise ParamError(f"simulate(at_measure=...): SE mode only (System.os_level = {system.os_level!r})")
    system.validate()
    check_host_memory(system)
    check_checkpoint_files(system)
    config = system.to_dict()
    out = pathlib.Path(outdir) if outdir is not None else None
    if out is not None:
        prepare_outdir(out)
        atomic_write(out / "config.json", json.dumps(config, indent=2) + "\n")
        start_provenance(out, config, provenance)
        write_status(out, "running")
    started = time.perf_counter()
    try:
        if progress is None and at_measure is None:
            raw = _engine.run(json.dumps(config))
        else:
            report = _engine_progress(progress) if progress is not None else None
            raw = _engine.run(json.dumps(config), report, progress_every, at_measure)
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
    result.stats.update(interval_stats(result.stats))
    seal_checkpoint(system)
    if system.mode == "detailed" and stats_paths.TIMING.stat("start_ticks") not in result.stats \
            and result.stop_reason != "interrupted":
        warnings.warn(f"detailed timing never started (detailed_start={system.detailed_start!r}; the run ended "
                      f"with {result.stop_reason!r} after {result.insts:,} instructions): every instruction ran "
                      "functionally and there are no timing statistics", DetailedTimingNeverStarted, stacklevel=2)
    result.status = run_status(system, result) if result.stop_reason != "interrupted" else \
        f"interrupted: stopped by a signal after {result.insts:,} instructions; the files hold the results so far"
    if out is not None:
        result.outdir = out
        try:
            write_outputs(result, config, out)
            write_status(out, result.status)
        except OSError as err:   # a full disk: the folder says why if it can, the caller keeps the result
            failure = OutputError(f"cannot write the run's outputs to {out}: {err.strerror or err} ({err.filename}); "
                                  "the folder's files are not a finished run")
            failure.result = result
            try:
                write_status(out, f"failed: OutputError: {failure}")
            except OSError:
                pass
            raise failure from None
    if result.stop_reason == "interrupted":
        raise RunInterrupted(result)
    return result


def sized_warmup_requests(system: System) -> int:
    """Warm-up requests for a run restored from a checkpoint, sized to the run: as many as the bulk load the restore
    stands for (Client.items PUTs, which warm a cold run's caches), and no more than Client.warmup_requests'
    default (400,000: measured enough for 1 Mi items on 4 cores with a 45 MiB LLC, models/client.py)."""
    from .client import Client

    return min(Client.warmup_requests.default, system.client.items)
