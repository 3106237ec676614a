"""The product's whole die, where it is more than the structures the model prices (McPAT's inputs): what a
measured processor has on its silicon that a McPAT-class configuration does not name.

McPAT prices the cores, caches, network, memory controllers and the I/O controllers a configuration lists. A real
server die also holds the tiles its product fuses off, the system agent (home agents, integrated I/O, power
control, the ring's bridges), the physical layers and pads of every link the die has (PCIe, QPI, DDR, DMI), fuses,
PLLs and power gates. ``parts`` prices them from the die's published figures (``PUBLISHED``, keyed by the priced
part, ``Technology.part``), as structures of their own class (``other``), on the die:

* **gated tiles**: the die's core tiles beyond the LLC slices the product enables, fused off. Intel clock- and
  power-gates the tiles a product disables (Rusu et al., "A 45 nm 8-Core Enterprise Xeon Processor", IEEE JSSC
  45(1), 2010: "the disabled blocks are both clock and power gated"; the same design team's practice, assumed to
  carry over to Ivytown): their area at the published tile area, no power.
* **the enabled tiles' area beyond the structures'**: the published tile is larger than the model's (a core, an
  LLC slice and its ring stop); each tile structure is taken to be short of the silicon by the same ratio
  (assumed uniform), and the missing area is priced at its own structures' leakage and switching per mm^2 (the
  same circuits at the same activity; assumed): the run's cores' share on the cores' rail and clocks, the slices'
  and ring stops' on the uncore's. The enabled cores a run leaves idle sit in C6, power gated: area only. McPAT's
  published shortfall (``power.unmodelled``, beside the total) overlaps this part: the model's small area is one of
  its causes.
* **the system agent and I/O**: the rest of the die's area, after the tiles and the uncore structures the model
  prices (memory controllers, PCIe). Its leakage is priced from its transistors, not its area: the die's published
  transistor count less its tiles', at the leaking width per transistor the model's own tile structures have (their
  subthreshold and gate-leaking widths over the published transistors of one tile; assumed: the uncore's devices
  leak as the tiles' do), less the widths of the uncore structures already priced. No dynamic power in the die: no
  published energy per operation of the home agents or integrated I/O (``power.unmodelled`` sizes it beside the
  total at the tiles' switching per transistor, assumed). Its area is mostly pads, PHYs and
  wiring, so an area density (session 13's 70 mW/mm^2 of the priced uncore logic) would price far more leakage
  than its transistors have.

A tile is one core with its LLC slice and ring stop. Its area and transistors are published by difference: the
6-core Ivy Bridge die is the 10-core die less two rows of two tiles ("the 6-core chop removes the 2nd and 4th rows
from the 10-core die", Rusu et al., ISSCC 2014, as reported from the conference), so one tile is a quarter of
their difference.

The McPAT paths never carry these structures: the XML export has no place for them (``power.mcpat_xml`` writes what
McPAT prices), the sweep's points are McPAT's own inputs, and the McPAT checks price the export as read back.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import DieConfig

# The Ivy Bridge-EP dies (Intel's figures as reported): the 6-core die 257 mm^2 and 1.86 B transistors (HotHardware,
# Core i7-4960X review, 2013); the 10-core die 341 mm^2 and 2.89 B (AnandTech, "Intel's Xeon E5-2600 v2: 12-core
# Ivy Bridge EP", Sept 2013; secondary source); the 15-core "Ivytown" die 541 mm^2 and 4.31 B (Rusu et al., ISSCC
# 2014), which the 12-core E5-2697 v2 uses with 3 tiles fused off (the E5 v2's 12-core parts share the E7 v2's die)
# No primary source for the 10- and 6-core figures was found (session 15). They agree with ISSCC 2014 as reported
# (X-bit Labs: "the 10-core chop removes the rightmost 3rd column and its dedicated top and bottom I/Os"): the 15-core
# die less the 10-core die is a column of five tiles with its I/O, 200 mm^2 and 1.42 B, so a tile is at most 40 mm^2
# and 0.284 B; the tile below fits inside that bound.
IVB_6C_MM2, IVB_6C_TRANSISTORS = 257.0, 1.86e9
IVB_10C_MM2, IVB_10C_TRANSISTORS = 341.0, 2.89e9
IVB_ROWS_CHOPPED_TILES = 4          # two rows of two tiles (ISSCC 2014)

PUBLISHED = {
    "xeon-e5-2697v2": DieConfig(
        node_nm=22.0, area_mm2=541.0, tiles=15, transistors=4.31e9,
        tile_mm2=(IVB_10C_MM2 - IVB_6C_MM2) / IVB_ROWS_CHOPPED_TILES,
        tile_transistors=(IVB_10C_TRANSISTORS - IVB_6C_TRANSISTORS) / IVB_ROWS_CHOPPED_TILES),
}

TILE_CLASSES = ("caches", "noc")      # a tile's share beside its core: its LLC slice (with directory) and ring stop
UNCORE_CLASSES = ("mc", "io")         # the uncore structures the model prices outside the tiles


def published(part: str) -> DieConfig | None:
    """The published die of ``part`` (None: not known; the model prices its structures only)."""
    return PUBLISHED.get(part)


@dataclass(frozen=True)
class DiePart:
    path: str
    area_mm2: float       # one instance (per core when ``domain`` is 'core')
    leak_um: float        # subthreshold-leaking width (the structures' units: calibrated, before long channel)
    gate_um: float        # gate-leaking width
    source: str
    domain: str = "fixed"           # 'core': per core, on the cores' rail and clocks; 'uncore'; 'fixed': no clock
    peak_c: float = 0.0             # F switched per cycle at peak, one instance
    clock_c: float = 0.0            # F switched per cycle whenever clocked, one instance
    clock_MHz: float = 1.0          # an 'uncore' part's clock
    runtime_c: tuple[float, ...] = ()   # F switched over the run (per core, or one total)


def _density(structs, area_mm2: float, per_core: bool) -> dict:
    """What ``structs`` switch and leak per mm^2 of their own area: leaking widths, peak and clocked capacitance
    per cycle (an uncore structure's at its own clock, carried as F x MHz), the run's switched capacitance (per
    core for core structures)."""
    d = {"leak_um": sum(s.block.leak_um * s.count for s in structs) / area_mm2,
         "gate_um": sum(s.block.gate_um * s.count for s in structs) / area_mm2}
    if per_core:
        d["peak_c"] = sum(s.peak_c * s.count for s in structs) / area_mm2
        d["clock_c"] = sum(s.clock_c * s.count for s in structs) / area_mm2
        n = max((len(s.runtime_c) for s in structs), default=0)
        d["runtime_c"] = tuple(sum(s.runtime_c[i] for s in structs if i < len(s.runtime_c)) / area_mm2
                               for i in range(n))
    else:
        d["peak_cf"] = sum(s.peak_c * s.count * s.clock_MHz for s in structs) / area_mm2
        d["clock_cf"] = sum(s.clock_c * s.count * s.clock_MHz for s in structs) / area_mm2
        has = any(s.runtime_c for s in structs)
        d["runtime_c"] = (sum(sum(s.runtime_c) for s in structs) / area_mm2,) if has else ()
    return d


def parts(die: DieConfig, structs, cores: int, slices: int) -> list[DiePart]:
    """The die's parts beyond ``structs`` (the model's priced structures, ``power.model.Struct``) for a socket with
    ``cores`` cores in the run and ``slices`` LLC slices enabled. An error when the structures measure more than
    the die or leak more than its transistors allow (the published figures and the model disagree: never a
    negative part).

    The enabled tiles' published area beyond the model's is split as the model's own tile is: each of the model's
    tile structures is taken to fall short of the silicon by the same ratio (the published tile over the model's
    tile; assumed uniform), so the run's cores miss (ratio - 1) of their area and the LLC slices and ring stops
    (ratio - 1) of theirs, each priced at its own structures' leakage and switching per mm^2 (the missing area
    holds the same mix of circuits at the same activity); the enabled cores the run leaves idle sit in C6, power
    gated (area only)."""
    if slices > die.tiles or cores > slices:
        raise ValueError(f"the die has {die.tiles} tiles: {slices} LLC slices and {cores} cores do not fit")

    def total(pick, attr):
        return sum(getattr(s.block, attr) * s.count for s in structs if pick(s))

    def core(s):
        return s.domain == "core"

    def tile_share(s):
        return s.on_die and not core(s) and s.cls in TILE_CLASSES

    def uncore(s):
        return s.on_die and not core(s) and s.cls in UNCORE_CLASSES

    # one tile of the model: a core's structures (their count is per core) and a slice's share of the rest
    tile = {a: total(core, a) + total(tile_share, a) / slices for a in ("area_mm2", "leak_um", "gate_um")}
    core_mm2, share_mm2 = total(core, "area_mm2"), total(tile_share, "area_mm2")
    ratio = die.tile_mm2 / tile["area_mm2"]
    agent_mm2 = die.area_mm2 - die.tiles * die.tile_mm2 - total(uncore, "area_mm2")
    agent_transistors = die.transistors - die.tiles * die.tile_transistors
    agent = {a: agent_transistors * tile[a] / die.tile_transistors - total(uncore, a) for a in ("leak_um", "gate_um")}
    for what, v in (("the enabled tiles' published area less the model's", ratio - 1.0),
                    ("the die's area less its tiles and the priced uncore", agent_mm2),
                    ("the uncore's leaking width less the priced uncore's", agent["leak_um"])):
        if v < 0:
            raise ValueError(f"power.die: {what} is negative ({v:.3g}): the published die and the model disagree")
    out = [
        DiePart("die.gated_tiles", (die.tiles - slices) * die.tile_mm2, 0.0, 0.0,
                f"{die.tiles - slices} fused-off tiles, clock and power gated (JSSC 2010)"),
        DiePart("die.idle_cores", (slices - cores) * ratio * core_mm2, 0.0, 0.0,
                f"{slices - cores} enabled cores the run leaves idle, in C6 (power gated): area only"),
    ]
    miss = ratio - 1.0
    why = (f"the published tile ({die.tile_mm2:g} mm^2) is {ratio:.2f}x the model's: the missing area at its own "
           "structures' leakage and switching per mm^2 (assumed: the same circuits at the same activity)")
    if cores and core_mm2 > 0:
        d = _density([s for s in structs if core(s)], core_mm2, True)
        a = miss * core_mm2
        out.append(DiePart("die.tiles_beyond_model.cores", a, d["leak_um"] * a, d["gate_um"] * a, why, "core",
                           d["peak_c"] * a, d["clock_c"] * a, 1.0, tuple(c * a for c in d["runtime_c"])))
    if share_mm2 > 0:
        picked = [s for s in structs if tile_share(s)]
        d = _density(picked, share_mm2, False)
        mhz = max(s.clock_MHz for s in picked)
        a = miss * share_mm2
        out.append(DiePart("die.tiles_beyond_model.slices", a, d["leak_um"] * a, d["gate_um"] * a, why, "uncore",
                           d["peak_cf"] * a / mhz, d["clock_cf"] * a / mhz, mhz,
                           tuple(c * a for c in d["runtime_c"])))
    out.append(DiePart("die.agent_and_io", agent_mm2, agent["leak_um"], agent["gate_um"],
                       f"{agent_transistors / 1e9:.3g} B transistors beyond the tiles, leaking as the model's tiles do"))
    return out
