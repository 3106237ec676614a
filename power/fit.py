"""Fit the calibration laws of ``power.calibration`` on McPAT 1.3's sweep, and measure them out of sample.

Data: every point of ``../shared/data/mcpat/sweep`` (``index.csv`` with McPAT's totals and per-component figures;
the point's McPAT input XML, read with ``power.mcpat_xml.read``). Nothing of it is copied into the project: the fit
reads it at run time and writes only the fitted coefficients (``power/calibration.json``).

Method. Each point is priced once with every law at zero (factor 1): per structure its raw area, peak-rate
capacitance, runtime capacitance, leaking widths (as watts at the point's operating point), its McPAT component
(``Struct.component``) and its features. Every metric of a structure is then ``raw x exp(theta_g . x)`` (+ parts
that are not calibrated: PHYs, DRAM), so one metric's fit is a small nonlinear least-squares problem over the
coefficients ``theta`` of the eight groups, with residuals

* ``W_TOTAL x log(ours / McPAT)`` on the processor total of every point,
* ``W_COMPONENT x log(ours / McPAT)`` on every McPAT component the point has (cores, L2, L3, directories, NoC,
  memory controllers, NIU, PCIe) and on every core unit McPAT prints (``UNIT_LINES``: L1s, BTB, predictor,
  instruction buffer, decoder, rename, LSQ, MMU, register files, scheduler, ALUs, FPUs, multipliers, result bus,
  private L2), so each unit's law is set by its own McPAT figure,
* a smoothness pull ``SMOOTH x`` (second difference in log node) on the per-node levels, so a node without
  training points is interpolated from its neighbours, a weaker pull ``SLOPE x`` of neighbouring levels together,
  so a node beyond the trained ones takes about the nearest trained level, and a weak pull of the levels towards
  0 (``LEVEL_RIDGE``);
* a ridge pull ``RIDGE x theta`` on every other coefficient, so a feature the training data does not constrain
  (a device type left out) stays at the circuit model's own scaling (the device tables of ``power.tech``).

The loss is robust (soft L1 with scale ``F_SCALE`` in log error), close to the mean absolute error the
acceptance asks for, so a few points McPAT prices unlike the rest do not drag every law.

Runtime dynamic power is fitted after peak dynamic (``rt`` is the runtime energy per counted event relative to the
peak energy per access), with every ``rt`` coefficient bounded at 0, so a counted access never costs more than an
access at peak rate in any group. A structure's runtime is not bounded by its peak, as in McPAT (its peak is a
thermal-design access rate, not a maximum): McPAT's runtime figures are above its own peak in some component on
79 of the 122 points. ``summary`` reports runtime over every point and, as the acceptance asks, over the points
where McPAT's runtime is not above its peak in any component (the definition of sessions 9-10, kept).

``cross_validate(by)`` is k-fold cross-validation leaving out whole groups of points (``by`` = ``template``,
``tech_nm`` or ``device_type``): each fold refits every law without its points, then prices the held-out points with
the full model at those laws, and compares them with McPAT.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from . import calibration as cal

SWEEP = Path(__file__).resolve().parents[2] / "shared" / "data" / "mcpat" / "sweep"

# McPAT components (index.csv column prefixes) and the metrics compared: ours (calibration metric, Result column)
# and McPAT's column suffix / total column.
COMPONENTS = ("cores", "l2", "l3", "l1dir", "l2dir", "noc", "mc", "niu", "pcie")
# McPAT lines inside a core that are fit targets of their own (index.csv has them only inside cores_*; they are read
# from McPAT's printout, ``unit_figures``): target name -> (McPAT's line or lines, "-" marking one subtracted; our
# structures). Every unit McPAT
# prints, each in its own calibration group (power.calibration): fitted on the core totals alone, the unit laws
# traded one unit's error against another's (a 128 KB L1 at 1/40 of McPAT's area, the rename unit at 5-20x) and
# the trade failed on templates left out (leave-one-template-out area 40.8% -> 29.0% with these targets).
UNIT_LINES = {
    "l2p": ("L2", ("core.l2",)),
    "u_icache": ("Instruction Cache", ("core.ifu.icache",)),
    "u_btb": ("Branch Target Buffer", ("core.ifu.btb",)),
    "u_bpred": ("Branch Predictor", ("core.ifu.predictor",)),
    "u_ibuf": ("Instruction Buffer", ("core.ifu.inst_buffer",)),
    "u_decoder": ("Instruction Decoder", ("core.ifu.decoder",)),
    "u_rename": ("Renaming Unit", ("core.rename",)),
    "u_dcache": ("Data Cache", ("core.lsu.dcache",)),
    "u_lsq": (("LoadQ", "StoreQ", "Load/Store Queue"), ("core.lsu.lsq",)),
    "u_mmu": ("Memory Management Unit", ("core.mmu.itlb", "core.mmu.dtlb")),
    "u_regfile": ("Register Files", ("core.exu.regfile",)),
    "u_scheduler": ("Instruction Scheduler", ("core.scheduler.iq", "core.scheduler.rob")),
    "u_alu": ("Integer ALUs", ("core.exu.alus",)),
    "u_fpu": ("Floating Point Units (FPUs)", ("core.exu.fpus",)),
    "u_mul": ("Complex ALUs (Mul/Div)", ("core.exu.muls",)),
    "u_bypass": ("Results Broadcast Bus", ("core.exu.bypass",)),
}
SUB_COMPONENTS = {path: key for key, (_, paths) in UNIT_LINES.items() for path in paths}
FIT_COMPONENTS = COMPONENTS + tuple(UNIT_LINES)
METRIC_COLUMNS = {
    "area": ("area_mm2", "area_mm2", "area_mm2"),
    "dyn": ("peak_dynamic_W", "peak_dyn_W", "peak_dynamic_W"),
    "sub": ("subthreshold_leakage_W", "sub_leak_W", "subthreshold_leakage_W"),
    "gate": ("gate_leakage_W", "gate_leak_W", "gate_leakage_W"),
    "rt": ("runtime_dynamic_W", "rt_dyn_W", "runtime_dynamic_W"),
}
W_TOTAL = 3.0
W_COMPONENT = 1.0
RIDGE = 2.0
CAPACITY_RIDGE = 0.5   # every sweep template varies its cache sizes, so the capacity terms are well constrained
SMOOTH = 6.0
SLOPE = 0.2
LEVEL_RIDGE = 0.02
F_SCALE = 0.1
GROWTH_FEATURES = ("capacity", "width", "rob", "flit")
# ... except a private L2's energy per access with its capacity: McPAT's barely grows (x1.6 from 256 KB to 2 MB on
# the sweep's Xeon L2 variants; CACTI re-partitions a bigger array into more, similar sub-arrays), our
# fixed-organisation blocks' grows x6. The l2p law may flatten that growth down to this exponent (a bigger L2 still
# costs more per access: the blocks grow by capacity^0.8 or more).
ENERGY_CAPACITY_FLOOR = {"l2p": -0.6}
FOLD_KEYS = ("template", "tech_nm", "device_type")
FOLD_MAX_NFEV = 150   # evaluations per metric in a fold's refit (it starts from the full fit: see fit())


def sweep_dir() -> Path:
    if not (SWEEP / "index.csv").is_file():
        raise FileNotFoundError(f"McPAT sweep not found at {SWEEP}: the calibration needs the shared data beside "
                                f"the project (../shared/data/mcpat/sweep/index.csv)")
    return SWEEP


def sweep_index() -> pd.DataFrame:
    return pd.read_csv(sweep_dir() / "index.csv")


def unit_figures(index: pd.DataFrame) -> pd.DataFrame:
    """McPAT's figures for the core units of ``UNIT_LINES`` (``<key>_*`` columns like index.csv's component columns,
    chip totals, the sum of the unit's lines less those marked "-"; NaN where the point has none of them or the
    difference is not positive): McPAT prints a homogeneous core's area, peak and leakage
    per core and its runtime over all cores."""
    from .mcpat_tree import parse_out
    suffixes = {"area_mm2": "area_mm2", "peak_dynamic_W": "peak_dyn_W", "subthreshold_leakage_W": "sub_leak_W",
                "gate_leakage_W": "gate_leak_W", "runtime_dynamic_W": "rt_dyn_W"}
    cols = {f"{key}_{suf}": np.full(len(index), np.nan) for key in UNIT_LINES for suf in suffixes.values()}
    for i, (name, cores) in enumerate(zip(index.name, index.cores)):
        tree = parse_out((sweep_dir() / f"{name}.out").read_text()).drop_duplicates("line").set_index("line")
        for key, (line, _) in UNIT_LINES.items():
            lines = [x for x in ((line,) if isinstance(line, str) else line) if x.lstrip("-") in tree.index]
            if not [x for x in lines if not x.startswith("-")]:
                continue
            for m, suf in suffixes.items():
                v = sum(float(tree.loc[x.lstrip("-"), m]) * (-1 if x.startswith("-") else 1) for x in lines)
                cols[f"{key}_{suf}"][i] = v * (1 if m == "runtime_dynamic_W" else cores) if v > 0 else np.nan
    # One concat, not ``assign`` (which inserts the 80 columns one by one and makes pandas warn of fragmentation).
    return pd.concat([index, pd.DataFrame(cols, index=index.index)], axis=1)


def zero_laws() -> dict:
    return {m: {g: {f: 0.0 for f in cal.feature_names(g, m)} for g in cal.GROUPS} for m in cal.METRICS}


@contextmanager
def laws(values: dict):
    """Temporarily price with ``values`` ({metric: {group: {feature: coefficient}}})."""
    saved = cal.LAWS
    cal.LAWS = values
    try:
        yield
    finally:
        cal.LAWS = saved


def price_point(name: str):
    """Our result for one sweep point (read from its McPAT XML), with the current laws."""
    from . import build
    from .mcpat_xml import read
    p, a = read(sweep_dir() / f"{name}.xml")
    return build(p, a).evaluate(label=name)


class Raw:
    """Every structure of every sweep point at unit factors: the data one metric's fit works on."""

    def __init__(self, index: pd.DataFrame | None = None):
        from . import build
        from .mcpat_xml import read
        self.index = unit_figures(sweep_index() if index is None else index)
        rows = []
        with laws(zero_laws()):
            for i, name in enumerate(self.index.name):
                p, a = read(sweep_dir() / f"{name}.xml")
                m = build(p, a)
                r = m.evaluate()
                df = r.structures
                secs = a.seconds
                for k, s in enumerate(m.structs):
                    if not s.on_die:
                        continue
                    fixed = {"area": 0.0, "dyn": s.fixed_peak_W, "sub": s.fixed_leak_W, "gate": 0.0,
                             "rt": s.fixed_runtime_J / secs + s.idle_fixed_W}
                    row = dict(point=i, component=s.component, sub_component=SUB_COMPONENTS.get(s.path),
                               group=s.group, x=s.x)
                    for met, (col, _, _) in METRIC_COLUMNS.items():
                        v = float(df[col].iloc[k])
                        row[f"fixed_{met}"] = fixed[met]
                        row[f"raw_{met}"] = max(0.0, v - fixed[met])
                    rows.append(row)
        self.rows = pd.DataFrame(rows)
        self.comp_index = {c: j for j, c in enumerate(FIT_COMPONENTS)}
        self.n_points = len(self.index)

    def subset(self, points: np.ndarray) -> "Raw":
        """The same data restricted to the points ``points`` (positions in the index), renumbered."""
        out = object.__new__(Raw)
        out.index = self.index.iloc[points].reset_index(drop=True)
        remap = {int(p): j for j, p in enumerate(points)}
        rows = self.rows[self.rows.point.isin(remap)].copy()
        rows["point"] = rows.point.map(remap)
        out.rows = rows.reset_index(drop=True)
        out.comp_index = self.comp_index
        out.n_points = len(points)
        return out


