#!/bin/bash
# snap.sh NAME: copy the worktree's Python packages and built engine to /tmp/speed-s27/NAME (session 26's snap.sh,
# another directory), so a callgrind run keeps the engine it was given while the worktree rebuilds.
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"   # the checkout it is kept in
d=/tmp/speed-s27/$1; rm -rf $d; mkdir -p $d/workloads $d/results $d/models
tar cf - --exclude=__pycache__ --exclude=models/engine --exclude=models/timing --exclude=models/params models configs power analysis drivers sim-scripts workloads/build results/speed | tar xf - -C $d
git rev-parse HEAD > $d/commit; git status --short -- models >> $d/commit
ls -la $d/models/_engine*.so
