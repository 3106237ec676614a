"""Energy per counted event of one priced unit, McPAT's and this model's, measured by raising one statistic of
McPAT's input at a time (issue 26, session 12).

McPAT prices runtime as access counts times an energy per access; the energy of one kind of event of one unit is
the change of that unit's runtime dynamic power, times the interval, over the change of the count. Raising one
statistic (``read_accesses``, ``write_misses`` ...) of one component of the same input and running McPAT again
gives McPAT's own figure; pricing the same edited input with ``power.mcpat_xml.read`` gives this model's. This is
how the exported Xeon's L1 data cache was sized against McPAT: 0.725 nJ a read, 0.732 nJ a write, 0 more a read
miss and 1.455 nJ a write miss (its extra write and its four buffers) in McPAT, against 0.238 / 0.250 / 0 /
0.026 nJ here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import build, mcpat_tree, mcpat_xml


@dataclass(frozen=True)
class Variation:
    component: str      # McPAT component id, e.g. system.core0.dcache
    stat: str           # one of its statistics, e.g. read_accesses
    delta: float        # how much it is raised


def parse_variation(text: str, delta: float) -> Variation:
    """``component:stat`` (``system.core0.dcache:write_misses``)."""
    if text.count(":") != 1 or not all(text.split(":")):
        raise ValueError(f"--vary {text!r}: expected COMPONENT:STAT, e.g. system.core0.dcache:read_accesses")
    comp, stat = text.split(":")
    return Variation(comp, stat, float(delta))


def raised(xml: str, v: Variation) -> str:
    """``xml`` with statistic ``v.stat`` of component ``v.component`` raised by ``v.delta`` (an error if the
    component or its statistic is absent: a missing counter is never a zero)."""
    start = xml.find(f'id="{v.component}"')
    if start < 0:
        raise KeyError(f"component {v.component!r} is not in the input")
    end = xml.find("<component", start + 1)
    end = len(xml) if end < 0 else end
    m = re.search(rf'<stat name="{re.escape(v.stat)}" value="([^"]*)"', xml[start:end])
    if m is None:
        raise KeyError(f"component {v.component!r} has no statistic {v.stat!r} before its first sub-component")
    a, b = start + m.start(1), start + m.end(1)
    return xml[:a] + repr(float(m.group(1)) + v.delta) + xml[b:]


def seconds(xml: str) -> float:
    """The interval McPAT prices the input's counts over (the XML's activity, as this model reads it)."""
    return mcpat_xml.read(xml)[1].seconds


def line_runtime_W(tree, line: str) -> float:
    rows = tree[tree.line == line]
    if rows.empty:
        raise KeyError(f"no line {line!r} in the tree (lines: {', '.join(tree.line.head(20))} ...)")
    return float(rows.iloc[0]["runtime_dynamic_W"])


def model_tree(xml: str):
    p, a = mcpat_xml.read(xml)
    return mcpat_tree.tree(build(p, a).evaluate())


def energy_per_event_nJ(base_W: float, raised_W: float, secs: float, delta: float) -> float:
    return (raised_W - base_W) * secs / delta * 1e9
