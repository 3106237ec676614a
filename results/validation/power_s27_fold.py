#!/usr/bin/env python3
"""Issue 23, session 27: how far the Xeon's priced sockets sit below their thermal fold at the all-core turbo bin.

    .venv/bin/python results/validation/power_s27_fold.py RUN_DIR

RUN_DIR: a point `sim-scripts/validate_xeon.py --save DIR` kept. Each socket's power before the thermal loop is
raised by EXTRA watts (power.unmodelled.parts' probe_W, where the DDR I/O enters), and the CPUs' figure (power.unmodelled.parts, as validate_xeon's row
adds it up, both sockets) is printed with the junction, its loop gain and the turbo bin priced: where the 3.0 GHz bin
has no steady junction left the row drops to a lower bin and its figure falls.
"""

from __future__ import annotations

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))

import power  # noqa: E402
from power import unmodelled  # noqa: E402

EXTRA_W = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 1.8, 1.85, 1.88, 1.9, 2.0, 4.0, 8.0)


def main() -> None:
    run = pathlib.Path(sys.argv[1])
    priced = power.price_run(json.loads((run / "stats.json").read_text()),
                             json.loads((run / "config.json").read_text()))
    sockets = getattr(priced, "sockets", None) or [priced]
    print("extra W a socket before the loop | CPUs W (both sockets) | turbo bin | junction K | loop gain")
    for extra in EXTRA_W:
        total, bins, junctions = 0.0, set(), []
        for r in sockets:
            parts = unmodelled.parts(r, probe_W=extra)
            total += sum(p.watts for p in parts if p.in_total)
            turbo = [p.name for p in parts if p.name.startswith("all-core turbo")]
            bins.add(turbo[0].split(" MHz")[0].split()[-1] if turbo else "base (no turbo)")
            j = [p.name for p in parts if p.name.startswith("junction at")]
            junctions.append((float(j[0].split("junction at ")[1].split(" K")[0]),
                              float(j[0].split("loop gain ")[1].split(":")[0])) if j else (float("nan"),) * 2)
        print(f"{extra:6.2f} | {total:7.1f} | {'/'.join(sorted(bins))} MHz | "
              f"{'/'.join(f'{t:.1f}' for t, _ in junctions)} | {'/'.join(f'{g:.2f}' for _, g in junctions)}")


if __name__ == "__main__":
    main()
