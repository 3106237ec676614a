#!/bin/bash
# Session 23 (issue 28): the LLC study's 256 KB and 2 MB points with the compact driver at 192 Mi on the 60-core
# socket, the merge's engine.
#
# Run from a clone (any folder): bash results/figures/llc_192Mi_s23/compact_driver/run.sh [STORE [OUTDIR]]
#   STORE: the sweep store (about 13 GB for the shared 192 Mi load, made on first use; default results/sweeps);
#   OUTDIR: the report, CSV and plot (default results/figures-llc-192Mi-compact), with the run's time record.
# As run in session 23: in the worktree /work/wt/llc-s23 at a8d35e7, STORE=/work/wt/sweeps-s23,
# OUTDIR=/work/wt/figs-s23c, the time record /work/wt/llc192c_s23.time; the outputs then copied here.
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
store=${1:-results/sweeps}
outdir=${2:-results/figures-llc-192Mi-compact}
py=${PY:-.venv/bin/python}
mkdir -p "$outdir"
echo "=== start $(date -u +%T) at $(git rev-parse --short HEAD)"
rc=0
nice -n 5 /usr/bin/time -v -o "$outdir/llc192c.time" $py -u sim-scripts/figures.py --study llc --full \
    --sweep llc-60c-192Mi-compact-driver --only caches.llc.size=15728640 --only caches.llc.size=125829120 \
    --jobs 1 --no-progress --store "$store" --outdir "$outdir" || rc=$?
echo "=== rc $rc end $(date -u +%T)"
