"""What a McPAT-class model leaves out of a real socket's power, each part sized from a published cause (or marked
assumed), beside a priced run: for comparing the model with a measured processor (validation.md's Xeon).

McPAT prices the structures a configuration names at the node's nominal supply: no turbo, no global clock
network, no inter-socket links, and the device table's supply rather than the product's. ``parts(result)`` takes a
priced run (``power.price_run``; one socket) and adds, in order, each as watts over the model's die figure:

* **turbo**: a busy socket runs at its all-core turbo clock, not its base clock (Intel's turbo bins for the
  E5-2697 v2: 3.0 GHz with all 12 cores active, base 2.7 GHz), at the supply the node's V-f law gives that clock
  (``power.dvfs``). The cores' counted work scales with the clock (the cores poll: busy every cycle), so their
  runtime dynamic power is re-priced at f x V^2, their leakage at the new supply.
* **operating supply**: the node's V-f law at the cores' clock (``power.dvfs``), the turbo bin's supply above.
  Intel publishes no per-part operating voltage: the E5 v2 datasheet (vol. 1, section 7.8.1) gives the core rail
  only as a VID range the part requests over SVID, and its note 2 says two devices at the same speed may be
  calibrated to different VIDs, so no voltage at the 3.0 GHz bin is published for the product; Ivytown's V-f data
  (ISSCC 2014) were not in the sources at hand. Until session 15 an assumed 1.0 V (``ASSUMED_CORE_VDD``) was
  priced here. With the published tile's whole area priced (``power.die``), a socket held at 1.0 V has no steady
  junction at any bin down to the base clock under the part's own thermal profile (such a part would be held at
  its package limit, lowering bin and VID together); no published figure decides between the two supplies, so the
  model prices its own mechanism, and 1.0 V is one row of the report's sensitivity to the supply.
* **clock distribution**: McPAT has no global clock grid. Itanium 2 "Montecito" (Mahoney et al., ISSCC 2005,
  "Clock distribution on a dual-core, multi-threaded Itanium-family processor") spends under 25 W of its 104 W on
  clock distribution from PLL to latch: ``CLOCK_SHARE`` = 25 / 104 of the chip's power, taken as the same share
  here (assumed to carry over).
* **uncore at the cores' supply** (assumed): the LLC slices, directories and ring are priced at the node's
  nominal supply; on the E5 v2 they are assumed to share the cores' rail, so they take the cores' supply too
  (with them the leakage of the memory controllers, PCIe and the die's system agent and I/O).
* **the processor's DDR I/O**: McPAT's memory-controller PHY has no traffic-driven power and the model prices the
  DRAM devices' DQ drivers and termination only (``DramDevice.io_pj_per_bit``); every transfer is driven at one end
  and terminated at the other, so the processor's end of a read (its termination) or a write (its drivers) is
  taken at the same energy per bit as the DRAM's end, times the bytes the run moved (assumed symmetric).
* **inter-socket links**: the socket's QPI 1.1 links (``power.links``: two per socket on the E5-2600 v2, each end
  half a link's power), always on.
* **voltage-regulator losses** (assumed): the measurement is taken at the wall, so the power the socket's
  regulators dissipate converting 12 V to the processor's rails counts against the CPUs; ``VR_EFFICIENCY``
  (87%, assumed: a typical multiphase server regulator's efficiency at load) of the power before it.
* **the junction temperature** (the leakage at it): the model's die is priced at an assumed 360 K. Intel publishes
  the E5-2697 v2's die (DTS) thermal profile, T_DTS = Psi_PA x P + T_LA with Psi_PA = 0.320 C/W and T_LA =
  56.5 C, and its maximum T_DTS, 98.1 C (E5-1600/2600/4600 v2 datasheet vol. 1, Table 5-2, 130 W 1U profile): the
  die temperature of a thermal solution that just meets the specification at its design local ambient, up to the
  TDP (130 W puts the profile at exactly that maximum). The junction is solved with the socket's own power
  (``solve_junction``: leakage rises with temperature, temperature with power) as the lowest fixed point, found
  by bracketing and bisection, with its loop gain Psi_PA x dP/dT: a watt more before the loop is 1 / (1 - gain)
  watts after it. There is no steady junction when the leakage's rise outruns the cooling (gain 1, a fold)
  before the maximum temperature: that is a thermal runaway and an error (``ThermalRunaway``), never a figure.
  The part is the leakage at that junction minus the leakage at 360 K; it can be negative (a cooler junction).
* **turbo within the package's limits**: Intel's Turbo Boost runs a core above its base clock only while the
  package stays within its power limit (PL1, the TDP by default) and below its thermal control temperature; on
  the 1U profile the two coincide (98.1 C is the profile at 130 W). When the all-core turbo bin has no steady
  junction within them, the next 100 MHz bin down is priced, to the base clock; a socket without one even at its
  base clock, where the datasheet guarantees the TDP, is a thermal runaway (an error).
* **the idle power of polling cores**: a polling core never halts, so it never reaches a C-state; the model has no
  C-states or power gating to take away, and the run's cores execute (and are priced for) their polling loops.
  The part is zero and listed so that it is seen to be accounted for.

The die beyond the structures (``power.die``; in the model's die figure, shown as its own line): the product's
fused-off tiles (power gated), and the system agent and I/O (home agents, integrated I/O, power control, the PHYs
of PCIe, QPI and DDR) with the leakage of their published transistors. Its supply follows the uncore's
(``uncore_vdd``) like the priced memory controllers' and PCIe's (assumed: the part's system-agent rail, VSA, has
no published voltage either).

PCIe: the model prices the controllers and SerDes of the lanes the NICs use (``power.model``); the processor's other
lanes carry no traffic (assumed: no device attached); their devices' leakage is in the die's system agent and I/O.

Beside the total (``in_total`` False): **McPAT's own error against real chips**, the low end of the published
-11% to -23% of total power (Li et al., MICRO 2009: Niagara, Niagara 2, Xeon Tulsa, Alpha 21364), sized as the
power the model's die would gain at a 23% shortfall. It is a model-class bias, not a mechanism, so it is not added.

The NICs (``nic_parts``): the cards as built (``NIC_CARDS``), part by part, beside the model's traffic-driven NIC
power (its MAC, buffers, DMA and SerDes: a part of the controllers' typical figure, so shown, not added). The Xeon's
X520-QDA1 is two dual-port 82599 controllers behind a PCIe switch with one QSFP+ cage (issue 23's card as built,
``configs/xeon_e5_2697v2_socket.py``); each socket holds two of the server's four cards (the spec), priced whatever
ports a run uses. The results print beside the measurement in ``sim-scripts/power_report.py --run`` and
``validate_xeon``; nothing here is fitted to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import links
from .tech import ioff_vdd_exponent

ALL_CORE_TURBO_MHZ = {"xeon-e5-2697v2": 3000.0}   # Intel's turbo bins: +300 MHz with all 12 cores active (published)
ASSUMED_CORE_VDD = 1.0                            # assumed before session 15; now a row of the sensitivity only
CLOCK_SHARE = 25.0 / 104.0                        # Montecito: < 25 W of 104 W (published; share assumed to carry)
QPI_LINKS_PER_SOCKET = {"xeon-e5-2697v2": 2}      # E5-2600 v2: two QPI 1.1 links per socket (published)
VR_EFFICIENCY = 0.87                              # assumed: a multiphase server regulator's efficiency at load
# Intel E5-1600/2600/4600 v2 datasheet vol. 1, Table 5-2 (DTS thermal profile): T_LA (C), Psi_PA (C/W) and the
# maximum T_DTS (C), the profile at the TDP (published)
THERMAL_PROFILE = {"xeon-e5-2697v2": (56.5, 0.320, 98.1)}
TURBO_BIN_MHZ = 100.0                             # turbo ratios are multiples of the 100 MHz base clock (published)
MAX_JUNCTION_K = 450.0                            # the device tables' highest temperature (power.tech)
JUNCTION_SCAN_K = 1.0                             # the bracket's step: finer than any fold's width here
MCPAT_PUBLISHED_SHORTFALL = 0.23                  # McPAT vs real chips: -11% to -23% of power (MICRO 2009)
# One NIC controller's typical power (W). Assumed: Intel's 82599 datasheet (its power section) and the X520-QDA1
# product brief were not readable in the sources at hand. 4.5 W is the figure a public compilation gives for Intel's
# dual-port X520 (one 82599) card on PCIe 2.0 x8 and attributes to a Mellanox white paper: a secondary source, and a
# card's figure taken for its controller. The 82599's predecessor, the 82598, has a published estimated TDP of 6.5 W
# (Intel 82598EB datasheet, table 8-9, pre-silicon estimate): a maximum, not a typical figure, of another part.
# Checked again in session 25 (the docs and pages corpora): the 82599 datasheet's text is reachable only in part (its
# feature list, not its power section) and the X520 product brief not at all; the public compilations disagree for
# the dual-port X520-DA2 (one 82599, two SFP+ cages, the card's regulators): 4.5 W (above), "5-6 W", and "7.9 W -
# 8.6 W" (a table whose links include Intel's X520 brief, the row's source not named). So 4.5 W stays, assumed.
NIC_CONTROLLER_TYPICAL_W = {"82599": 4.5}
# A PCIe switch's typical power (W), by class: PLX's PEX 8624, a 24-lane, 6-port PCIe 2.0 switch, "typical power
# 1.9 W" (its product brief: published). The X520-QDA1's switch is not identified in the sources at hand; it joins
# two x8 controller links and an x8 host link, 24 lanes, so it is assumed to be of that class (a PCIe 3.0 uplink, as
# the socket's config assumes, would take a Gen3 switch, which draws more: not priced).
PCIE_SWITCH_TYPICAL_W = {"24-lane PCIe switch": 1.9}
# A QSFP+ cage's module (W). Intel's ixgbe README (Linux kernel, "82599-based QSFP+ Adapters") lists for the
# X520-Q1 Intel's DUAL RATE 1G/10G QSFP+ SRL optics (E10GQSFPSR) and any passive or active limiting QSFP+ direct
# attach cable to SFF-8436; the measurement does not say which the server used. SFF-8436's power classes start at
# 1.5 W (class 1) and reach 3.5 W (class 4) (as the SFF-8436 decoders of FreeBSD and ethtool print the module's
# declared class); a passive copper cable has no module electronics (about 0 W).
# Assumed: an optical module at class 1's limit (no figure for the E10GQSFPSR was found).
ASSUMED_QSFP_MODULE_W = 1.5


@dataclass(frozen=True)
class NicCard:
    """A NIC card as built: its controllers, the PCIe switch between them and the host (None: no switch), its QSFP+
    cages, and how many of them each socket of the server holds."""
    name: str
    controller: str         # a key of NIC_CONTROLLER_TYPICAL_W
    controllers: int
    pcie_switch: str | None  # a key of PCIE_SWITCH_TYPICAL_W
    qsfp_cages: int
    per_socket: int


# The Xeon's cards: four X520-QDA1 on two sockets (spec); each card two 82599s behind a PCIe switch, one QSFP+ cage
# (configs/xeon_e5_2697v2_socket.py: the card as built, issue 23). Intel's ixgbe drivers agree: the card's function
# (device 0x1558, 82599_QSFP_SF_QP) is an 82599 MAC, one of the devices "behind an internal bridge", whose slot speed
# the driver reads two bridges up; four ports from dual-port controllers make two of them.
NIC_CARDS = {"xeon-e5-2697v2": NicCard("X520-QDA1", "82599", 2, "24-lane PCIe switch", 1, 2)}


@dataclass(frozen=True)
class Part:
    name: str
    watts: float
    source: str
    assumed: bool
    in_total: bool = True   # False: a sensitivity sized beside the total, not added to it


def _die_W(r) -> float:
    return float(r.die.runtime_dynamic_W + r.die.leakage_W)


def _other_W(r) -> float:
    """The runtime power of the die's parts beyond the structures (``power.die``; class ``other``)."""
    s = r.structures
    return float(s.loc[s["class"] == "other", "runtime_power_W"].sum())


