"""Session 24 (mend-s24): the checkpoint's disk estimate (drivers/sweep/execute.py checkpoint_parts) against loads
measured here, REDUCED (4 Mi items on the 60-core socket): `kvsim validate`'s 60-core target (its config's own
index, sized to drop no item) and the LLC study's point (its index of items / cores / 8 buckets a partition, the
sizing of the study's 192 Mi load). Each is loaded once into STORE/checkpoints/ (drivers/sweep load_once, as
validate and the studies load) and its files' sizes printed beside the estimate's parts.

    .venv/bin/python results/mend-s24/checkpoint_need.py STORE [ITEMS]
"""

from __future__ import annotations

import pathlib
import sys

from drivers.sweep import Base, load_once
from drivers.sweep.execute import checkpoint_parts

FILES = {"pages": "pages.bin", "versions": "client_versions.bin", "buckets": "client_buckets.bin",
         "state": "state.json"}


def main() -> None:
    store = sys.argv[1]
    items = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 22
    bases = {"validate's 60-core target": Base("drivers.cli.validate_xeon:target_system", cores=60, items=items,
                                               requests=6000, offered_mpps=1.0),
             "the LLC study's point": Base("drivers.studies.common:target", cores=60, items=items,
                                           buckets=max(1024, items // 60 // 8))}
    for label, base in bases.items():
        system = base.build()
        est = checkpoint_parts(system.server_argv(), system.client, system.harts)
        folder, record = load_once(store, base, label)
        sizes = {part: (folder / name).stat().st_size if (folder / name).exists() else 0
                 for part, name in FILES.items()}
        total = sum(p.stat().st_size for p in pathlib.Path(folder).iterdir())
        index = [a for a in system.server_argv() if a.startswith(("buckets", "log_"))]
        print(f"{label} ({items:,} items, 60 harts, {' '.join(index)}): measured {total:,} bytes "
              f"(record {record['bytes']:,}), estimate {sum(est.values()):,} ({100 * (sum(est.values()) / total - 1):+.2f}%); "
              f"load {record['cpu_seconds']:.0f} s CPU")
        for part in FILES:
            print(f"  {FILES[part]}: measured {sizes[part]:,}, estimate {est[part]:,}")


if __name__ == "__main__":
    main()
