"""Study 6, prefetch: the effect of turning the server's software prefetch pipeline off (`prefetch=0`): per-level
MPKI, memory bandwidth, time per RX batch, throughput (validation.md). Run on the LLC study's large data set (the
prefetches matter when buckets and items miss the caches) and on the small default one (2^16 items, mostly cached),
at the paper's 768 KB of LLC per core. Throughput is each point's capacity (< 1% loss)."""

from __future__ import annotations

import pathlib

import pandas as pd

from analysis import style

from ..sweep import CAPACITY_EVALUATOR, Grid, List, Sweep
from . import common, llc

DATA_SETS = {"large data set": llc.REDUCED_ITEMS, "small data set": 1 << 16}


def _sweep(name: str, cores: int, items: int, space, steady: bool = False) -> Sweep:
    return Sweep(name, llc._base(cores, items), space, evaluator=CAPACITY_EVALUATOR,
                 options={"resolution": common.CAPACITY_RESOLUTION, **({"steady": True} if steady else {})},
                 share_checkpoint=True)   # once per server argument list (prefetch=0/1) and data set


def sweeps(full: bool | None = None, conditions: common.Conditions | None = None) -> list[Sweep]:
    c = common.conditions_for(full, conditions)
    if c.items is None:          # the study's own data sets (before issue 28)
        items = {"large data set": llc.FULL_ITEMS if c.full else llc.REDUCED_ITEMS, "small data set": 1 << 16}
        return [_sweep(f"prefetch-{c.cores}c-{n}", c.cores, n, Grid({"workload.argv[prefetch]": [1, 0]}))
                for n in items.values()]
    # The conditions' data set, prefetch on (the paper's design) and off: the two points carry the conclusion.
    return [_sweep(f"prefetch-{c.tag()}", c.cores, c.items, Grid({"workload.argv[prefetch]": [1, 0]}), steady=True)]


def compare_sweep() -> Sweep:
    return _sweep(f"prefetch-{common.FULL_CORES}c-compare", common.FULL_CORES, llc.FULL_ITEMS,
                  List([{"workload.argv[prefetch]": 1}, {"workload.argv[prefetch]": 0},
                        {"workload.argv[prefetch]": 0, "client.dataset": "large"}]))


def frame(tables) -> pd.DataFrame:
    rows = []
    for name, table in tables.items():
        if not name.startswith("prefetch-") or "compare" in name:
            continue
        for _, row in table[table.status == "ok"].iterrows():
            f = common.figures_of(row)
            rows.append({"items": row["cfg.client.items"],
                         "prefetch": "on" if int(row["param.workload.argv[prefetch]"]) else "off", **f})
    return pd.DataFrame(rows).sort_values(["items", "prefetch"], ascending=[False, False]).reset_index(drop=True)


METRICS = [("throughput_mrps", "throughput (M req/s)"), ("l1d_mpki", "L1D MPKI"), ("llc_mpki", "LLC MPKI"),
           ("mem_read_gbs", "memory read (GB/s)"), ("ns_per_rx_batch", "core time per RX batch (ns)")]


def _row(df: pd.DataFrame, items: int, state: str) -> pd.Series | None:
    """The point with `items` and prefetch `state` ('on'/'off'), None when it was not run."""
    sel = df[(df["items"] == items) & (df.prefetch == state)]
    return sel.iloc[0] if len(sel) else None


