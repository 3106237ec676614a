#!/bin/sh
# Session 23 (xeon-s23): the 1-4-core rows at 16 Mi items (REDUCED), after (the Xeon's ordered UC doorbells) and
# before (--set core.ordered_uncached_stores=false: the earlier model, the trip from the store's issue).
cd /work/wt/xeon-s23
for what in after before; do
  extra=""
  [ "$what" = before ] && extra="--set core.ordered_uncached_stores=false"
  /usr/bin/time -v -o results/runs23/$what.time nice -n 10 .venv/bin/python -u sim-scripts/validate_xeon.py \
    --no-target --cores 1,2,3,4 --items 16777216 --checkpoints /work/wt/ck16-xeon-s23 \
    --save results/runs23/$what $extra > results/runs23/$what.log 2>&1
  uptime >> results/runs23/$what.time
done
