"""The measured baseline as measured (platforms.md §1, validation.md): a dual-socket Xeon E5-2697 v2 server, 2 x 12
cores at 2.7 GHz, serving through 12 x 10 GbE ports, two cores per port. Each socket has its 30 MB LLC, 4 channels
of DDR3-1600 and two of the four quad-port X520 NICs, of which 3 ports each are used (6 ports per socket, 12 in
all). The socket is described once, in `xeon_e5_2697v2_socket`; this repeats it (`_multisocket.replicate`).
Inter-socket links: two QPI 1.1 links at 8 GT/s joining the sockets (platforms.md §1, assumed there); the rest of
the link (20 lanes, 80-bit flits of 64 payload bits, latency) is the link model's named defaults.

`system(cores_per_socket=N)` gives a reduced server with N active cores per socket and ceil(N / 2) ports per
socket, as `xeon_e5_2697v2_socket.system(cores=N)` does for one socket.
"""

from models.link import SocketLink

from . import _multisocket
from . import xeon_e5_2697v2_socket as xeon

SOCKETS = 2                    # dual socket (spec)
QPI_LINKS = 2                  # QPI links between the two sockets (platforms.md §1: assumed 2 links, 8 GT/s)


def system(cores_per_socket: int = xeon.CORES_PER_SOCKET, requests: int = 0, items: int = 1 << 16,
           offered_mpps: float = 0.0, ports_per_socket: int = 0, **client):
    """`ports_per_socket` = 0: two cores per port (spec). `requests` = 0: the one-socket config's default per core
    (about 1,667), times the cores."""
    requests = requests or 20000 * cores_per_socket * SOCKETS // xeon.CORES_PER_SOCKET
    single = xeon.system(cores=cores_per_socket, requests=requests, items=items, offered_mpps=offered_mpps,
                         ports=ports_per_socket, **client)
    server = _multisocket.replicate(single, SOCKETS)
    server.socket_link = SocketLink(rate=8.0, links_per_pair=QPI_LINKS)
    return server
