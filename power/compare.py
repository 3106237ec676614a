"""Comparison of the model with McPAT's printed results for its example processors (used by the compare script
and the tolerance test)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import build
from . import mcpat_reference as ref
from .mcpat_xml import read

SHARED = Path(__file__).resolve().parents[2] / "shared"
MCPAT_INPUTS = SHARED / "data" / "mcpat" / "inputs"
CLASSES = ("cores", "caches", "noc", "mc", "io")


def inputs_dir() -> Path:
    if not MCPAT_INPUTS.is_dir():
        raise FileNotFoundError(f"McPAT example inputs not found at {MCPAT_INPUTS}: the comparison needs the "
                                f"shared data beside the project (../shared/data/mcpat/inputs)")
    return MCPAT_INPUTS


def price_example(name: str):
    """Our result for one of McPAT's example processors (read from McPAT's own XML)."""
    xml = inputs_dir() / ref.TOTALS[name][0]
    platform, activity = read(xml)
    return build(platform, activity).evaluate(label=name)


def totals_table() -> pd.DataFrame:
    """Per processor: ours vs McPAT for area, peak dynamic and leakage, with % error."""
    rows = []
    for name in ref.PROCESSORS:
        r = price_example(name)
        die = r.die
        mc = ref.totals(name)
        for metric, ours in (("area_mm2", die.area_mm2), ("peak_dynamic_W", die.peak_dynamic_W),
                             ("leakage_W", die.leakage_W)):
            rows.append(dict(processor=name, metric=metric, kvsim=float(ours), mcpat=mc[metric],
                             error_pct=100.0 * (float(ours) / mc[metric] - 1.0)))
    return pd.DataFrame(rows)


def class_table() -> pd.DataFrame:
    """Per processor and component class: ours vs McPAT (area, peak dynamic, leakage)."""
    rows = []
    for name in ref.PROCESSORS:
        bc = price_example(name).by_class()
        for cls in CLASSES:
            m = ref.CLASSES[name].get(cls)
            if m is None and cls not in bc.index:
                continue
            o = bc.loc[cls] if cls in bc.index else None
            for metric, i, col in (("area_mm2", 0, "area_mm2"), ("peak_dynamic_W", 1, "peak_dynamic_W"),
                                   ("leakage_W", None, "leakage_W")):
                mv = None if m is None else (m[2] + m[3] if i is None else m[i])
                ov = 0.0 if o is None else float(o[col])
                rows.append(dict(processor=name, cls=cls, metric=metric, kvsim=ov, mcpat=mv,
                                 error_pct=(100.0 * (ov / mv - 1.0)) if mv else float("nan")))
    return pd.DataFrame(rows)
