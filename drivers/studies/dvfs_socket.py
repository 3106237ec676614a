"""The DVFS study as the paper defines it (platforms.md §2; issue 28 item 5), beside the project's own policy: on a
skewed socket (Zipf 0.99 keys, EREW, 95% GET), every core at the normal 2.5 GHz (baseline); the paper's experiment,
the 20 coldest cores lowered to 1.5 GHz and the 6 hottest raised to 3.5 GHz (drivers/dvfs.py PaperPolicy); and the
project's policy (drivers/dvfs.py DvfsPolicy: relative-load thresholds, turbo backed off to fit the budget). Each
configuration's total processor power (the power model at each core's own clock and supply) is compared.

The load that ranks the cores is the client's per-core request count of the baseline run (`client.core{c}.requests`,
which does not depend on the clocks). Each configuration runs closed loop (the client's window of packets per
queue), its throughput measured by the steady-state rule (drivers/steady_state.py: batch means, the window grows
until the 95% interval is within 2%; saturation is not required, since a closed loop is not a capacity point).
"""

from __future__ import annotations

import pathlib
from typing import Any, Callable

import pandas as pd

from analysis import style

from ..sweep import Base, List, Sweep
from . import common, end_to_end

EVALUATOR = "drivers.studies.dvfs_socket:evaluate"
REQUESTS_PER_CORE = 500             # the first window's measured requests per core (it doubles until precise)
MAX_WINDOWS = 3                     # at most 4x the first window per configuration (host time)
LABELS = {"baseline": "every core at 2.5 GHz", "dvfs": "the project's policy", "paper": "the paper's experiment"}


def skewed_socket(cores: int, items: int, requests_per_core: int = REQUESTS_PER_CORE) -> Any:
    """The target socket serving Zipf 0.99 keys (EREW, 95% GET), closed loop."""
    system = common.target(cores, items=items, requests_per_core=requests_per_core, popularity="zipf")
    system.client.zipf_theta = 0.99
    system.client.warmup_requests = common.WARMUP_REQUESTS_PER_CORE * cores
    return system


def sweeps(full: bool | None = None, conditions: common.Conditions | None = None) -> list[Sweep]:
    c = common.conditions_for(full, conditions)
    items = c.items_or(1 << 20)
    return [Sweep(f"dvfs-{c.tag()}", Base("drivers.studies.dvfs_socket:skewed_socket", cores=c.cores, items=items),
                  List([{"client.zipf_theta": 0.99}]), evaluator=EVALUATOR,
                  options={} if c.reduced else {"seeds": end_to_end.SEEDS})]


def evaluate(make_system: Callable[[], Any], options: dict[str, Any],
             report: Callable[[str], None]) -> dict[str, Any]:
    """dvfs.study with the paper's experiment beside the policy; each configuration's run is a steady-state
    measurement (see the module doc)."""
    from drivers import dvfs
    from drivers import steady_state as ss

    def run(system, label: str) -> dict:
        def measure(seed: int):
            def at(requests: int):
                s = dvfs.copy.deepcopy(system)
                s.client.requests = requests
                s.client.measure_seed = seed
                return s
            return ss.measure(ss.simulated_window(at, None), system.client.requests, saturation=0.0,
                              max_windows=options.get("max_windows", MAX_WINDOWS),
                              report=lambda text: report(f"{label}, seed {seed}: {text}"))
        # Skewed keys: the client's randomness matters, so repeated seeds when options['seeds'] asks (the
        # per-core loads that rank the cores are the last seed's).
        found = ss.replicate(measure, int(options.get("seeds", 1)))
        return {**found.runs[-1].last.stats, **found.stats()}

    system = make_system()
    table, plan, runs = dvfs.study(system, run=run, report=report, paper=dvfs.PaperPolicy())
    stats: dict[str, float] = {}
    for label, row in table.iterrows():
        for column, value in row.items():
            stats[f"dvfs.{label}.{column}"] = float(value)
        for key in ("steady.throughput", "steady.half_width", "steady.window", "steady.converged", "steady.seeds",
                    "steady.p95_ns", "steady.p95_half_width_ns"):
            stats[f"dvfs.{label}.{key}"] = float(runs[label][key])
    return {"stats": stats, "plan": plan.assignment.table().to_dict(orient="list")}


