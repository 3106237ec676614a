"""The server around its sockets, as a meter at the wall sees it: what validation.md's 399.2 W holds beyond the CPUs
(255 W) and the four NICs (62 W), its "rest" of 82 W: the DRAM, the board (the platform controller hub, the
management controller and the regulators that feed the DRAM and those chips), the fans, the disks, and the power
supply's own losses on everything.

The measured server is not named (validation.md; platforms.md gives two E5-2697 v2, 128 GB of DDR3-1600 and four
X520-QDA1), so its supply, fans and disks are taken to be of a class, each part's figure from that class's
published data or named as assumed (``Chassis``; ``SERVERS``). Nothing here is fitted to the measured 82 W or
399.2 W: ``drivers/cli/validate_xeon.py`` prints the parts' sum beside them.

* **The power supply**: its efficiency at the load it carries, from its 80 PLUS class's published minimum
  efficiencies at 20, 50 and 100% of the rated load (10% too for Titanium), linear between them (``PsuCurve``).
  Below the lowest certified load the class promises nothing: the lowest point's figure is held (assumed; a real
  supply is less efficient there, so this under-states the loss). Supplies that share the load (``psus_sharing``:
  a redundant pair with active current sharing) each carry a share of it. A load above the rated output is an
  error (``ParamError``), never a figure.
* **The board**: the platform controller hub at its thermal design power (an upper figure: a TDP is what its cooling
  must remove), the management controller (BMC) at its module's typical figure, and the losses of the board's
  regulators that feed the DRAM and these chips, at the sockets' assumed regulator efficiency
  (``unmodelled.VR_EFFICIENCY``; the CPUs' and the NIC cards' regulators are in their own figures).
* **The fans**: each at its rated power times the cube of its speed's share of the rated speed (the fan affinity
  laws: flow goes as the speed, pressure as its square, power as its cube).
* **The disks**: each at its datasheet's average idle power (the KVS serves from memory: its disk idles).
* **The DIMMs' registers**: registered DIMMs buffer their command and address bus in a register each, priced
  here (``Chassis.dimms``, ``dimm_register_W``); the DIMMs' DRAM devices are the power model's (their datasheet
  currents), fed by the board's regulators with the registers.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from models.params import ParamError

from .unmodelled import VR_EFFICIENCY, Part


@dataclass(frozen=True)
class PsuCurve:
    """A supply's efficiency against its load (the share of its rated output it delivers): the published points,
    linear between them, the lowest point's efficiency held below it."""
    name: str
    load_shares: tuple[float, ...]
    efficiencies: tuple[float, ...]

    def __post_init__(self):
        if len(self.load_shares) != len(self.efficiencies) or not self.load_shares:
            raise ParamError(f"power supply curve {self.name!r}: {len(self.load_shares)} load points for "
                             f"{len(self.efficiencies)} efficiencies")
        if list(self.load_shares) != sorted(set(self.load_shares)) or not 0 < self.load_shares[0] or \
                self.load_shares[-1] != 1.0:
            raise ParamError(f"power supply curve {self.name!r}: load points {self.load_shares} must rise from "
                             "above 0 to 1 (the rated load)")
        for e in self.efficiencies:
            if not 0 < e <= 1:
                raise ParamError(f"power supply curve {self.name!r}: efficiency {e} must be in (0, 1]")

    def efficiency(self, load_share: float) -> float:
        """The efficiency at `load_share` of the rated output (0 < share <= 1)."""
        if not 0 < load_share <= 1:
            raise ParamError(f"power supply {self.name!r} at {100 * load_share:.1f}% of its rated output: a supply "
                             "delivers more than nothing and at most its rating")
        xs, ys = self.load_shares, self.efficiencies
        if load_share <= xs[0]:
            return ys[0]
        i = bisect.bisect_left(xs, load_share)
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 + (y1 - y0) * (load_share - x0) / (x1 - x0)


# The 80 PLUS program's minimum efficiencies for "230 V internal redundant" supplies (data-center supplies), at 20,
# 50 and 100% of the rated load, Titanium at 10% too (published by the program, 80plus.org; as Wikipedia's "80
# Plus" table and Tom's Hardware's "80 PLUS" review print them).
EIGHTY_PLUS_230V_REDUNDANT = {
    "80 PLUS Bronze": PsuCurve("80 PLUS Bronze (230 V internal redundant)", (0.2, 0.5, 1.0), (0.81, 0.85, 0.81)),
    "80 PLUS Silver": PsuCurve("80 PLUS Silver (230 V internal redundant)", (0.2, 0.5, 1.0), (0.85, 0.89, 0.85)),
    "80 PLUS Gold": PsuCurve("80 PLUS Gold (230 V internal redundant)", (0.2, 0.5, 1.0), (0.88, 0.92, 0.88)),
    "80 PLUS Platinum": PsuCurve("80 PLUS Platinum (230 V internal redundant)", (0.2, 0.5, 1.0),
                                 (0.90, 0.94, 0.91)),
    "80 PLUS Titanium": PsuCurve("80 PLUS Titanium (230 V internal redundant)", (0.1, 0.2, 0.5, 1.0),
                                 (0.90, 0.94, 0.96, 0.91)),
}


