"""What a McPAT-class model leaves out of a real socket's power, each part sized from a published cause (or marked
assumed), beside a priced run: for comparing the model with a measured processor (validation.md's Xeon).

McPAT prices the structures a configuration names at the node's nominal supply: no turbo, no global clock
network, no inter-socket links, and the device table's supply rather than the product's. ``parts(result)`` takes a
priced run (``power.price_run``; one socket) and adds, in order, each as watts over the model's die figure:

* **turbo**: a busy socket runs at its all-core turbo clock, not its base clock (Intel's turbo bins for the
  E5-2697 v2: 3.0 GHz with all 12 cores active, base 2.7 GHz), at the supply the node's V-f law gives that clock
  (``power.dvfs``). The cores' counted work scales with the clock (the cores poll: busy every cycle), so their
  runtime dynamic power is re-priced at f x V^2, their leakage at the new supply.
* **operating supply** (assumed): the ITRS 22 nm high-performance table's 0.8 V is not the product's; Intel
  publishes no per-part operating voltage, only a VID range. ``ASSUMED_CORE_VDD`` (1.0 V) is a named default.
* **clock distribution**: McPAT has no global clock grid. Itanium 2 "Montecito" (Mahoney et al., ISSCC 2005,
  "Clock distribution on a dual-core, multi-threaded Itanium-family processor") spends under 25 W of its 104 W on
  clock distribution from PLL to latch: ``CLOCK_SHARE`` = 25 / 104 of the chip's power, taken as the same share
  here (assumed to carry over).
* **uncore at the cores' supply** (assumed): the LLC slices, directories and ring are priced at the node's
  nominal supply; on the E5 v2 they are assumed to share the cores' rail, so they take ``ASSUMED_CORE_VDD`` too.
* **the processor's DDR I/O**: McPAT's memory-controller PHY has no traffic-driven power and the model prices the
  DRAM devices' DQ drivers and termination only (``DramDevice.io_pj_per_bit``); every transfer is driven at one end
  and terminated at the other, so the processor's end of a read (its termination) or a write (its drivers) is
  taken at the same energy per bit as the DRAM's end, times the bytes the run moved (assumed symmetric).
* **inter-socket links**: the socket's QPI 1.1 links (``power.links``: two per socket on the E5-2600 v2, each end
  half a link's power), always on.
* **voltage-regulator losses** (assumed): the measurement is taken at the wall, so the power the socket's
  regulators dissipate converting 12 V to the processor's rails counts against the CPUs; ``VR_EFFICIENCY``
  (87%, assumed: a typical multiphase server regulator's efficiency at load) of the power before it.
* **leakage at temperature** is sized, not added (``parts(..., in_total=False)``): the model's junction
  temperature is an assumed 360 K; the leakage a junction 10 K hotter adds is the part's size.

PCIe: the model prices the controllers and SerDes of the lanes the NICs use (``power.model``); the processor's other
lanes are taken as idle in their low-power link state (assumed: no device attached).

The idle power of polling cores is not a missing part here: the run's cores execute their polling loops and those
are counted. The results print beside the measurement in ``sim-scripts/power_report.py --run``; nothing here is
fitted to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import links

ALL_CORE_TURBO_MHZ = {"xeon-e5-2697v2": 3000.0}   # Intel's turbo bins: +300 MHz with all 12 cores active (published)
ASSUMED_CORE_VDD = 1.0                            # assumed (no published per-part operating voltage)
CLOCK_SHARE = 25.0 / 104.0                        # Montecito: < 25 W of 104 W (published; share assumed to carry)
QPI_LINKS_PER_SOCKET = {"xeon-e5-2697v2": 2}      # E5-2600 v2: two QPI 1.1 links per socket (published)
VR_EFFICIENCY = 0.87                              # assumed: a multiphase server regulator's efficiency at load
HOTTER_JUNCTION_K = 10.0                          # the step the leakage-at-temperature part is sized for


@dataclass(frozen=True)
class Part:
    name: str
    watts: float
    source: str
    assumed: bool
    in_total: bool = True   # False: a sensitivity sized beside the total, not added to it


def _die_W(r) -> float:
    return float(r.die.runtime_dynamic_W + r.die.leakage_W)


def _cores_scaled(r, model, vdd, mhz, uncore_vdd: float | None = None, temperature_K: float | None = None) -> float:
    """The die's runtime power with every core at ``vdd`` and its counted work scaled to ``mhz`` (busy cores), the
    uncore at ``uncore_vdd`` (default: the node's nominal supply)."""
    base_mhz = np.asarray(r.core_MHz, dtype=float)
    e = model.evaluate(core_vdd=vdd, core_MHz=mhz, uncore_vdd=uncore_vdd, temperature_K=temperature_K)
    s = e.structures
    core = np.array([x.domain == "core" for x in model.structs])
    scale = float(np.mean(np.asarray(mhz, dtype=float) / base_mhz))
    dyn = s.runtime_dynamic_W.to_numpy()
    dyn = np.where(core, np.minimum(dyn * scale, s.peak_dynamic_W.to_numpy()), dyn)
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


def parts(result) -> list[Part]:
    """The missing parts of one priced socket (``power.price_run`` of a one-socket run), each in watts over the
    previous figure, starting from the model's die runtime power; the last (leakage at temperature) is a
    sensitivity beside the total (``in_total`` False)."""
    from .dvfs import vf_curve
    model = result.model
    p = model.platform
    out = [Part("model (McPAT class): die runtime dynamic + leakage", _die_W(result), "this run, priced", False)]
    turbo = ALL_CORE_TURBO_MHZ.get(p.name)
    mhz = np.asarray(result.core_MHz, dtype=float)
    vdd = np.asarray(result.core_vdd, dtype=float)
    level = out[0].watts
    if turbo:
        mhz = np.full_like(mhz, turbo)
        vdd = np.full_like(vdd, vf_curve(model.tech).voltage(turbo))
        w = _cores_scaled(result, model, vdd, mhz)
        out.append(Part(f"all-core turbo {turbo:.0f} MHz at {vdd[0]:.3f} V (node's V-f law)", w - level,
                        "Intel turbo bins (published); V from the node's V-f law", False))
        level = w
    vcore = np.full_like(vdd, ASSUMED_CORE_VDD)
    w = _cores_scaled(result, model, vcore, mhz)
    out.append(Part(f"cores at {ASSUMED_CORE_VDD:.2f} V instead of the device table's", w - level,
                    "assumed: no published per-part operating voltage", True))
    level = w
    w = _cores_scaled(result, model, vcore, mhz, uncore_vdd=ASSUMED_CORE_VDD)
    out.append(Part(f"LLC, directories and ring at the cores' {ASSUMED_CORE_VDD:.2f} V", w - level,
                    "assumed: the uncore shares the cores' rail", True))
    level = w
    io = _ddr_io_W(model)
    out.append(Part("the processor's DDR I/O (drivers and termination) at the run's memory traffic", io,
                    "the DRAM's I/O energy per bit (DramDevice.io_pj_per_bit), assumed symmetric", True))
    level += io
    clock = level * CLOCK_SHARE / (1.0 - CLOCK_SHARE)
    out.append(Part(f"global clock distribution ({100 * CLOCK_SHARE:.0f}% of the chip)", clock,
                    "Montecito, ISSCC 2005: < 25 W of 104 W (share assumed to carry over)", True))
    level += clock
    n_links = QPI_LINKS_PER_SOCKET.get(p.name, 0)
    qpi = links.LinkPower(n_links, links.QPI_LANES, links.QPI_RATE_GT, 1, True, 0.0, 0.0).power_W / 2
    out.append(Part(f"{n_links} QPI 1.1 link ends, always on", qpi, "power.links (10 pJ/bit assumed there)", True))
    level += qpi
    vr = level / VR_EFFICIENCY - level
    out.append(Part(f"voltage-regulator losses at {100 * VR_EFFICIENCY:.0f}% efficiency", vr,
                    "assumed: a multiphase server regulator at load; the measurement is at the wall", True))
    hot = model.tech.temperature_K + HOTTER_JUNCTION_K
    # at the supplies and clocks the total ends with
    def leak(T):
        return float(model.evaluate(core_vdd=vcore, core_MHz=mhz, uncore_vdd=ASSUMED_CORE_VDD, temperature_K=T)
                     .die.leakage_W)
    leak_now, leak_hot = leak(model.tech.temperature_K), leak(hot)
    out.append(Part(f"leakage with the junction at {hot:.0f} K instead of {model.tech.temperature_K:.0f} K "
                    "(sensitivity, not added)", leak_hot - leak_now,
                    "the node's Ioff(T) table; the junction temperature is assumed", True, in_total=False))
    return out
