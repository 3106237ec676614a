"""Calibration of the power model: per-structure scaling laws fitted on McPAT 1.3's sweep.

The circuit models in ``power.blocks`` give each structure's area, switched capacitance and leaking width from its
organisation (capacity, ports, associativity, widths) and the node's device table (``power.tech``: supply, Ioff and
its temperature dependence, gate leakage, long-channel reduction, per node and device type, as published). Their
absolute level, and the parts of McPAT's scaling the analytical blocks do not reproduce (CACTI's choice of array
organisation as capacity grows, its core models' growth with issue width and window size), are carried by one
multiplicative law per calibration group and metric:

    log k = sum_f theta[metric][group][f] * x_f(structure, platform)

with the features ``x_f`` of ``platform_features()``: a level per technology node, interpolated in log node size
between the nodes of ``LAW_NODES_NM``; for the core groups log issue width, in-order and threads per core, x86
decode (and log ROB size for the ROB alone); for arrays (caches, directories) log capacity; for routers log flit
width. No term depends on the device type or the temperature (see ``power.tech``). The laws are per structure
*class*, never per processor: a platform is priced from its organisation alone and no McPAT output is an input of
the model.

Groups (``power.model`` assigns each structure one): one per core unit McPAT prints a line for, so that each is
fitted on its own McPAT figure (``power.fit.UNIT_LINES``): ``l1`` (L1 caches with their buffers), ``btb``,
``bpred``, ``ibuf`` (instruction buffer), ``decoder``, ``rename``, ``scheduler`` (issue queues), ``rob``,
``regfile``, ``alu``, ``mul``, ``fpu``, ``bypass``, ``lsq``, ``tlb``; the parts of a core McPAT has no line for
(``pipeline``, ``undiff``: McPAT's undifferentiated core); ``l2p`` (a core's private L2: McPAT prices it with the
core's device and core type, and its energy per access barely grows with capacity, unlike a shared cache's),
``cache`` (shared L2/L3), ``dir`` (directories), ``bus`` and ``noc`` (routers: crossbar and arbiter),
``noc_buffer`` (routers' input buffers), ``mc``, ``io`` (PCIe), ``niu`` (NICs: their ports are McPAT's own published
figures, ``power.niu``, not PCIe's circuit estimates, so they do not share PCIe's law).

Metrics: ``area``, ``dyn`` (capacitance switched at peak), ``sub`` and ``gate`` (leaking widths), ``rt`` (runtime
energy per counted event relative to the peak energy per access: at most 1, so a counted access never costs more
than an access at peak rate; its only features are the node levels, in-order, threads and x86).

The coefficients live in ``calibration.json`` beside this file. They are produced by ``power.fit`` from the sweep
(``sim-scripts/mcpat_compare.py --fit --write``); the same command with ``--cross-validate`` measures how well the
laws predict groups of points the fit has not seen (whole templates, nodes, device types).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")

# One group per core unit McPAT prints a line for (power.fit fits each on that line as well as on the totals, so
# one unit's law cannot trade its error against another's), plus the parts of a core McPAT has no line for.
CORE_GROUPS = ("l1", "btb", "bpred", "ibuf", "decoder", "rename", "scheduler", "rob", "regfile", "alu", "mul", "fpu",
               "bypass", "lsq", "tlb", "pipeline", "undiff")
GROUPS = CORE_GROUPS + ("l2p", "cache", "dir", "bus", "noc", "noc_buffer", "mc", "io", "niu")
METRICS = ("area", "dyn", "sub", "gate", "rt")
ARRAY_GROUPS = ("l1", "l2p", "cache", "dir")
# Features the runtime law (energy per counted event relative to the energy per access at peak) may use: only
# ones whose sign is fixed (node levels, in-order, log threads, x86), so bounding every coefficient at 0
# (power.fit) keeps runtime energy per access at or below peak energy per access for every structure.
RT_FEATURES = ("inorder", "threads", "x86")

# Reference point of the features (x = 0): a 45 nm hp 4-wide out-of-order core with a 128-entry ROB, a 1 MB
# array. Chosen to sit inside the sweep so the intercepts are the level of a typical structure.
REF_NODE_NM = 45.0
REF_WIDTH = 4.0
REF_ROB = 128.0
MIN_ROB = 16.0
REF_CAPACITY_B = 1 << 20

# Nodes of the law's piecewise-linear node term (in log node size), as McPAT's device tables are per node and
# interpolated between them: a node between two of them takes a weighted mean of their coefficients; outside the
# range the nearest one.
LAW_NODES_NM = (22.0, 32.0, 45.0, 65.0, 90.0, 180.0)
NODE_FEATURES = tuple(f"n{n:g}" for n in LAW_NODES_NM)
# No law has a device-type or temperature term: how lstp and lop differ from hp (supply, Ioff, gate leakage,
# long-channel reduction) and how leakage rises with temperature come from the published device tables of
# ``power.tech`` alone, so a device type or temperature the sweep covers thinly is predicted, not extrapolated
# from a handful of fitted points (the sweep's lop points are nearly all one template, its lstp points three).


def node_weights(node_nm: float) -> dict[str, float]:
    """Hat-function weights of ``node_nm`` on ``LAW_NODES_NM`` (they sum to 1)."""
    ln = math.log(min(max(node_nm, LAW_NODES_NM[0]), LAW_NODES_NM[-1]))
    out = {f: 0.0 for f in NODE_FEATURES}
    for (a, b), (fa, fb) in zip(zip(LAW_NODES_NM, LAW_NODES_NM[1:]), zip(NODE_FEATURES, NODE_FEATURES[1:])):
        la, lb = math.log(a), math.log(b)
        if la <= ln <= lb:
            w = (ln - la) / (lb - la)
            out[fa], out[fb] = 1.0 - w, w
            return out
    return out


def feature_names(group: str, metric: str) -> tuple[str, ...]:
    """The features the law of ``group`` / ``metric`` uses (the fit solves exactly these coefficients)."""
    names = list(NODE_FEATURES)
    if metric == "rt":
        return tuple(names + (list(RT_FEATURES) if group in CORE_GROUPS else []))
    if group in CORE_GROUPS:
        # only the ROB's own law follows the window size: no other unit's size depends on it in McPAT
        names += ["width", "inorder", "threads", "x86"] + (["rob"] if group == "rob" else [])
    if group in ARRAY_GROUPS:
        names += ["capacity"]
    if group == "noc" and metric in ("area", "dyn"):
        # a router's crossbar grows as the square of the flit width, its buffers and links linearly: McPAT's
        # routers cost 4-5x the energy per cycle at twice the flit width (sweep: 256 vs 512 bits at 22 nm,
        # 128 vs 256 bits at 65 nm), more than the blocks' crossbar gives. Not for leakage: the blocks' crossbar
        # drivers already leak as flit^2 (McPAT: x2.9-4 per doubling), and a fitted term extrapolated from the
        # narrow flits of a fold without the 512-bit point put it at 8x McPAT's.
        names += ["flit"]
    return tuple(names)


def platform_features(p) -> dict[str, float]:
    """Features common to every structure of a platform (``power.config.Platform``)."""
    c = p.core
    w = node_weights(p.node_nm)
    return {
        **w,
        "width": math.log(max(1, c.issue_width) / REF_WIDTH),
        # only the ROB structure uses it, and a core with ROB 0 (McPAT's Cortex-A9) has none
        "rob": math.log(max(MIN_ROB, c.rob) / REF_ROB) if c.ooo else 0.0,
        "inorder": 0.0 if c.ooo else 1.0,
        "threads": math.log(max(1, c.threads)),
        "x86": 1.0 if c.x86 else 0.0,
        "capacity": 0.0,
        "flit": 0.0,
    }


REF_FLIT_BITS = 128


def noc_features(base: dict[str, float], flit_bits: float) -> dict[str, float]:
    """``base`` with the flit width of one network (routers)."""
    out = dict(base)
    out["flit"] = math.log(max(1.0, flit_bits) / REF_FLIT_BITS)
    return out


def array_features(base: dict[str, float], capacity_B: float) -> dict[str, float]:
    """``base`` with the capacity of one array (per instance)."""
    out = dict(base)
    out["capacity"] = math.log(max(1.0, capacity_B) / REF_CAPACITY_B)
    return out


def _load() -> dict:
    if not CALIBRATION_FILE.is_file():
        raise FileNotFoundError(f"{CALIBRATION_FILE.name} is missing beside power/calibration.py: re-create it with "
                                f"sim-scripts/mcpat_compare.py --fit --write")
    data = json.loads(CALIBRATION_FILE.read_text())
    for m in METRICS:
        for g in GROUPS:
            want = set(feature_names(g, m))
            got = set(data["laws"][m][g])
            if want != got:
                raise ValueError(f"{CALIBRATION_FILE.name}: law {m}/{g} has features {sorted(got)}, expected "
                                 f"{sorted(want)}: re-create it with sim-scripts/mcpat_compare.py --fit --write")
    return data


# {metric: {group: {feature: coefficient}}}; power.fit swaps it while fitting.
LAWS: dict[str, dict[str, dict[str, float]]] = _load()["laws"]


def factor(group: str, metric: str, x: dict[str, float]) -> float:
    """The calibration factor of one structure (``x``: its features)."""
    law = LAWS[metric][group]
    return math.exp(sum(coef * x[f] for f, coef in law.items()))
