"""Study 1, core weight: normalized throughput vs ROB size (1 = in-order issue, 16 ... 256) for issue widths 1-4,
for tiny, small, large and extra-large items (validation.md). Throughput is each point's capacity: the highest
offered load with < 1% loss (drivers/capacity.py), in requests/s. Normalized to the in-order single-issue core
(ROB 1, issue 1) of the same data set."""

from __future__ import annotations

import pathlib

import pandas as pd

from analysis import style

from ..sweep import CAPACITY_EVALUATOR, Base, Grid, List, Product, Sweep, Zip
from . import common

ROBS = [1, 16, 32, 64, 128, 256]
WIDTHS = [1, 2, 3, 4]
DATASETS = ["tiny", "small", "large", "xlarge"]
# Fetch, commit width and integer ALUs follow the issue width (the config's 3-issue core has 3 of each).
TIES = {"core.issue_width": ("core.fetch_width", "core.commit_width", "core.int_alus")}


# Items per data set: each probe's bulk load (about 450 instructions per tiny item, more for large ones) is most of
# its host time, so the data sets are small next to the paper's: 2^15 tiny or small items (1.3 / 3.1 MB of log),
# 2^13 large or extra-large ones (about 9 / 11 MB), against 3 MB of LLC at reduced scale. This study measures the
# cores more than the memory system; the LLC study has the large data set.
ITEMS = {"tiny": 1 << 15, "small": 1 << 15, "large": 1 << 13, "xlarge": 1 << 13}


def _sweep(name: str, cores: int, space, items: int | None = None) -> Sweep:
    base = Base("drivers.studies.common:target", cores=cores, items=ITEMS["tiny"]) if items is None else \
        Base("drivers.studies.common:target", cores=cores, items=items,
             warmup_requests=common.WARMUP_REQUESTS_PER_CORE * cores)
    # The study's own small data sets (items None) load with every probe and warm over the whole load, as
    # before issue 28 (a restore warms over client.warmup_requests of the mix, far more than 2^15 items' load).
    return Sweep(name, base, space, ties=TIES, evaluator=CAPACITY_EVALUATOR,
                 options={"resolution": common.CAPACITY_RESOLUTION, **({} if items is None else {"steady": True})},
                 share_checkpoint=items is not None)


# The paper's choice (3-issue, ROB 64), its neighbours on each axis, the in-order single-issue core the
# throughput is normalized to, and the single-issue core with the chosen ROB (the headline ratios "ROB 1 -> 64 at
# issue 1" and "issue 1 -> 3 at ROB 64" need it); on the paper's data set (Tiny).
KEY_POINTS = [(1, 1), (3, 64), (1, 64), (3, 32), (3, 128), (2, 64), (4, 64)]


def sweeps(full: bool | None = None, conditions: common.Conditions | None = None) -> list[Sweep]:
    c = common.conditions_for(full, conditions)
    if c.items is None:          # the study's own data sets (before issue 28)
        return [_sweep(f"core_weight-{c.cores}c", c.cores,
                       Product(Zip({"client.dataset": DATASETS, "client.items": [ITEMS[d] for d in DATASETS]}),
                               Grid({"core.issue_width": WIDTHS, "core.rob_entries": ROBS})))]
    if c.all_points:             # every shape on the conditions' tiny data set (the others: --reduced)
        space = Grid({"core.issue_width": WIDTHS, "core.rob_entries": ROBS})
    else:
        space = List([{"core.issue_width": w, "core.rob_entries": r} for w, r in KEY_POINTS])
    return [_sweep(f"core_weight-{c.tag()}", c.cores, space, c.items)]


COMPARE_POINTS = [{"client.dataset": "tiny", "client.items": ITEMS["tiny"], "core.issue_width": w,
                   "core.rob_entries": r}
                  for w, r in ((1, 1), (1, 64), (3, 64))]


def compare_sweep() -> Sweep:
    return _sweep(f"core_weight-{common.FULL_CORES}c-compare", common.FULL_CORES, List(COMPARE_POINTS))


