"""Re-derive the calibration factors of ``power.calibration`` (and the per-node leakage multipliers folded into
``power.tech``) from McPAT's example processors. Run through ``sim-scripts/mcpat_compare.py --fit``; it prints the
factors, it does not edit files.

Method: build every example with all group factors 1 and sum area, peak dynamic power and leakage per processor,
component class and calibration group. Because every metric is linear in its group factor, the fit is a small
least-squares problem in log space:

* area and peak dynamic: one factor per group; residuals ``w_total * log(total/mcpat)`` per processor,
  ``w_class * log(class/mcpat_class)`` per processor and class, and ``reg * (log k - mean log k)`` pulling the
  factors towards a common level;
* subthreshold and gate leakage: one factor per group and one multiplier per technology node/device (the
  multiplier is then folded into that node's Ioff / Igate), with a weak pull of both towards 1.

``cross_validate()`` measures how well this predicts a processor the fit has not seen (leave one processor out):
for each example it refits every factor and node multiplier on the other five (same method and settings), prices the
held-out processor with the full model at those factors and compares its total area, peak dynamic power and leakage
with McPAT. Run through ``sim-scripts/mcpat_compare.py --cross-validate``.
"""

from __future__ import annotations

import math
import re
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import pandas as pd

from . import calibration as cal
from . import mcpat_reference as ref

FIT_SETTINGS = {
    "area_mm2": dict(w_total=12.0, w_class=2.0, reg=0.3),
    "peak_dynamic_W": dict(w_total=12.0, w_class=1.0, reg=0.1),
    "subthreshold_leakage_W": dict(w_total=12.0, w_class=1.0, reg=0.5),
    "gate_leakage_W": dict(w_total=12.0, w_class=1.0, reg=0.5),
}
_CLASS_INDEX = {"area_mm2": 0, "peak_dynamic_W": 1, "subthreshold_leakage_W": 2, "gate_leakage_W": 3}


_TOTAL_INDEX = {"area_mm2": 1, "peak_dynamic_W": 2, "subthreshold_leakage_W": 3, "gate_leakage_W": 4}
_FACTOR_KEY = {"area_mm2": "area", "peak_dynamic_W": "dyn", "subthreshold_leakage_W": "sub", "gate_leakage_W": "gate"}
LEAK_METRICS = ("subthreshold_leakage_W", "gate_leakage_W")

# The per-node leakage multipliers of the full fit that were folded into power.tech's Ioff / Igate, as documented
# there (two digits; lop: one multiplier for all lop nodes, fitted at 40 nm). Raw sums are priced with power.tech
# as it is now, i.e. with these folded in; dividing them out gives the uncalibrated ITRS-class starting values,
# which is where the leakage fit starts and what its prior (multiplier 1) refers to.
FOLDED_NODE_MULTIPLIERS = {
    "subthreshold_leakage_W": {"hp180": 3.6, "hp90": 4.8, "hp65": 2.0, "hp45": 2.2, "lop40": 7.5},
    "gate_leakage_W": {"hp180": 570.0, "hp90": 23.0, "hp65": 4.6, "hp45": 12.0, "lop40": 29.0},
}


@contextmanager
def _factors(values: dict[str, dict[str, float]]):
    """Temporarily replace ``power.calibration.FACTORS`` with ``values`` ({group: {area, dyn, sub, gate}})."""
    saved = {g: dict(v) for g, v in cal.FACTORS.items()}
    try:
        for g in cal.FACTORS:
            cal.FACTORS[g] = dict(values[g])
        yield
    finally:
        cal.FACTORS.clear()
        cal.FACTORS.update(saved)


def _unit_factors():
    return _factors({g: {k: 1.0 for k in v} for g, v in cal.FACTORS.items()})


def raw_sums():
    """{processor: (node key, DataFrame indexed by (class, group) with the four metrics)} at unit factors."""
    from . import build
    from .compare import inputs_dir
    from .mcpat_xml import read
    out = {}
    with _unit_factors():
        for name in ref.PROCESSORS:
            p, a = read(inputs_dir() / ref.TOTALS[name][0])
            m = build(p, a)
            r = m.evaluate()
            df = r.structures.assign(group=[s.group for s in m.structs])
            df = df[df.on_die]
            key = f"{p.device}{p.node_nm:g}"
            out[name] = (key, df.groupby(["class", "group"])[list(_CLASS_INDEX)].sum())
    return out


def _items(raw, metric):
    """{processor: (node key, [(class, group, raw value)])}, in the row order of the raw DataFrames."""
    return {p: (node, [(c, g, float(v)) for (c, g), v in df[metric].items()]) for p, (node, df) in raw.items()}


def _predict(items, factors, mults, baseline):
    """{processor: (total, {class: value})} of the linear model the fit solves: raw x group factor x node
    multiplier / the node's folded-in baseline."""
    out = {}
    for p, (node, rows) in items.items():
        tot, cls = 0.0, {}
        m = mults.get(node, 1.0) / baseline.get(node, 1.0)
        for c, g, r in rows:
            v = r * factors[g] * m
            tot += v
            cls[c] = cls.get(c, 0.0) + v
        out[p] = (tot, cls)
    return out


