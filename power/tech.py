"""Technology parameters: feature size, supply, capacitances, leakage currents, per node and device type.

Device types follow ITRS (as McPAT and CACTI do):

* ``hp``   high performance (logic of server and desktop chips),
* ``lstp`` low standby power (low leakage, slower),
* ``lop``  low operating power (lower Vdd, mobile chips).

Nodes in the table: 180, 90, 65, 45, 32 and 22 nm (the ITRS-class nodes McPAT-era tools cover). A node between two
table nodes (40 nm, 28 nm, ...) is interpolated geometrically (log-linear in feature size). A node below 22 nm
(down to ``MIN_NODE_NM``) is **extrapolated** from 22 nm with these documented rules, which follow the post-Dennard
trend (FinFET era) rather than classical scaling:

* lengths scale with F; areas with F^2 (no extra density boost from FinFETs is assumed);
* gate and wire capacitance per unit length stay constant, so capacitance per device scales with F;
* Vdd falls by 2.5% per node step (x0.7 in F), i.e. ``Vdd = Vdd22 * (F/22)^0.07``, floored at 0.6 V for hp
  (0.5 V for lop, 0.7 V for lstp);
* subthreshold leakage per um of width stays at the 22 nm value (FinFETs held it roughly flat), gate leakage per
  um likewise;
* the V-f reference frequency rises 2% per node step.

These are estimates: figures below 22 nm are for trend studies, not sign-off. Nodes above 180 nm or below 5 nm
raise ``ValueError``.

Vdd, Ioff per um (300 to 400 K), gate leakage per um and the long-channel leakage reduction are the ITRS roadmap
device figures as CACTI and McPAT tabulate them (see ``_TABLE``); Vth and the gate capacitance are ITRS-class
estimates. Subthreshold leakage is given at 300 K; its temperature dependence follows the published Ioff(T) tables
and its supply dependence McPAT's power law (``IOFF_VDD_EXPONENT``); gate current does not depend on the supply
(``gate_scale``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

DEVICE_TYPES = ("hp", "lstp", "lop")
MIN_NODE_NM = 5.0
MAX_NODE_NM = 180.0
TABLE_NODES = (180.0, 90.0, 65.0, 45.0, 32.0, 22.0)


@dataclass(frozen=True)
class DeviceParams:
    """One node x device type."""

    vdd: float          # nominal supply, V
    vth: float          # threshold voltage at 300 K, V
    ioff_um: float      # subthreshold leakage of an off nMOS, A per um of width at 300 K and nominal Vdd
    igate_um: float     # gate leakage, A per um of width at nominal Vdd
    f_ref_ghz: float    # clock a server-class core reaches at nominal Vdd (anchor of the V-f relation, power.dvfs);
    #                     hp values follow shipped server parts, which plateaued near 3 GHz (22 nm: 2.7 GHz at
    #                     nominal Vdd, as the Xeon E5-2697 v2's base clock); lstp/lop values are assumed


@dataclass(frozen=True)
class Technology:
    """Everything the component models need for one node, device type and temperature."""

    node_nm: float
    device: str
    temperature_K: float
    dev: DeviceParams
    long_channel: bool = False

    @property
    def F_um(self) -> float:
        return self.node_nm * 1e-3

    @property
    def F_array_um(self) -> float:
        """Feature size of memory-array layout (CACTI-derived in McPAT); see ``AREA_NODE_NM``."""
        return self.node_nm_area * 1e-3

    @property
    def F_leak_um(self) -> float:
        """Feature size that sets leaking device widths: McPAT sizes its 180 nm devices as it lays them out, at
        ``AREA_NODE_NM`` (the same Alpha 21364 at 90 and 180 nm leaks 25.5x more subthreshold power at 90 nm in
        McPAT, the device tables' 38x current-times-supply ratio at 380 K times a width ratio of 0.67: 90/134 nm,
        where the drawn 180 nm gives 0.5); equal to the node elsewhere."""
        return self.node_nm_area * 1e-3

    @property
    def node_nm_area(self) -> float:
        """Feature size used for layout area. Equal to the node, except at 180 nm (see ``AREA_NODE_NM``)."""
        return AREA_NODE_NM.get(self.node_nm, self.node_nm)

    @property
    def F2_mm2(self) -> float:
        """Area of one F x F square in mm^2 (layout feature size)."""
        return (self.node_nm_area * 1e-6) ** 2

    @property
    def vdd(self) -> float:
        return self.dev.vdd

    # Capacitances (F). Gate capacitance per um of width ~1 fF/um across nodes (ITRS); a minimum transistor is
    # about 2F wide. Local wire capacitance ~0.2 fF/um, global ~0.25 fF/um with repeaters.
    @property
    def c_gate_min(self) -> float:
        return 1.0e-15 * 2 * self.F_um

    @property
    def c_wire_per_um(self) -> float:
        return 0.20e-15

    @property
    def c_wire_per_mm(self) -> float:
        return 0.20e-12

    def subthreshold_scale(self, vdd: float | None = None, temperature_K: float | None = None) -> float:
        """Ioff(T, V) / Ioff(300 K, Vnom).

        Temperature: the published Ioff(T) tables of the node and device type (``IOFF_VS_TEMPERATURE``; about x2 to
        x20 from 300 K to 380 K depending on node and device). Supply: McPAT's device tables, Ioff x (V/Vnom)^k
        with k per node and device type (``IOFF_VDD_EXPONENT``).
        """
        v = self.dev.vdd if vdd is None else vdd
        t = self.temperature_K if temperature_K is None else temperature_K
        return ioff_temperature_ratio(self.node_nm, self.device, t) * (v / self.dev.vdd) ** ioff_vdd_exponent(
            self.node_nm, self.device)

    def long_channel_factor(self, share: float) -> float:
        """Subthreshold leakage of a block whose ``share`` of devices is long-channel, relative to all nominal
        devices (1 when the technology does not use long-channel devices)."""
        if not self.long_channel:
            return 1.0
        return (1.0 - share) + share * long_channel_reduction(self.node_nm, self.device)

    def gate_scale(self, vdd: float | None = None) -> float:
        """Igate(V) / Igate(Vnom), as McPAT prices it: 1. McPAT (CACTI's device tables) keeps the gate current per
        um at the table's value whatever supply the input sets, so gate-leakage power grows only as V. The sweep
        shows it: Xeon cores at a set 1.25 V on 65 nm LOP devices (nominal 0.8 V) against HP (nominal 1.1 V) leak
        0.225x the gate power in McPAT, the tables' current ratio at one supply (0.235x); a (V/Vnom)^4 tunnelling
        law gave them 1.1x, five times McPAT's figure."""
        return 1.0


# Device figures per table node and device type: Vdd, subthreshold leakage of an off nMOS per um of width at 300 K
# (``ioff_um``) and gate leakage per um (``igate_um``) are the ITRS 2005-2007 roadmap values (computed with MASTAR)
# as CACTI 6.5 and McPAT 1.3 tabulate them; the temperature dependence of Ioff is in ``IOFF_VS_TEMPERATURE`` and the
# long-channel reduction in ``LONG_CHANNEL_REDUCTION`` (same source). The calibration laws (``power.calibration``)
# carry one level per node and structure group on top (the leaking width of our circuit estimates is not McPAT's),
# but no per-device or per-temperature term: how lstp and lop leak relative to hp, and how leakage rises with
# temperature, come from these tables alone. 180 nm has hp only (ITRS 2000 projection, CACTI); its lstp and lop
# rows are assumed (180 nm is kept for McPAT's Alpha 21364 reference, see ``AREA_NODE_NM``). ``vth`` (listed,
# not used in pricing) and ``f_ref_ghz`` (the V-f anchor) are assumed values as before.
_TABLE: dict[str, dict[float, DeviceParams]] = {
    "hp": {
        180.0: DeviceParams(vdd=1.5, vth=0.40, ioff_um=7.0e-10, igate_um=1.65e-10, f_ref_ghz=1.2),
        90.0: DeviceParams(vdd=1.2, vth=0.24, ioff_um=3.24e-08, igate_um=1.65e-08, f_ref_ghz=2.0),
        65.0: DeviceParams(vdd=1.1, vth=0.20, ioff_um=1.96e-07, igate_um=4.09e-08, f_ref_ghz=2.6),
        45.0: DeviceParams(vdd=1.0, vth=0.18, ioff_um=2.80e-07, igate_um=3.59e-08, f_ref_ghz=2.9),
        32.0: DeviceParams(vdd=0.9, vth=0.17, ioff_um=1.52e-07, igate_um=6.55e-08, f_ref_ghz=2.8),
        22.0: DeviceParams(vdd=0.8, vth=0.16, ioff_um=1.216e-07, igate_um=1.81e-09, f_ref_ghz=2.7),
    },
    "lstp": {
        180.0: DeviceParams(vdd=1.5, vth=0.55, ioff_um=1.0e-12, igate_um=1.0e-12, f_ref_ghz=0.6),   # assumed
        90.0: DeviceParams(vdd=1.3, vth=0.50, ioff_um=2.81e-12, igate_um=3.87e-11, f_ref_ghz=0.9),
        65.0: DeviceParams(vdd=1.2, vth=0.50, ioff_um=9.12e-12, igate_um=1.09e-10, f_ref_ghz=1.1),
        45.0: DeviceParams(vdd=1.1, vth=0.48, ioff_um=1.01e-11, igate_um=9.47e-12, f_ref_ghz=1.3),
        32.0: DeviceParams(vdd=1.0, vth=0.47, ioff_um=2.06e-11, igate_um=3.73e-11, f_ref_ghz=1.5),
        22.0: DeviceParams(vdd=0.8, vth=0.45, ioff_um=2.43e-11, igate_um=4.51e-10, f_ref_ghz=1.7),
    },
    "lop": {
        180.0: DeviceParams(vdd=1.3, vth=0.35, ioff_um=5.0e-11, igate_um=4.0e-10, f_ref_ghz=0.9),    # assumed
        90.0: DeviceParams(vdd=0.9, vth=0.28, ioff_um=2.14e-09, igate_um=4.31e-08, f_ref_ghz=1.2),
        65.0: DeviceParams(vdd=0.8, vth=0.28, ioff_um=4.90e-09, igate_um=9.61e-09, f_ref_ghz=1.5),
        45.0: DeviceParams(vdd=0.7, vth=0.26, ioff_um=4.03e-09, igate_um=3.24e-08, f_ref_ghz=1.8),
        32.0: DeviceParams(vdd=0.6, vth=0.25, ioff_um=5.94e-08, igate_um=2.93e-09, f_ref_ghz=2.0),
        22.0: DeviceParams(vdd=0.6, vth=0.24, ioff_um=1.31e-08, igate_um=2.74e-09, f_ref_ghz=2.2),
    },
}

# Ioff(T) / Ioff(300 K) at 300, 310, ..., 400 K per device type and table node (the same ITRS/MASTAR tables). Three
# published entries break the monotonic rise (90 nm lop at 350-370 K and 22 nm lstp at 360 K are off by a factor
# of ten: misplaced exponents); they are replaced by the geometric mean of their neighbours. The 180 nm lstp and
# lop rows (no published data) take the 90 nm rows.
TEMPERATURES_K = tuple(300.0 + 10.0 * i for i in range(11))
_IOFF_T: dict[str, dict[float, tuple[float, ...]]] = {
    "hp": {
        180.0: (7e-10, 8.26e-10, 9.74e-10, 1.15e-9, 1.35e-9, 1.60e-9, 1.88e-9, 2.29e-9, 2.70e-9, 3.19e-9, 3.76e-9),
        90.0: (3.24e-8, 4.01e-8, 4.90e-8, 5.92e-8, 7.08e-8, 8.38e-8, 9.82e-8, 1.14e-7, 1.29e-7, 1.43e-7, 1.54e-7),
        65.0: (1.96e-7, 2.29e-7, 2.66e-7, 3.05e-7, 3.49e-7, 3.95e-7, 4.45e-7, 4.97e-7, 5.48e-7, 5.94e-7, 6.3e-7),
        45.0: (2.8e-7, 3.28e-7, 3.81e-7, 4.39e-7, 5.02e-7, 5.69e-7, 6.42e-7, 7.2e-7, 8.03e-7, 8.91e-7, 9.84e-7),
        32.0: (1.52e-7, 1.55e-7, 1.59e-7, 1.68e-7, 1.90e-7, 2.69e-7, 5.32e-7, 1.02e-6, 1.62e-6, 2.73e-6, 6.1e-6),
        22.0: (1.216e-7, 1.24e-7, 1.272e-7, 1.344e-7, 1.52e-7, 2.152e-7, 4.256e-7, 8.16e-7, 1.296e-6, 2.184e-6,
               4.88e-6),
    },
    "lstp": {
        90.0: (2.81e-12, 4.76e-12, 7.82e-12, 1.25e-11, 1.94e-11, 2.94e-11, 4.36e-11, 6.32e-11, 8.95e-11, 1.25e-10,
               1.7e-10),
        65.0: (9.12e-12, 1.49e-11, 2.36e-11, 3.64e-11, 5.48e-11, 8.05e-11, 1.15e-10, 1.59e-10, 2.1e-10, 2.62e-10,
               3.21e-10),
        45.0: (1.01e-11, 1.65e-11, 2.62e-11, 4.06e-11, 6.12e-11, 9.02e-11, 1.3e-10, 1.83e-10, 2.51e-10, 3.29e-10,
               4.1e-10),
        32.0: (2.06e-11, 3.30e-11, 5.15e-11, 7.83e-11, 1.16e-10, 1.69e-10, 2.40e-10, 3.34e-10, 4.54e-10, 5.96e-10,
               7.44e-10),
        22.0: (2.43e-11, 4.85e-11, 9.68e-11, 1.94e-10, 3.87e-10, 7.73e-10, None, 3.09e-9, 6.19e-9, 1.24e-8, 2.48e-8),
    },
    "lop": {
        90.0: (2.14e-9, 2.9e-9, 3.87e-9, 5.07e-9, 6.54e-9, None, None, None, 1.36e-8, 1.52e-8, 1.73e-8),
        65.0: (4.9e-9, 6.49e-9, 8.45e-9, 1.08e-8, 1.37e-8, 1.71e-8, 2.09e-8, 2.48e-8, 2.84e-8, 3.13e-8, 3.42e-8),
        45.0: (4.03e-9, 5.02e-9, 6.18e-9, 7.51e-9, 9.04e-9, 1.08e-8, 1.27e-8, 1.47e-8, 1.66e-8, 1.84e-8, 2.03e-8),
        32.0: (5.94e-8, 7.23e-8, 8.7e-8, 1.04e-7, 1.22e-7, 1.43e-7, 1.65e-7, 1.90e-7, 2.15e-7, 2.39e-7, 2.63e-7),
        22.0: (1.31e-8, 2.60e-8, 5.14e-8, 1.02e-7, 2.02e-7, 3.99e-7, 7.91e-7, 1.09e-6, 2.09e-6, 4.04e-6, 4.48e-6),
    },
}

# Subthreshold leakage of long-channel devices relative to nominal ones (MASTAR at 380 K, as CACTI/McPAT tabulate
# it; 1 where the roadmap gives none). Used where ``Technology.long_channel`` is on, on the share of devices that
# can be long (``LONG_CHANNEL_SHARE``).
LONG_CHANNEL_REDUCTION: dict[str, dict[float, float]] = {
    "hp": {180.0: 1.0, 90.0: 1.0, 65.0: 1 / 3.74, 45.0: 1 / 3.546, 32.0: 1 / 3.706, 22.0: 1 / 3.274},
    "lstp": {180.0: 1.0, 90.0: 1.0, 65.0: 1 / 2.82, 45.0: 1 / 2.08, 32.0: 1 / 1.93, 22.0: 1 / 1.89},
    "lop": {180.0: 1.0, 90.0: 1.0, 65.0: 1 / 2.05, 45.0: 1 / 1.92, 32.0: 1 / 1.89, 22.0: 1 / 2.38},
}
# Share of a block's devices that can be long-channel without missing timing (McPAT's published rule of thumb:
# 56% in an out-of-order core, 80% in an in-order core, 82% in uncore logic, all of a last-level cache).
LONG_CHANNEL_SHARE = {"core_ooo": 0.56, "core_inorder": 0.8, "uncore": 0.82, "cache": 1.0}


def _repaired(row: tuple) -> tuple[float, ...]:
    vals = list(row)
    for i, v in enumerate(vals):
        if v is None:
            hi_j = next(j for j in range(i + 1, len(vals)) if vals[j] is not None)
            lo_j = max(j for j in range(i) if vals[j] is not None)
            w = (i - lo_j) / (hi_j - lo_j)
            vals[i] = math.exp((1 - w) * math.log(vals[lo_j]) + w * math.log(vals[hi_j]))
    return tuple(vals)


IOFF_VS_TEMPERATURE: dict[str, dict[float, tuple[float, ...]]] = {
    dev: {node: tuple(v / _repaired(row)[0] for v in _repaired(row)) for node, row in rows.items()}
    for dev, rows in _IOFF_T.items()}
for _dev in ("lstp", "lop"):
    IOFF_VS_TEMPERATURE[_dev][180.0] = IOFF_VS_TEMPERATURE[_dev][90.0]


def _node_bracket(node: float) -> tuple[float, float, float]:
    """(upper table node, lower table node, weight of the lower) for ``node``, linear in feature size as CACTI
    interpolates; nodes below 22 nm take 22 nm."""
    if node <= TABLE_NODES[-1]:
        return TABLE_NODES[-1], TABLE_NODES[-1], 0.0
    if node in TABLE_NODES:
        return node, node, 0.0
    for hi, lo in zip(TABLE_NODES, TABLE_NODES[1:]):
        if lo < node < hi:
            return hi, lo, (hi - node) / (hi - lo)
    raise ValueError(f"node {node!r} nm is above the table")


def _hermite_slopes(y: tuple[float, ...]) -> tuple[float, ...]:
    """Tangents (per 10 K step) of a monotone piecewise-cubic through ``y`` (Fritsch and Carlson, SIAM J. Numer.
    Anal. 17, 1980, with Butland's harmonic mean): the interpolant keeps the table's monotone rise and has a
    continuous slope at every table temperature."""
    d = [b - a for a, b in zip(y, y[1:])]
    m = [d[0]]
    for a, b in zip(d, d[1:]):
        m.append(0.0 if a * b <= 0 else 2.0 * a * b / (a + b))
    m.append(d[-1])
    return tuple(m)


# ln(Ioff(T)/Ioff(300 K)) at the table's temperatures and its tangents, per device type and table node
_LOG_IOFF_T = {dev: {node: tuple(math.log(v) for v in r) for node, r in rows.items()}
               for dev, rows in IOFF_VS_TEMPERATURE.items()}
_LOG_IOFF_SLOPE = {dev: {node: _hermite_slopes(y) for node, y in rows.items()} for dev, rows in _LOG_IOFF_T.items()}


def ioff_temperature_ratio(node_nm: float, device: str, temperature_K: float) -> float:
    """Ioff(T) / Ioff(300 K) from the tables, linear between nodes; held at the table's end slope beyond 300-400 K.

    McPAT (and CACTI 7, whose 22 nm table is the same) defines Ioff only at its 10 K steps: at a table temperature
    this is the table's value. Between steps ln(Ioff) follows a monotone cubic with a continuous slope.
    Log-linear pieces had a slope that jumps at every step (22 nm HP: x1.92 over 360-370 K, x1.59 over 370-380 K),
    and only the thermal loop (``power.unmodelled``) prices leakage between steps, through that slope: the jump at
    370 K made the E5-2697 v2's loop gain (thermal resistance x dP/dT) reach 1.13 just below 370 K and fall to 0.82
    just above, a spurious second stable junction a few kelvin up, onto which a watt more of die power jumped the
    socket's junction by 7 K and its leakage by 20 W."""
    hi, lo, w = _node_bracket(float(node_nm))
    t = float(temperature_K)
    x = (t - 300.0) / 10.0
    i = min(max(int(math.floor(x)), 0), 9)
    f = x - i

    def at(node: float) -> float:
        y = _LOG_IOFF_T[device][node]
        if f == 0.0:                     # a table temperature (as before, to the last bit)
            return math.exp(y[i])
        if x < 0.0 or x > 10.0:          # beyond the table: the end step's log-linear slope
            return math.exp((1 - f) * y[i] + f * y[i + 1])
        m = _LOG_IOFF_SLOPE[device][node]
        h00, h10, h01, h11 = (2 * f ** 3 - 3 * f ** 2 + 1, f ** 3 - 2 * f ** 2 + f, -2 * f ** 3 + 3 * f ** 2,
                              f ** 3 - f ** 2)
        return math.exp(h00 * y[i] + h10 * m[i] + h01 * y[i + 1] + h11 * m[i + 1])

    return (1 - w) * at(hi) + w * at(lo)


# How Ioff follows a supply V set apart from the node's nominal Vnom in McPAT 1.3's device tables (CACTI's ITRS
# figures): Ioff(V) = Ioff(Vnom) x (V/Vnom)^k. 180 nm has no supply dependence. The sweep shows it: the Xeon at a
# set 1.25 V leaks 0.252x in subthreshold on 65 nm LOP devices (nominal 0.8 V, k 5) against HP (1.1 V, k 4),
# where a DIBL law exp(0.1 (V - Vnom) / (1.5 kT/q)) gave 0.118x.
IOFF_VDD_EXPONENT = {180.0: {"hp": 0, "lstp": 0, "lop": 0},
                     90.0: {"hp": 4, "lstp": 4, "lop": 5},
                     65.0: {"hp": 4, "lstp": 4, "lop": 5},
                     45.0: {"hp": 4, "lstp": 4, "lop": 5},
                     32.0: {"hp": 2, "lstp": 1, "lop": 5},
                     22.0: {"hp": 2, "lstp": 1, "lop": 5}}


def ioff_vdd_exponent(node_nm: float, device: str) -> float:
    """``IOFF_VDD_EXPONENT`` at ``node_nm``: linear between table nodes, 22 nm's below it."""
    hi, lo, w = _node_bracket(float(node_nm))
    return (1 - w) * IOFF_VDD_EXPONENT[hi][device] + w * IOFF_VDD_EXPONENT[lo][device]


def long_channel_reduction(node_nm: float, device: str) -> float:
    hi, lo, w = _node_bracket(float(node_nm))
    tab = LONG_CHANNEL_REDUCTION[device]
    return (1 - w) * tab[hi] + w * tab[lo]


# Layout feature size at 180 nm. McPAT 1.3's 180 nm areas come out about half of what F^2 scaling from its 90 nm
# data gives (as if laid out at ~127 nm = sqrt(2) x 90 nm); capacitances follow the drawn 180 nm.
# kvsim keeps that convention at 180 nm so its 180 nm figures are comparable with McPAT's (the Alpha 21364
# reference); 180 nm is supported for that comparison, not as a design target.
AREA_NODE_NM = {180.0: 127.0}

_VDD_FLOOR = {"hp": 0.6, "lop": 0.5, "lstp": 0.7}


def _interp(a: DeviceParams, b: DeviceParams, fa: float, fb: float, f: float) -> DeviceParams:
    """Interpolation between table nodes fa > f > fb (log-linear; leakage currents linear)."""
    w = math.log(fa / f) / math.log(fa / fb)

    def g(x: float, y: float) -> float:
        return math.exp((1 - w) * math.log(x) + w * math.log(y))

    # leakage currents linear in feature size, as CACTI interpolates its device tables
    lin = (fa - f) / (fa - fb)
    return DeviceParams(vdd=(1 - w) * a.vdd + w * b.vdd, vth=(1 - w) * a.vth + w * b.vth,
                        ioff_um=(1 - lin) * a.ioff_um + lin * b.ioff_um,
                        igate_um=(1 - lin) * a.igate_um + lin * b.igate_um, f_ref_ghz=g(a.f_ref_ghz, b.f_ref_ghz))


def device_params(node_nm: float, device: str) -> DeviceParams:
    if device not in DEVICE_TYPES:
        raise ValueError(f"device type {device!r} is unknown: allowed {', '.join(DEVICE_TYPES)}")
    node = float(node_nm)
    if not (MIN_NODE_NM <= node <= MAX_NODE_NM) or math.isnan(node):
        raise ValueError(f"technology node node_nm={node_nm!r} is out of range: allowed {MIN_NODE_NM:g} to "
                         f"{MAX_NODE_NM:g} nm (table nodes {', '.join(f'{n:g}' for n in TABLE_NODES)}; "
                         f"others interpolated, below 22 nm extrapolated)")
    tab = _TABLE[device]
    if node in tab:
        return tab[node]
    if node < 22.0:
        base = tab[22.0]
        steps = math.log(22.0 / node) / math.log(1 / 0.7)
        vdd = max(_VDD_FLOOR[device], base.vdd * (node / 22.0) ** 0.07)
        return replace(base, vdd=vdd, f_ref_ghz=base.f_ref_ghz * 1.02 ** steps)
    for hi, lo in zip(TABLE_NODES, TABLE_NODES[1:]):
        if lo < node < hi:
            return _interp(tab[hi], tab[lo], hi, lo, node)
    raise AssertionError("unreachable")


def technology(node_nm: float, device: str = "hp", temperature_K: float = 360.0,
               long_channel: bool = False) -> Technology:
    """The technology for a node (nm), device type (hp, lstp, lop) and die temperature (K)."""
    if not (200.0 <= float(temperature_K) <= 450.0):
        raise ValueError(f"temperature_K={temperature_K!r} is out of range: allowed 200 to 450 K")
    return Technology(node_nm=float(node_nm), device=device, temperature_K=float(temperature_K),
                      dev=device_params(node_nm, device), long_channel=bool(long_channel))