# power.die's parts, as the report names them: (label, source)
DIE_PART_LABELS = {
    "die.tiles_beyond_model.cores": (
        "the published tile's area the model's cores lack, at their own leakage and switching per mm^2",
        "published tile area (the 6-core chop of the 10-core die) over the model's tile; the same circuits at the "
        "same activity (assumed)"),
    "die.tiles_beyond_model.slices": (
        "the published tile's area the model's LLC slices and ring stops lack, at their own densities",
        "published tile area over the model's tile; the same circuits at the same activity (assumed)"),
    "die.agent_and_io": (
        "the system agent and I/O's leakage from their transistors",
        "published die transistors (Ivytown, ISSCC 2014) less its tiles'; leaking as the model's tiles do per "
        "transistor (assumed)"),
}


def _other_parts(r) -> list[tuple[str, float]]:
    """Each of the die's parts beyond the structures that draws power (``power.die``), with its runtime power."""
    s = r.structures
    o = s[s["class"] == "other"]
    return [(c, float(w)) for c, w in zip(o["component"], o["runtime_power_W"]) if w != 0.0]


def _cores_scaled(r, model, vdd, mhz, uncore_vdd: float | None = None, temperature_K: float | None = None) -> float:
    """The die's runtime power with every core at ``vdd`` and its counted work scaled to ``mhz`` (busy cores), the
    uncore at ``uncore_vdd`` (default: the node's nominal supply).

    Only the counted events' energy scales with the clock ratio: ``evaluate`` already prices each structure's
    clocking (``clock_W``) at ``mhz``, so scaling it again counted the ratio twice. No structure is capped at its
    peak: the peak is McPAT's thermal-design access rate, not a maximum, and ``evaluate`` prices the run's counts
    without that cap as McPAT does (f7aaf40); the cap left here (75efc0f, from before f7aaf40) cut the turbo figure
    of every core structure whose counted power exceeds its peak (session 27, issue 23)."""
    base_mhz = np.asarray(r.core_MHz, dtype=float)
    e = model.evaluate(core_vdd=vdd, core_MHz=mhz, uncore_vdd=uncore_vdd, temperature_K=temperature_K)
    s = e.structures
    core = np.array([x.domain == "core" for x in model.structs])
    scale = float(np.mean(np.asarray(mhz, dtype=float) / base_mhz))
    dyn = s.runtime_dynamic_W.to_numpy()
    clock = s.clock_W.to_numpy()
    dyn = np.where(core, clock + (dyn - clock) * scale, dyn)
    on = s.on_die.to_numpy()
    return float((dyn + s.leakage_W.to_numpy())[on].sum())