def frame(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, row in table[table.status == "ok"].iterrows():
        f = common.figures_of(row)
        rows.append({"dataset": row.get("param.client.dataset", row.get("cfg.client.dataset")),
                     "issue_width": row["param.core.issue_width"],
                     "rob": row["param.core.rob_entries"], **f})
    out = pd.DataFrame(rows)
    base = out[(out.rob == 1) & (out.issue_width == 1)].set_index("dataset")["throughput_mrps"]
    out["normalized"] = out.throughput_mrps / out.dataset.map(base)
    return out.sort_values(["dataset", "issue_width", "rob"]).reset_index(drop=True)


def headline(df: pd.DataFrame) -> dict[str, float]:
    def t(ds, w, r):
        sel = df[(df.dataset == ds) & (df.issue_width == w) & (df.rob == r)].throughput_mrps
        return float(sel.iloc[0]) if len(sel) else float("nan")
    out = {}
    for ds in [d for d in DATASETS if d in set(df.dataset)]:
        out[f"{ds}: ROB 1 -> 64 at issue 1"] = t(ds, 1, 64) / t(ds, 1, 1)
        out[f"{ds}: issue 1 -> 3 at ROB 64"] = t(ds, 3, 64) / t(ds, 1, 64)
        out[f"{ds}: ROB 64 -> 256 at issue 3"] = t(ds, 3, 256) / t(ds, 3, 64)
        out[f"{ds}: issue 3 -> 4 at ROB 64"] = t(ds, 4, 64) / t(ds, 3, 64)
    return out


def plot(df: pd.DataFrame, path: pathlib.Path, caption: str = "") -> None:
    plt = style.pyplot()

    present = [d for d in DATASETS if d in set(df.dataset)]
    # + 3 inches for the legend drawn outside the last panel (one panel was squeezed to a strip)
    fig, axes = plt.subplots(1, len(present), figsize=(4 * len(present) + 3, 4), sharey=False, squeeze=False)
    axes = axes[0]
    for ax, ds in zip(axes, present):
        sub = df[df.dataset == ds]
        for w in WIDTHS:
            line = sub[sub.issue_width == w].sort_values("rob")
            if line.empty:
                continue
            x = [ROBS.index(r) for r in line.rob]         # each ROB at its place, whichever points were run
            ax.plot(x, line.normalized, marker="o", label=f"{w}-issue")
            scale = line.normalized / line.throughput_mrps
            if "throughput_ci_mrps" in line and line.throughput_ci_mrps.notna().any():
                style.interval(ax, x, line.normalized, line.normalized + line.throughput_ci_mrps * scale,
                               line.normalized - line.throughput_ci_mrps * scale, label=style.STEADY_INTERVAL)
            elif "throughput_upper_mrps" in line:
                style.interval(ax, x, line.normalized, line.throughput_upper_mrps * scale)
            if w == style.CHOSEN_ISSUE_WIDTH and style.CHOSEN_ROB in list(line.rob):
                chosen = list(line.rob).index(style.CHOSEN_ROB)
                style.design_point(ax, ROBS.index(style.CHOSEN_ROB), float(line.normalized.iloc[chosen]),
                                   f"the paper's choice ({style.CHOSEN_ISSUE_WIDTH}-issue, ROB {style.CHOSEN_ROB})")
        ax.set_xticks(range(len(ROBS)), [str(r) for r in ROBS])
        ax.set_title(f"{ds} items")
        ax.set_xlabel("ROB entries (1 = in-order issue)")
        style.rate_axis(ax)
    axes[0].set_ylabel("throughput, normalized to ROB 1 / 1-issue")
    style.legend_outside(axes[-1])
    style.save(fig, path, caption)


def make(tables: dict[str, pd.DataFrame], outdir: pathlib.Path, full: bool | None = None,
         conditions: common.Conditions | None = None) -> list[pathlib.Path]:
    c = common.conditions_for(full, conditions)
    cores = c.cores
    df = frame(next(iter(tables.values())))
    df["conditions"] = c.text(int(df["items"].iloc[0]) if len(df) and c.items is not None else None)
    csv, png = outdir / "core_weight.csv", outdir / "core_weight.png"
    df.to_csv(csv, index=False)
    plot(df, png, style.conditions_of(df, full=c.full, cores=cores, extra=df["conditions"].iloc[0] if len(df) else ""))
    heads = headline(df)
    table_md = common.markdown_table(pd.DataFrame({"ratio": list(heads), "value": list(heads.values())}))
    pivot = df.pivot_table(index=["dataset", "issue_width"], columns="rob", values="throughput_mrps")
    with_ci = "throughput_ci_mrps" in df and bool(df.throughput_ci_mrps.notna().any())
    if with_ci:                  # each point with its 95% interval
        cell = df.apply(lambda r: f"{r.throughput_mrps:.3g} +- {r.throughput_ci_mrps:.2g}", axis=1)
        pivot = df.assign(cell=cell).pivot_table(index=["dataset", "issue_width"], columns="rob", values="cell",
                                                 aggfunc="first")
    if c.items is None:          # the study's own data sets, probes only
        data_line = ("client.dataset in " + ", ".join(DATASETS) + "; client.items " +
                     ", ".join(f"{d} {n:,}" for d, n in ITEMS.items()) + " (uniform, 95% GET, EREW)")
        search_line = (f"throughput: capacity search to {common.CAPACITY_RESOLUTION:.0%} resolution, "
                       f"{common.REQUESTS_PER_CORE} measured requests per core per probe")
    else:                        # the conditions' data set (tiny items), then steady-state windows at the capacity
        data_line = f"client.dataset tiny; client.items {c.items:,} (the conditions' data set; uniform, 95% GET, EREW)"
        search_line = (f"throughput: capacity search to {common.CAPACITY_RESOLUTION:.0%} resolution "
                       f"({common.REQUESTS_PER_CORE} measured requests per core per probe), then the steady-state "
                       "window at the capacity (throughput_ci_mrps: its 95% interval, batch means)")
    report = common.write_report(
        outdir / "core_weight.md", "Core weight: throughput vs ROB size and issue width",
        __doc__.split("\n\n")[0].replace("\n", " "),
        [f"conditions: {df['conditions'].iloc[0] if len(df) else c.text()}", f"scale: {common.scale_text(cores)}", "core.rob_entries in " + ", ".join(map(str, ROBS)),
         "core.issue_width in 1-4, with core.fetch_width, core.commit_width and core.int_alus equal to it",
         data_line, search_line],
        "### Headline ratios\n\n" + table_md + "\n\n### Throughput (M requests/s" +
        (", +- 95%" if with_ci else "") + ")\n\n" + common.markdown_table(pivot),
        [png.name], ["The in-order single-issue core is ROB 1 / issue 1 of the out-of-order model (nothing "
                     "overlaps), not the separate 'inorder' core model.", *common.confirmation_notes(df)])
    return [csv, png, report]

