"""Detailed timing of kvmix on a share of the billion-RPS target (platforms.md §2; the parts come from
`brps_target_socket`, where the target is described once): by default one core with its 768 KB share of the LLC
and one DDR4-2400 channel."""

from models import System, Workload

from . import WORKLOAD_BUILD
from . import brps_target_socket as target


def system(rounds: int = 3, harts: int = 1) -> System:
    return System(
        harts=harts,
        mode="detailed",
        detailed_start="roi",         # kvmix marks its measured rounds with ROI_BEGIN: fast-forward its set-up ...
        warm_caches=True,             # ... warming the caches on the way
        quantum=100,                  # instructions per scheduling turn (the hart furthest behind in time goes next)
        mem_limit="512MiB",
        core=target.core(),
        caches=target.caches(harts),  # the share of `harts` cores: 768 KB of LLC each, one slice per cluster
        memory=target.memory(channels=1),  # one channel (the paper: 6 per 60 cores; one serves this small share)
        cores_per_cluster=target.cluster_size(harts),
        noc=target.share_noc(),
        workload=Workload(binary=str(WORKLOAD_BUILD / "bench" / "kvmix"), argv=[str(rounds)]),
    )