def _ddr_io_W(model) -> float:
    """The processor's end of the DDR transfers the run counted: bytes x 8 x the DRAM's I/O energy per bit."""
    p, a = model.platform, model.activity
    if p.dram is None or a is None:
        return 0.0
    bursts = a.dram.reads + a.dram.writes
    bits = bursts * p.dram.devices_per_rank * p.dram.device.burst * p.dram.device.width_bits
    return bits * p.dram.device.io_pj_per_bit * 1e-12 / a.seconds


class ThermalRunaway(ValueError):
    """The socket has no steady junction within its part's limits: the leakage's rise with temperature outruns the
    cooling (the loop gain reaches 1) before the maximum temperature."""


@dataclass(frozen=True)
class Junction:
    T_K: float        # the lowest fixed point of T = ambient + psi x P(T)
    gain: float       # psi x dP/dT there (below 1: stable; a watt more before the loop is 1/(1 - gain) after it)
    power_W: float    # the socket's power there


def parts(result, vdd: float | None = None, probe_W: float = 0.0) -> list[Part]:
    """The missing parts of one priced socket (``power.price_run`` of a one-socket run), each in watts over the
    previous figure, starting from the model's die runtime power; parts beside the total have ``in_total`` False.
    ``vdd``: the operating supply of the cores and the uncore (default: the node's V-f law at the cores' clock;
    another value is the report's sensitivity; ``ASSUMED_CORE_VDD`` is the 1.0 V assumed before session 15). The
    all-core turbo bin is the highest whose socket has a steady junction within the
    thermal profile's maximum (Turbo Boost's limits); none, down to the base clock, is a ``ThermalRunaway``."""
    model = result.model
    p = model.platform
    part = p.part or p.name
    turbo = ALL_CORE_TURBO_MHZ.get(part)
    if not turbo or not THERMAL_PROFILE.get(part):
        return _parts_at(result, turbo, None, vdd, probe_W=probe_W)
    base = float(np.max(result.core_MHz))
    bins = [turbo - k * TURBO_BIN_MHZ for k in range(max(0, int(round((turbo - base) / TURBO_BIN_MHZ))) + 1)]
    failed: list[str] = []
    for mhz in bins:
        try:
            at = mhz if mhz > base or len(bins) == 1 else None        # the last bin: the run's own clocks
            return _parts_at(result, at, (turbo, failed) if failed else None, vdd, probe_W=probe_W)
        except ThermalRunaway as e:
            failed.append(f"{mhz:.0f} MHz: {e}")
    raise ThermalRunaway(f"{part}: no turbo bin down to the base clock ({base:.0f} MHz) has a steady junction; "
                         + "; ".join(failed))