def fit(metric: str, raw=None, *, node_baseline: dict[str, float] | None = None) -> dict:
    """Least-squares fit of one metric's group factors (and node multipliers for leakage) to ``raw`` (default: all
    examples). ``node_baseline``: per node key, the multiplier already contained in the raw sums; node multipliers
    are then solved and returned relative to the raw sums divided by it, and the prior pulls them towards 1 there
    (default: relative to power.tech as it is now)."""
    from scipy.optimize import least_squares
    raw = raw or raw_sums()
    groups = list(cal.FACTORS)
    leak = "leakage" in metric
    nodes = sorted({k for k, _ in raw.values()}) if leak else []
    baseline = {n: float((node_baseline or {}).get(n, 1.0)) for n in nodes}
    s = FIT_SETTINGS[metric]
    ci = _CLASS_INDEX[metric]
    ti = _TOTAL_INDEX[metric]
    items = _items(raw, metric)

    def predict(x):
        return _predict(items, dict(zip(groups, np.exp(x[:len(groups)]))), dict(zip(nodes, np.exp(x[len(groups):]))),
                        baseline)

    def residuals(x):
        r = []
        for p, (tot, cls) in predict(x).items():
            r.append(s["w_total"] * np.log(tot / ref.TOTALS[p][ti]))
            for c, vals in ref.CLASSES[p].items():
                if cls.get(c, 0) > 0 and vals[ci] > 0:
                    r.append(s["w_class"] * np.log(cls[c] / vals[ci]))
        lk = x[:len(groups)]
        r += list(s["reg"] * (lk if leak else lk - lk.mean()))
        r += list(0.05 * x[len(groups):])
        return np.array(r)

    sol = least_squares(residuals, np.zeros(len(groups) + len(nodes)))
    pred = predict(sol.x)
    return {
        "factors": {g: float(np.exp(v)) for g, v in zip(groups, sol.x[:len(groups)])},
        "node_multipliers": {n: float(np.exp(v)) for n, v in zip(nodes, sol.x[len(groups):])},
        "errors_pct": {p: 100.0 * (tot / ref.TOTALS[p][ti] - 1.0) for p, (tot, _) in pred.items()},
    }


# ------------------------------------------------------------------------------------------ cross-validation
NODE_PRIORS = ("one", "neighbours")


def _split_node(key: str) -> tuple[str, float]:
    m = re.fullmatch(r"([a-z]+)(\d+(?:\.\d+)?)", key)
    if m is None:
        raise ValueError(f"node key {key!r} is not <device><nm>")
    return m[1], float(m[2])


def held_out_node_multiplier(node: str, fitted: dict[str, float], how: str = "one") -> tuple[float, str]:
    """The leakage multiplier (relative to the uncalibrated ITRS-class Ioff / Igate) for a held-out processor's
    node, and how it was obtained. A node fitted on the training processors keeps its fitted multiplier. Otherwise
    ``how="one"`` uses the fit's prior (multiplier 1); ``how="neighbours"`` interpolates the fitted multipliers of the
    same device type log-linearly in feature size between the nearest fitted nodes above and below (as power.tech
    interpolates its table), carries the nearest one when only one side has a fitted node (as power.tech carries
    45 nm to 32 and 22 nm), and falls back to 1 when no node of that device type was fitted."""
    if how not in NODE_PRIORS:
        raise ValueError(f"how={how!r}: allowed {', '.join(NODE_PRIORS)}")
    if node in fitted:
        return fitted[node], "fitted on the other processors"
    if how == "one":
        return 1.0, "not in training: prior x1"
    dev, nm = _split_node(node)
    same = sorted((n, v) for k, v in fitted.items() for d, n in [_split_node(k)] if d == dev)
    above = [(n, v) for n, v in same if n > nm]
    below = [(n, v) for n, v in same if n < nm]
    if above and below:
        (fa, va), (fb, vb) = above[0], below[-1]
        w = math.log(fa / nm) / math.log(fa / fb)
        return math.exp((1 - w) * math.log(va) + w * math.log(vb)), \
            f"not in training: interpolated {dev}{fa:g}/{dev}{fb:g}"
    if above or below:
        n, v = above[0] if above else below[-1]
        return v, f"not in training: carried from {dev}{n:g}"
    return 1.0, f"not in training, no {dev} node fitted: prior x1"


def _groups_without_data(raw, metric: str) -> list[str]:
    """Calibration groups with nothing to fit in ``raw`` for ``metric`` (their factor is set by the prior alone)."""
    have = set()
    for _, df in raw.values():
        by_group = df[metric].groupby(level="group").sum()
        have |= set(by_group[by_group > 0].index)
    return [g for g in cal.FACTORS if g not in have]


def _fit_all(raw) -> dict[str, dict]:
    return {m: fit(m, raw, node_baseline=FOLDED_NODE_MULTIPLIERS.get(m)) for m in FIT_SETTINGS}


def _factor_table(fits: dict[str, dict]) -> dict[str, dict[str, float]]:
    return {g: {_FACTOR_KEY[m]: fits[m]["factors"][g] for m in FIT_SETTINGS} for g in cal.FACTORS}


