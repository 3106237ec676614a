"""Study 2, LLC capacity: throughput and LLC MPKI vs LLC capacity per core (256 KB, 512 KB, 768 KB, 1 MB, 2 MB),
STANDARD workload (tiny items, uniform, 95% GET), EREW, DDIO limited to 10% of the LLC (validation.md). The data
set must be far larger than the LLC: the reduced scale uses 2^20 items (about 40 MB of log and 16 MB of index
against at most 8 MB of LLC); the full scale 2^22 items. Throughput is each point's capacity (< 1% loss)."""

from __future__ import annotations

import pathlib

import pandas as pd

from analysis import style

from ..sweep import CAPACITY_EVALUATOR, Base, Grid, Sweep
from . import common

PER_CORE_KB = [256, 512, 768, 1024, 2048]
REDUCED_ITEMS = 1 << 20
FULL_ITEMS = 1 << 22
WARM_LAST_INSTS = 100_000_000   # cache warming over the last 100 M instructions of the bulk load (common.target)
# The data set is loaded once per sweep and checkpointed; every probe restores it and warms its caches over this
# many requests of its own measured mix per core (client.warmup_requests). Measured at 4 cores, 2^20 items, 768 KB
# of LLC per core (`sim-scripts/checkpoint_study.py study-warmup llc DIR 0 100000 200000 400000 800000`): LLC MPKI
# 5.86 without warm-up, 3.73 / 3.77 / 3.82 / 3.78 after 100k / 200k / 400k / 800k requests, throughput 11.7, 15.5,
# 15.5, 16.0, 15.5 M req/s: 100k is within 1.1% (MPKI) and 0.4% (throughput) of 800k. A run that warms over the
# load's last 100 M instructions instead gives 4.39 and 12.9: the LLC then holds the load's lines, not the measured
# mix's. Scaling the warm-up with the cores (and so with the LLC, 768 KB per core) at 60 cores is assumed.
WARMUP_REQUESTS_PER_CORE = 25_000


