"""Draw the end-to-end study's report of every dual-server 192 Mi point stored (issue 28), whichever engine build ran
it: the sweep's own draw lists only the points of the build drawing (a point's key covers its engine), and these
points ran on two builds (session 16's 0d2706f, session 17's 15e3202), restoring one loaded data set.

    .venv/bin/python results/figures/paper_192Mi_dual/draw_all.py STORE/e2e-2s-60c-192Mi-key STORE/e2e-2s-60c-192Mi-key-T \
        results/figures/paper_192Mi_dual
"""

import pathlib
import sys

from analysis.sweeps import load_sweep
from drivers.studies import common, end_to_end


def main(*args: str) -> None:
    *stores, out = args
    tables = {}
    for store in stores:       # one table a sweep: the -T sweep's name marks its points EREW-T / CREW-T
        keys = sorted(p.stem for p in (pathlib.Path(store) / "points").glob("*.json"))
        tables[pathlib.Path(store).name] = load_sweep(store, keys=keys)
    outdir = pathlib.Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    conditions = common.Conditions()              # the paper's: full platform, 192 Mi items
    for path in end_to_end.make(tables, outdir, conditions=conditions):
        print(path)


if __name__ == "__main__":
    main(*sys.argv[1:])
