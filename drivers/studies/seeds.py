"""What the studies of the seed papers' other systems share (seed_mica, seed_tilepro64, seed_kvcache; issue 30):
the evaluator that measures a point's capacity and then its latency at fractions of it, the figures read from a
point, and the report.

A point's throughput is its capacity (drivers.capacity: the highest open-loop offered load sustained with < 1% loss,
to the study's resolution), read as the rate it sustained (offered less loss, `end_to_end.sustained_mrps`; the
answered rate over a short window is biased low by the round trip in its span). Its latency curve is a run at each
of `options['curve']` fractions of that offered load (p50, p99 of the round trip, and the rate answered there).
Every run checks every response (the ghost client fails a run on a wrong value).

These studies run at reduced scale (smaller data sets, short measured windows, coarse resolution; TILEPro64 and
KV-Cache also with fewer cores where the module says so): each report says what was reduced. No platform is
calibrated to its paper's results.
"""

from __future__ import annotations

import pathlib
import time
from typing import Any, Callable

import pandas as pd

from models import stats_paths as paths
from models.system import System

from ..sweep import capacity_key_options, evaluate_capacity, evaluate_run
from . import common, end_to_end

EVALUATOR = "drivers.studies.seeds:evaluate"
CURVE = (0.25, 0.5, 0.75, 0.9)      # fractions of the capacity at which the latency curve is measured


def evaluate(make_system: Callable[[], System], options: dict[str, Any],
             report: Callable[[str], None], journal: Any = None) -> dict[str, Any]:
    """The capacity search on the point (stats of its best probe, capacity.*, power.* when options['power']; with
    options['steady'] the windows and seeds of evaluate_capacity), then one run at each fraction in
    options['curve'] of the capacity's offered load (curve{i}.* stats). `journal`: the point's (drivers/sweep/
    journal.py): the probes, the windows and each curve run are journaled as they finish and, on a re-run of a
    stopped point, replayed (capacity.replayed_units counts them all)."""
    started = time.perf_counter()
    out = evaluate_capacity(make_system, options, report, journal=journal)
    stats = out["stats"]
    capacity = stats.get("capacity.mpps_per_port", 0.0)
    for i, fraction in enumerate(options.get("curve", ()) if capacity > 0 else ()):
        def at(fraction: float = fraction) -> System:
            system = make_system()
            system.client.offered_mpps = capacity * fraction
            return system

        def curve_run(at: Callable[[], System] = at) -> dict[str, Any]:
            return evaluate_run(at, {}, report)["stats"]

        # A curve run depends only on the point's configuration and its load (a fresh run, nothing shared), so a
        # journaled one replays exactly.
        run = curve_run() if journal is None else \
            journal.stats(f"curve run at {capacity * fraction!r} M frames/s a port", curve_run)
        stats.update({f"curve{i}.fraction": fraction, f"curve{i}.offered_mpps_per_port": capacity * fraction,
                      f"curve{i}.answered_mrps": run["client.throughput_mrps"], f"curve{i}.loss": run["client.loss"],
                      f"curve{i}.p50_us": run["client.latency.p50"] / 1e3,
                      f"curve{i}.p99_us": run["client.latency.p99"] / 1e3})
    if journal is not None:       # the curve runs replayed too
        stats["capacity.replayed_units"] = float(journal.replayed)
    stats["seeds.host_seconds"] = time.perf_counter() - started
    return out


# Every run (probe and curve point) is make_system()'s configuration: a sweep's shared checkpoint can be restored.
evaluate.restores = True
evaluate.journals = True       # run_point gives it the point's journal
evaluate.key_options = capacity_key_options   # the key names the capacity search run


def stats_of(row: Any) -> dict[str, float]:
    return {k[5:]: v for k, v in row.items() if isinstance(k, str) and k.startswith("stat.")}