class _Problem:
    """One metric's least-squares problem on a ``Raw``."""

    def __init__(self, raw: Raw, metric: str, dyn_theta: dict | None = None, start: dict | None = None,
                 max_nfev: int = 400):
        self.start = start
        self.max_nfev = max_nfev
        self.metric = metric
        rows = raw.rows
        self.names = [(g, f) for g in cal.GROUPS for f in cal.feature_names(g, metric)]
        col = {gf: j for j, gf in enumerate(self.names)}
        n, k = len(rows), len(self.names)
        X = np.zeros((n, k))
        for i, (g, x) in enumerate(zip(rows.group, rows.x)):
            for f in cal.feature_names(g, metric):
                X[i, col[(g, f)]] = x[f]
        self.X = X
        self.raw = rows[f"raw_{metric}"].to_numpy()
        self.fixed = rows[f"fixed_{metric}"].to_numpy()
        self.point = rows.point.to_numpy()
        comp = rows.component.map(raw.comp_index)
        self.comp = comp.fillna(-1).astype(int).to_numpy()
        self.sub_comp = rows.sub_component.map(raw.comp_index).fillna(-1).astype(int).to_numpy()
        self.n_points = raw.n_points
        _, suffix, total = METRIC_COLUMNS[metric]
        idx = raw.index
        self.target_total = idx[total].to_numpy(dtype=float)
        self.target_comp = np.column_stack([idx.get(f"{c}_{suffix}", pd.Series(np.nan, index=idx.index))
                                            .to_numpy(dtype=float) for c in FIT_COMPONENTS])
        if metric == "rt":
            dp = _Problem(raw, "dyn")
            dyn_k = np.exp(dp.X @ dp.theta_vector(dyn_theta))
            self.raw = self.raw * dyn_k
        self._aggregators()
        self.penalty = np.array([LEVEL_RIDGE if f in cal.NODE_FEATURES else CAPACITY_RIDGE if f == "capacity"
                                 else RIDGE for _, f in self.names])
        # second differences of each group's per-node levels, in log node size
        rows_s = []
        lnodes = np.log(cal.LAW_NODES_NM)
        for g in cal.GROUPS:
            js = [col[(g, f)] for f in cal.NODE_FEATURES]
            for a, b, c in zip(range(len(js)), range(1, len(js)), range(2, len(js))):
                h1, h2 = lnodes[b] - lnodes[a], lnodes[c] - lnodes[b]
                r = np.zeros(k)
                r[js[a]], r[js[b]], r[js[c]] = 1.0 / h1, -(1.0 / h1 + 1.0 / h2), 1.0 / h2
                rows_s.append(r * SMOOTH * (h1 + h2) / 2.0)
        # and a weaker pull of neighbouring levels together, so a node outside the training nodes takes about
        # the nearest trained level instead of following a fitted slope (log-linear extrapolation ran to x10 at
        # 180 nm from 22-65 nm data)
        for g in cal.GROUPS:
            js = [col[(g, f)] for f in cal.NODE_FEATURES]
            for a, b in zip(range(len(js)), range(1, len(js))):
                r = np.zeros(k)
                r[js[a]], r[js[b]] = -SLOPE, SLOPE
                rows_s.append(r)
        self.smooth = np.array(rows_s)

    def theta_vector(self, laws_m: dict) -> np.ndarray:
        return np.array([laws_m[g][f] for g, f in self.names])

    def _aggregators(self):
        from scipy import sparse
        n = len(self.raw)
        ones = np.ones(n)
        self.A_tot = sparse.csr_matrix((ones, (self.point, np.arange(n))), shape=(self.n_points, n))
        ok = np.flatnonzero(self.comp >= 0)
        sub = np.flatnonzero(self.sub_comp >= 0)
        k = len(FIT_COMPONENTS)
        cell = np.concatenate([self.point[ok] * k + self.comp[ok], self.point[sub] * k + self.sub_comp[sub]])
        cols = np.concatenate([ok, sub])
        self.A_comp = sparse.csr_matrix((np.ones(len(cols)), (cell, cols)), shape=(self.n_points * k, n))
        self.target_comp_flat = self.target_comp.reshape(-1)
        self.w_comp_flat = np.full(self.n_points * len(FIT_COMPONENTS), W_COMPONENT)

    def _scalable(self, theta):
        """Per structure: the calibrated value and its derivative weight."""
        s = self.raw * np.exp(self.X @ theta)
        return s + self.fixed, s

    def struct_values(self, theta: np.ndarray) -> np.ndarray:
        return self._scalable(theta)[0]

    def _parts(self, theta):
        v, s = self._scalable(theta)
        total = self.A_tot @ v
        comp = self.A_comp @ v
        mask = np.isfinite(self.target_comp_flat) & (self.target_comp_flat > 0) & (comp > 0)
        return v, s, total, comp, mask

    def residuals(self, theta):
        _, _, total, comp, mask = self._parts(theta)
        r_tot = W_TOTAL * np.log(np.maximum(total, 1e-30) / self.target_total)
        r_comp = self.w_comp_flat[mask] * np.log(comp[mask] / self.target_comp_flat[mask])
        return np.concatenate([r_tot, r_comp, self.penalty * theta, self.smooth @ theta])

    def jacobian(self, theta):
        _, s, total, comp, mask = self._parts(theta)
        sX = s[:, None] * self.X
        j_tot = W_TOTAL * (self.A_tot @ sX) / np.maximum(total, 1e-30)[:, None]
        j_comp = self.w_comp_flat[mask][:, None] * (self.A_comp[mask] @ sX) / comp[mask][:, None]
        return np.vstack([j_tot, j_comp, np.diag(self.penalty), self.smooth])

    def solve(self) -> dict:
        from scipy.optimize import least_squares
        # the laws may steepen the circuit model's growth with capacity, width and window but never reverse it
        # (a negative exponent could make a bigger array or a wider core smaller or cheaper): bounded at 0
        lb = np.array([(ENERGY_CAPACITY_FLOOR.get(g, 0.0) if f == "capacity" and self.metric in ("dyn", "rt")
                        else 0.0) if f in GROWTH_FEATURES else -np.inf for g, f in self.names])
        # runtime energy per counted event never above the energy per access at peak (the same structure's):
        # every runtime coefficient <= 0 (cal.RT_FEATURES are all >= 0), so its factor is <= 1 everywhere
        ub = np.full(len(self.names), 0.0 if self.metric == "rt" else np.inf)
        x0 = np.zeros(len(self.names)) if self.start is None else self.theta_vector(self.start)
        x0 = np.minimum(np.maximum(x0, lb), np.where(np.isfinite(ub), ub - 1e-9, np.inf))
        sol = least_squares(self.residuals, x0, jac=self.jacobian, method="trf", bounds=(lb, ub),
                            loss="soft_l1", f_scale=F_SCALE, x_scale="jac", max_nfev=self.max_nfev)
        out = {g: {} for g in cal.GROUPS}
        for (g, f), v in zip(self.names, sol.x):
            out[g][f] = float(v)
        return out


