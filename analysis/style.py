"""One style for every figure kvsim draws (the studies in drivers/studies, `kvsim figures`).

Paper-ready means: one look (fonts, grid, size, resolution); rate axes from zero (a throughput axis that starts at
60% of its top exaggerates every difference); intervals where the data has them (a capacity search brackets the
capacity between the highest sustained load and the lowest failing one); reference lines (the billion
requests/s goal, the measured Xeon baseline); the paper's chosen design points marked; legends outside the data;
and each figure's conditions (full or reduced scale, items, measured window) written under it.

    plt = style.pyplot()
    fig, ax = plt.subplots()
    ax.plot(x, y); style.rate_axis(ax, "throughput (M requests/s)")
    style.design_point(ax, 64, y64)
    style.save(fig, path, style.conditions(full=False, cores=4, items=65536, requests=8000))
"""

from __future__ import annotations

import math
import pathlib
import textwrap
from typing import Any, Sequence

# The goal the platform is sized for: a billion requests per second (the paper's title), in M requests/s.
BILLION_RPS_MRPS = 1000.0
# The measured baseline: the dual-socket Xeon E5-2697 v2 server (24 cores, 12 x 10 GbE) at 120.5 M requests/s,
# ../shared/spec/validation.md (the published figure; sim-scripts/validate_xeon.py compares the model with it).
XEON_BASELINE_MRPS = 120.5
# The design points the paper chose (../shared/spec/validation.md and platforms.md §2).
CHOSEN_ROB, CHOSEN_ISSUE_WIDTH = 64, 3
CHOSEN_LLC_PER_CORE_KB = 768
# The legend of a steady-state throughput's interval (drivers/steady_state.py).
STEADY_INTERVAL = "95% interval (batch means over the window)"
# The p95's: batch means of 30 batches' p95s, or the t-interval over repeated seeds (drivers/steady_state.py).
P95_INTERVAL = "95% interval of the p95 (batches' p95s, or seeds)"

RC = {
    "figure.dpi": 110, "savefig.dpi": 150, "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9,
    "legend.fontsize": 8, "legend.frameon": False, "xtick.labelsize": 8, "ytick.labelsize": 8,
    "axes.grid": True, "grid.alpha": 0.3, "axes.spines.top": False, "axes.spines.right": False,
    "lines.markersize": 5, "errorbar.capsize": 3,
}
REFERENCE_COLOR = "0.35"
DESIGN_POINT = {"marker": "*", "markersize": 13, "color": "gold", "markeredgecolor": "black", "linestyle": "none",
                "zorder": 5}


