"""Parameters of the dense 3D-stacked memories (read by kvsim-timing's `stacked/`): the 3D DRAM of Mercury and
KeyVault and the 3D NAND flash of Iridium, and `Stack`, one stack's cores over one of them.

Sources: Gutierrez et al., "Integrated 3D-Stacked Server Designs for Increasing Physical Density of Key-Value
Stores" (ASPLOS 2014), as summarised in the project spec (platforms.md section 3): 16 ports of 128 bits, 256 MB and
8 banks per port, 8 kb pages, 6.25 GB/s per port, 10 ns closed-page access swept 10-100 ns; 16 flash controllers,
read 10 or 20 us, write 200 us. Values marked "assumed" are not in that source.
"""

from __future__ import annotations

import math

from .params import Param, ParamError, SimObject

PORT_MAPS = ("requester", "address")


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _check_sharing(owner: str, port_name: str, cores: int, ports: int, max_cores_per_port: int) -> None:
    """Cores beyond the port count share ports (core i uses port i mod ports), at most max_cores_per_port each."""
    limit = ports * max_cores_per_port
    if cores > limit:
        raise ParamError(f"{owner}: {cores} cores need {-(-cores // ports)} per port, but {owner}.{port_name} = "
                         f"{ports} and {owner}.max_cores_per_port = {max_cores_per_port} allow at most {limit} cores")


class StackedDram(SimObject):
    """3D-stacked DRAM: independent ports, each a closed-page bank set behind one data bus."""

    ports = Param.Count(16, "independent memory ports of the stack (Gutierrez 2014: 16)", min=1, max=64)
    port_width = Param.Count(128, "data bits per port (Gutierrez 2014: 128); documents the port, the bandwidth "
                             "below sets its timing", min=8, max=1024)
    port_capacity = Param.Size("256MiB", "capacity behind one port (Gutierrez 2014: 256 MB, 8 banks of 32 MB)",
                               min="1MiB", max="64GiB")
    banks_per_port = Param.Count(8, "banks per port; each is busy for a whole closed-page access (Gutierrez "
                                 "2014: 8)", min=1, max=256)
    page_size = Param.Size("1KiB", "DRAM page (row) of a bank: 8 kb (Gutierrez 2014); every access opens and "
                           "closes one", min="64B", max="64KiB")
    port_bandwidth = Param.Float(6.25, "peak data rate of one port in GB/s (1e9 bytes/s; Gutierrez 2014: 6.25, "
                                 "100 GB/s for 16 ports); a line holds the port's bus line_size / bandwidth",
                                 min=0.1, max=1000.0)
    access_latency = Param.Time("10ns", "closed-page access time of an idle port, request to last data "
                                "(activate, column access, precharge; Gutierrez 2014: 10 ns, swept 10-100 ns); the "
                                "bank is busy this long", min="1ns", max="1us")
    line_size = Param.Size("64B", "bytes moved per request: the caches' line", min="16B", max="512B")
    port_map = Param.Enum("requester", "which port serves a request: 'requester' (core i uses port i mod ports, "
                          "its own slice of the stack, as in Mercury: a request goes as the core owning it, so a "
                          "writeback as the core whose data it is and a NIC queue's DMA as the queue's core) or "
                          "'address' (consecutive lines interleave over the ports)", choices=PORT_MAPS)
    max_cores_per_port = Param.Count(2, "cores that may share one port (Gutierrez 2014: two per port beyond 16 "
                                     "cores); more cores than ports x this is an error", min=1, max=8)

    def line_transfer_ps(self) -> int:
        """Ticks one line holds a port's data bus (rounded up to a whole ps)."""
        return math.ceil(self.line_size * 1e3 / self.port_bandwidth)

    def capacity(self) -> int:
        return self.ports * self.port_capacity

    def check_cores(self, cores: int) -> None:
        _check_sharing("StackedDram", "ports", cores, self.ports, self.max_cores_per_port)

    def validate(self) -> None:
        super().validate()
        for name in ("line_size", "page_size"):
            if not _is_pow2(getattr(self, name)):
                raise ParamError(f"StackedDram.{name} = {getattr(self, name)}: must be a power of two")
        if self.page_size < self.line_size:
            raise ParamError(f"StackedDram.page_size = {self.page_size} is smaller than line_size = "
                             f"{self.line_size}")
        if self.port_capacity % (self.banks_per_port * self.page_size):
            raise ParamError(f"StackedDram.port_capacity = {self.port_capacity} is not a whole number of pages "
                             f"in each of {self.banks_per_port} banks")


class NandFlash(SimObject):
    """3D NAND flash: independent controllers, each serving one read or program at a time, in arrival order."""

    controllers = Param.Count(16, "independent flash controllers (Gutierrez 2014: 16)", min=1, max=256)
    capacity = Param.Size(21_260_088_115, "capacity of the stack (Gutierrez 2014: 19.8 GB, 16 layers; counted in "
                          "binary GB like the DRAM stack's 4 GB)",
                          min="1MiB", max="64TiB")
    read_latency = Param.Time("20us", "page read, request to data (Gutierrez 2014: 10 or 20 us)",
                              min="100ns", max="10ms")
    write_latency = Param.Time("200us", "page program (Gutierrez 2014: 200 us); must not be below read_latency",
                               min="100ns", max="100ms")
    interleave = Param.Size("4KiB", "with port_map 'address': bytes of consecutive addresses on one controller "
                            "before the next (assumed: one 4 KB flash page)", min="64B", max="1MiB")
    line_size = Param.Size("64B", "bytes per request (the caches' line), for the bandwidth statistic",
                           min="16B", max="512B")
    port_map = Param.Enum("requester", "which controller serves a request: 'requester' (core i uses controller "
                          "i mod controllers; a request goes as the core owning it, as for the DRAM stack) or "
                          "'address' (interleave-sized blocks rotate over them)", choices=PORT_MAPS)
    max_cores_per_port = Param.Count(2, "cores that may share one controller (assumed as for the DRAM stack: "
                                     "two)", min=1, max=8)

    def check_cores(self, cores: int) -> None:
        _check_sharing("NandFlash", "controllers", cores, self.controllers, self.max_cores_per_port)

    def validate(self) -> None:
        super().validate()
        if self.write_latency < self.read_latency:
            raise ParamError(f"NandFlash.write_latency = {self.write_latency} ps is below NandFlash.read_latency "
                             f"= {self.read_latency} ps: a flash program is never faster than a read")
        if not _is_pow2(self.interleave):
            raise ParamError(f"NandFlash.interleave = {self.interleave}: must be a power of two")


class Stack(SimObject):
    """One 3D stack: small cores on a logic die over 3D DRAM or 3D NAND (platforms.md section 3)."""

    cores = Param.Count(16, "cores on the logic die (Gutierrez 2014: 1-32; 16 = one per port, 32 = two per "
                        "port)", min=1, max=512)
    memory = Param.Enum("dram3d", "memory layers: 'dram3d' (Mercury, KeyVault) or 'flash' (Iridium)",
                        choices=("dram3d", "flash"))
    dram = Param.Child(StackedDram, "the 3D DRAM, when memory = 'dram3d'")
    flash = Param.Child(NandFlash, "the 3D NAND, when memory = 'flash'")

    def capacity(self) -> int:
        """Bytes of memory in the stack."""
        return self.dram.capacity() if self.memory == "dram3d" else self.flash.capacity

    def validate(self) -> None:
        super().validate()
        (self.dram if self.memory == "dram3d" else self.flash).check_cores(self.cores)