def fit(raw: Raw, start: dict | None = None, max_nfev: int = 400) -> dict:
    """Every law fitted on ``raw``: {metric: {group: {feature: coefficient}}}. ``start``: laws to start the
    search from (default all 0; the cross-validation starts each fold from the full fit to save time: the
    optimum is the fold's own, only the path to it is shorter). ``max_nfev``: evaluations per metric."""
    out = {}
    for m in ("area", "dyn", "sub", "gate"):
        out[m] = _Problem(raw, m, start=None if start is None else start[m], max_nfev=max_nfev).solve()
    out["rt"] = _Problem(raw, "rt", dyn_theta=out["dyn"], start=None if start is None else start["rt"],
                         max_nfev=max_nfev).solve()
    return out


def rounded(values: dict, digits: int = 4) -> dict:
    return {m: {g: {f: round(v, digits) for f, v in gv.items()} for g, gv in mv.items()} for m, mv in values.items()}


def write(values: dict, path: Path = cal.CALIBRATION_FILE) -> Path:
    path.write_text(json.dumps({"source": "McPAT 1.3 sweep (sim-scripts/mcpat_compare.py --fit --write)",
                                "laws": rounded(values)}, indent=1) + "\n")
    return path


TABLE_METRICS = {  # column of the comparison table: (our Result die column(s), McPAT index.csv column)
    "area_mm2": (("area_mm2",), "area_mm2"),
    "peak_dynamic_W": (("peak_dynamic_W",), "peak_dynamic_W"),
    "subthreshold_leakage_W": (("subthreshold_leakage_W",), "subthreshold_leakage_W"),
    "gate_leakage_W": (("gate_leakage_W",), "gate_leakage_W"),
    "total_leakage_W": (("subthreshold_leakage_W", "gate_leakage_W"), "total_leakage_W"),
    "runtime_dynamic_W": (("runtime_dynamic_W",), "runtime_dynamic_W"),
}


