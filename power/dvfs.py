"""Voltage and frequency: the V-f relation per node, named operating points, per-core assignments, TDP check.

V-f relation (alpha-power law, Sakurai-Newton): ``f(V) = k (V - Vt)^alpha / V`` with ``alpha = 1.5`` (velocity-
saturated short-channel devices) and an effective threshold ``Vt = 0.375 Vnom`` (it folds in the temperature and
the margins of a real pipeline). ``k`` is set so that ``f(Vnom)`` is the node's reference clock
(``power.tech.DeviceParams.f_ref_ghz``). The usable supply range is ``Vmin = 0.7 Vnom`` (below it SRAM cells lose
margin, so lower clocks keep Vmin) to ``Vmax = 1.35 Vnom`` (reliability limit). At 22 nm hp: 1.5 GHz -> 0.57 V,
2.5 GHz -> 0.76 V, 2.7 GHz -> 0.80 V, 3.5 GHz -> 0.98 V, highest clock 3.9 GHz at 1.08 V.

Changing V and f never changes area (the structures are built once; only ``Model.evaluate`` sees V and f).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tech import Technology

ALPHA = 1.5
VT_FRACTION = 0.375
VMIN_FRACTION = 0.70
VMAX_FRACTION = 1.35


@dataclass(frozen=True)
class VfCurve:
    vnom: float
    f_ref_MHz: float

    @property
    def vt(self) -> float:
        return VT_FRACTION * self.vnom

    @property
    def vmin(self) -> float:
        return VMIN_FRACTION * self.vnom

    @property
    def vmax(self) -> float:
        return VMAX_FRACTION * self.vnom

    def _g(self, v):
        v = np.asarray(v, dtype=float)
        return np.clip(v - self.vt, 0.0, None) ** ALPHA / v

    def frequency_MHz(self, vdd):
        """Highest clock at supply ``vdd`` (scalar or array)."""
        vdd = np.asarray(vdd, dtype=float)
        if np.any(vdd < self.vmin - 1e-9) or np.any(vdd > self.vmax + 1e-9):
            raise ValueError(f"vdd={vdd!r} is out of range: allowed {self.vmin:.3f} to {self.vmax:.3f} V")
        f = self.f_ref_MHz * self._g(vdd) / self._g(self.vnom)
        return float(f) if f.ndim == 0 else f

    @property
    def fmax_MHz(self) -> float:
        return self.frequency_MHz(self.vmax)

    @property
    def fmin_at_vmin_MHz(self) -> float:
        return self.frequency_MHz(self.vmin)

    def voltage(self, f_MHz: float) -> float:
        """Lowest supply that runs ``f_MHz`` (clocks below f(Vmin) run at Vmin)."""
        f = float(f_MHz)
        if not f > 0:
            raise ValueError(f"frequency {f_MHz!r} MHz is out of range: allowed > 0")
        if f > self.fmax_MHz * (1 + 1e-9):
            raise ValueError(f"frequency {f:g} MHz is out of range: this node reaches at most "
                             f"{self.fmax_MHz:.0f} MHz (at Vmax = {self.vmax:.3f} V)")
        if f <= self.fmin_at_vmin_MHz:
            return self.vmin
        lo, hi = self.vmin, self.vmax
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if self.frequency_MHz(mid) < f:
                lo = mid
            else:
                hi = mid
        return hi


def vf_curve(tech: Technology) -> VfCurve:
    return VfCurve(vnom=tech.vdd, f_ref_MHz=tech.dev.f_ref_ghz * 1000.0)


@dataclass(frozen=True)
class OperatingPoint:
    name: str
    MHz: float
    vdd: float


def operating_points(model, points: dict[str, float]) -> dict[str, OperatingPoint]:
    """Named clocks (MHz) -> operating points with the voltage from the node's V-f relation."""
    curve = vf_curve(model.tech)
    return {n: OperatingPoint(n, float(f), curve.voltage(f)) for n, f in points.items()}


def evaluate_point(model, point: OperatingPoint, **kw):
    """All cores at one operating point."""
    return model.evaluate(core_vdd=point.vdd, core_MHz=point.MHz, label=point.name, **kw)