def demand(result, vdd: float | None = None) -> list[Part]:
    """The parts of a socket that has no steady junction (``parts`` raised ``ThermalRunaway``), at the all-core turbo
    bin with the die at the thermal profile's maximum temperature: what the socket would draw there, more than its
    cooling removes. The part cannot draw it: its thermal control (TCC: lower clock and VID at the maximum
    temperature, datasheet vol. 1 section 5.2.2) and its power limit PL1 (the TDP) hold the package at what the
    profile removes at that temperature, (T_max - T_LA) / Psi_PA, the TDP (``package_limit_W``)."""
    p = result.model.platform
    return _parts_at(result, ALL_CORE_TURBO_MHZ.get(p.part or p.name), None, vdd, at_max=True)


def thermal_headroom(result, vdd: float | None = None, tol_W: float = 0.01) -> tuple[float, float] | None:
    """How far the socket sits below its thermal fold at the bin ``parts`` prices: the watts that, added before the
    clock share and the thermal loop (where the DDR I/O enters), leave that bin still with a steady junction, to
    ``tol_W``, and the socket's total (``parts``, in the total) there. Past it Turbo Boost's limits lower the bin
    and the socket's figure falls. None for a part with no thermal profile. Session 27 (issue 23): the 24-core
    Xeon row sat 1.88 W a socket below its fold at 3.0 GHz, which bounds it at 254.1 W against the measured 255 W."""
    p = result.model.platform
    if not THERMAL_PROFILE.get(p.part or p.name):
        return None

    def bin_and_total(extra: float) -> tuple[str, float] | None:
        try:
            ps = parts(result, vdd, probe_W=extra)
        except ThermalRunaway:
            return None
        turbo = [q.name.split(" at ")[0] for q in ps if q.name.startswith(("all-core turbo", "no turbo"))]
        return (turbo[0] if turbo else "base"), sum(q.watts for q in ps if q.in_total)

    start = bin_and_total(0.0)
    if start is None:
        return None
    lo, hi = 0.0, 1.0
    while (now := bin_and_total(hi)) is not None and now[0] == start[0]:
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:
            raise ValueError("no thermal fold found below 10 kW")
    while hi - lo > tol_W:
        mid = 0.5 * (lo + hi)
        now = bin_and_total(mid)
        lo, hi = (mid, hi) if now is not None and now[0] == start[0] else (lo, mid)
    return lo, bin_and_total(lo)[1]