def runtime_over_peak(pt: pd.Series) -> bool:
    """Whether McPAT prices the point's runtime dynamic power above its own peak, in total or in any component
    (its templates' activity counts exceed its peak access rates). Until session 11 ours was capped at the peak
    structure by structure, so such a point could not be matched; the runtime summary still sets these points
    apart."""
    over = pt["runtime_dynamic_W"] > pt["peak_dynamic_W"]
    for c in COMPONENTS:
        rt, pk = pt.get(f"{c}_rt_dyn_W", np.nan), pt.get(f"{c}_peak_dyn_W", np.nan)
        over = over or bool(rt == rt and pk == pk and rt > pk * (1 + 1e-9))
    return bool(over)


def compare_points(index: pd.DataFrame, values: dict | None = None) -> pd.DataFrame:
    """One row per point and metric: ours (full model, at ``values`` or the current laws) vs McPAT."""
    rows = []
    with laws(values if values is not None else cal.LAWS):
        for _, pt in index.iterrows():
            die = price_point(pt["name"]).die
            for metric, (cols, mcol) in TABLE_METRICS.items():
                ours = float(sum(die[c] for c in cols))
                mc = float(pt[mcol])
                rows.append(dict(name=pt["name"], template=pt["template"], group=pt["group"],
                                 tech_nm=pt["tech_nm"], device_type=pt["device_type"], metric=metric, kvsim=ours,
                                 mcpat=mc, error_pct=100.0 * (ours / mc - 1.0),
                                 mcpat_runtime_over_peak=runtime_over_peak(pt)))
    return pd.DataFrame(rows)


