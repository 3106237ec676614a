"""Power of the links between the sockets of a multi-socket server (QPI-like, point to point).

A QPI-class link keeps its lanes toggling whenever it is up: in its active state (L0) it sends idle flits when it
has nothing to carry, so its power does not follow its traffic; the low-power link states (L0s, L1) are not
modelled. A link's power is therefore its raw bit rate, both directions, times an energy per bit:

    P_link = 2 directions x lanes x bits per transfer x rate x ENERGY_PER_BIT

ENERGY_PER_BIT is **assumed** at 10 pJ/bit from a published figure: Balamurugan et al. (Intel), "A Scalable
5-15 Gbps, 14-75 mW Low-Power I/O Transceiver in 65 nm CMOS", IEEE JSSC 43(4), 2008, which states that the
10 Gb/s-per-pin I/O of that time (QPI's generation) ran at worse than 10 mW/Gb/s. A QPI 1.1 link (20 lanes per
direction at 8 GT/s) then draws 3.2 W, both ends together. It is counted once per link, in the server's total
(not in either socket's die).

The links come from the run's configuration (``System.socket_link``: lanes, rate, bits per transfer, links per
pair, pairs; fully connected when ``pairs`` is empty). A configuration without that section (written before the
multi-socket timing model) gets QPI 1.1's published shape (20 lanes, 8 GT/s, one bit per transfer) and one link
per pair of sockets, marked ``assumed`` in the result. When the run's statistics carry the links' traffic
(``system.link*.…bytes``/``flits``), it is reported beside the power as the links' utilisation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ENERGY_PER_BIT_J = 10e-12       # assumed: 10 mW/(Gb/s), Balamurugan et al., JSSC 2008 (see the module docstring)
QPI_LANES = 20                  # QPI 1.1: 20 lanes per direction (published)
QPI_RATE_GT = 8.0               # QPI 1.1 on the Xeon E5-2600 v2: 8 GT/s (published)


@dataclass(frozen=True)
class LinkPower:
    count: int                  # links in the server
    lanes: int                  # per direction
    rate_GT: float              # transfers per second per lane, G
    bits_per_transfer: int
    assumed_shape: bool         # True: the config has no socket_link section; QPI 1.1's shape was assumed
    traffic_bytes: float        # bytes the links carried in the interval (0 when the stats do not say)
    seconds: float

    @property
    def per_link_W(self) -> float:
        return 2 * self.lanes * self.bits_per_transfer * self.rate_GT * 1e9 * ENERGY_PER_BIT_J

    @property
    def power_W(self) -> float:
        return self.count * self.per_link_W

    @property
    def utilization(self) -> float:
        """Carried bytes over the links' raw capacity (both directions) in the interval; 0 without traffic stats."""
        capacity = self.count * 2 * self.lanes * self.bits_per_transfer * self.rate_GT * 1e9 / 8 * self.seconds
        return self.traffic_bytes / capacity if capacity > 0 else 0.0


def links_from_config(config: dict, sockets: int, stats: dict | None = None, seconds: float = 0.0) -> LinkPower:
    """The inter-socket links of a run's configuration (see the module docstring); none for one socket."""
    if sockets <= 1:
        return LinkPower(0, 0, 0.0, 1, False, 0.0, seconds)
    link = config.get("socket_link")
    assumed = not isinstance(link, dict)
    link = {} if assumed else link
    pairs = link.get("pairs") or []
    npairs = len({(min(a, b), max(a, b)) for a, b in pairs}) if pairs else sockets * (sockets - 1) // 2
    count = npairs * int(link.get("links_per_pair", 1))
    traffic = 0.0
    if stats:
        # the links' own counters, when the timing model writes them: the wire's flits (flit_bits each, headers and
        # link-layer overhead included) when counted, else the messages' bytes -- never both, which count the same
        # traffic twice
        flit_bytes = int(link.get("flit_bits", 80)) / 8
        link_stats = {k: float(v) for k, v in stats.items() if re.match(r"system\.(socket_)?link", k)}
        flits = sum(v for k, v in link_stats.items() if k.endswith(".flits"))
        traffic = flits * flit_bytes if flits else sum(v for k, v in link_stats.items() if k.endswith(".bytes"))
    return LinkPower(count=count, lanes=int(link.get("lanes", QPI_LANES)), rate_GT=float(link.get("rate", QPI_RATE_GT)),
                     bits_per_transfer=int(link.get("bits_per_transfer", 1)), assumed_shape=assumed,
                     traffic_bytes=traffic, seconds=seconds)
