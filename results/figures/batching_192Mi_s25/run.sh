#!/bin/bash
# Session 25 (issue 28): the batching study's key points at the paper's conditions: the 60-core target socket, 192 Mi
# items restored from an existing load of the same data set (CHECKPOINT: a folder `load_memory.py` or a sweep's shared
# checkpoints made; omit it to load the data set into the store, about 25 GB of disk and 1,800 s CPU), capacity by the
# saturated search then steady-state windows.
#
# Run from a clone (any folder): bash results/figures/batching_192Mi_s25/run.sh [STORE [OUTDIR [CHECKPOINT]]]
# As run in session 25: in /work/main at 5409fa2, STORE=/work/wt/sweeps-s25, OUTDIR=/work/wt/figs-s25,
# CHECKPOINT=session 24's shared load (/work/wt/sweeps-s24/checkpoints/<key>); stopped by the lead during the
# 32-requests point, then drawn with --draw-only.
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
store=${1:-results/sweeps}
outdir=${2:-results/figures-batching-192Mi}
py=${PY:-.venv/bin/python}
mkdir -p "$outdir"
restore=()
[ -n "${3:-}" ] && restore=(--checkpoint "$3")
nice -n 5 /usr/bin/time -v -o "$outdir/batching192.time" $py -u sim-scripts/figures.py --study batching \
    --sweep batching-60c-192Mi-key "${restore[@]}" --jobs 1 --no-progress --store "$store" --outdir "$outdir"
