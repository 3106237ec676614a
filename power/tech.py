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

Values are ITRS-class numbers of the kind published in the ITRS roadmaps and used by CACTI (Vdd, Vth, Ioff per um,
gate leakage per um, gate capacitance per um). Subthreshold leakage at the reference temperature of 300 K; the
temperature and supply dependence is modelled in ``subthreshold_scale`` and ``gate_scale``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

DEVICE_TYPES = ("hp", "lstp", "lop")
MIN_NODE_NM = 5.0
MAX_NODE_NM = 180.0
TABLE_NODES = (180.0, 90.0, 65.0, 45.0, 32.0, 22.0)
K_BOLTZMANN_OVER_Q = 8.617e-5  # V/K


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

        Subthreshold current ~ T^2 exp(-(Vth(T) - eta*V) / (n kT/q)) with Vth falling 0.3 mV/K, subthreshold slope
        factor n = 1.5 and DIBL coefficient eta = 0.10 (typical short-channel values). Rises with temperature
        (about x4-6 from 300 K to 380 K) and with supply.
        """
        v = self.dev.vdd if vdd is None else vdd
        t = self.temperature_K if temperature_K is None else temperature_K
        n, eta, kappa = 1.5, 0.10, 0.3e-3
        vt0 = K_BOLTZMANN_OVER_Q * 300.0
        vt = K_BOLTZMANN_OVER_Q * t
        vth_t = self.dev.vth - kappa * (t - 300.0)
        ref = -(self.dev.vth - eta * self.dev.vdd) / (n * vt0)
        now = -(vth_t - eta * v) / (n * vt)
        return (t / 300.0) ** 2 * math.exp(now - ref)

    def gate_scale(self, vdd: float | None = None) -> float:
        """Igate(V) / Igate(Vnom): direct tunnelling grows steeply with oxide field, modelled as (V/Vnom)^4."""
        v = self.dev.vdd if vdd is None else vdd
        return (v / self.dev.vdd) ** 4


# ITRS-class device figures per table node (approximate; see module docstring). The hp and lop Ioff and Igate are
# *effective* values: ITRS-class starting points multiplied by one factor per node fitted to McPAT's example
# processors (power.fit), about hp x3.6/x570 (180 nm), x4.8/x23 (90), x2.0/x4.6 (65), x2.2/x12 (45 nm, also
# carried to 32 and 22 nm, which have no reference), lop x7.5/x29 (all nodes; fitted at 40 nm). They are per um of
# the model's leaking-width estimate, not of drawn transistor width. lstp is uncalibrated.
_TABLE: dict[str, dict[float, DeviceParams]] = {
    "hp": {
        180.0: DeviceParams(vdd=1.5, vth=0.40, ioff_um=7.2e-10, igate_um=5.71e-10, f_ref_ghz=1.2),
        90.0: DeviceParams(vdd=1.2, vth=0.24, ioff_um=2.39e-07, igate_um=1.37e-07, f_ref_ghz=2.0),
        65.0: DeviceParams(vdd=1.1, vth=0.20, ioff_um=4e-07, igate_um=1.84e-07, f_ref_ghz=2.6),
        45.0: DeviceParams(vdd=1.0, vth=0.18, ioff_um=6.06e-07, igate_um=2.34e-07, f_ref_ghz=2.9),
        32.0: DeviceParams(vdd=0.9, vth=0.17, ioff_um=6.49e-07, igate_um=1.75e-07, f_ref_ghz=2.8),
        22.0: DeviceParams(vdd=0.8, vth=0.16, ioff_um=3.25e-07, igate_um=1.4e-07, f_ref_ghz=2.7),
    },
    "lstp": {
        180.0: DeviceParams(vdd=1.5, vth=0.55, ioff_um=1.0e-12, igate_um=1.0e-13, f_ref_ghz=0.6),
        90.0: DeviceParams(vdd=1.2, vth=0.50, ioff_um=1.0e-11, igate_um=1.0e-11, f_ref_ghz=0.9),
        65.0: DeviceParams(vdd=1.2, vth=0.50, ioff_um=1.0e-11, igate_um=1.0e-11, f_ref_ghz=1.1),
        45.0: DeviceParams(vdd=1.1, vth=0.48, ioff_um=1.0e-11, igate_um=1.0e-11, f_ref_ghz=1.3),
        32.0: DeviceParams(vdd=1.0, vth=0.47, ioff_um=1.0e-11, igate_um=1.0e-11, f_ref_ghz=1.5),
        22.0: DeviceParams(vdd=0.9, vth=0.45, ioff_um=1.0e-11, igate_um=1.0e-11, f_ref_ghz=1.7),
    },
    "lop": {
        180.0: DeviceParams(vdd=1.3, vth=0.35, ioff_um=7.53e-10, igate_um=2.88e-11, f_ref_ghz=0.9),
        90.0: DeviceParams(vdd=0.9, vth=0.28, ioff_um=2.26e-08, igate_um=7.2e-08, f_ref_ghz=1.2),
        65.0: DeviceParams(vdd=0.8, vth=0.28, ioff_um=3.69e-08, igate_um=7.2e-08, f_ref_ghz=1.5),
        45.0: DeviceParams(vdd=0.7, vth=0.26, ioff_um=3.01e-08, igate_um=7.2e-08, f_ref_ghz=1.8),
        32.0: DeviceParams(vdd=0.6, vth=0.25, ioff_um=3.01e-08, igate_um=7.2e-08, f_ref_ghz=2.0),
        22.0: DeviceParams(vdd=0.55, vth=0.24, ioff_um=3.01e-08, igate_um=7.2e-08, f_ref_ghz=2.2),
    },
}

# Layout feature size at 180 nm. McPAT 1.3's 180 nm areas come out about half of what F^2 scaling from its 90 nm
# data gives (as if laid out at ~127 nm = sqrt(2) x 90 nm); capacitances follow the drawn 180 nm.
# kvsim keeps that convention at 180 nm so its 180 nm figures are comparable with McPAT's (the Alpha 21364
# reference); 180 nm is supported for that comparison, not as a design target.
AREA_NODE_NM = {180.0: 127.0}

_VDD_FLOOR = {"hp": 0.6, "lop": 0.5, "lstp": 0.7}


def _interp(a: DeviceParams, b: DeviceParams, fa: float, fb: float, f: float) -> DeviceParams:
    """Log-linear interpolation between table nodes fa > f > fb."""
    w = math.log(fa / f) / math.log(fa / fb)

    def g(x: float, y: float) -> float:
        return math.exp((1 - w) * math.log(x) + w * math.log(y))

    return DeviceParams(vdd=(1 - w) * a.vdd + w * b.vdd, vth=(1 - w) * a.vth + w * b.vth,
                        ioff_um=g(a.ioff_um, b.ioff_um), igate_um=g(a.igate_um, b.igate_um),
                        f_ref_ghz=g(a.f_ref_ghz, b.f_ref_ghz))


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
