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
* **inter-socket links**: the socket's QPI 1.1 links (``power.links``: two per socket on the E5-2600 v2, each end
  half a link's power), always on.

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


@dataclass(frozen=True)
class Part:
    name: str
    watts: float
    source: str
    assumed: bool


def _die_W(r) -> float:
    return float(r.die.runtime_dynamic_W + r.die.leakage_W)


def _cores_scaled(r, model, vdd, mhz) -> float:
    """The die's runtime power with every core at ``vdd`` and its counted work scaled to ``mhz`` (busy cores)."""
    base_mhz = np.asarray(r.core_MHz, dtype=float)
    e = model.evaluate(core_vdd=vdd, core_MHz=mhz)
    s = e.structures
    core = np.array([x.domain == "core" for x in model.structs])
    scale = float(np.mean(np.asarray(mhz, dtype=float) / base_mhz))
    dyn = s.runtime_dynamic_W.to_numpy()
    dyn = np.where(core, np.minimum(dyn * scale, s.peak_dynamic_W.to_numpy()), dyn)
    on = s.on_die.to_numpy()
    return float((dyn + s.leakage_W.to_numpy())[on].sum())


def parts(result) -> list[Part]:
    """The missing parts of one priced socket (``power.price_run`` of a one-socket run), each in watts over the
    previous figure, starting from the model's die runtime power."""
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
    w = _cores_scaled(result, model, np.full_like(vdd, ASSUMED_CORE_VDD), mhz)
    out.append(Part(f"cores at {ASSUMED_CORE_VDD:.2f} V instead of the device table's", w - level,
                    "assumed: no published per-part operating voltage", True))
    level = w
    clock = level * CLOCK_SHARE / (1.0 - CLOCK_SHARE)
    out.append(Part(f"global clock distribution ({100 * CLOCK_SHARE:.0f}% of the chip)", clock,
                    "Montecito, ISSCC 2005: < 25 W of 104 W (share assumed to carry over)", True))
    n_links = QPI_LINKS_PER_SOCKET.get(p.name, 0)
    qpi = links.LinkPower(n_links, links.QPI_LANES, links.QPI_RATE_GT, 1, True, 0.0, 0.0).power_W / 2
    out.append(Part(f"{n_links} QPI 1.1 link ends, always on", qpi, "power.links (10 pJ/bit assumed there)", True))
    return out