def package_limit_W(platform) -> float | None:
    """The package power the thermal profile removes at its maximum temperature (the TDP on the 1U profile)."""
    profile = THERMAL_PROFILE.get(platform.part or platform.name)
    return None if profile is None else (profile[2] - profile[0]) / profile[1]


def _parts_at(result, turbo: float | None, limited: tuple[float, list[str]] | None, vdd: float | None = None,
              at_max: bool = False, probe_W: float = 0.0) -> list[Part]:
    """``parts`` with every core at ``turbo`` MHz (None: the run's clocks) and the rails at ``vdd``; ``limited`` (the
    all-core turbo bin and why the bins above were refused) names a bin lowered by the package's limits;
    ``at_max``: the junction at the thermal profile's maximum instead of solved (``demand``)."""
    from .dvfs import vf_curve
    model = result.model
    p = model.platform
    # the product's published figures, for every socket of a system (a second socket's name carries its index)
    part = p.part or p.name
    other = _other_W(result)
    out = [Part("model (McPAT class): die runtime dynamic + leakage", _die_W(result) - other, "this run, priced",
                False)]
    if p.die is not None:
        for path, w in _other_parts(result):
            label, source = DIE_PART_LABELS.get(path, (path, "power.die"))
            out.append(Part(f"the die beyond McPAT's structures: {label}", w, source, True))
    mhz = np.asarray(result.core_MHz, dtype=float)
    rail_set = vdd
    vdd = np.asarray(result.core_vdd, dtype=float)
    level = _die_W(result)
    if turbo:
        mhz = np.full_like(mhz, turbo)
        vdd = np.full_like(vdd, vf_curve(model.tech).voltage(turbo))
        w = _cores_scaled(result, model, vdd, mhz)
        why = "" if limited is None else (f" (the bins from {limited[0]:.0f} down to {turbo + TURBO_BIN_MHZ:.0f} MHz "
                                          "have no steady junction within the thermal profile: Turbo Boost's "
                                          "limits)")
        out.append(Part(f"all-core turbo {turbo:.0f} MHz at {vdd[0]:.3f} V (node's V-f law){why}", w - level,
                        "Intel turbo bins (published); V from the node's V-f law", False))
        level = w
    elif limited is not None:
        out.append(Part(f"no turbo: every bin from {limited[0]:.0f} MHz down has no steady junction within the "
                        "thermal profile (Turbo Boost's limits)", 0.0, "; ".join(limited[1]), False))
    # the operating supply: the node's V-f law at the cores' clock (the model's mechanism), or one set by the report
    rail = float(np.max(vdd)) if rail_set is None else float(rail_set)
    vcore = np.full_like(vdd, rail)
    w = _cores_scaled(result, model, vcore, mhz)
    out.append(Part(f"cores at {rail:.3f} V" + (" (the node's V-f law: no published operating voltage)"
                                                 if rail_set is None else " instead of the node's V-f law"),
                    w - level, "power.dvfs (the node's V-f law)" if rail_set is None else
                    "a sensitivity: the operating supply set by the report", True))
    level = w
    w = _cores_scaled(result, model, vcore, mhz, uncore_vdd=rail)
    out.append(Part(f"LLC, directories and ring (and the uncore's leakage) at the cores' {rail:.3f} V",
                    w - level, "assumed: the uncore shares the cores' rail", True))
    level = w
    io = _ddr_io_W(model)
    out.append(Part("the processor's DDR I/O (drivers and termination) at the run's memory traffic", io,
                    "the DRAM's I/O energy per bit (DramDevice.io_pj_per_bit), assumed symmetric", True))
    level += io
    if probe_W:
        out.append(Part("probe: watts added before the clock share and the thermal loop", probe_W,
                        "thermal_headroom's probe, not a part of the socket", False))
        level += probe_W
    clock = level * CLOCK_SHARE / (1.0 - CLOCK_SHARE)
    out.append(Part(f"global clock distribution ({100 * CLOCK_SHARE:.0f}% of the chip)", clock,
                    "Montecito, ISSCC 2005: < 25 W of 104 W (share assumed to carry over)", True))
    level += clock
    n_links = QPI_LINKS_PER_SOCKET.get(part, 0)
    qpi = links.LinkPower(n_links, links.QPI_LANES, links.QPI_RATE_GT, 1, True, 0.0, 0.0).power_W / 2
    out.append(Part(f"{n_links} QPI 1.1 link ends, always on", qpi, "power.links (10 pJ/bit assumed there)", True))
    level += qpi
    def leak(T):
        return float(model.evaluate(core_vdd=vcore, core_MHz=mhz, uncore_vdd=rail, temperature_K=T)
                     .die.leakage_W)
    T0 = model.tech.temperature_K
    leak0 = leak(T0)
    profile = THERMAL_PROFILE.get(part)
    if profile:
        t_la_C, psi, t_max_C = profile
        if at_max:
            T = t_max_C + 273.15
            out.append(Part(f"junction held at the profile's maximum {T:.1f} K (no steady junction below it: the "
                            "socket's demand there, more than the cooling removes): leakage", leak(T) - leak0,
                            f"Intel's DTS thermal profile: maximum {t_max_C:g} C (E5 v2 datasheet vol. 1, Table 5-2)",
                            False))
        else:
            j = solve_junction(lambda T: level + leak(T) - leak0, t_la_C + 273.15, psi, t_max_C + 273.15)
            out.append(Part(f"junction at {j.T_K:.1f} K from the thermal profile (the model assumed {T0:.0f} K; "
                            f"loop gain {j.gain:.2f}: a watt before it is {1 / (1 - j.gain):.2f} W after): leakage",
                            leak(j.T_K) - leak0, f"Intel's DTS thermal profile: {psi:.3f} C/W over {t_la_C:g} C "
                            f"local ambient up to {t_max_C:g} C, solved with the socket's own power (E5 v2 datasheet "
                            "vol. 1, Table 5-2)", False))
        level += out[-1].watts
    out.append(Part("idle power of the polling cores (they never halt: no C-state to leave out)", 0.0,
                    "the run prices the cores' polling loops; the model has no C-states or power gating", False))
    vr = level / VR_EFFICIENCY - level
    out.append(Part(f"voltage-regulator losses at {100 * VR_EFFICIENCY:.0f}% efficiency", vr,
                    "assumed: a multiphase server regulator at load; the measurement is at the wall", True))
    level += vr
    short = out[0].watts * (1.0 / (1.0 - MCPAT_PUBLISHED_SHORTFALL) - 1.0)
    out.append(Part(f"McPAT's published shortfall on real chips ({100 * MCPAT_PUBLISHED_SHORTFALL:.0f}%) on the "
                    "model's die (beside the total, not added; it overlaps the tiles' missing area priced above, one of its "
                    "causes)", short,
                    "Li et al., MICRO 2009: McPAT -11% to -23% of power on four real chips", False, in_total=False))
    if p.die is not None:
        out.append(Part("the system agent and I/O's dynamic power if its transistors switched as the tiles' do per "
                        "transistor, at the operating point (beside the total, not added)", _agent_dynamic_W(
                            model, p.die, vcore, mhz, rail),
                        "assumed: no published energy of the home agents, integrated I/O or power control; much of "
                        "the agent is PHYs and pads, so an upper-class figure", True, in_total=False))
    exponent = ioff_vdd_exponent(model.tech.node_nm, model.tech.device)
    op_leak = float(model.evaluate(core_vdd=vcore, core_MHz=mhz, uncore_vdd=rail).die.leakage_W)
    steeper = op_leak * ((rail / model.tech.vdd) ** (exponent + STEEPER_IOFF_EXPONENT) / (rail / model.tech.vdd)
                         ** exponent - 1.0)
    out.append(Part(f"the leakage table's supply slope: Ioff ~ V^{exponent + STEEPER_IOFF_EXPONENT:g} (the 45-90 nm "
                    f"tables' high-performance exponent) instead of 22 nm's V^{exponent:g}, at the operating point "
                    "(beside the total, not added)", steeper,
                    "McPAT's device tables (power.tech.IOFF_VDD_EXPONENT): a sensitivity to the table's slope", True,
                    in_total=False))
    return out