def point_figures(row: Any) -> dict[str, float]:
    """Throughput (sustained and answered, M req/s), latency at capacity and the capacity search's answer, of one
    table row."""
    st = stats_of(row)
    return {"throughput_mrps": end_to_end.sustained_mrps(st),
            # What the client had answered over the probe: below the sustained rate when the probe's burst was
            # queued rather than served (a short window: the queues hold it without loss).
            "answered_mrps": st.get("client.throughput_mrps", float("nan")),
            "capacity_mpps_per_port": st.get("capacity.mpps_per_port", float("nan")),
            "p50_us": st.get("client.latency.p50", float("nan")) / 1e3,
            "p99_us": st.get("client.latency.p99", float("nan")) / 1e3,
            "loss": st.get("client.loss", float("nan")),
            "insts_per_request": st.get("client.insts_per_request", float("nan")),
            # The busiest port's transmit rate on the wire (responses): how near the network is to its limit.
            "busiest_port_tx_gbps": max(common.values_of(st, paths.NIC_PORT, "tx_wire_gbps"), default=float("nan")),
            "host_s": st.get("seeds.host_seconds", float("nan"))}


def curve_rows(row: Any, label: str) -> list[dict[str, Any]]:
    """The latency curve of one point: (offered fraction, answered M req/s, p50, p99), ending at capacity."""
    st = stats_of(row)
    rows = []
    i = 0
    while f"curve{i}.fraction" in st:
        rows.append({"point": label, "fraction": st[f"curve{i}.fraction"],
                     "answered_mrps": st[f"curve{i}.answered_mrps"], "p50_us": st[f"curve{i}.p50_us"],
                     "p99_us": st[f"curve{i}.p99_us"], "loss": st[f"curve{i}.loss"]})
        i += 1
    fig = point_figures(row)
    rows.append({"point": label, "fraction": 1.0, "answered_mrps": st.get("client.throughput_mrps", float("nan")),
                 "p50_us": fig["p50_us"], "p99_us": fig["p99_us"], "loss": fig["loss"]})
    return rows


def save_tables(outdir: pathlib.Path, name: str, frames: dict[str, pd.DataFrame]) -> list[pathlib.Path]:
    """Each table as `<name>_<stem>.csv` in `outdir`; their paths."""
    paths = []
    for stem, frame in frames.items():
        frame.to_csv(outdir / f"{name}_{stem}.csv", index=False)
        paths.append(outdir / f"{name}_{stem}.csv")
    return paths


def plot_curves(curves: pd.DataFrame, path: pathlib.Path, title: str) -> None:
    """Latency (p50 solid, p99 dashed) against the answered rate, one line per point."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for label, group in curves.groupby("point", sort=False):
        line, = ax.plot(group.answered_mrps, group.p50_us, marker="o", label=f"{label} p50")
        ax.plot(group.answered_mrps, group.p99_us, marker="x", linestyle="--", color=line.get_color(),
                label=f"{label} p99")
    ax.set_xlabel("answered (M requests/s)")
    ax.set_ylabel("round trip (us)")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_bars(df: pd.DataFrame, x: str, y: str, path: pathlib.Path, ylabel: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.bar([str(v) for v in df[x]], df[y])
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_throughput_and_latency(df: pd.DataFrame, x: str, y: str, curves: pd.DataFrame, outdir: pathlib.Path,
                                name: str, ylabel: str, title: str) -> list[str]:
    """The throughput bars (`y` per `x`) and the latency curves of a study; the PNGs' names (none without points)."""
    if not len(df):
        return []
    plot_bars(df, x, y, outdir / f"{name}_throughput.png", ylabel, title)
    plot_curves(curves, outdir / f"{name}_latency.png", f"{title}: latency against load")
    return [f"{name}_throughput.png", f"{name}_latency.png"]


def write(outdir: pathlib.Path, name: str, title: str, intro: str, scale: list[str], tables: list[tuple[str, Any]],
          pngs: list[str], notes: list[str], command: str) -> pathlib.Path:
    """The study's Markdown report: what ran (and at what reduced scale), the tables, plots and notes."""
    lines = [f"# {title}", "", intro, "", "## How it ran", "", f"- command: `{command}`",
             "- host time: the sum of the points' host seconds is in the tables (host_s), the wall time of the run "
             f"in results/figures/summary-{name}.md"]
    lines += [f"- {s}" for s in scale]
    for heading, df in tables:
        lines += ["", f"## {heading}", "", common.markdown_table(df) if len(df) else "(no points)"]
    lines += [""] + [f"![{p}]({p})" for p in pngs]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    path = outdir / f"{name}.md"
    path.write_text("\n".join(lines) + "\n")
    return path
