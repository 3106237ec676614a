"""One socket of the platform tree, and the statistics paths that every model's place in the tree gives it.

A `Socket` holds its cores (grouped into clusters of `cores_per_cluster`), their core model(s), the caches (private
L1I/L1D and L2 per core, the sliced shared LLC), the memory controller(s) and the on-chip network that joins them
(`models/noc.py`, which also places the memory controllers and the socket's NICs on the mesh). Cluster k sits on
router k of the mesh (row by row); core c is in cluster c // cores_per_cluster; LLC slice i sits on router
i x routers // slices, spread evenly (one slice per cluster when there are as many slices as routers, as on the
target; with a slice per core, core c's slice shares its router when the cores fill the mesh).

`System.sockets` lists the sockets. A one-socket platform may leave it empty: then the flat `System` fields
(`harts`, `core`, `cores`, `caches`, `memory`, `cores_per_cluster`, `noc`) describe socket 0, which is how every
single-socket config and `--set` path (`harts=8`, `caches.llc.size=...`, `core.rob_entries=...`) keeps working.
`System.socket_list()` gives the sockets either way; the Rust side has the same rule (`System::socket_list`).

Statistics paths are declared in models/stats_paths.py (the Rust `kvsim_params::paths` is generated from it); the
functions below name a socket's places with them, and no model writes a path such as "system.socket0." itself.
"""

from __future__ import annotations

from .cache import CacheHierarchy
from .core import Core
from .dram import MemoryController
from .noc import Noc
from .params import Param, ParamError, SimObject
from .stats_paths import CORE, LINK, LLC_SLICE, NOC, ROUTER, SOCKET


class Socket(SimObject):
    """One socket: clusters of cores with their core model(s), caches, memory controllers and on-chip network."""

    cores = Param.Count(1, "cores (harts) on this socket", min=1, max=4096)
    cores_per_cluster = Param.Count(1, "cores per cluster: the cores of a cluster and its LLC slice share one "
                                    "crossbar and one mesh router", min=1, max=64)
    core = Param.Child(Core, "timing model of every core of this socket, unless `core_models` overrides it")
    core_models = Param.Children(Core, "per-core models, core i on core_models[i] (heterogeneous sockets); "
                                 "empty: every core gets `core`")
    caches = Param.Child(CacheHierarchy, "private L1I/L1D (and L2) per core, and the shared, sliced LLC")
    memory = Param.Child(MemoryController, "the socket's DRAM controller and channels")
    noc = Param.Child(Noc, "the on-chip network: cluster crossbars, mesh or ring, controller and NIC placement")

    def clusters(self) -> int:
        return self.cores // self.cores_per_cluster

    def check(self, where: str, nics: int) -> None:
        """The checks of this socket's shape, with `where` naming it in messages ('System' for the flat form,
        'System.sockets[1]' otherwise) and `nics` the NICs attached to it."""
        cores_name = "harts" if where == "System" else "cores"
        if self.cores % self.cores_per_cluster:
            raise ParamError(f"{where}.{cores_name} = {self.cores} is not a multiple of {where}.cores_per_cluster "
                             f"= {self.cores_per_cluster}: every cluster has the same number of cores")
        if self.core_models and len(self.core_models) != self.cores:
            name = "cores" if where == "System" else "core_models"
            raise ParamError(f"{where}.{name} has {len(self.core_models)} entries but {where}.{cores_name} = "
                             f"{self.cores}: give one Core per core, or none")
        self.noc.check_topology(f"{where}.noc", self.clusters())
        if self.noc.nic_routers and len(self.noc.nic_routers) != nics:
            raise ParamError(f"{where}.noc.nic_routers places {len(self.noc.nic_routers)} NICs but {nics} NIC(s) "
                             "are attached to this socket: give one (x, y) per NIC, or none")


# ---- statistics paths (declared in models/stats_paths.py, with the counters below each) ---------------------------

def socket_path(socket: int) -> str:
    return SOCKET.path(socket)


def core_path(socket: int, core: int) -> str:
    """A core and its private caches: `system.socket0.core17` (then `.l1d.misses`, `.ipc`, ...)."""
    return CORE.path(socket, core)


def llc_slice_path(socket: int, slice_: int) -> str:
    return LLC_SLICE.path(socket, slice_)


def noc_path(socket: int) -> str:
    return NOC.path(socket)


def router_path(socket: int, router: int) -> str:
    return ROUTER.path(socket, router)


def link_path(socket: int, src_router: int, dst_router: int) -> str:
    """The directed link between two neighbouring routers: `system.socket0.noc.link3_4`."""
    return LINK.path(socket, src_router, dst_router)
