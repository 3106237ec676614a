"""Parameters of the links between sockets (read by kvsim-timing's `link.rs` and `interconnect.rs`).

The sockets of a multi-socket server are joined by point-to-point, QPI-like links. Each link is split into two
directions that do not share bandwidth. A message (a coherence request, forward, acknowledgement or a line of data)
crosses a link as flits: `header_flits` of header (the per-transaction overhead), then its payload packed
`flit_payload_bits` to a flit. A flit is `flit_bits` wide on the wire and moves `lanes x bits_per_transfer` bits per
transfer at `rate` GT/s, so a message holds its direction of the link for (flits x flit time), messages queue behind
each other, and its last flit arrives `latency` after it leaves the link's far end.

Published facts (Intel QuickPath Interconnect 1.1, as on the Xeon E5-2600 v2): 20 lanes per direction at up to
8 GT/s, one bit per lane per transfer; an 80-bit flit carries 64 bits of payload (the rest is CRC and link-layer
control), i.e. 16 GB/s of payload per direction per link; a 64-byte cache line travels as 8 data flits behind one
header flit. Those are the defaults. The one-way latency is not published for either platform: 20 ns is assumed
(a link's PHY, link layer and the socket's routing agent; it is of the order of the ~50 ns by which published
remote-memory latencies on 2-socket Xeons exceed local ones, which a round trip pays twice). platforms.md assumes
two links between the Xeon's sockets and "QPI-like" links with named defaults for the target; the default of one
link per pair is assumed (a config sets its own).

Topology: the sockets are fully connected, as on 2-socket Xeons and 4-socket Xeon E7s; every pair is joined by
`links_per_pair` links of this description. Each socket's link port sits at router (0, 0) of its mesh (assumed:
the corner where the first memory controller sits on the configs; the mesh carries a message from its source to
that router, the link to the other socket's port, and that socket's mesh on to the destination).
"""

from __future__ import annotations

from .params import Param, ParamError, SimObject


class SocketLink(SimObject):
    """A QPI-like point-to-point link between two sockets, per direction: lanes, transfer rate, flits, latency."""

    lanes = Param.Count(20, "lanes per direction (QPI: 20)", min=1, max=64)
    rate = Param.Float(8.0, "transfers per second per lane, in GT/s (QPI 1.1: 8.0; assumed for the Xeon baseline "
                       "in platforms.md)", min=0.1, max=1000.0)
    bits_per_transfer = Param.Count(1, "bits one lane moves per transfer (QPI: 1)", min=1, max=16)
    flit_bits = Param.Count(80, "bits of one flit on the wire, payload and link-layer overhead (QPI: 80)",
                            min=8, max=4096)
    flit_payload_bits = Param.Count(64, "payload bits a flit carries (QPI: 64; the rest is CRC and link control)",
                                    min=8, max=4096)
    header_flits = Param.Count(1, "flits of header every message sends before its payload: the per-transaction "
                               "overhead (QPI: one; a 64-byte line is one header and 8 data flits, a request or "
                               "acknowledgement the header alone)", min=1, max=64)
    latency = Param.Time("20ns", "one-way latency of a message's head from one socket's link port to the other's "
                         "(PHY, link layer and routing agent; assumed 20 ns, see the module doc)",
                         min="0s", max="10us")
    links_per_pair = Param.Count(1, "parallel links joining each pair of sockets; a message takes the one that "
                                 "frees first (assumed 1; platforms.md assumes 2 for the Xeon baseline)",
                                 min=1, max=8)
    pairs = Param.Coords([], "the socket pairs (a, b) these links join; empty: every pair (fully connected). Every "
                         "pair of sockets needs a link (routes through a third socket are not modelled)")

    def validate(self) -> None:
        super().validate()
        if self.flit_payload_bits > self.flit_bits:
            raise ParamError(f"SocketLink.flit_payload_bits = {self.flit_payload_bits} exceeds SocketLink.flit_bits "
                             f"= {self.flit_bits}: a flit cannot carry more payload than its width")

    def flit_ps(self) -> float:
        """Time one flit holds a direction of the link (ps)."""
        return self.flit_bits / (self.lanes * self.bits_per_transfer * self.rate) * 1e3

    def payload_bytes_per_second(self) -> float:
        """Peak payload bandwidth of one direction of one link (bytes/s)."""
        return self.lanes * self.bits_per_transfer * self.rate * 1e9 * self.flit_payload_bits / self.flit_bits / 8

    def check_pairs(self, where: str, sockets: int) -> None:
        """Every listed pair names two different existing sockets, and every pair of sockets is joined."""
        joined = set()
        for i, (a, b) in enumerate(self.pairs):
            for s in (a, b):
                if s >= sockets:
                    raise ParamError(f"{where}.pairs[{i}] = ({a}, {b}) names socket {s}, which does not exist: the "
                                     f"system has sockets 0..{sockets - 1}")
            if a == b:
                raise ParamError(f"{where}.pairs[{i}] = ({a}, {b}) joins a socket to itself")
            joined.add((min(a, b), max(a, b)))
        if self.pairs:
            for a in range(sockets):
                for b in range(a + 1, sockets):
                    if (a, b) not in joined:
                        raise ParamError(f"{where}.pairs joins no link between sockets {a} and {b}: every pair "
                                         "needs one (routes through a third socket are not modelled); leave pairs "
                                         "empty for fully connected sockets")
