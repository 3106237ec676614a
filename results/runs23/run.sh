#!/bin/sh
# Session 23 (xeon-s23): the 1-4-core rows at 16 Mi items (REDUCED), after (the Xeon's ordered UC doorbells) and
# before (--set core.ordered_uncached_stores=false: the earlier model, the trip from the store's issue).
#
# Run from a clone (any folder; it works from the repository root): sh results/runs23/run.sh [CHECKPOINTS]
#   CHECKPOINTS: the folder of the 16 Mi loads, made on first use (default results/checkpoints-xeon-16Mi, inside
#   the repository and git-ignored; a few GB). Its logs, times and saved points go to results/runs23/.
# As run in session 23: in the worktree /work/wt/xeon-s23 (branch xeon-s23 at 0a05fdc) with
# CHECKPOINTS=/work/wt/ck16-xeon-s23.
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
checkpoints=${1:-results/checkpoints-xeon-16Mi}
py=${PY:-.venv/bin/python}
for what in after before; do
  extra=""
  [ "$what" = before ] && extra="--set core.ordered_uncached_stores=false"
  /usr/bin/time -v -o results/runs23/$what.time nice -n 10 $py -u sim-scripts/validate_xeon.py \
    --no-target --cores 1,2,3,4 --items 16777216 --checkpoints "$checkpoints" \
    --save results/runs23/$what $extra > results/runs23/$what.log 2>&1
  uptime >> results/runs23/$what.time
done
