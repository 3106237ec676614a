"""Parameters of the NIC model (read by the engine's `nic.rs`): ports, queues, RX FIFO, steering.

The functional model moves frames between the ghost client and the per-queue RX/TX descriptor rings in guest
memory (workloads/ABI.md, "The NIC"); line rate, PCIe and DDIO timing come with the timing models.
"""

from __future__ import annotations

from .params import Param, ParamError, SimObject


class Nic(SimObject):
    """A multiqueue Ethernet NIC: ports, per-queue RX/TX descriptor rings, perfect-match steering, doorbells."""

    enabled = Param.Bool(False, "simulate the NIC (off: no device registers, the NIC simulator calls report 0 "
                         "queues)")
    ports = Param.Count(1, "Ethernet ports; queues are spread over them in contiguous blocks", min=1, max=64)
    port_gbps = Param.Float(40.0, "line rate of each port in Gbit/s (10, 40, 100 GbE; used by the timing model, "
                            "not the functional one)", min=1.0, max=1000.0)
    queues = Param.Count(0, "queues in all (0 = one per hart); hart i owns queue i when i < queues",
                         min=0, max=1024)
    rx_fifo_frames = Param.Count(512, "frames each port's RX FIFO holds while they wait for a free RX "
                                 "descriptor; a frame arriving at a full FIFO is dropped and counted",
                                 min=1, max=1 << 20)
    steering_base_port = Param.Count(0x4000, "UDP destination port of core 0's queue: port base + c steers to "
                                     "core c's queue (perfect-match table)", min=1, max=65535)

    def validate(self) -> None:
        super().validate()
        if self.enabled and self.queues and self.queues < self.ports:
            raise ParamError(f"Nic.queues = {self.queues} is fewer than Nic.ports = {self.ports}: every port "
                             "needs a queue")