@dataclass(frozen=True)
class Chassis:
    """What a server holds beyond its sockets' CPUs, DRAM devices and NIC cards, each a named figure (watts unless
    said). `psu`: a key of EIGHTY_PLUS_230V_REDUNDANT; `psu_rated_W` each supply's rated output; `psus_sharing` how
    many share the load; `pch_W` the platform controller hub; `bmc_W` the management controller; `board_vr_
    efficiency` the board's regulators for the DRAM, PCH and BMC; `fans` at `fan_rated_W` each at full speed, run
    at `fan_speed_share` of it; `disks` at `disk_W` each; `dimms` registered DIMMs, each one's register at
    `dimm_register_W` (its DRAM devices are the power model's)."""
    psu: str
    psu_rated_W: float
    psus_sharing: int
    pch_W: float
    bmc_W: float
    board_vr_efficiency: float
    fans: int
    fan_rated_W: float
    fan_speed_share: float
    disks: int
    disk_W: float
    dimms: int = 0                  # registered DIMMs: each one's register (the DRAM devices are the model's)
    dimm_register_W: float = 0.0

    def __post_init__(self):
        if self.psu not in EIGHTY_PLUS_230V_REDUNDANT:
            raise ParamError(f"Chassis.psu = {self.psu!r}: must be one of {', '.join(EIGHTY_PLUS_230V_REDUNDANT)}")
        if not 0 < self.board_vr_efficiency <= 1:
            raise ParamError(f"Chassis.board_vr_efficiency = {self.board_vr_efficiency}: must be in (0, 1]")
        if not 0 <= self.fan_speed_share <= 1:
            raise ParamError(f"Chassis.fan_speed_share = {self.fan_speed_share}: must be in [0, 1] (a share of the "
                             "fans' rated speed)")
        if not self.psu_rated_W > 0:
            raise ParamError(f"Chassis.psu_rated_W = {self.psu_rated_W}: must be > 0")
        for name in ("psus_sharing", "fans", "disks", "dimms"):
            value = getattr(self, name)
            if not (value >= (1 if name == "psus_sharing" else 0) and int(value) == value):
                raise ParamError(f"Chassis.{name} = {value}: must be a whole number, at least "
                                 f"{1 if name == 'psus_sharing' else 0}")
        for name in ("pch_W", "bmc_W", "fan_rated_W", "disk_W", "dimm_register_W"):
            if not getattr(self, name) >= 0:
                raise ParamError(f"Chassis.{name} = {getattr(self, name)}: must be >= 0")


# The Xeon server's chassis: the measured server is not named, so every choice of class below is assumed; the
# figures of a class are published where the source is named.
XEON_SERVER = Chassis(
    # Assumed: a 2U two-socket server of 2013 with a redundant pair of 750 W 80 PLUS Platinum supplies sharing the
    # load (no supply is named by the measurement).
    psu="80 PLUS Platinum", psu_rated_W=750.0, psus_sharing=2,
    # Assumed: Intel's C600-series PCH (the E5-2600 v2's platform controller) at 8 W; its TDP in Intel's C600
    # datasheet was not readable in the sources at hand. A TDP is an upper figure for a PCH serving one idle disk.
    pch_W=8.0,
    # An AST2400 BMC module's published typical power, "<= 4 W" (a vendor's IPMI daughter card on the AST2400: the
    # chip, its DRAM, flash and Ethernet PHY; secondary, and a bound): taken at 4 W. The server's BMC is not named.
    bmc_W=4.0,
    board_vr_efficiency=VR_EFFICIENCY,    # assumed, as the sockets' (power/unmodelled.py)
    # Assumed: six 60 mm server fans rated 14.4 W each (12 V, 1.2 A) at full speed, run at half speed (no fan, nor
    # the server's fan curve, is named; a server's fans track its inlet and CPU temperatures).
    fans=6, fan_rated_W=14.4, fan_speed_share=0.5,
    # One disk (assumed: the operating system's; MICA serves from memory) at Seagate's Constellation ES 500 GB SATA
    # drive's average idle power, 3.74 W in 3 Gb/s mode (Constellation ES Serial ATA Product Manual, Table 4:
    # 0.28 A at 5 V and 0.20 A at 12 V; published). The server's disks are not named.
    disks=1, disk_W=3.74,
    # The DIMMs: 128 GB over 8 channels (spec), two 8 GB dual-rank registered ECC DIMMs per channel, as the Xeon
    # config's technology() prices their devices (assumed: the DIMMs are not named). Each DIMM's register (the
    # JEDEC DDR3 registering clock driver, SSTE32882 class) at 1 W: assumed, no register datasheet was read.
    dimms=16, dimm_register_W=1.0,
)
SERVERS = {"xeon-e5-2697v2": XEON_SERVER}


