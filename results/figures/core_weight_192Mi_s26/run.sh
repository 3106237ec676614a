#!/bin/bash
# Session 26 (issue 28): the core-weight study's key points at the paper's conditions re-run after the DRAM fix (banks
# served by arrival; a software prefetch without a free L1D MSHR waits in the core): the 60-core target socket, 192 Mi
# items restored from an existing load of the same data set (CHECKPOINT: a folder `load_memory.py` or a sweep's shared
# checkpoints made; omit it to load the data set into the store, about 25 GB of disk and 1,800 s CPU), capacity to 2%
# then steady-state windows.
#
# Run from a clone (any folder): bash results/figures/core_weight_192Mi_s26/run.sh [STORE [OUTDIR [CHECKPOINT]]]
# As run in session 26: STORE=/work/wt/sweeps-s26b, OUTDIR=/work/wt/figs-s26b, CHECKPOINT=session 24's shared load
# (/work/wt/sweeps-s24/checkpoints/<key>).
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
store=${1:-results/sweeps}
outdir=${2:-results/figures-core-weight-192Mi}
py=${PY:-.venv/bin/python}
mkdir -p "$outdir"
restore=()
[ -n "${3:-}" ] && restore=(--checkpoint "$3")
nice -n 5 /usr/bin/time -v -o "$outdir/core_weight192.time" $py -u sim-scripts/figures.py --study core_weight \
    --sweep core_weight-60c-192Mi-key "${restore[@]}" --jobs 1 --no-progress --store "$store" --outdir "$outdir"