def fold_values(index: pd.DataFrame, by: str) -> list:
    """The values of ``by`` in the order the folds run (first appearance in the index)."""
    if by not in FOLD_KEYS:
        raise ValueError(f"by={by!r}: allowed {', '.join(FOLD_KEYS)}")
    return list(pd.unique(index[by]))


def cross_validate(raw: Raw, by: str, start: dict | None = None, max_nfev: int = FOLD_MAX_NFEV,
                   only: list | None = None) -> pd.DataFrame:
    """k-fold cross-validation leaving out every value of ``by`` in turn: the held-out points' comparison rows
    (``compare_points``), priced with laws fitted without them; column ``fold`` names the held-out value and
    ``laws`` holds each fold's laws (for ``explain``). ``start``: laws each fold's search starts from (see
    ``fit``); ``max_nfev``: evaluations per metric in a fold's fit; ``only``: run only the folds of these values
    (each still fitted on every other point of ``raw``)."""
    values = fold_values(raw.index, by)
    if only is not None:
        unknown = [v for v in only if v not in values]
        if unknown:
            raise ValueError(f"fold value(s) {unknown} of {by!r} are not in the sweep: allowed {values}")
        values = [v for v in values if v in only]
    out = []
    keys = raw.index[by].to_numpy()
    for value in values:
        train = np.flatnonzero(keys != value)
        test = np.flatnonzero(keys == value)
        fold_laws = rounded(fit(raw.subset(train), start=start, max_nfev=max_nfev))
        tab = compare_points(raw.index.iloc[test], fold_laws)
        out.append(tab.assign(fold=f"{by}={value}", laws=[fold_laws] * len(tab)))
    return pd.concat(out, ignore_index=True)


