"""The quad-socket billion-RPS target server (platforms.md §2): four sockets of 60 cores (240 in all), each with its
3 x 100 GbE NICs (12 in all), 45 MB of LLC and 6 DDR4-2400 channels: the dual-socket config with four sockets (the
socket itself is described once, in `brps_target_socket`).

`system(cores_per_socket=N)` gives a reduced server with N active cores per socket.
"""

from . import brps_target_dual

SOCKETS = 4                    # quad-socket server (paper)


def system(cores_per_socket: int = brps_target_dual.target.CORES, requests: int = 0, items: int = 1 << 16,
           offered_mpps: float = 0.0, **client):
    """`requests` = 0: 1,000 measured requests per core."""
    return brps_target_dual.system(cores_per_socket=cores_per_socket, requests=requests, items=items,
                                   offered_mpps=offered_mpps, sockets=SOCKETS, **client)
