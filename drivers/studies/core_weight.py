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


def _sweep(name: str, cores: int, space) -> Sweep:
    return Sweep(name, Base("drivers.studies.common:target", cores=cores, items=ITEMS["tiny"]), space, ties=TIES,
                 evaluator=CAPACITY_EVALUATOR, options={"resolution": common.CAPACITY_RESOLUTION})


def sweeps(full: bool = False) -> list[Sweep]:
    cores = common.FULL_CORES if full else common.REDUCED_CORES
    return [_sweep(f"core_weight-{cores}c", cores,
                   Product(Zip({"client.dataset": DATASETS, "client.items": [ITEMS[d] for d in DATASETS]}),
                           Grid({"core.issue_width": WIDTHS, "core.rob_entries": ROBS})))]


COMPARE_POINTS = [{"client.dataset": "tiny", "client.items": ITEMS["tiny"], "core.issue_width": w,
                   "core.rob_entries": r}
                  for w, r in ((1, 1), (1, 64), (3, 64))]


def compare_sweep() -> Sweep:
    return _sweep(f"core_weight-{common.FULL_CORES}c-compare", common.FULL_CORES, List(COMPARE_POINTS))


def frame(table: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for _, row in table[table.status == "ok"].iterrows():
        f = common.figures_of(row)
        rows.append({"dataset": row["param.client.dataset"], "issue_width": row["param.core.issue_width"],
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
    for ds in DATASETS:
        out[f"{ds}: ROB 1 -> 64 at issue 1"] = t(ds, 1, 64) / t(ds, 1, 1)
        out[f"{ds}: issue 1 -> 3 at ROB 64"] = t(ds, 3, 64) / t(ds, 1, 64)
        out[f"{ds}: ROB 64 -> 256 at issue 3"] = t(ds, 3, 256) / t(ds, 3, 64)
        out[f"{ds}: issue 3 -> 4 at ROB 64"] = t(ds, 4, 64) / t(ds, 3, 64)
    return out


def plot(df: pd.DataFrame, path: pathlib.Path, caption: str = "") -> None:
    plt = style.pyplot()

    fig, axes = plt.subplots(1, len(DATASETS), figsize=(16, 4), sharey=False)
    for ax, ds in zip(axes, DATASETS):
        sub = df[df.dataset == ds]
        for w in WIDTHS:
            line = sub[sub.issue_width == w].sort_values("rob")
            ax.plot(range(len(line)), line.normalized, marker="o", label=f"{w}-issue")
            if "throughput_upper_mrps" in line:
                style.interval(ax, range(len(line)), line.normalized,
                               line.throughput_upper_mrps / line.throughput_mrps * line.normalized)
            if w == style.CHOSEN_ISSUE_WIDTH and style.CHOSEN_ROB in list(line.rob):
                chosen = list(line.rob).index(style.CHOSEN_ROB)
                style.design_point(ax, chosen, float(line.normalized.iloc[chosen]),
                                   f"the paper's choice ({style.CHOSEN_ISSUE_WIDTH}-issue, ROB {style.CHOSEN_ROB})")
        ax.set_xticks(range(len(ROBS)), [str(r) for r in ROBS])
        ax.set_title(f"{ds} items")
        ax.set_xlabel("ROB entries (1 = in-order issue)")
        style.rate_axis(ax)
    axes[0].set_ylabel("throughput, normalized to ROB 1 / 1-issue")
    style.legend_outside(axes[-1])
    style.save(fig, path, caption)


def make(tables: dict[str, pd.DataFrame], outdir: pathlib.Path, full: bool) -> list[pathlib.Path]:
    cores = common.FULL_CORES if full else common.REDUCED_CORES
    df = frame(tables[f"core_weight-{cores}c"])
    csv, png = outdir / "core_weight.csv", outdir / "core_weight.png"
    df.to_csv(csv, index=False)
    plot(df, png, style.conditions_of(df, full=full, cores=cores))
    heads = headline(df)
    table_md = common.markdown_table(pd.DataFrame({"ratio": list(heads), "value": list(heads.values())}))
    pivot = df.pivot_table(index=["dataset", "issue_width"], columns="rob", values="throughput_mrps")
    report = common.write_report(
        outdir / "core_weight.md", "Core weight: throughput vs ROB size and issue width",
        __doc__.split("\n\n")[0].replace("\n", " "),
        [f"scale: {common.scale_text(cores)}", "core.rob_entries in " + ", ".join(map(str, ROBS)),
         "core.issue_width in 1-4, with core.fetch_width, core.commit_width and core.int_alus equal to it",
         "client.dataset in " + ", ".join(DATASETS) + "; client.items " +
         ", ".join(f"{d} {n:,}" for d, n in ITEMS.items()) + " (uniform, 95% GET, EREW)",
         f"throughput: capacity search to {common.CAPACITY_RESOLUTION:.0%} resolution, "
         f"{common.REQUESTS_PER_CORE} measured requests per core per probe"],
        "### Headline ratios\n\n" + table_md + "\n\n### Throughput (M requests/s)\n\n" + common.markdown_table(pivot),
        [png.name], ["The in-order single-issue core is ROB 1 / issue 1 of the out-of-order model (nothing "
                     "overlaps), not the separate 'inorder' core model."])
    return [csv, png, report]

