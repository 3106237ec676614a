"""The dual-socket billion-RPS target server (platforms.md §2): two sockets of 60 cores (120 in all), each with its
3 x 100 GbE NICs (6 in all), 45 MB of LLC and 6 DDR4-2400 channels. The socket is described once, in
`brps_target_socket`; this repeats it (`_multisocket.replicate`). Inter-socket links: the link model's defaults.

`system(cores_per_socket=N)` gives a reduced server with N active cores per socket (each socket keeps its whole
LLC, mesh and memory; min(3, N) NICs per socket), as `brps_target_socket.system(cores=N)` does for one socket.
"""

from . import _multisocket
from . import brps_target_socket as target

SOCKETS = 2                    # dual-socket server (paper)


def system(cores_per_socket: int = target.CORES, requests: int = 0, items: int = 1 << 16,
           offered_mpps: float = 0.0, sockets: int = SOCKETS, **client):
    """`requests` = 0: 1,000 measured requests per core, as the one-socket config has."""
    requests = requests or 1000 * cores_per_socket * sockets
    single = target.system(cores=cores_per_socket, requests=requests, items=items, offered_mpps=offered_mpps,
                           **client)
    return _multisocket.replicate(single, sockets)