# the report's sensitivity to the 22 nm leakage table's slope with the supply: the exponent the 45-90 nm
# high-performance tables have over 22 nm's (power.tech.IOFF_VDD_EXPONENT: 4 against 2)
STEEPER_IOFF_EXPONENT = 2.0


def _agent_dynamic_W(model, die_cfg, vcore, mhz, rail: float) -> float:
    """The system agent's dynamic power at the tiles' runtime dynamic power per published transistor (the model's
    enabled tiles with the area they lack, ``power.die``) at the operating point."""
    s = model.evaluate(core_vdd=vcore, core_MHz=mhz, uncore_vdd=rail).structures
    tiles = s["class"].isin(("cores", "caches", "noc")) | s["component"].str.startswith("die.tiles_beyond_model")
    enabled = max((c.count for c in model.platform.caches), default=model.platform.cores)
    per_transistor = float(s.loc[tiles, "runtime_dynamic_W"].sum()) / (enabled * die_cfg.tile_transistors)
    return per_transistor * (die_cfg.transistors - die_cfg.tiles * die_cfg.tile_transistors)


def solve_junction(power_W, ambient_K: float, psi_C_per_W: float, max_K: float = MAX_JUNCTION_K) -> Junction:
    """The junction T = ambient + psi x P(T), ``power_W(T)`` the socket's power at T: the lowest fixed point at or
    below ``max_K``, bracketed in ``JUNCTION_SCAN_K`` steps from the ambient up and bisected. Iterating the map
    instead is no test of convergence near a fold: at a gain near 1 its steps shrink below any tolerance while it
    is still rising, or rising past where no fixed point exists. No fixed point up to ``max_K``, or one at a gain of
    1 or more (not stable), is a ``ThermalRunaway``."""
    if not ambient_K < max_K:
        raise ValueError(f"the ambient {ambient_K:.1f} K is not below the maximum junction {max_K:.1f} K")

    def excess(T: float) -> float:
        return ambient_K + psi_C_per_W * power_W(T) - T

    def gain(T: float, h: float = 0.05) -> float:
        return psi_C_per_W * (power_W(T + h) - power_W(T - h)) / (2 * h)

    if excess(ambient_K) < 0:
        raise ValueError(f"the socket's power at the ambient is negative ({power_W(ambient_K):.2f} W)")
    lo = ambient_K
    while True:
        hi = min(lo + JUNCTION_SCAN_K, max_K)
        if excess(hi) <= 0:
            break
        if hi >= max_K:
            raise ThermalRunaway(
                f"thermal runaway: no steady junction up to {max_K:.1f} K (psi {psi_C_per_W} C/W over "
                f"{ambient_K:.1f} K): there the socket dissipates {power_W(max_K):.1f} W and the cooling removes "
                f"{(max_K - ambient_K) / psi_C_per_W:.1f} W; loop gain {gain(max_K - 0.1):.2f}")
        lo = hi
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
    T = hi
    g = gain(T)
    if g >= 1.0:
        raise ThermalRunaway(f"thermal runaway: the junction at {T:.2f} K is not stable (loop gain {g:.2f})")
    return Junction(T, g, power_W(T))


