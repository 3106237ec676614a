"""One table of every study's headline ratios (issue 28 item 6): the value at reduced conditions, the value at the
full conditions where a run measured it, and, where none did, what running it would cost on this host.

Three conditions, each named in the table:
- reduced: what each study's committed CSV was measured at (the socket studies: a 4-core share of the 60-core socket
  with per-core resources in proportion and the study's own small data set; the end-to-end studies: the whole dual
  and quad servers with 64 Ki items and short probes);
- 60-core, small data set: three points per socket study measured on the whole 60-core socket with the study's own
  data set (the `--compare` runs; per-core throughput), where they exist;
- full: the whole platform with 16 Mi items (1/12 of the paper's 192 Mi, which do not fit this host), loaded once
  into a shared checkpoint, capacity search to 2%, then steady-state windows at the capacity (<1% loss): the CSV
  under results/figures/<study>/ whose `conditions` column says "full platform".

A ratio of two steady-state throughputs carries a 95% half-width from the two windows' half-widths, combined as
independent relative errors (sqrt(ra^2 + rb^2), assumed: the two points are separate runs).

A study with no full-condition point gets "not measured at full conditions: needs about N CPU-min". N is an
estimate: its full-condition points x (the point's cores / 60) x the measured CPU time of a full-condition LLC
point (the mean over those measured), plus one load of the shared data set per sweep (the measured load's CPU
time). Scaling a point's cost with its simulated cores is assumed (the probes' requests, and so the simulated
instructions, are per core).

Every full-condition point measured so far is listed in the last section with its interval, probes and host time.
`make figures` (and `sim-scripts/figures.py`) rewrites this table after every run at the full conditions, so a point
that lands appears without further steps; `make figures FULL=1 ITEMS=16777216` runs every point of every design
space at those conditions (the points not run here).

    python -m drivers.studies.headline_table [OUT.md] [--estimated-point-cpu-min N]   # results/figures/headline.md
"""

from __future__ import annotations

import json
import math
import pathlib
import sys
from dataclasses import dataclass

import pandas as pd

from . import common, headlines, llc

ROOT = pathlib.Path(__file__).resolve().parents[2]
FULL_ITEMS = 16 << 20        # the data set of the full-condition runs on this host (common.check_fits: 192 Mi do not fit)
FULL_MARK = "full platform"  # how a CSV's `conditions` column names the full platform (common.Conditions.text)

SOCKET_HEADLINES = headlines.HEADLINES   # each socket study's headline ratios from its CSV
DEFINITIONS = {
    "core_weight": "capacity (< 1% loss) of the second core over the first, tiny items",
    "llc": "capacity (< 1% loss) with the second LLC size per core over the first (the server's default driver: "
           "MICA's DPDK buffer footprint); the driver ratio: capacity with that footprint over the compact driver's",
    "batching": "capacity (< 1% loss) with N requests per packet over 1",
    "prefetch": "server's software prefetching off over on, the largest data set",
    "end_to_end": "quad server (240 cores), 95% GET: capacity of one mode over the other",
    "scaling": "4-socket capacity over 4 x the 1-socket capacity (Uniform, 95% GET, EREW)",
    "partition_load": "the hottest core's requests over the mean core's, Zipf 0.99, EREW, 240 cores",
    "dvfs": "the paper's experiment (20 coldest cores at 1.5 GHz, 6 hottest at 3.5 GHz): processor power over "
            "the project's policy's",
}
# The compare runs' columns, renamed to the study frames' (headline functions read these).
COMPARE_COLUMNS = {"client.dataset": "dataset", "core.issue_width": "issue_width", "core.rob_entries": "rob",
                   "client.requests_per_packet": "requests_per_packet",
                   "throughput per core (M req/s) full": "throughput_mrps"}


@dataclass
class Row:
    study: str
    ratio: str
    reduced: float
    compare_60c: float = math.nan
    full: float = math.nan
    full_half_width: float = math.nan
    status: str = ""


def ratio_interval(a: float, a_half: float, b: float, b_half: float) -> tuple[float, float]:
    """b / a and its 95% half-width from the two throughputs' half-widths (module doc: independent relative
    errors); NaN half-width when either is unknown."""
    r = b / a if a else math.nan
    if not (a_half == a_half and b_half == b_half) or not a or not b:
        return r, math.nan
    return r, abs(r) * math.hypot(a_half / a, b_half / b)