# McPAT component columns of index.csv and our report classes / McPAT components that make them up
_COMPONENT_NAMES = {"cores": "cores (with L1s and private L2)", "l2": "shared L2", "l3": "L3", "l1dir": "L1 directory",
                    "l2dir": "L2 directory", "noc": "NoC", "mc": "memory controllers", "niu": "NIU", "pcie": "PCIe"}
_COMPONENT_SUFFIX = {"area_mm2": "area_mm2", "peak_dynamic_W": "peak_dyn_W", "subthreshold_leakage_W": "sub_leak_W",
                     "gate_leakage_W": "gate_leak_W", "runtime_dynamic_W": "rt_dyn_W"}


def component_errors(name: str, metric: str, values: dict | None = None) -> pd.DataFrame:
    """One sweep point's metric per McPAT component: ours (at ``values`` or the current laws) vs McPAT's, with the
    component's share of the total error (``excess`` = ours - McPAT, in the metric's unit)."""
    idx = sweep_index().set_index("name").loc[name]
    with laws(values if values is not None else cal.LAWS):
        r = price_point(name)
    return _component_rows(r, idx, metric)


def _component_rows(r, idx: pd.Series, metric: str) -> pd.DataFrame:
    s = r.structures
    parts = (["subthreshold_leakage_W", "gate_leakage_W"] if metric == "total_leakage_W" else [metric])
    comp = pd.Series([st.component for st in r.model.structs], index=s.index)
    rows = []
    for c in COMPONENTS:
        mc = sum(float(idx.get(f"{c}_{_COMPONENT_SUFFIX[m]}", np.nan)) for m in parts)
        ours = float(sum(s.loc[(comp == c) & s.on_die, m].sum() for m in parts))
        if not (mc == mc) and ours == 0.0:
            continue
        mc = 0.0 if mc != mc else mc
        rows.append(dict(component=c, kvsim=ours, mcpat=mc, excess=ours - mc))
    return pd.DataFrame(rows)