def pyplot():
    """matplotlib.pyplot with the non-interactive backend and the shared style applied."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(RC)
    return plt


def rate_axis(ax, label: str | None = None, *, axis: str = "y") -> None:
    """A rate (throughput, bandwidth, MPKI, normalized throughput) starts from zero."""
    if axis == "y":
        if label is not None:
            ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
    else:
        if label is not None:
            ax.set_xlabel(label)
        ax.set_xlim(left=0)


def capacity_upper(throughput: Any, offered: Any, upper_offered: Any) -> Any:
    """The top of a capacity's interval in the throughput's units: the search sustained `offered` (answering
    `throughput`) and failed at `upper_offered`, so the capacity lies below throughput x upper/offered. NaN where
    the search has no upper probe (line limited: -1) or no figures."""
    import numpy as np

    t, o, u = (np.asarray(v, dtype=float) for v in (throughput, offered, upper_offered))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((u > 0) & (o > 0), t * u / o, np.nan)


def interval(ax, x: Sequence, y: Sequence, upper: Sequence, lower: Sequence | None = None, **kw) -> None:
    """Error bars from `lower` (default: y itself) to `upper` around y; points without an interval (NaN) get none."""
    import numpy as np

    y = np.asarray(y, dtype=float)
    hi = np.nan_to_num(np.asarray(upper, dtype=float) - y, nan=0.0).clip(min=0)
    lo = np.zeros_like(y) if lower is None else np.nan_to_num(y - np.asarray(lower, dtype=float), nan=0.0).clip(0)
    if not (hi.any() or lo.any()):
        return
    kw.setdefault("color", "0.2")
    kw.setdefault("label", "capacity interval (search bracket)")
    ax.errorbar(list(x), y, yerr=[lo, hi], fmt="none", linewidth=0.9, **kw)


def reference(ax, value: float, label: str, *, axis: str = "y") -> None:
    """A labelled reference line (a goal or a measured baseline)."""
    _reference_line(ax, value, axis, color=REFERENCE_COLOR, linestyle="--", label=label)


def _reference_line(ax, value: float, axis: str, **kw) -> None:
    """Draw the line and keep it in view (limits already set, e.g. a rate axis from zero, do not follow it)."""
    (ax.axhline if axis == "y" else ax.axvline)(value, linewidth=0.9, zorder=1, **kw)
    low, high = ax.get_ylim() if axis == "y" else ax.get_xlim()
    if value > high:
        (ax.set_ylim if axis == "y" else ax.set_xlim)(low, value * 1.05)


def throughput_references(ax, scale: float = 1.0) -> None:
    """The billion requests/s goal and the Xeon baseline on a throughput axis in M requests/s x `scale` (1e-3 for
    an axis in billion requests/s)."""
    reference(ax, BILLION_RPS_MRPS * scale, "1 billion requests/s (goal)")
    _reference_line(ax, XEON_BASELINE_MRPS * scale, "y", color="tab:red", linestyle=":",
                    label="Xeon E5-2697 v2 server, measured (120.5 M/s)")


def design_point(ax, x: Any, y: Any, label: str = "the paper's design point") -> None:
    """Mark the design point the paper chose (a gold star)."""
    if y is None or (isinstance(y, float) and math.isnan(y)):
        return
    ax.plot([x], [y], label=label, **DESIGN_POINT)


def legend_outside(target, **kw) -> None:
    """The legend to the right of the axes (or of the figure), never over the data."""
    # A figure gathers the entries of all its axes (a twin axis' included); an axes its own.
    sources = target.axes if hasattr(target, "axes") and isinstance(target.axes, list) else [target]
    pairs = [pair for ax in sources for pair in zip(*ax.get_legend_handles_labels())]
    seen: dict[str, Any] = {}
    for h, label in pairs:
        seen.setdefault(label, h)
    if seen:
        kw.setdefault("loc", "upper left")
        kw.setdefault("bbox_to_anchor", (1.01, 1.0))
        kw.setdefault("borderaxespad", 0.0)
        target.legend(list(seen.values()), list(seen), **kw)


def conditions(*, full: bool | None = None, cores: int | None = None, items: int | None = None,
               requests: int | None = None, window: str | None = None, extra: str = "") -> str:
    """A figure's conditions in one line: scale, items, measured window."""
    parts = []
    if full is not None:
        parts.append("full 60-core socket" if full else "reduced scale (per-core resources of the 60-core socket)")
    if cores is not None:
        parts.append(f"{cores} cores")
    if items is not None:
        parts.append(f"{int(items):,} items")
    if requests is not None:
        parts.append(f"measured window {int(requests):,} requests")
    if window:
        parts.append(window)
    if extra:
        parts.append(extra)
    return "Conditions: " + "; ".join(parts) + "." if parts else ""


def conditions_of(df, *, full: bool | None = None, cores: int | None = None, extra: str = "") -> str:
    """conditions() from a study's table: its items and measured requests per run (a range when they vary)."""
    def span(column: str) -> tuple[int, int] | None:
        if column not in getattr(df, "columns", ()):
            return None
        values = df[column].dropna()
        return (int(values.min()), int(values.max())) if len(values) else None

    def text(bounds: tuple[int, int]) -> str:
        return f"{bounds[0]:,}" if bounds[0] == bounds[1] else f"{bounds[0]:,} to {bounds[1]:,}"

    items, requests, steady = span("items"), span("requests"), span("window_requests")
    window = None
    if steady is not None:       # the figure's values come from the steady-state windows, the probes only searched
        window = f"steady-state window {text(steady)} requests" + \
            ("" if requests is None else f" (capacity probes {text(requests)} requests per run)")
    elif requests is not None:
        window = f"measured window {text(requests)} requests per run"
    item_text = None if items is None else (items[0] if items[0] == items[1] else None)
    if items is not None and items[0] != items[1]:
        extra = "; ".join(x for x in (f"{items[0]:,} to {items[1]:,} items", extra) if x)
    return conditions(full=full, cores=cores, items=item_text, window=window, extra=extra)


def save(fig, path: str | pathlib.Path, caption: str = "") -> pathlib.Path:
    """Write the figure with its caption (the conditions) under it, legends outside included, and close it."""
    import matplotlib.pyplot as plt

    if caption:
        width = max(60, int(fig.get_figwidth() * 14))
        fig.text(0.0, -0.01, textwrap.fill(caption, width), ha="left", va="top", fontsize=7, color="0.25",
                 transform=fig.transFigure)
    fig.tight_layout()
    path = pathlib.Path(path)
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return path