def _base(cores: int, items: int) -> Base:
    # One index bucket (15 entries) per 8 items of a partition, so the lossy index keeps (almost) every item.
    return Base("drivers.studies.common:target", cores=cores, items=items, buckets=max(1024, items // cores // 8),
                warm_last_insts=WARM_LAST_INSTS, warmup_requests=WARMUP_REQUESTS_PER_CORE * cores)


KEY_PER_CORE_KB = [512, 768, 1024]   # the paper's choice (768 KB per core) and its neighbours


def _sweep(name, cores, items, kbs, steady: bool = False) -> Sweep:
    options = {"resolution": common.CAPACITY_RESOLUTION, **({"steady": True} if steady else {})}
    return Sweep(name, _base(cores, items), Grid({"caches.llc.size": [kb * 1024 * cores for kb in kbs]}),
                 evaluator=CAPACITY_EVALUATOR, options=options,
                 share_checkpoint=True)   # the data set is loaded once; every probe of every point restores it


def sweeps(full: bool | None = None, conditions: common.Conditions | None = None) -> list[Sweep]:
    c = common.conditions_for(full, conditions)
    if c.items is None:          # the study's own data sets (before issue 28)
        return [_sweep(f"llc-{c.cores}c", c.cores, FULL_ITEMS if c.full else REDUCED_ITEMS, PER_CORE_KB)]
    kbs = PER_CORE_KB if c.all_points or c.reduced else KEY_PER_CORE_KB
    return [_sweep(f"llc-{c.tag()}", c.cores, c.items, kbs, steady=True)]


def compare_sweep() -> Sweep:
    return _sweep(f"llc-{common.FULL_CORES}c-compare", common.FULL_CORES, FULL_ITEMS, [256, 768, 2048])


def frame(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, row in table[table.status == "ok"].iterrows():
        f = common.figures_of(row)
        rows.append({"llc_per_core_kb": int(row["param.caches.llc.size"]) // 1024 // f["cores"],
                     "items": row["cfg.client.items"], **f})
    return pd.DataFrame(rows).sort_values("llc_per_core_kb").reset_index(drop=True)


# The three MPKI series the LLC study plots (issue 28 item 3): column, colour, marker, legend.
MPKI_SERIES = (("llc_demand_mpki", "tab:red", "o", "LLC MPKI: demand (loads, stores, fetches)"),
               ("llc_sw_prefetch_mpki", "tab:orange", "s", "LLC MPKI: software prefetches"),
               ("llc_dma_mpki", "tab:purple", "^", "LLC MPKI: DMA / DDIO allocations"))


def plot(df: pd.DataFrame, path: pathlib.Path, caption: str = "") -> None:
    plt = style.pyplot()

    fig, ax = plt.subplots(figsize=(6.5, 4))
    x = range(len(df))
    ax.bar(x, df.throughput_mrps, color="tab:blue", label="throughput")
    if "throughput_ci_mrps" in df and df.throughput_ci_mrps.notna().any():      # the steady-state window's 95% interval
        style.interval(ax, list(x), df.throughput_mrps, df.throughput_mrps + df.throughput_ci_mrps,
                       df.throughput_mrps - df.throughput_ci_mrps, label=style.STEADY_INTERVAL)
    elif "throughput_upper_mrps" in df:
        style.interval(ax, list(x), df.throughput_mrps, df.throughput_upper_mrps)
    style.rate_axis(ax, "throughput (M requests/s)")
    if style.CHOSEN_LLC_PER_CORE_KB in list(df.llc_per_core_kb):
        chosen = list(df.llc_per_core_kb).index(style.CHOSEN_LLC_PER_CORE_KB)
        style.design_point(ax, chosen, float(df.throughput_mrps.iloc[chosen]),
                           f"the paper's choice ({style.CHOSEN_LLC_PER_CORE_KB} KB per core)")
    ax.set_xticks(list(x), [f"{k} KB" if k < 1024 else f"{k // 1024} MB" for k in df.llc_per_core_kb])
    ax.set_xlabel("LLC capacity per core")
    ax2 = ax.twinx()
    if "llc_demand_mpki" in df and df.llc_demand_mpki.notna().any():
        # The split of issue 28 (models/stats_paths.py LLC_METRICS); the hardware prefetchers are off (zero).
        for column, color, marker, name in MPKI_SERIES:
            ax2.plot(list(x), df[column], color=color, marker=marker, label=name)
    else:                               # a frame from before the split
        ax2.plot(list(x), df.llc_mpki, color="tab:red", marker="o", label="LLC MPKI")
    style.rate_axis(ax2, "LLC MPKI")
    ax2.grid(False)
    ax2.spines["right"].set_visible(True)
    style.legend_outside(fig, bbox_to_anchor=(1.0, 0.95))
    style.save(fig, path, caption)


def headline(df: pd.DataFrame) -> dict[str, float]:
    t = df.set_index("llc_per_core_kb").throughput_mrps.to_dict()

    def ratio(a: int, b: int) -> float:          # NaN where a point was not run (the key points only)
        return t[b] / t[a] if a in t and b in t else float("nan")
    return {"256 KB -> 512 KB": ratio(256, 512), "512 KB -> 768 KB": ratio(512, 768),
            "768 KB -> 1 MB": ratio(768, 1024), "768 KB -> 2 MB": ratio(768, 2048)}


def make(tables, outdir: pathlib.Path, full: bool | None = None,
         conditions: common.Conditions | None = None) -> list[pathlib.Path]:
    c = common.conditions_for(full, conditions)
    cores = c.cores
    df = frame(next(iter(tables.values())) if len(tables) == 1 else tables[f"llc-{c.tag()}"])
    df["conditions"] = c.text(int(df["items"].iloc[0]) if len(df) else None)
    csv, png = outdir / "llc.csv", outdir / "llc.png"
    df.to_csv(csv, index=False)
    plot(df, png, style.conditions_of(df, full=c.full, cores=cores, extra=df["conditions"].iloc[0] if len(df) else ""))
    heads = headline(df)
    cols = ["llc_per_core_kb", "throughput_mrps", "throughput_ci_mrps", "llc_mpki", "llc_demand_mpki",
            "llc_sw_prefetch_mpki", "llc_dma_mpki", "l1d_mpki", "mem_read_gbs", "mem_write_gbs", "p95_steady_us",
            "p95_steady_ci_us", "ipc", "host_seconds", "cpu_seconds"]
    cols = [col for col in cols if col in df]
    report = common.write_report(
        outdir / "llc.md", "LLC capacity per core", __doc__.split("\n\n")[0].replace("\n", " "),
        [f"conditions: {df['conditions'].iloc[0] if len(df) else c.text()}", f"scale: {common.scale_text(cores)} (the LLC size is the swept value)",
         "caches.llc.size = " + ", ".join(f"{k} KB" for k in PER_CORE_KB) + " x cores",
         f"client.items = {int(df['items'].iloc[0])} (tiny: 40-byte log entries), index buckets per partition = "
         f"items / cores / 8; DDIO (nic.ddio_ways) 10% as in the config",
         "the data set is loaded once and checkpointed; each probe restores it and warms its caches over "
         f"{WARMUP_REQUESTS_PER_CORE * cores:,} requests of its measured mix (client.warmup_requests)",
         f"throughput: capacity search to {common.CAPACITY_RESOLUTION:.0%} resolution, then the steady-state "
         "window at the capacity (throughput_ci_mrps: its 95% interval); host_seconds / cpu_seconds: the point's wall and CPU time (capacity search and windows; the shared "
         "load is the checkpoint's own)"],
        "### Headline ratios (throughput)\n\n" +
        common.markdown_table(pd.DataFrame({"change": list(heads), "ratio": list(heads.values())})) +
        "\n\n### Table\n\n" + common.markdown_table(df[cols]), [png.name], [],
        metrics=["steady.throughput", "llc.demand_mpki", "llc.sw_prefetch_mpki", "llc.dma_mpki",
                 "llc.hw_prefetch_mpki", "steady.p95_ns"])
    return [csv, png, report]
