"""Functional end-to-end KVS run: the MICA-style server on 4 harts, the ghost client loading and then sending the
STANDARD workload (Tiny items, Uniform popularity, 95% GET) through the functional NIC, checking every response.

The item count (65536 by default) is far below the spec's 192 Mi so the run takes a second; it is reported as
`client.items`. The server's per-partition log and index are sized from the data set when the run starts
(models.client.kvs_server_sizes: at 65536 Tiny items on 4 harts 16 MiB and 16384 buckets), so every GET must hit;
explicit `log_mib=`/`buckets=` in `server_args` are kept (and a warning names them when they cannot hold it). `server_args` are passed to the server (e.g. prefetch=0); `mode` sets both the server's `mode=`
argument and the client's steering.
"""

from models import System, Workload
from models.client import Client
from models.nic import Nic

from . import WORKLOAD_BUILD

KVS_SERVER = WORKLOAD_BUILD / "kvs" / "kvs-server"


def system(harts: int = 4, mode: str = "erew", server_args: tuple[str, ...] = (),
           **client) -> System:
    """`client` keywords set Client parameters (dataset, items, popularity, get_ratio, requests_per_packet,
    requests, seed, fuzz_frames, ...)."""
    settings = dict(dataset="tiny", items=65536, popularity="uniform", get_ratio=0.95, requests=50000)
    settings.update(client)
    return System(
        harts=harts,
        clock="2.5GHz",
        mem_limit="4GiB",
        workload=Workload(binary=str(KVS_SERVER), argv=[f"mode={mode}", *server_args]),
        nic=Nic(enabled=True),  # one port, one queue per hart
        client=Client(enabled=True, mode=mode, **settings),
    )
