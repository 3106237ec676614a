"""Session 24 (mend-s24): what the ordered doorbells (`Core.ordered_uncached_stores`, on in configs/
mica_e5_2680_dual.py since session 23) move in MICA's seed study: the study's own sweep (drivers/studies/seed_mica.py,
the default run's conditions: 16 cores, 16 Mi keys, REDUCED) restricted to WORKLOADS, with the option OFF on both
sockets, into the same store as the study's default run (so the shared load is restored, not loaded again). The
study's own points (option on) are the comparison.

    .venv/bin/python results/mend-s24/seed_mica_doorbell.py STORE [uniform-0.95 ...]
"""

from __future__ import annotations

import sys
from dataclasses import replace

from drivers.studies import seed_mica
from drivers.sweep import Grid
from drivers.sweep.execute import run

OFF = {"sockets[0].core.ordered_uncached_stores": [False]}
TIED = {"sockets[0].core.ordered_uncached_stores": ("sockets[1].core.ordered_uncached_stores",)}


def main() -> None:
    store = sys.argv[1]
    workloads = [w.split("-") for w in (sys.argv[2:] or ["uniform-0.95"])]
    study = seed_mica.sweeps(full=True)[0]
    for popularity, get_ratio in workloads:
        sweep = replace(study, name=f"{study.name}-doorbell-off-{popularity}-{get_ratio}",
                        space=Grid({"client.popularity": [popularity], "client.get_ratio": [float(get_ratio)], **OFF}),
                        ties=TIED, checkpoints=store)
        report = run(sweep, store=f"{store}/{sweep.name}", jobs=1, progress=False)
        print(sweep.name, report)


if __name__ == "__main__":
    main()