def nic_parts(result) -> list[Part]:
    """The NIC cards of one priced socket as built (``NIC_CARDS``), part by part (``in_total``), beside the model's
    traffic-driven NIC power (MAC, buffers, DMA and SerDes: within the controllers' typical figure, so not added).
    A platform with no card table has the model's NIC chips as its total."""
    p = result.model.platform
    s = result.structures
    model_W = float(s.loc[s["class"] == "nic", "runtime_power_W"].sum())
    card = NIC_CARDS.get(p.part or p.name)
    if card is None:
        return [Part("model: the NIC chips' runtime dynamic + leakage", model_W, "this run, priced", False)]
    out = [Part("model: the NIC chips' traffic-driven power (MAC, buffers, DMA, SerDes; within the controllers' "
                "typical figure, beside the total, not added)", model_W, "this run, priced", False, in_total=False)]
    n = card.per_socket
    ctrl_W = n * card.controllers * NIC_CONTROLLER_TYPICAL_W[card.controller]
    out.append(Part(f"{n * card.controllers} {card.controller} controllers ({card.controllers} a card x {n} "
                    f"{card.name}) at {NIC_CONTROLLER_TYPICAL_W[card.controller]:g} W typical each", ctrl_W,
                    "assumed: a dual-port X520 card's figure from a secondary source (NIC_CONTROLLER_TYPICAL_W)", True))
    chips_W = ctrl_W
    if card.pcie_switch is not None:
        sw_W = n * PCIE_SWITCH_TYPICAL_W[card.pcie_switch]
        out.append(Part(f"{n} PCIe switches (one a card) at {PCIE_SWITCH_TYPICAL_W[card.pcie_switch]:g} W typical "
                        "each", sw_W, "PLX PEX 8624 product brief (24 lanes, PCIe 2.0); the card's switch assumed of "
                        "that class", True))
        chips_W += sw_W
    vr_W = chips_W / VR_EFFICIENCY - chips_W
    out.append(Part(f"the cards' regulators for their chips at {100 * VR_EFFICIENCY:.0f}% efficiency", vr_W,
                    "assumed: VR_EFFICIENCY, as the sockets' regulators", True))
    qsfp_W = n * card.qsfp_cages * ASSUMED_QSFP_MODULE_W
    out.append(Part(f"{n * card.qsfp_cages} QSFP+ optical modules at {ASSUMED_QSFP_MODULE_W:g} W (SFF-8436 class 1's "
                    "limit)", qsfp_W, "assumed: the measurement's media are not published (a passive copper "
                    "breakout: about 0 W)", True))
    return out


def nic_cards_W(result) -> float:
    """The NIC cards of one priced socket as built: the sum of ``nic_parts``' parts in the total."""
    return sum(part.watts for part in nic_parts(result) if part.in_total)