def plot(df: pd.DataFrame, path: pathlib.Path, caption: str = "") -> None:
    plt = style.pyplot()

    fig, axes = plt.subplots(1, len(METRICS), figsize=(18, 3.8))
    groups = sorted(df["items"].unique(), reverse=True)
    for ax, (col, label) in zip(axes, METRICS):
        for j, state in enumerate(("on", "off")):
            # A state not run at a data set (one point of the pair stored so far) has no bar.
            sel = [(i, r) for i, g in enumerate(groups) for r in [_row(df, g, state)] if r is not None]
            if not sel:
                continue
            xs = [i + 0.38 * j for i, _ in sel]
            vals = [float(r[col]) for _, r in sel]
            ax.bar(xs, vals, width=0.38, label=f"prefetch {state}" + (" (the paper's design)" if state == "on"
                                                                      else ""))
            if col == "throughput_mrps" and any(r.throughput_ci_mrps == r.throughput_ci_mrps for _, r in sel):
                style.interval(ax, xs, vals, [v + r.throughput_ci_mrps for v, (_, r) in zip(vals, sel)],
                               [v - r.throughput_ci_mrps for v, (_, r) in zip(vals, sel)], label=style.STEADY_INTERVAL)
            elif col == "throughput_mrps" and "throughput_upper_mrps" in df:
                style.interval(ax, xs, vals, [float(r.throughput_upper_mrps) for _, r in sel])
        ax.set_xticks([i + 0.19 for i in range(len(groups))], [f"{g:,} items" for g in groups], fontsize=8)
        ax.set_title(label, fontsize=10)
        style.rate_axis(ax)
    style.legend_outside(axes[-1])
    style.save(fig, path, caption)


def headline(df: pd.DataFrame, by_items: bool = True) -> dict[str, float]:
    """Prefetch off over on, per data set: throughput, time per RX batch, time per received packet. Without
    `by_items` the largest data set's only, named without its size (to set runs of different sizes side by side)."""
    heads = {}
    sizes = sorted(df["items"].unique(), reverse=True)
    for items in sizes if by_items else sizes[:1]:
        on, off = _row(df, items, "on"), _row(df, items, "off")
        if on is None or off is None:       # one of the pair not run yet: no ratio
            continue
        name = f"{items:,} items: " if by_items else "large data set: "
        heads[name + "throughput off / on"] = off.throughput_mrps / on.throughput_mrps
        heads[name + "time per RX batch off / on"] = off.ns_per_rx_batch / on.ns_per_rx_batch
        heads[name + "time per received packet off / on"] = off.ns_per_rx_packet / on.ns_per_rx_packet
    return heads


def make(tables, outdir: pathlib.Path, full: bool | None = None,
         conditions: common.Conditions | None = None) -> list[pathlib.Path]:
    c = common.conditions_for(full, conditions)
    cores = c.cores
    df = frame({k: v for k, v in tables.items() if k.startswith(f"prefetch-{cores}c")})
    df["conditions"] = c.text(int(df["items"].iloc[0]) if len(df) and c.items is not None else None)
    csv, png = outdir / "prefetch.csv", outdir / "prefetch.png"
    df.to_csv(csv, index=False)
    plot(df, png, style.conditions_of(df, full=c.full, cores=cores, extra=df["conditions"].iloc[0] if len(df) else ""))
    heads = headline(df)
    cols = ["items", "prefetch", "throughput_mrps", "l1d_mpki", "llc_mpki", "mem_read_gbs", "mem_write_gbs",
            "ns_per_rx_batch", "rx_batch", "ns_per_rx_packet", "ipc", "p95_us"]
    report = common.write_report(
        outdir / "prefetch.md", "Software prefetch on and off", __doc__.split("\n\n")[0].replace("\n", " "),
        [f"conditions: {df['conditions'].iloc[0] if len(df) else c.text()}", f"scale: {common.scale_text(cores)}", "workload.argv: prefetch=1 (the server's default) or prefetch=0",
         "client.items = " + " and ".join(f"{n:,}" for n in sorted(df["items"].unique(), reverse=True)),
         f"throughput: capacity search to {common.CAPACITY_RESOLUTION:.0%} resolution; the other figures are "
         "the capacity point's"],
        "### Headline ratios\n\n" +
        common.markdown_table(pd.DataFrame({"change": list(heads), "ratio": list(heads.values())})) +
        "\n\n### Table\n\n" + common.markdown_table(df[common.with_confirmation(df, cols)]), [png.name],
        common.confirmation_notes(df) + ["Time per RX batch = each core's cycles in the measured phase / the RX batches it took, at capacity. "
         "Batches are larger when the core is slower to come back to its ring, so the time per received "
         "packet (that time / the mean batch size) is the fairer comparison."])
    return [csv, png, report]
