#!/bin/bash
# Session 24 (issue 28): the core-weight study's key points (tiny items; ROB x issue width) at the paper's conditions:
# the 60-core target socket, 192 Mi items loaded once into the study's shared checkpoint (about 25 GB of disk, made on
# first use), capacity to 2% then steady-state windows.
#
# Run from a clone (any folder): bash results/figures/core_weight_192Mi_s24/run.sh [STORE [OUTDIR]]
#   STORE: the sweep store (default results/sweeps, the figures CLI's own); OUTDIR: the report, CSV and plot
#   (default results/figures-core-weight-192Mi, not the committed copies here); the /usr/bin/time record goes there.
# As run in session 24: in /work/main at 98a3949 (a script that also went on to the batching and prefetch studies'
# sweeps, stopped before them), STORE=/work/wt/sweeps-s24, OUTDIR=/work/wt/figs-s24; the report, CSV and plot then
# copied here.
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
store=${1:-results/sweeps}
outdir=${2:-results/figures-core-weight-192Mi}
py=${PY:-.venv/bin/python}
mkdir -p "$outdir"
sweep=core_weight-60c-192Mi-key
echo "=== $sweep start $(date -u +%T) at $(git rev-parse --short HEAD)"
rc=0
nice -n 5 /usr/bin/time -v -o "$outdir/core_weight192_$sweep.time" $py -u sim-scripts/figures.py --study core_weight \
    --sweep $sweep --jobs 1 --no-progress --store "$store" --outdir "$outdir" || rc=$?
echo "=== $sweep rc $rc end $(date -u +%T)"