def price_with(name: str, factors: dict[str, dict[str, float]], leak_scale: tuple[float, float] = (1.0, 1.0)):
    """Die totals (pandas Series) of one McPAT example priced by the full model with the given group factors and
    its node's Ioff / Igate multiplied by ``leak_scale`` (relative to power.tech as it is now)."""
    from . import build
    from .compare import inputs_dir
    from .mcpat_xml import read
    p, a = read(inputs_dir() / ref.TOTALS[name][0])
    with _factors(factors):
        m = build(p, a)
    t = m.tech
    m.tech = replace(t, dev=replace(t.dev, ioff_um=t.dev.ioff_um * leak_scale[0],
                                    igate_um=t.dev.igate_um * leak_scale[1]))
    return m.evaluate(label=name).die


def cross_validate(raw=None, *, node_prior: str = "one") -> dict:
    """Leave-one-processor-out cross-validation of the calibration.

    For each example processor: refit all group factors and node multipliers on the other five (``fit``, same
    settings, node multipliers relative to the uncalibrated ITRS-class leakage as in the original fit), then price
    the held-out processor with the full model (``power.build``) at the refitted factors and compare its total area,
    peak dynamic power and leakage (subthreshold + gate) with McPAT. The in-sample figures are the same computation
    with the fit on all six processors. A held-out node with no training processor gets its leakage multiplier from
    ``held_out_node_multiplier(..., node_prior)``.

    Returns a dict:

    * ``table``: DataFrame, one row per processor and metric (area_mm2, peak_dynamic_W, leakage_W) with McPAT's
      value, the in-sample and out-of-sample model values and % errors (``in_error_pct``, ``out_error_pct``), the
      same errors of the fit's linear surrogate (``in_fit_error_pct``, ``out_fit_error_pct``), the held-out node and
      how its leakage multiplier was obtained;
    * ``full``: {metric: fit result} on all six processors;
    * ``folds``: {held-out processor: dict(fits={metric: fit result}, node, leak_multipliers={metric: multiplier},
      node_note, groups_without_data={metric: [groups with no training data]})};
    * ``node_prior``.
    """
    raw = raw or raw_sums()
    procs = list(raw)
    full = _fit_all(raw)
    full_factors = _factor_table(full)
    folds, rows = {}, []
    for p in procs:
        node = raw[p][0]
        train = {q: raw[q] for q in procs if q != p}
        fits = _fit_all(train)
        mults, notes = {}, {}
        for m in LEAK_METRICS:
            mults[m], notes[m] = held_out_node_multiplier(node, fits[m]["node_multipliers"], node_prior)
        note = notes[LEAK_METRICS[0]]
        if node in fits[LEAK_METRICS[0]]["node_multipliers"]:
            note = "fitted on " + ", ".join(q for q in train if raw[q][0] == node)
        empty = {m: _groups_without_data(train, m) for m in FIT_SETTINGS}
        folds[p] = dict(fits=fits, node=node, leak_multipliers=mults, node_note=note, groups_without_data=empty)

        # full model, in and out of sample
        base = {m: FOLDED_NODE_MULTIPLIERS[m].get(node, 1.0) for m in LEAK_METRICS}
        scale_in = tuple(full[m]["node_multipliers"][node] / base[m] for m in LEAK_METRICS)
        scale_out = tuple(mults[m] / base[m] for m in LEAK_METRICS)
        die_in = price_with(p, full_factors, scale_in)
        die_out = price_with(p, _factor_table(fits), scale_out)

        # the fit's linear surrogate, in and out of sample
        def surrogate(fit_res, mult_by_metric):
            out = {}
            for m in FIT_SETTINGS:
                mm = {node: mult_by_metric.get(m, 1.0)}
                bl = {node: base.get(m, 1.0)}
                out[m] = _predict(_items({p: raw[p]}, m), fit_res[m]["factors"], mm, bl)[p][0]
            return out

        s_in = surrogate(full, {m: full[m]["node_multipliers"][node] for m in LEAK_METRICS})
        s_out = surrogate(fits, mults)
        mc = ref.totals(p)
        for metric, parts in (("area_mm2", ("area_mm2",)), ("peak_dynamic_W", ("peak_dynamic_W",)),
                              ("leakage_W", LEAK_METRICS)):
            v_in = float(sum(die_in[c] for c in parts))
            v_out = float(sum(die_out[c] for c in parts))
            f_in = sum(s_in[c] for c in parts)
            f_out = sum(s_out[c] for c in parts)
            rows.append(dict(
                processor=p, metric=metric, mcpat=mc[metric], in_sample=v_in, out_of_sample=v_out,
                in_error_pct=100.0 * (v_in / mc[metric] - 1.0), out_error_pct=100.0 * (v_out / mc[metric] - 1.0),
                in_fit_error_pct=100.0 * (f_in / mc[metric] - 1.0),
                out_fit_error_pct=100.0 * (f_out / mc[metric] - 1.0),
                node=node, node_note=note if metric == "leakage_W" else ""))
    return dict(table=pd.DataFrame(rows), full=full, folds=folds, node_prior=node_prior)
