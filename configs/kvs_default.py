"""The default simulation: the MICA-style KVS server on 4 cores of the billion-RPS target under detailed timing,
serving the STANDARD workload (Tiny items, Uniform, 95% GET, EREW) from the ghost client; the bulk load is
fast-forwarded with cache warming and the measured requests are timed (their ROI)."""

from . import brps_target_socket as target
from . import kvs_functional


def system(harts: int = 4, requests: int = 50000, **client):
    system = kvs_functional.system(harts=harts, requests=requests, **client)
    system.mode = "detailed"
    system.detailed_start = "roi"      # the client marks its measured phase as the region of interest
    system.warm_caches = True          # the bulk load warms the caches on its way
    system.quantum = 100               # instructions per scheduling turn (the hart furthest behind goes next)
    # A share of the target (described once, in brps_target_socket): `harts` cores with their LLC and one channel.
    system.core = target.core()
    system.caches = target.caches(harts)
    system.memory = target.memory(channels=1)
    system.cores_per_cluster = target.cluster_size(harts)
    system.noc = target.share_noc()
    return system
