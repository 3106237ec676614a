#!/bin/bash
# snap.sh NAME: copy the worktree's Python packages and built engine to /tmp/speed-s26/NAME
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"   # the checkout it is kept in
d=/tmp/speed-s26/$1; rm -rf $d; mkdir -p $d/workloads $d/results $d/models
tar cf - --exclude=__pycache__ --exclude=models/engine --exclude=models/timing --exclude=models/params models configs power analysis drivers sim-scripts workloads/build results/speed | tar xf - -C $d
ls -la $d/models/_engine*.so
