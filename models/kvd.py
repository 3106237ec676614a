"""Parameters of KeyVault's key-value distributor (KVD) switch (read by the engine's `kvd.rs`).

Source (platforms.md section 3, from Gutierrez et al., ASPLOS 2014): a 12-port switch, 819 mW and 32 mm2, joins up
to 12 stacks to one 10 GbE port; about 144 stacks per 1.5U on 12 switches. It distributes requests by key to the
stacks. Values marked "assumed" are not in that source.

What the engine simulates is one stack behind the switch, not the whole cluster: requests are spread over the
stacks by key hash, so each of the `stacks` stacks behind the uplink gets an equal share of its bandwidth. A frame to
the simulated stack is serialized on the uplink at that share (`uplink_gbps / stacks`), forwarded after `latency`,
and then serialized on the stack's own link (the NIC's port, `Nic.port_gbps`); a reply takes the same path back.
Bursts of one stack cannot borrow the idle share of another (statistical multiplexing is not modelled).
"""

from __future__ import annotations

from .params import Param, ParamError, SimObject

KVD_PORTS = 12              # stacks one switch joins (Gutierrez 2014: 12)
KVD_POWER_W = 0.819         # one switch (Gutierrez 2014: 819 mW)
KVD_AREA_MM2 = 32.0         # one switch die (Gutierrez 2014: 32 mm2)


class KvdSwitch(SimObject):
    """The key-value distributor switch between one 10 GbE uplink and the stacks of a KeyVault cluster."""

    enabled = Param.Bool(False, "put the NIC's ports behind a KVD switch (off: the port is the stack's own, as "
                         "Mercury's)")
    ports = Param.Count(KVD_PORTS, "stack ports of one switch (Gutierrez 2014: 12)", min=1, max=64)
    stacks = Param.Count(KVD_PORTS, "stacks behind the switch sharing its uplink; each gets 1/stacks of the "
                         "uplink's bandwidth (KeyVault: 12, 144 stacks on 12 switches)", min=1, max=64)
    uplink_gbps = Param.Float(10.0, "line rate of the switch's uplink in Gbit/s (Gutierrez 2014: one 10 GbE port)",
                              min=1.0, max=1000.0)
    latency = Param.Time("200ns", "forwarding latency of the switch, from a frame's last byte in to its first byte "
                         "out, each direction (assumed: the order of a low-latency 10 GbE switch's port-to-port "
                         "latency)", min="0s", max="100us")
    power_w = Param.Float(KVD_POWER_W, "power of one switch, W (Gutierrez 2014: 819 mW)", min=0.0, max=1000.0)
    area_mm2 = Param.Float(KVD_AREA_MM2, "die area of one switch, mm2 (Gutierrez 2014: 32 mm2)", min=0.0,
                           max=10000.0)

    def validate(self) -> None:
        super().validate()
        if self.stacks > self.ports:
            raise ParamError(f"KvdSwitch.stacks = {self.stacks}: more stacks than the switch has ports "
                             f"(KvdSwitch.ports = {self.ports})")

    def share_gbps(self) -> float:
        """The uplink bandwidth one stack gets (each direction)."""
        return self.uplink_gbps / self.stacks