evaluate.restores = True   # every run of the point restores the shared data set


def frame(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, row in table[table.status == "ok"].iterrows():
        r = {k[5:]: v for k, v in row.items() if isinstance(k, str) and k.startswith("stat.")}
        for label, text in LABELS.items():
            p = f"dvfs.{label}."
            rows.append({"configuration": text, "cores_low": r[p + "cores_low"], "cores_normal": r[p + "cores_normal"],
                         "cores_turbo": r[p + "cores_turbo"], "throughput_mrps": r[p + "steady.throughput"],
                         "throughput_ci_mrps": r[p + "steady.half_width"],
                         # The steady window's p95 and its interval (seeds' or batches'); older records: the run's.
                         "p95_us": r.get(p + "steady.p95_ns", r[p + "p95_us"] * 1e3) / 1e3,
                         "p95_ci_us": r.get(p + "steady.p95_half_width_ns", float("nan")) / 1e3,
                         "seeds": r.get(p + "steady.seeds", 1.0),
                         "die_power_w": r[p + "die_power_W"], "total_power_w": r[p + "total_power_W"],
                         "within_budget": bool(r[p + "within_budget"]), "window_requests": r[p + "steady.window"],
                         "items": row.get("cfg.client.items"), "cores": row.get("cfg.harts"),
                         "host_seconds": row["host_seconds"]})
    df = pd.DataFrame(rows)
    if len(df):
        base = df.total_power_w.iloc[0]
        df["power_vs_baseline"] = df.total_power_w / base
        df["throughput_vs_baseline"] = df.throughput_mrps / df.throughput_mrps.iloc[0]
    return df


def plot(df: pd.DataFrame, path: pathlib.Path, caption: str) -> None:
    plt = style.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    x = list(range(len(df)))
    axes[0].bar(x, df.total_power_w, color="tab:red")
    style.rate_axis(axes[0], "total processor power (W)")
    axes[1].bar(x, df.throughput_mrps, color="tab:blue")
    style.interval(axes[1], x, df.throughput_mrps, df.throughput_mrps + df.throughput_ci_mrps,
                   df.throughput_mrps - df.throughput_ci_mrps, label=style.STEADY_INTERVAL)
    style.rate_axis(axes[1], "throughput (M requests/s)")
    for ax in axes:
        ax.set_xticks(x, [c.replace("the ", "").replace(" at ", "\nat ") for c in df.configuration])
    style.legend_outside(axes[1])
    style.save(fig, path, caption)


def make(tables, outdir: pathlib.Path, full: bool | None = None,
         conditions: common.Conditions | None = None) -> list[pathlib.Path]:
    c = common.conditions_for(full, conditions)
    df = frame(next(iter(tables.values())))
    csv, png = outdir / "dvfs.csv", outdir / "dvfs.png"
    text = c.text(int(df["items"].iloc[0]) if len(df) else None)
    df["conditions"] = text
    df.to_csv(csv, index=False)
    paths = [csv]
    if len(df):
        plot(df, png, style.conditions(cores=c.cores, extra=text + "; Zipf 0.99, EREW, 95% GET, closed loop"))
        paths.append(png)
    report = common.write_report(
        outdir / "dvfs.md", "Per-core DVFS on a skewed socket: the paper's experiment and the project's policy",
        __doc__.split("\n\n")[0].replace("\n", " "),
        [f"conditions: {text}", f"scale: {common.scale_text(c.cores)}",
         "client.popularity = zipf (theta 0.99), EREW, 95% GET, closed loop (window 32 packets per queue)",
         "the paper's experiment: 20 coldest cores at 1.5 GHz, 6 hottest at 3.5 GHz, by the baseline's per-core "
         "request counts; the project's policy: drivers/dvfs.py DvfsPolicy (low below 0.6x the mean load, turbo "
         "above 1.25x, turbo backed off to fit Technology.tdp)",
         "power: total processor power = the power model's runtime power of the socket (cores at their own clock "
         "and V-f supply, caches, NoC, memory controllers)",
         "throughput: steady-state rule, 95% interval from 30 batch means; host seconds per point in the CSV"],
        common.markdown_table(df.drop(columns=["conditions"])) if len(df) else "(no points)",
        [png.name] if len(df) else [], [])
    return paths + [report]