def board_parts(chassis: Chassis, dram_W: float) -> list[Part]:
    """The board's, the fans' and the disks' parts (DC, before the supply), each a Part in the total."""
    if not dram_W >= 0:
        raise ParamError(f"the DRAM's power {dram_W} W: must be >= 0")
    registers_W = chassis.dimms * chassis.dimm_register_W
    fed = dram_W + registers_W + chassis.pch_W + chassis.bmc_W
    vr_W = fed / chassis.board_vr_efficiency - fed
    fan_each = chassis.fan_rated_W * chassis.fan_speed_share ** 3
    registers = [Part(f"{chassis.dimms} RDIMM registers at {chassis.dimm_register_W:g} W each", registers_W,
                      "assumed: a DDR3 registering clock driver's datasheet not read", True)] if chassis.dimms else []
    return registers + [
        Part(f"platform controller hub at {chassis.pch_W:g} W (TDP class)", chassis.pch_W,
             "assumed: Intel C600-series PCH; its datasheet's TDP not read here", True),
        Part(f"management controller (BMC) at {chassis.bmc_W:g} W", chassis.bmc_W,
             "an AST2400 BMC module's published typical, <= 4 W (secondary; the server's BMC not named)", True),
        Part(f"the board's regulators for the DRAM, registers, PCH and BMC at "
             f"{100 * chassis.board_vr_efficiency:.0f}% "
             "efficiency", vr_W, "assumed: VR_EFFICIENCY, as the sockets' regulators", True),
        Part(f"{chassis.fans} fans at {100 * chassis.fan_speed_share:g}% speed, {chassis.fan_rated_W:g} W rated: "
             f"{fan_each:.2f} W each (power as the cube of the speed)", chassis.fans * fan_each,
             "fan affinity laws; the fans' count, rating and speed assumed", True),
        Part(f"{chassis.disks} disk(s) idle at {chassis.disk_W:g} W", chassis.disks * chassis.disk_W,
             "Seagate Constellation ES 500 GB SATA, average idle (product manual, Table 4); the disk assumed", True),
    ]


@dataclass(frozen=True)
class AtWall:
    """The server at the wall: its DC load, each supply's share of its rating, the efficiency there, and the power
    drawn from the wall (DC load / efficiency)."""
    dc_W: float
    load_share: float
    efficiency: float
    wall_W: float

    @property
    def psu_loss_W(self) -> float:
        return self.wall_W - self.dc_W


def at_wall(chassis: Chassis, dc_W: float) -> AtWall:
    """The wall power of a DC load `dc_W` carried by the chassis' supplies (each `psus_sharing`-th of it)."""
    if not dc_W > 0:
        raise ParamError(f"the server's DC load {dc_W} W: must be > 0")
    share = dc_W / (chassis.psus_sharing * chassis.psu_rated_W)
    if share > 1:
        raise ParamError(f"the server's DC load {dc_W:.1f} W exceeds its supplies' rating ({chassis.psus_sharing} "
                         f"x {chassis.psu_rated_W:g} W)")
    eff = EIGHTY_PLUS_230V_REDUNDANT[chassis.psu].efficiency(share)
    return AtWall(dc_W, share, eff, dc_W / eff)


def wall_parts(chassis: Chassis, cpu_W: float, nic_W: float, dram_W: float) -> tuple[list[Part], AtWall]:
    """Every part the wall meter sees: the CPUs, the NIC cards and the DRAM devices as given (each priced by its own
    model), the board's, fans' and disks' parts, and the supply's loss on their sum. Returns the parts (all in the
    total: their sum is the wall power) and the supply's operating point."""
    for name, w in (("CPUs", cpu_W), ("NIC cards", nic_W), ("DRAM", dram_W)):
        if not w >= 0:
            raise ParamError(f"the {name}' power {w} W: must be >= 0")
    parts = [Part("CPUs (model + the parts it leaves out)", cpu_W, "power/unmodelled.py parts", False),
             Part("NIC cards as built", nic_W, "power/unmodelled.py nic_parts", False),
             Part("DRAM devices", dram_W, "the power model's DRAM (datasheet IDD currents)", False)]
    parts += board_parts(chassis, dram_W)
    point = at_wall(chassis, sum(p.watts for p in parts))
    curve = EIGHTY_PLUS_230V_REDUNDANT[chassis.psu]
    held = " (below its lowest certified load: that point's figure held)" if \
        point.load_share < curve.load_shares[0] else ""
    parts.append(Part(f"power supply losses: {chassis.psus_sharing} x {chassis.psu_rated_W:g} W {chassis.psu} at "
                      f"{100 * point.load_share:.1f}% load each, {100 * point.efficiency:.2f}% efficient{held}",
                      point.psu_loss_W, f"{curve.name}: the program's published minimums, linear between them; the "
                      "supplies' class, rating and sharing assumed", True))
    return parts, point
