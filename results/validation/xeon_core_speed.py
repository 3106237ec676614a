"""Host CPU of the detailed (measured) phase of the 12-core Xeon socket at line rate, 3,000 requests a core, 65,536
items (`make bench`'s Xeon row: drivers/cli/bench.py socket_speed), in three variants alternated ROUNDS times: the
core's scheduler, rename-register and 4K-aliasing mechanisms off (0, 0, 0: the core before session 18); the two
bounds on but too large to bind (1024, 1024; no aliasing: the same simulated run, so the difference is the cost of
the code); and the configuration (54, 144, 7: another simulated run, fewer instructions a request). Prints each run's
guest instructions of the phase, its CPU seconds, simulated MIPS per CPU second and throughput, then the medians.
Usage: xeon_core_speed.py ROUNDS (from the checkout, nice -n 10)."""
import statistics
import sys
import time

from configs import xeon_e5_2697v2_socket
from drivers import capacity
from models.sim import simulate

VARIANTS = {"off": (0, 0, 0), "non-binding": (1024, 1024, 0), "configuration": (54, 144, 7)}


def phase(sched: int, rename: int, alias: int) -> tuple[int, float, float]:
    marks = []

    def progress(insts, _ticks, phase):
        if phase == "detailed" and not marks:
            marks.append((time.process_time(), insts))

    s = xeon_e5_2697v2_socket.system(cores=12, requests=12 * 3000)
    s.client.offered_mpps = capacity.line_rate_mpps(s)
    s.core.scheduler_entries, s.core.int_rename_registers, s.core.alias_4k_penalty = sched, rename, alias
    r = simulate(s, progress=progress, progress_every=1_000_000)
    c1 = time.process_time()
    c0, i0 = marks[0]
    return r.insts - i0, c1 - c0, r.stats["client.throughput_mrps"]


cpu: dict[str, list[float]] = {name: [] for name in VARIANTS}
mips: dict[str, list[float]] = {name: [] for name in VARIANTS}
for _ in range(int(sys.argv[1])):
    for name, values in VARIANTS.items():
        insts, seconds, mrps = phase(*values)
        cpu[name].append(seconds)
        mips[name].append(insts / seconds / 1e6)
        print(f"{name:>13} {values}: {insts} insts, {seconds:.3f} s CPU, {insts / seconds / 1e6:.3f} MIPS, "
              f"{mrps:.3f} M req/s", flush=True)
off = statistics.median(cpu["off"])
for name in VARIANTS:
    print(f"median {name:>13}: {statistics.median(cpu[name]):.3f} s CPU ({100 * (statistics.median(cpu[name]) / off - 1):+.1f}%), "
          f"{statistics.median(mips[name]):.3f} MIPS")
