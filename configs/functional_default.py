"""Functional run of the kvmix compute benchmark on one hart (no timing: one instruction per cycle)."""

from models import System, Workload

from . import WORKLOAD_BUILD


def system(rounds: int = 12) -> System:
    return System(
        harts=1,
        clock="2.5GHz",          # functional mode: one instruction per cycle at this clock
        mem_limit="256MiB",
        workload=Workload(binary=str(WORKLOAD_BUILD / "bench" / "kvmix"), argv=[str(rounds)]),
    )