DEVICE_CODES = {"hp": 0, "lstp": 1, "lop": 2}   # index.csv's device_type
SOCKET_METRICS = ("area_mm2", "peak_dynamic_W", "total_leakage_W")
_SHARED = {"l2": "shared cache", "l3": "shared cache"}


def socket_components(result, metrics=SOCKET_METRICS) -> pd.DataFrame:
    """Where a priced socket (an exported platform, no McPAT breakdown of its own) would stand against McPAT, per
    McPAT component: ours, and our ratio to McPAT on the same component of the sweep points at the socket's node and
    device type (median over them; for the NoC only points of the same kind, bus or routers), and McPAT's figure
    that ratio implies (ours / ratio). McPAT counts every NIU on the die, so an off-die NIC is listed with
    ``on_die`` False but belongs to McPAT's total. Shared L2s and L3s are one model (McPAT's and ours), so their
    ratios are pooled. A component whose ratio has no sweep point (``n`` 0) keeps ours."""
    p = result.model.platform
    index = sweep_index()
    same = index[(index.tech_nm == p.node_nm) & (index.device_type == DEVICE_CODES[p.device])]
    routers = any(n.kind != "bus" for n in p.nocs)
    ratios: dict[tuple[str, str], list[float]] = {}
    for _, pt in same.iterrows():
        r = price_point(pt["name"])
        for m in metrics:
            for _, row in _component_rows(r, pt, m).iterrows():
                if row.component == "noc" and bool(pt.noc_type) != routers:
                    continue
                if row.mcpat > 0 and row.kvsim > 0:
                    ratios.setdefault((_SHARED.get(row.component, row.component), m), []).append(row.kvsim / row.mcpat)
    s = result.structures
    comp = pd.Series([st.component for st in result.model.structs], index=s.index)
    rows = []
    for c in COMPONENTS:
        mine = s[comp == c]
        if mine.empty:
            continue
        row = dict(component=c, on_die=bool(mine.on_die.all()))
        for m in metrics:
            v = float(mine[["subthreshold_leakage_W", "gate_leakage_W"]].to_numpy().sum() if m == "total_leakage_W"
                      else mine[m].sum())
            rs = ratios.get((_SHARED.get(c, c), m), [])
            ratio = float(np.median(rs)) if rs else 1.0
            row.update({m: v, f"{m}_ratio": ratio, f"{m}_n": len(rs), f"{m}_mcpat_implied": v / ratio})
        rows.append(row)
    return pd.DataFrame(rows)


