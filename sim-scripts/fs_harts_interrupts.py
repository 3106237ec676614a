#!/usr/bin/env python3
"""Where FS mode's receive work runs with several harts (results/fs/README.md): one probe of Mercury A7 x 4 harts at
its searched capacity (52.5 k req/s, sim-scripts/fs_capacity.py), and per hart the instructions by privilege level
and the interrupts taken over the warm-up and measured GETs: the counters of that run less those of the same restore
with one GET per hart (the boot's and the load's counts cancel). The machine has one virtio-net receive queue.

    sim-scripts/fs_harts_interrupts.py
"""

from __future__ import annotations

import argparse
import pathlib
import tempfile

from drivers import sim_script
from models.sim import simulate

fc = sim_script.load("fs_capacity")  # a sibling script's functions

HARTS, RATE_MPPS = 4, 0.0525


def main() -> int:
    args = argparse.Namespace(latency="10ns", flash_read="20us", items=1024, value_size=64, requests=1000, warmup=200)
    boot = fc.fs_system("mercury-a7", HARTS, args, 1, detailed=False)
    boot.checkpoint_to = str(pathlib.Path(tempfile.mkdtemp(prefix="fs-harts-")) / "ck")
    simulate(boot)
    def run(requests: int, warmup: int) -> dict[str, float]:
        s = fc.fs_system("mercury-a7", HARTS, args, requests, detailed=True)
        s.restore_from = boot.checkpoint_to
        s.client.warmup_requests = warmup
        s.client.offered_mpps = RATE_MPPS
        return simulate(s).stats

    st, base = run(args.requests * HARTS, args.warmup * HARTS), run(HARTS, 0)
    for h in range(HARTS):
        p = f"system.hart{h}."
        d = {k: st[p + k] - base[p + k] for k in ("traps.interrupts", "supervisor.insts", "user.insts")}
        print(f"hart {h}: {d['traps.interrupts']:,.0f} interrupts, supervisor {d['supervisor.insts']:,.0f} and user "
              f"{d['user.insts']:,.0f} instructions")
    print(f"loss {st['client.loss']:.4f}, answered {st['client.throughput_mrps'] * 1e3:,.1f} k req/s "
          f"({(args.requests + args.warmup) * HARTS - HARTS:,} GETs counted)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