def evaluate_assignment(model, assignment, points: dict[str, OperatingPoint], default: str = "normal", **kw):
    """Per-core voltage/frequency domains: ``assignment`` maps core index -> point name (or a list of names, one per
    core); cores not named run at ``default``."""
    n = model.platform.cores
    if isinstance(assignment, (list, tuple)):
        if len(assignment) != n:
            raise ValueError(f"assignment has {len(assignment)} entries: allowed exactly {n} (one per core)")
        names = list(assignment)
    else:
        names = [default] * n
        for i, name in assignment.items():
            if not (0 <= int(i) < n):
                raise ValueError(f"core index {i!r} is out of range: allowed 0 to {n - 1}")
            names[int(i)] = name
    unknown = sorted({x for x in names if x not in points})
    if unknown:
        raise ValueError(f"operating point(s) {unknown} unknown: allowed {sorted(points)}")
    v = np.array([points[x].vdd for x in names])
    f = np.array([points[x].MHz for x in names])
    label = ",".join(f"{k}x{names.count(k)}" for k in points if names.count(k))
    return model.evaluate(core_vdd=v, core_MHz=f, label=label, **kw)


@dataclass(frozen=True)
class TdpVerdict:
    ok: bool
    power_W: float
    budget_W: float
    margin_W: float          # budget - power (negative: over budget)
    metric: str

    @property
    def margin_pct(self) -> float:
        return 100.0 * self.margin_W / self.budget_W

    def __str__(self) -> str:
        word = "within" if self.ok else "OVER"
        return (f"{self.power_W:.1f} W {self.metric} vs budget {self.budget_W:.1f} W: {word} budget, margin "
                f"{self.margin_W:+.1f} W ({self.margin_pct:+.1f}%)")


def tdp_check(result, budget_W: float, metric: str = "auto") -> TdpVerdict:
    """Is the die within its power budget? ``metric`` 'peak' (peak dynamic + leakage, the TDP-class figure),
    'runtime' (from the run's activity) or 'auto' (runtime when the result has activity, else peak)."""
    if not budget_W > 0:
        raise ValueError(f"budget_W={budget_W!r} is out of range: allowed > 0")
    if metric == "auto":
        metric = "runtime" if result.model.has_runtime else "peak"
    if metric == "peak":
        p = result.peak_power_W
    elif metric == "runtime":
        if not result.model.has_runtime:
            raise ValueError("metric='runtime' needs a result priced with activity")
        p = result.runtime_power_W
    else:
        raise ValueError(f"metric={metric!r} is unknown: allowed 'auto', 'peak', 'runtime'")
    return TdpVerdict(ok=p <= budget_W, power_W=p, budget_W=float(budget_W), margin_W=float(budget_W) - p,
                      metric=metric)


def clock_range_MHz(tech: Technology) -> tuple[float, float]:
    """The clocks the V-f table of a node covers: from the clock at the lowest supply (Vmin) to the clock at the
    highest (Vmax). A per-core operating point outside it is refused (``check_clock``)."""
    curve = vf_curve(tech)
    return curve.fmin_at_vmin_MHz, curve.fmax_MHz


def check_clock(tech: Technology, MHz: float, where: str) -> None:
    """A ``ValueError`` naming ``where`` (e.g. 'core 7'), the clock and the allowed range when ``MHz`` is outside
    the node's V-f table."""
    lo, hi = clock_range_MHz(tech)
    if not (lo * (1 - 1e-9) <= MHz <= hi * (1 + 1e-9)):
        raise ValueError(f"{where}: clock {MHz:.0f} MHz is outside the V-f table of the {tech.node_nm:g} nm "
                         f"{tech.device} node: allowed {lo:.0f} to {hi:.0f} MHz (supply {vf_curve(tech).vmin:.3f} "
                         f"to {vf_curve(tech).vmax:.3f} V)")


def core_supplies(model) -> tuple[np.ndarray, np.ndarray]:
    """Each core's (supply V, clock MHz) for pricing a run: the clock each core ran at (``Platform.core_clocks_MHz``,
    else the platform clock) and the lowest supply that runs it on the node's V-f relation (per-core regulators,
    platforms.md §2). A clock below the table's lowest runs at Vmin; one above its highest is an error naming the
    core. A platform with a fixed supply (``Platform.vdd``, i.e. ``Technology.vdd`` set) keeps it on every core."""
    p = model.platform
    n = max(1, p.cores)
    clocks = np.asarray(p.core_clocks_MHz if p.core_clocks_MHz is not None else [p.clock_MHz] * n, dtype=float)
    if p.vdd:
        return np.full(n, float(p.vdd)), clocks
    curve = vf_curve(model.tech)
    volts = np.empty(n)
    for f in np.unique(clocks):          # a handful of distinct points: one solve each
        try:
            volts[clocks == f] = curve.voltage(f)
        except ValueError as e:
            i = int(np.flatnonzero(clocks == f)[0])
            raise ValueError(f"{p.name} core {i}: {e}") from None
    return volts, clocks