def explain(row: pd.Series, index: pd.DataFrame | None = None, by: str | None = None) -> str:
    """Why one (point, metric) of a comparison table is off: McPAT's own runtime above its peak; in a fold, how
    many training points share its device type, template and node; and the McPAT component that carries most of
    the difference (ours / McPAT)."""
    index = sweep_index() if index is None else index
    pt = index.set_index("name").loc[row["name"]]
    why = []
    if row.metric == "runtime_dynamic_W" and pt.runtime_dynamic_W > pt.peak_dynamic_W:
        why.append(f"McPAT's runtime {pt.runtime_dynamic_W:.3g} W is above its own peak {pt.peak_dynamic_W:.3g} W "
                   f"(its counts exceed its own peak access rates)")
    elif row.metric == "runtime_dynamic_W" and runtime_over_peak(pt):
        over = [c for c in COMPONENTS if pt.get(f"{c}_rt_dyn_W", 0) > pt.get(f"{c}_peak_dyn_W", np.inf)]
        why.append(f"McPAT's runtime is above its own peak in {', '.join(over)} (kvsim: at most the peak energy "
                   f"per access)")
    if by is not None:
        train = index[index[by] != pt[by]]
        dev = int((train.device_type == pt.device_type).sum())
        tmpl = int((train.template == pt.template).sum())
        node = int((train.tech_nm == pt.tech_nm).sum())
        why.append(f"training points with its device type {dev}, template {tmpl}, node {node}")
    laws_ = row.get("laws") if isinstance(row.get("laws"), dict) else None
    comps = component_errors(row["name"], row.metric, laws_)
    if not comps.empty:
        c = comps.loc[comps.excess.abs().idxmax()]
        why.append(f"mostly {_COMPONENT_NAMES[c.component]}: {c.kvsim:.3g} vs {c.mcpat:.3g}")
    if pt.machine_type == 1:
        why.append("in-order core")
    elif pt.ROB == 0:
        why.append("out-of-order core without a ROB (ROB 0)")
    return "; ".join(why)


RUNTIME_AT_OR_BELOW_PEAK = "runtime_dynamic_W (McPAT runtime <= its peak in every component)"


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per metric: mean and median absolute % error, the worst point and its error; runtime also over the points
    where McPAT's own runtime is not above its peak (our runtime never is: the rest cannot be matched)."""
    rows = []
    parts = list(table.groupby("metric", sort=False))
    if "mcpat_runtime_over_peak" in table:
        rt = table[(table.metric == "runtime_dynamic_W") & ~table.mcpat_runtime_over_peak.astype(bool)]
        if len(rt):
            parts.append((RUNTIME_AT_OR_BELOW_PEAK, rt))
    for metric, g in parts:
        a = g.error_pct.abs()
        w = g.loc[a.idxmax()]
        rows.append(dict(metric=metric, mae_pct=float(a.mean()), median_pct=float(a.median()),
                         within_15=float((a <= 15).mean()), over_35=int((a > 35).sum()), worst=w["name"],
                         worst_pct=float(w.error_pct)))
    return pd.DataFrame(rows)




