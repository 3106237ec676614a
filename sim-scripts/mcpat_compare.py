#!/usr/bin/env python3
"""The power model against McPAT 1.3's printed results for its example processors.

Reads McPAT's own example inputs (../shared/data/mcpat/inputs/*.xml) with power.mcpat_xml, prices them, and prints
ours vs McPAT (power.mcpat_reference) for total area, peak dynamic power and leakage per processor, then the
breakdown by component class, with % errors. The acceptance tolerance is 15% on the totals (tests/power).

    sim-scripts/mcpat_compare.py             # the comparison
    sim-scripts/mcpat_compare.py --bench     # also: time to price one configuration
    sim-scripts/mcpat_compare.py --fit       # re-derive the calibration factors (prints them; edits nothing)
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", action="store_true", help="time the pricing of one configuration")
    ap.add_argument("--fit", action="store_true", help="re-derive the calibration factors and print them")
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
    return 0 if worst <= TOLERANCE_PCT else 1


if __name__ == "__main__":
    sys.exit(main())
