#!/usr/bin/env python3
"""The power model against McPAT 1.3's printed results for its example processors.

Reads McPAT's own example inputs (../shared/data/mcpat/inputs/*.xml) with power.mcpat_xml, prices them, and prints
ours vs McPAT (power.mcpat_reference) for total area, peak dynamic power and leakage per processor, then the
breakdown by component class, with % errors. The acceptance tolerance is 15% on the totals (tests/power).

    sim-scripts/mcpat_compare.py             # the comparison
    sim-scripts/mcpat_compare.py --bench     # also: time to price one configuration
    sim-scripts/mcpat_compare.py --fit       # re-derive the calibration factors (prints them; edits nothing)
    sim-scripts/mcpat_compare.py --cross-validate   # leave-one-processor-out: in- vs out-of-sample errors
    sim-scripts/mcpat_compare.py --cross-validate --node-prior neighbours   # unseen node: neighbours' multipliers
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import power  # noqa: E402
from power import compare, platforms  # noqa: E402

TOLERANCE_PCT = 15.0


def _err(e: float) -> str:
    if e != e:
        return "-"
    s = f"{e:+.1f}%"
    return f"[red]{s}[/]" if abs(e) > TOLERANCE_PCT else s


def bench(console: Console) -> None:
    from power.mcpat_xml import read
    cases = [("McPAT Xeon (read XML + price)", None)] + [(k, fn) for k, fn in platforms.PLATFORMS.items()]
    t = Table(title="time to price one configuration (build + evaluate + DataFrame), median of 50")
    t.add_column("configuration")
    t.add_column("ms", justify="right")
    for name, fn in cases:
        times = []
        for _ in range(50):
            t0 = time.perf_counter()
            if fn is None:
                p, a = read(compare.inputs_dir() / "Xeon.xml")
                r = power.build(p, a).evaluate()
            else:
                r = power.build(fn()).evaluate()
            r.dataframe()
            times.append(time.perf_counter() - t0)
        t.add_row(name, f"{1e3 * statistics.median(times):.2f}")
    console.print(t)


def cross_validate(console: Console, node_prior: str) -> None:
    from power import fit
    cv = fit.cross_validate(node_prior=node_prior)
    tab = cv["table"]
    metrics = (("area_mm2", "area"), ("peak_dynamic_W", "peak dyn"), ("leakage_W", "leakage"))
    t = Table(title="leave-one-processor-out cross-validation: error vs McPAT, in sample (fit on all six) and "
                    "out of sample (refit on the other five)")
    t.add_column("held-out processor", justify="right")
    for _, label in metrics:
        t.add_column(f"{label} in", justify="right")
        t.add_column(f"{label} out", justify="right")
    t.add_column("held-out node: leakage multiplier")
    for proc, g in tab.groupby("processor", sort=False):
        cells = [proc]
        for metric, _ in metrics:
            row = g[g.metric == metric].iloc[0]
            cells += [_err(row.in_error_pct), _err(row.out_error_pct)]
        fold = cv["folds"][proc]
        cells.append(f"{fold['node']}: {fold['node_note']}")
        t.add_row(*cells)
    console.print(t)

    def mae(col: str) -> str:
        return ", ".join(f"{label} {tab[tab.metric == m][col].abs().mean():.1f}%" for m, label in metrics)

    def stat(col: str, how: str) -> str:
        return ", ".join(f"{tab[tab.metric == m][col].abs().agg(how):.1f}%" for m, _ in metrics)

    console.print(f"mean |error| in sample:     {mae('in_error_pct')}   (median {stat('in_error_pct', 'median')}; "
                  f"max {stat('in_error_pct', 'max')})")
    console.print(f"mean |error| out of sample: {mae('out_error_pct')}   (median {stat('out_error_pct', 'median')}; "
                  f"max {stat('out_error_pct', 'max')})")
    console.print(f"  the fit's linear surrogate (what the least squares minimises): in sample "
                  f"{mae('in_fit_error_pct')}; out of sample {mae('out_fit_error_pct')}")
    prior = ("multiplier 1 on the uncalibrated ITRS-class Ioff / Igate (the fit's prior: power.tech's values with "
             "the folded-in multipliers power.fit.FOLDED_NODE_MULTIPLIERS divided out)" if node_prior == "one" else
             "the fitted multipliers of the nearest nodes of the same device type, interpolated log-linearly in "
             "feature size or carried from the nearest one (as power.tech does); 1 if no node of that type was "
             "fitted")
    console.print(f"Leakage of a held-out processor whose node/device no other example has: {prior}.")
    for proc, fold in cv["folds"].items():
        empty = sorted({g for v in fold["groups_without_data"].values() for g in v})
        if empty:
            console.print(f"{proc} held out: no other example has {', '.join(empty)} (those factors are set by "
                          f"the fit's pull towards a common level / 1 alone)")
    console.print("In sample = the full model priced with the factors fitted on all six examples (the shipped "
                  "factors up to rounding); out of sample = priced with the factors refitted without that processor.")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", action="store_true", help="time the pricing of one configuration")
    ap.add_argument("--fit", action="store_true", help="re-derive the calibration factors and print them")
    ap.add_argument("--cross-validate", action="store_true",
                    help="leave-one-processor-out cross-validation of the calibration (in- vs out-of-sample errors)")
    ap.add_argument("--node-prior", choices=("one", "neighbours"), default="one",
                    help="cross-validation: leakage multiplier of a held-out node no other example has (default: "
                         "the fit's prior, 1; neighbours: from the nearest fitted nodes)")
    args = ap.parse_args()
    console = Console(width=140)
    tot = compare.totals_table()
    t = Table(title="kvsim power model vs McPAT 1.3, totals per processor (die)")
    for c in ("processor", "area mm^2 kvsim", "McPAT", "err", "peak dyn W kvsim", "McPAT", "err",
              "leakage W kvsim", "McPAT", "err"):
        t.add_column(c, justify="right")
    worst = 0.0
    for proc, g in tot.groupby("processor", sort=False):
        cells = [proc]
        for metric in ("area_mm2", "peak_dynamic_W", "leakage_W"):
            row = g[g.metric == metric].iloc[0]
            cells += [f"{row.kvsim:.4g}", f"{row.mcpat:.4g}", _err(row.error_pct)]
            worst = max(worst, abs(row.error_pct))
        t.add_row(*cells)
    console.print(t)
    console.print(f"largest error on a total: {worst:.1f}% (tolerance {TOLERANCE_PCT:.0f}%)")

    cls = compare.class_table()
    t = Table(title="by component class: kvsim / McPAT (error)")
    for c in ("processor", "class", "area mm^2", "peak dynamic W", "leakage W"):
        t.add_column(c, justify="right")
    for (proc, c), g in cls.groupby(["processor", "cls"], sort=False):
        cells = [proc, c]
        for metric in ("area_mm2", "peak_dynamic_W", "leakage_W"):
            row = g[g.metric == metric].iloc[0]
            mc = "-" if row.mcpat is None or row.mcpat != row.mcpat else f"{row.mcpat:.3g}"
            cells.append(f"{row.kvsim:.3g} / {mc} ({_err(row.error_pct)})")
        t.add_row(*cells)
    console.print(t)
    if args.bench:
        bench(console)
    if args.fit:
        from power import fit
        raw = fit.raw_sums()
        for metric in fit.FIT_SETTINGS:
            r = fit.fit(metric, raw)
            console.print(f"[bold]{metric}[/] factors " + ", ".join(f"{k}={v:.3g}" for k, v in r["factors"].items()))
            if r["node_multipliers"]:
                console.print("  node multipliers (relative to power.tech now) "
                              + ", ".join(f"{k}={v:.3g}" for k, v in r["node_multipliers"].items()))
            console.print("  fit errors " + ", ".join(f"{k} {v:+.1f}%" for k, v in r["errors_pct"].items()))
    if args.cross_validate:
        cross_validate(console, args.node_prior)
    return 0 if worst <= TOLERANCE_PCT else 1


if __name__ == "__main__":
    sys.exit(main())
