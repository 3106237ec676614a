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
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from . import calibration as cal
from . import mcpat_reference as ref

FIT_SETTINGS = {
    "area_mm2": dict(w_total=12.0, w_class=2.0, reg=0.3),
    "peak_dynamic_W": dict(w_total=12.0, w_class=1.0, reg=0.1),
    "subthreshold_leakage_W": dict(w_total=12.0, w_class=1.0, reg=0.5),
    "gate_leakage_W": dict(w_total=12.0, w_class=1.0, reg=0.5),
}
_CLASS_INDEX = {"area_mm2": 0, "peak_dynamic_W": 1, "subthreshold_leakage_W": 2, "gate_leakage_W": 3}


@contextmanager
def _unit_factors():
    saved = {g: dict(v) for g, v in cal.FACTORS.items()}
    try:
        for g in cal.FACTORS:
            cal.FACTORS[g] = {k: 1.0 for k in cal.FACTORS[g]}
        yield
    finally:
        cal.FACTORS.clear()
        cal.FACTORS.update(saved)


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


def fit(metric: str, raw=None) -> dict:
    from scipy.optimize import least_squares
    raw = raw or raw_sums()
    groups = list(cal.FACTORS)
    leak = "leakage" in metric
    nodes = sorted({k for k, _ in raw.values()}) if leak else []
    s = FIT_SETTINGS[metric]
    ci = _CLASS_INDEX[metric]
    ti = {"area_mm2": 1, "peak_dynamic_W": 2, "subthreshold_leakage_W": 3, "gate_leakage_W": 4}[metric]

    def predict(x):
        k = dict(zip(groups, np.exp(x[:len(groups)])))
        mult = dict(zip(nodes, np.exp(x[len(groups):])))
        out = {}
        for p, (node, df) in raw.items():
            tot, cls = 0.0, {}
            for (c, g), row in df.iterrows():
                v = row[metric] * k[g] * mult.get(node, 1.0)
                tot += v
                cls[c] = cls.get(c, 0.0) + v
            out[p] = (tot, cls)
        return out

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
