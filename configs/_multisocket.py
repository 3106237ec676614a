"""A multi-socket server built from a one-socket description: the socket (cores, caches, memory, on-chip network)
and its NICs are described once, in the platform's `*_socket.py`, and repeated here `n` times in `System.sockets`,
socket k's NICs with `Nic.socket = k`. The sockets' harts are numbered socket by socket (socket 0's cores first),
and so are the NICs (socket 0's first): with one queue per hart spread over the ports in contiguous blocks, every
core talks to a port of its own socket's NIC, as MICA pins each core to a port on its socket.

Inter-socket links are not set here: the link model's named defaults apply.
"""

from __future__ import annotations

import copy

from models import System


def replicate(single: System, sockets: int) -> System:
    """`sockets` copies of the socket that the one-socket system `single` describes (its flat fields and its NICs).
    Everything else (workload, client, technology) is kept; the touch limit `mem_limit` grows with the sockets,
    since each socket brings its own memory. The mode is kept too."""
    if sockets < 1:
        raise ValueError(f"sockets = {sockets}: a server has at least one socket")
    if single.sockets:
        raise ValueError("replicate() takes a one-socket system described by the flat fields (System.sockets empty)")
    socket = single.socket_list()[0]
    nics = list(single.nics) if single.nics else ([single.nic] if single.nic.enabled else [])
    out = copy.deepcopy(single)
    # The flat fields describe socket 0 only when the list is empty: back to their defaults, the list takes over.
    for name in System.FLAT_SOCKET_FIELDS:
        setattr(out, name, System._params[name].fresh_default())
    out.sockets = [copy.deepcopy(socket) for _ in range(sockets)]
    out.harts = socket.cores * sockets
    placed = []
    for k in range(sockets):
        for nic in nics:
            twin = copy.deepcopy(nic)
            twin.socket = k
            placed.append(twin)
    out.nics = placed
    out.nic = System._params["nic"].fresh_default()
    out.mem_limit = single.mem_limit * sockets
    return out


def functional(system: System) -> System:
    """The same platform run functionally (no timing): what a quick check of the software on it needs."""
    system.mode = "functional"
    system.detailed_start = "start"
    system.warm_caches = False
    return system
