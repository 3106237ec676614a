#!/bin/bash
# snap.sh NAME: copy the checkout's Python packages and built engine to $SPEED_SCRATCH/NAME (default
# /tmp/speed/NAME), so a callgrind or hash run keeps the engine it was given while the checkout rebuilds.
# Sessions 25-27 kept a copy of each per session (results/speed/s2N/, scratch /tmp/speed-s2N); this is the one.
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"   # the checkout it is kept in
d="${SPEED_SCRATCH:-/tmp/speed}"/$1; rm -rf $d; mkdir -p $d/workloads $d/results $d/models
tar cf - --exclude=__pycache__ --exclude=models/engine --exclude=models/timing --exclude=models/params models configs power analysis drivers sim-scripts workloads/build results/speed | tar xf - -C $d
git rev-parse HEAD > $d/commit; git status --short -- models >> $d/commit
ls -la $d/models/_engine*.so