def _csv(path: pathlib.Path) -> pd.DataFrame | None:
    return pd.read_csv(path) if path.is_file() else None


def is_full(df: pd.DataFrame | None) -> bool:
    return df is not None and len(df) > 0 and "conditions" in df and str(df["conditions"].iloc[0]).startswith(FULL_MARK)



def throughput_ratio_intervals(headline, df: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Every headline ratio of a full-condition CSV with its 95% half-width (module doc: independent relative
    errors of the steady windows' throughputs). Which points a ratio divides is found by moving each point's
    throughput alone by 1% and seeing the ratio move as its numerator (+1%) or denominator (-1%). A ratio that no
    throughput moves (a time per batch, say) gets a NaN half-width, as does one with a point of unknown interval."""
    base = headline(df)
    if "throughput_ci_mrps" not in df:
        return {k: (v, math.nan) for k, v in base.items()}
    squares = dict.fromkeys(base, 0.0)
    moved = dict.fromkeys(base, False)
    for i in range(len(df)):
        nudged = df.copy()
        nudged.loc[nudged.index[i], "throughput_mrps"] *= 1.01
        rel = df.throughput_ci_mrps.iloc[i] / df.throughput_mrps.iloc[i]
        for name, value in headline(nudged).items():
            v0 = base[name]
            if not (v0 == v0 and value == value) or abs(value / v0 - 1) < 1e-9:
                continue
            exponent = math.log(value / v0) / math.log(1.01)     # +1 numerator, -1 denominator
            moved[name] = True
            squares[name] += (exponent * rel) ** 2              # NaN when the point's interval is unknown
    return {k: (v, abs(v) * math.sqrt(squares[k]) if moved[k] else math.nan) for k, v in base.items()}


# Each study's full-condition CSVs (file stem -> label) and the columns that name a point in them.
FULL_CSVS = {"core_weight": "core_weight", "llc": "llc", "llc_compact_driver": "llc, compact driver",
             "batching": "batching", "prefetch": "prefetch"}
POINT_COLUMNS = {"core_weight": ["issue_width", "rob"], "llc": ["llc_per_core_kb"],
                 "llc_compact_driver": ["llc_per_core_kb"], "batching": ["requests_per_packet"],
                 "prefetch": ["prefetch"]}
POINT_UNITS = {"llc_per_core_kb": " KB per core", "requests_per_packet": " per packet"}


def full_points(figures: pathlib.Path) -> pd.DataFrame:
    """Every full-condition point measured so far: its study and point, steady-state throughput and p95 with
    their 95% half-widths, the capacity search's probes, the last window's requests, and its CPU and wall time."""
    rows = []
    for stem, label in FULL_CSVS.items():
        study = stem.split("_compact")[0]
        df = _csv(figures / study / f"{stem}.csv")
        if not is_full(df):
            continue
        for _, r in df.iterrows():
            point = ", ".join(f"{c} {_plain(r[c])}" if c not in POINT_UNITS else f"{_plain(r[c])}{POINT_UNITS[c]}"
                              for c in POINT_COLUMNS[stem] if c in r)
            rows.append({"study": label, "point": point,
                         "throughput (M req/s)": _fmt(r.get("throughput_mrps", math.nan),
                                                      r.get("throughput_ci_mrps", math.nan)),
                         "p95 (us)": _fmt(r.get("p95_steady_us", math.nan), r.get("p95_steady_ci_us", math.nan)),
                         "probes": r.get("probes", math.nan), "window requests": r.get("window_requests", math.nan),
                         "CPU min": r.get("cpu_seconds", math.nan) / 60, "wall min": r.get("host_seconds", math.nan) / 60})
    return pd.DataFrame(rows)


def _plain(v) -> str:
    return f"{int(v)}" if isinstance(v, float) and v.is_integer() else str(v)


def measured_costs(figures: pathlib.Path, sweeps_root: pathlib.Path) -> tuple[float, float]:
    """(mean CPU s of a full-condition LLC point, CPU s of the shared load) as measured; NaN where none is."""
    df = _csv(figures / "llc" / "llc.csv")
    point = float(df.cpu_seconds.mean()) if is_full(df) and "cpu_seconds" in df and df.cpu_seconds.notna().any() \
        else math.nan
    loads = [json.loads(p.read_text()) for p in (sweeps_root / "checkpoints").glob("*.json")]
    loads = [r for r in loads if r.get("status") == "ok" and r.get("config", {}).get("harts") == common.FULL_CORES
             and r.get("cpu_seconds")]
    return point, (max(r["cpu_seconds"] for r in loads) if loads else math.nan)


def cost_text(study: str, point_cpu: float, load_cpu: float, basis: str = "measured") -> str:
    """'not measured at full conditions: needs about N CPU-min' for a study, from its full-condition sweeps."""
    from . import get

    if point_cpu != point_cpu:
        return "not measured at full conditions; cost unknown (no full-condition point measured yet)"
    sweeps = get(study).sweeps(conditions=common.Conditions(items=FULL_ITEMS))
    core_points = sum(p.system().harts / common.FULL_CORES for sw in sweeps for p in sw.resolve())
    npoints = sum(len(sw.space.points()) for sw in sweeps)
    cpu = core_points * point_cpu + (len(sweeps) * load_cpu if load_cpu == load_cpu else 0.0)
    return (f"not measured at full conditions: needs about {cpu / 60:,.0f} CPU-min ({npoints} key point(s), "
            f"{core_points:g} 60-core point equivalents; {point_cpu / 60:.0f} CPU-min per point, {basis})")


def _missing_text(study: str, ratio: str, full: pd.DataFrame, point_cpu: float) -> str:
    """A ratio one of whose points a full-condition run has not measured: which, and its cost (60-core points)."""
    if study != "llc" or ratio not in llc.HEADLINE_RATIOS:
        return "point(s) not run at full conditions"
    missing = [kb for kb in llc.HEADLINE_RATIOS[ratio] if kb not in set(full.llc_per_core_kb)]
    cost = f": needs about {len(missing) * point_cpu / 60:,.0f} CPU-min" if point_cpu == point_cpu else ""
    return f"not run at full conditions: {', '.join(f'{kb} KB' for kb in missing)} per core{cost}"


def rows(figures: pathlib.Path, reduced_dir: pathlib.Path, sweeps_root: pathlib.Path,
         with_costs: bool = True, estimated_point_cpu: float = math.nan) -> list[Row]:
    """The table's rows. Without a measured full-condition point, `estimated_point_cpu` (CPU s per 60-core point,
    an estimate from probe costs, said so in every cost) stands in for the measured one."""
    point_cpu, load_cpu = measured_costs(figures, sweeps_root) if with_costs else (math.nan, math.nan)
    basis = "measured"
    if point_cpu != point_cpu and estimated_point_cpu == estimated_point_cpu:
        point_cpu, basis = estimated_point_cpu, "estimated from the measured probes (conditions.md)"
    out: list[Row] = []
    for study, headline in SOCKET_HEADLINES.items():
        reduced, full = _csv(reduced_dir / study / f"{study}.csv"), _csv(figures / study / f"{study}.csv")
        if reduced is None:
            continue
        cmp = _csv(reduced_dir / study / f"{study}_reduced_vs_full.csv")
        cmp_heads = headline(cmp.rename(columns=COMPARE_COLUMNS)) if cmp is not None else {}
        full_heads = throughput_ratio_intervals(headline, full) if is_full(full) else {}
        some_full = is_full(full)
        status = "" if some_full else cost_text(study, point_cpu, load_cpu, basis) if with_costs else \
            "not measured"
        for name, value in headline(reduced).items():
            f, fh = full_heads.get(name, (math.nan, math.nan))
            out.append(Row(study, name, value, cmp_heads.get(name, math.nan), f, fh,
                           status or ("measured" if f == f else _missing_text(study, name, full, point_cpu))))
    out += _driver_rows(figures, reduced_dir, point_cpu)
    out += _end_to_end_rows(figures, point_cpu, load_cpu, with_costs, basis)
    return out


DRIVER_RATIO_KB = 768     # the paper's LLC per core, where the two drivers' capacities are compared


def _driver_rows(figures: pathlib.Path, reduced_dir: pathlib.Path, point_cpu: float) -> list[Row]:
    """The LLC study's driver ratio: capacity with MICA's DPDK buffer footprint (the server's default, llc.csv)
    over the compact driver's (llc_compact_driver.csv) at DRIVER_RATIO_KB per core, where a run measured both."""
    def at(folder: pathlib.Path, stem: str) -> tuple[float, float]:
        df = _csv(folder / "llc" / f"{stem}.csv")
        if df is None or "llc_per_core_kb" not in df:
            return math.nan, math.nan
        sel = df[df.llc_per_core_kb == DRIVER_RATIO_KB]
        ci = sel.throughput_ci_mrps.iloc[0] if len(sel) and "throughput_ci_mrps" in sel else math.nan
        return (float(sel.throughput_mrps.iloc[0]), float(ci)) if len(sel) else (math.nan, math.nan)

    reduced = at(reduced_dir, "llc")[0] / at(reduced_dir, "llc_compact_driver")[0]
    full_ok = is_full(_csv(figures / "llc" / "llc.csv")) and is_full(_csv(figures / "llc" / "llc_compact_driver.csv"))
    full, half = ratio_interval(*at(figures, "llc_compact_driver"), *at(figures, "llc")) if full_ok else \
        (math.nan, math.nan)
    if reduced != reduced and full != full:
        return []
    cost = f": needs about {point_cpu / 60:,.0f} CPU-min a point" if point_cpu == point_cpu else ""
    return [Row("llc", f"{DRIVER_RATIO_KB} KB: compact driver -> MICA's DPDK buffer footprint", reduced,
                full=full, full_half_width=half,
                status="measured" if full == full else f"not run at full conditions{cost}")]


def _end_to_end_rows(figures: pathlib.Path, point_cpu: float, load_cpu: float, with_costs: bool,
                     basis: str) -> list[Row]:
    out = []
    cost = (lambda s: cost_text(s, point_cpu, load_cpu, basis)) if with_costs else (lambda s: "not measured")
    e2e = _csv(figures / "end_to_end" / "end_to_end.csv")
    if e2e is not None:
        q = e2e[(e2e.sockets == 4) & (e2e.get_ratio == 0.95)].set_index(["workload", "mode"]).throughput_mrps
        for workload, (a, b) in [("Skewed (Zipf 0.99)", ("EREW", "CREW")), ("Skewed (Zipf 0.99)", ("EREW", "EREW-T")),
                                 ("Uniform", ("EREW", "CREW"))]:
            if (workload, a) in q.index and (workload, b) in q.index:
                out.append(Row("end_to_end", f"{workload}: {a} -> {b}", q[(workload, b)] / q[(workload, a)],
                               status=cost("end_to_end")))
    sc = _csv(figures / "scaling" / "scaling.csv")
    if sc is not None and {1, 4} <= set(sc.sockets):
        t = sc.set_index("sockets").throughput_mrps
        out.append(Row("scaling", "4 sockets / (4 x 1 socket)", t[4] / (4 * t[1]), status=cost("scaling")))
    pl = _csv(figures / "partition_load" / "partition_load_summary.csv")
    if pl is not None:
        r = pl[(pl.cores == 240) & (pl["mode"] == "erew")]
        if len(r):
            out.append(Row("partition_load", "hottest core / mean core (simulated, 1 Mi items)", float(r.sim_max.iloc[0]),
                           status=f"192 Mi items not simulated; expected from the Zipf weights: "
                                  f"{float(r.expected_max_192Mi_items.iloc[0]):.3g}"))
    out.append(Row("dvfs", "paper's experiment / project's policy, processor power", math.nan,
                   status="no committed result at any conditions; " + cost("dvfs")))
    return out


def _fmt(v: float, half: float = math.nan) -> str:
    if v != v:
        return "n/a"
    return f"{v:.3f} +- {half:.3f}" if half == half else f"{v:.3f}"


# The commit that made the KVS server's guest driver free sent TX buffers as DPDK does (tx_free, issue 23: a TX ring
# holds about 480 sent buffers instead of about 43). A CSV last measured before it describes the old driver.
SERVER_TX_DRIVER_COMMIT = "9781b21"


def _last_commit(path: pathlib.Path) -> str:
    import subprocess

    out = subprocess.run(["git", "log", "-1", "--follow", "--diff-filter=AM", "--format=%h %ad", "--date=short", "--", str(path)], cwd=path.parent,
                         capture_output=True, text=True, check=False).stdout.strip()
    if not out:
        return "not committed yet (this run)"
    return out + _driver_note(out.split()[0], path.parent)


def _driver_note(commit: str, cwd: pathlib.Path) -> str:
    """Whether `commit` measured with the old TX driver (before SERVER_TX_DRIVER_COMMIT); said when git cannot
    tell (a shallow clone)."""
    import subprocess

    rc = subprocess.run(["git", "merge-base", "--is-ancestor", SERVER_TX_DRIVER_COMMIT, commit], cwd=cwd,
                        capture_output=True, check=False).returncode
    return {0: "", 1: f", before the server's DPDK TX driver ({SERVER_TX_DRIVER_COMMIT}): the old driver's figures"}.get(
        rc, f", before or after the server's DPDK TX driver ({SERVER_TX_DRIVER_COMMIT}): unknown (git {rc})")


def markdown(table: list[Row], figures: pathlib.Path, sources: list[pathlib.Path] = ()) -> str:
    full_conditions = {s: str(df["conditions"].iloc[0]) for s in SOCKET_HEADLINES
                       if is_full(df := _csv(figures / s / f"{s}.csv"))}
    lines = ["# Headline ratios: reduced conditions beside the full ones", "",
             " ".join(__doc__.split("\n\n")[0].split()), "", "## Definitions", ""]
    lines += [f"- {s}: {d}" for s, d in DEFINITIONS.items()]
    lines += ["", __doc__.split("\n\n")[1].replace("\n  ", " "), "",
              " ".join(__doc__.split("\n\n")[2].split()), "", " ".join(__doc__.split("\n\n")[3].split()), ""]
    lines += [f"- {s} full-condition CSV: {c}" for s, c in full_conditions.items()]
    lines += ["", "Where each CSV last changed (the commit that measured it; an older one than this branch's means older code):", ""]
    lines += [f"- {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {_last_commit(path)}"
              for path in sources]
    lines += ["", "## Ratios", "", "| study | ratio | reduced | 60-core, small data set | full (95% half-width) | "
              "status |", "|---|---|---|---|---|---|"]
    lines += [f"| {r.study} | {r.ratio} | {_fmt(r.reduced)} | {_fmt(r.compare_60c)} | {_fmt(r.full, r.full_half_width)} "
              f"| {r.status} |" for r in table]
    points = full_points(figures)
    lines += ["", "## Full-condition points measured", "",
              "Throughput and p95: the last steady-state window at the capacity (< 1% loss), +- the half-width of its "
              "95% interval (batch means); probes: the capacity search's runs before the windows; CPU and wall min: "
              "the point's worker (search and windows; the shared load is counted once per data set, not here).", ""]
    lines += [common.markdown_table(points) if len(points) else "(none yet)"]
    lines += ["", " ".join(__doc__.split("\n\n")[4].split())]
    return "\n".join(lines) + "\n"


def write(out: pathlib.Path, figures: pathlib.Path | None = None, reduced_dir: pathlib.Path | None = None,
          sweeps_root: pathlib.Path | None = None, estimated_point_cpu: float = math.nan) -> pathlib.Path:
    figures = figures or ROOT / "results" / "figures"
    reduced_dir = reduced_dir or ROOT / "results" / "figures-reduced"
    table = rows(figures, reduced_dir, sweeps_root or ROOT / "results" / "sweeps",
                 estimated_point_cpu=estimated_point_cpu)
    sources = [p for s in SOCKET_HEADLINES for d in (reduced_dir, figures) for p in [d / s / f"{s}.csv"] if p.is_file()]
    sources += [p for p in [figures / "llc" / "llc_compact_driver.csv"] if p.is_file()]
    sources += [p for s, f in (("end_to_end", "end_to_end"), ("scaling", "scaling"),
                               ("partition_load", "partition_load_summary")) for p in [figures / s / f"{f}.csv"]
                if p.is_file()]
    out.write_text(markdown(table, figures, sources))
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", default=str(ROOT / "results" / "figures" / "headline.md"))
    parser.add_argument("--estimated-point-cpu-min", type=float, default=math.nan,
                        help="CPU-min per 60-core full-condition point, used (and said) while none is measured")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    print(write(pathlib.Path(args.out), estimated_point_cpu=args.estimated_point_cpu_min * 60))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
