"""Server-level aggregation of dense 3D-stacked servers (pure Python, no simulation).

One stack is simulated (or one KeyVault cluster); a 1.5U server of N stacks is derived from its measured figures:
requests/s, power (the stack's logic die from the power model, plus memory power per GB/s it moves), memory GB/s
and capacity. The server adds Ethernet PHYs (and KeyVault's key-value distributor switches) and must fit its
Ethernet ports, its board and its power budget.

Sources (platforms.md section 3, from Gutierrez et al., ASPLOS 2014): 13 x 13 in board, at most 96 Ethernet ports,
power budget (750 W - 160 W) x 0.8 = 472 W for stacks, NICs and PHYs; 210 mW per GB/s of 3D DRAM, 6 mW per GB/s of
3D NAND; 300 mW per 10 GbE PHY, two PHYs per 441 mm2 package; 21 x 21 mm stack package; KVD switch 819 mW, 32 mm2,
up to 12 stacks per port. Values marked "assumed" are not in that source.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from .kvd import KVD_POWER_W
from .params import Param, ParamError, SimObject

GB = 1 << 30  # capacities in GB as architects mean them for memory (4 GB = 8 x 512 MB dies)


class ServerBudgetWarning(UserWarning):
    """A server of this many stacks draws more than its power budget."""


@dataclass(frozen=True)
class StackFigures:
    """What one simulated stack measured, the input of the aggregation."""

    requests_per_s: float      # sustained requests/s of the stack (the client's measured throughput)
    logic_power_w: float       # cores, caches and NIC MAC of the logic die (the power model's price of the run)
    memory_gbps: float         # memory traffic the run measured (GB/s, 1e9 bytes/s), for memory power
    capacity_bytes: int        # memory in the stack
    memory: str = "dram3d"     # 'dram3d' or 'flash': which memory power per GB/s applies

    def __post_init__(self):
        for name in ("requests_per_s", "logic_power_w", "memory_gbps"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ParamError(f"StackFigures.{name} = {value!r}: must be a finite number >= 0")
        if self.capacity_bytes <= 0:
            raise ParamError(f"StackFigures.capacity_bytes = {self.capacity_bytes!r}: must be > 0")
        if self.memory not in ("dram3d", "flash"):
            raise ParamError(f"StackFigures.memory = {self.memory!r}: must be 'dram3d' or 'flash'")


@dataclass(frozen=True)
class ServerFigures:
    """One server of `stacks` stacks (a 1.5U server: these are also the per-1.5U figures)."""

    stacks: int
    ports: int
    switches: int
    stack_power_w: float       # one stack: logic die + memory
    phy_power_w: float         # all PHYs
    switch_power_w: float      # all KVD switches
    power_w: float             # the whole server's stacks, PHYs and switches
    power_budget_w: float
    area_mm2: float
    requests_per_s: float
    requests_per_s_per_w: float
    requests_per_s_per_gb: float
    capacity_gb: float

    @property
    def within_budget(self) -> bool:
        return self.power_w <= self.power_budget_w


class DenseServer(SimObject):
    """A 1.5U server of 3D stacks: ports, board area and power budget (platforms.md section 3)."""

    stacks = Param.Count(96, "stacks in the server (Mercury/Iridium: at most 96, one per port; KeyVault ~144)",
                         min=1, max=4096)
    stacks_per_port = Param.Count(1, "stacks behind one Ethernet port: 1, or up to 12 through KeyVault's "
                                  "key-value distributor switch (one switch per port when > 1)", min=1, max=12)
    max_ports = Param.Count(96, "Ethernet ports the 1.5U server can take (Gutierrez 2014: 96)", min=1, max=4096)
    supply_w = Param.Float(750.0, "power supply of the server, W (Gutierrez 2014: 750)", min=1.0, max=1e5)
    other_power_w = Param.Float(160.0, "power for everything but stacks, NICs and PHYs (fans, board, ...), W "
                                "(Gutierrez 2014: 160)", min=0.0, max=1e5)
    supply_derate = Param.Float(0.8, "usable fraction of the rest (Gutierrez 2014: 0.8)", min=0.1, max=1.0)
    phy_power_w = Param.Float(0.3, "one 10 GbE PHY, W (Gutierrez 2014: 300 mW); one per port", min=0.0, max=100.0)
    phys_per_package = Param.Count(2, "PHYs per package (Gutierrez 2014: two)", min=1, max=16)
    phy_package_area = Param.Float(441.0, "PHY package area, mm2 (Gutierrez 2014: 441)", min=1.0, max=1e5)
    switch_power_w = Param.Float(KVD_POWER_W, "one key-value distributor switch, W (Gutierrez 2014: 819 mW; "
                                 "KvdSwitch.power_w's figure, models/kvd.py)",
                                 min=0.0, max=1000.0)
    switch_package_area = Param.Float(441.0, "package area of a KVD switch, mm2 (assumed: the stacks' 21 x 21 mm "
                                      "BGA; the die is 32 mm2)", min=1.0, max=1e5)
    stack_package_area = Param.Float(441.0, "stack package area, mm2 (Gutierrez 2014: 21 x 21 mm BGA)",
                                     min=1.0, max=1e5)
    board_area = Param.Float(169.0 * 645.16, "board area, mm2 (Gutierrez 2014: 13 x 13 in)", min=1.0, max=1e7)
    board_fill = Param.Float(0.75, "fraction of the board that packages may cover (assumed: the rest is power "
                             "delivery, connectors and routing)", min=0.05, max=1.0)
    dram_mw_per_gbps = Param.Float(210.0, "3D DRAM power per GB/s moved, mW (Gutierrez 2014: 210)",
                                   min=0.0, max=1e4)
    flash_mw_per_gbps = Param.Float(6.0, "3D NAND power per GB/s moved, mW (Gutierrez 2014: 6)", min=0.0, max=1e4)

    def power_budget_w(self) -> float:
        """(supply - other) x derate: 472 W with the published figures."""
        return (self.supply_w - self.other_power_w) * self.supply_derate

    def validate(self) -> None:
        super().validate()
        if self.other_power_w >= self.supply_w:
            raise ParamError(f"DenseServer.other_power_w = {self.other_power_w} leaves nothing of "
                             f"DenseServer.supply_w = {self.supply_w} for the stacks")

    def ports(self, stacks: int | None = None) -> int:
        return -(-(self.stacks if stacks is None else stacks) // self.stacks_per_port)

    def _area(self, stacks: int) -> float:
        ports = self.ports(stacks)
        switches = ports if self.stacks_per_port > 1 else 0
        return (stacks * self.stack_package_area + -(-ports // self.phys_per_package) * self.phy_package_area
                + switches * self.switch_package_area)

    def _check_hard_limits(self, stacks: int) -> None:
        ports = self.ports(stacks)
        if ports > self.max_ports:
            raise ParamError(f"DenseServer: {stacks} stacks at {self.stacks_per_port} per port need {ports} "
                             f"Ethernet ports, over DenseServer.max_ports = {self.max_ports}")
        area, room = self._area(stacks), self.board_area * self.board_fill
        if area > room:
            raise ParamError(f"DenseServer: {stacks} stacks, their PHYs and switches cover {area:.0f} mm2, over "
                             f"DenseServer.board_area x board_fill = {room:.0f} mm2")

    def evaluate(self, stack: StackFigures, *, stacks: int | None = None) -> ServerFigures:
        """The server of `stacks` (default: self.stacks) stacks like `stack`. Too many ports or too much board area
        is a ParamError; power over the budget is a ServerBudgetWarning (the figures are still returned)."""
        self.validate()
        n = self.stacks if stacks is None else stacks
        if n < 1:
            raise ParamError(f"DenseServer: stacks = {n}: must be >= 1")
        self._check_hard_limits(n)
        mw = self.dram_mw_per_gbps if stack.memory == "dram3d" else self.flash_mw_per_gbps
        stack_power = stack.logic_power_w + stack.memory_gbps * mw / 1000.0
        ports = self.ports(n)
        switches = ports if self.stacks_per_port > 1 else 0
        phy_power = ports * self.phy_power_w
        switch_power = switches * self.switch_power_w
        power = n * stack_power + phy_power + switch_power
        budget = self.power_budget_w()
        if power > budget:
            warnings.warn(f"DenseServer: {n} stacks draw {power:.1f} W, over the power budget (supply_w - "
                          f"other_power_w) x supply_derate = {budget:.1f} W", ServerBudgetWarning, stacklevel=2)
        rps = n * stack.requests_per_s
        capacity_gb = n * stack.capacity_bytes / GB
        return ServerFigures(stacks=n, ports=ports, switches=switches, stack_power_w=stack_power,
                             phy_power_w=phy_power, switch_power_w=switch_power, power_w=power,
                             power_budget_w=budget, area_mm2=self._area(n), requests_per_s=rps,
                             requests_per_s_per_w=rps / power if power else math.inf,
                             requests_per_s_per_gb=rps / capacity_gb, capacity_gb=capacity_gb)

    def fill(self, stack: StackFigures) -> tuple[int, str]:
        """How many stacks like `stack` a server holds (at most self.stacks), and the limit that stops one more:
        'DenseServer.stacks = N', or the ports, the board area or the power budget, named as the errors and warnings
        name them. When not even one stack fits the budget, the count is 0 and the budget is named."""
        fits = self.max_stacks(stack)
        if fits >= self.stacks:
            return self.stacks, f"DenseServer.stacks = {self.stacks} ({self.ports()} ports)"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ServerBudgetWarning)
                self.evaluate(stack, stacks=fits + 1)
        except ParamError as err:
            return fits, str(err)
        return fits, f"power budget {self.power_budget_w():.1f} W"

    def max_stacks(self, stack: StackFigures) -> int:
        """The most stacks like `stack` that fit the ports, the board and the power budget (0 if none does)."""
        best = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ServerBudgetWarning)
            n = 1
            while True:
                try:
                    figures = self.evaluate(stack, stacks=n)
                except ParamError:
                    break
                if not figures.within_budget:
                    break
                best, n = n, n + 1
        return best
