"""Parameters of a socket's on-chip network (read by kvsim-timing's `noc/`).

The network joins the socket's clusters: inside a cluster its cores and LLC slice share a crossbar; the clusters sit
on the routers of a 2D mesh (one cluster per router, filled row by row), or of a ring, which is a mesh of one row
whose two ends are joined. Memory controllers and NICs attach to routers at the mesh's edge. Messages are routed
dimension-ordered (XY: along the row first, then along the column) and cut through: a message k hops away arrives
k x (router + link) cycles after it leaves, plus one cycle per flit after its first (serialisation); links carry one
flit per cycle, so messages that share a link at once wait for each other.

Router and link latencies and the link width are not given by the target's paper: the defaults are assumptions
(named here and in the configs) in the range of published mesh routers (1-3 cycle pipelines, 16-32 byte links).
"""

from __future__ import annotations

import math

from .params import Param, ParamError, SimObject


class Noc(SimObject):
    """A socket's on-chip network: cluster crossbars joined by a 2D mesh (or a ring), XY routing, flit links."""

    topology = Param.Enum("mesh", "'mesh': a 2D mesh of mesh_x x mesh_y routers, XY routing; 'ring': one row of "
                          "mesh_x routers whose ends are joined (mesh_y must be 1), each message taking the "
                          "shorter way round", choices=("mesh", "ring"))
    mesh_x = Param.Count(0, "routers along a row (x); 0 = as many as make the smallest near-square grid that "
                         "holds the socket's clusters (a ring: one per cluster)", max=256)
    mesh_y = Param.Count(0, "routers along a column (y); 0 = as many rows as the clusters need with mesh_x "
                         "columns", max=256)
    clock = Param.Freq("2.5GHz", "clock of the routers and links (assumed: the nominal core clock)",
                       min="100MHz", max="10GHz")
    router_latency = Param.Count(1, "cycles a message's head spends in each router it crosses (assumed: a "
                                 "single-cycle router)", min=0, max=100)
    link_latency = Param.Count(1, "cycles a flit takes on one link between neighbouring routers (assumed)",
                               min=1, max=100)
    link_bytes = Param.Size("32B", "link width: bytes of one flit; a link moves one flit per cycle in each "
                            "direction (assumed 32 B)", min="4B", max="512B")
    crossbar_latency = Param.Count(1, "cycles a message between two agents of one cluster (a core and its "
                                   "cluster's LLC slice) spends in the cluster crossbar (assumed)", min=0, max=100)
    mem_ctrl_routers = Param.Coords([], "router (x, y) of each memory controller, at the mesh's edge; the count "
                                    "is the number of controller endpoints (empty: one controller at (0, 0))")
    nic_routers = Param.Coords([], "router (x, y) of each NIC attached to this socket, in NIC order, at the mesh's "
                               "edge (empty: every NIC at (0, 0))")

    def dimensions(self, clusters: int) -> tuple[int, int]:
        """(columns, rows) of the mesh for `clusters` clusters, after the automatic choice of 0 dimensions."""
        if self.topology == "ring":
            return (self.mesh_x or clusters, self.mesh_y or 1)
        x, y = self.mesh_x, self.mesh_y
        if not x and not y:
            x = math.ceil(math.sqrt(clusters))
        if not x:
            x = math.ceil(clusters / y)
        if not y:
            y = math.ceil(clusters / x)
        return (x, y)

    def check_topology(self, where: str, clusters: int) -> None:
        """The checks that need the socket's cluster count: the mesh holds them, every controller and NIC sits on
        an edge router of it. `where` names this Noc in the messages (e.g. 'System.noc')."""
        x, y = self.dimensions(clusters)
        if self.topology == "ring" and y != 1:
            raise ParamError(f"{where}.mesh_y = {self.mesh_y}: a ring is one row of routers, mesh_y must be 1 "
                             "(or 0)")
        if x * y < clusters:
            raise ParamError(f"{where}: a {x} x {y} mesh has {x * y} routers, too few for {clusters} clusters "
                             f"(one cluster per router): mesh_x x mesh_y must be at least {clusters}")
        for name in ("mem_ctrl_routers", "nic_routers"):
            for i, (rx, ry) in enumerate(getattr(self, name)):
                if rx >= x or ry >= y:
                    raise ParamError(f"{where}.{name}[{i}] = ({rx}, {ry}) is off the {x} x {y} mesh: x must be "
                                     f"in [0, {x - 1}] and y in [0, {y - 1}]")
                if not (rx in (0, x - 1) or ry in (0, y - 1)):
                    raise ParamError(f"{where}.{name}[{i}] = ({rx}, {ry}) is not at the mesh's edge: x must be 0 "
                                     f"or {x - 1}, or y must be 0 or {y - 1}")
