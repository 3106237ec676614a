#!/bin/sh
# Session 23 (xeon-s23): SENSITIVITY of the 1- and 3-core rows (16 Mi items, REDUCED) to the doorbell's register trip
# at the ends of the 50-300 ns UC-write spacing McCalpin's forum thread reports (the model's 100 ns is assumed inside
# it); the ordered UC doorbells on (the new Xeon default).
#
# Run from a clone after run.sh (it reuses run.sh's loads): sh results/runs23/range.sh [CHECKPOINTS]
#   CHECKPOINTS: as run.sh's (default results/checkpoints-xeon-16Mi, inside the repository and git-ignored).
# As run in session 23: in the worktree /work/wt/xeon-s23 (branch xeon-s23 at 0a05fdc) with
# CHECKPOINTS=/work/wt/ck16-xeon-s23, started beside run.sh and waiting for it to end.
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
checkpoints=${1:-results/checkpoints-xeon-16Mi}
py=${PY:-.venv/bin/python}
for ns in 50 300; do
  /usr/bin/time -v -o results/runs23/mmio${ns}.time nice -n 10 $py -u sim-scripts/validate_xeon.py \
    --no-target --cores 1,3 --items 16777216 --checkpoints "$checkpoints" \
    --save results/runs23/mmio${ns} --set "nics[0].mmio_latency=${ns}ns" > results/runs23/mmio${ns}.log 2>&1
  uptime >> results/runs23/mmio${ns}.time
done
