#!/bin/bash
# A study's sweep at the paper's conditions (issue 28), as the lead runs the 192 Mi key points: one sweep of one study,
# one worker, timed by /usr/bin/time, restoring an existing load of the same data set when CHECKPOINT is given (a
# folder `sim-scripts/load_memory.py --keep` or a sweep's shared checkpoints made: `figures.py --checkpoint` checks the
# data set's identity and the guest binary and refuses another's); without it the sweep loads the data set into its
# store first (the 60-core socket at 192 Mi items: about 13-25 GB of disk and ~1,600-1,900 s CPU).
#
# Run from a clone (any folder):
#   bash results/figures/key_points.sh STUDY SWEEP [STORE [OUTDIR [CHECKPOINT]]]
#   e.g. bash results/figures/key_points.sh llc llc-60c-192Mi-key /tmp/store /tmp/figs /tmp/ck/<key>
# Relative folders are the repository root's (the script runs there).
# STORE: the sweep store (default results/sweeps, the figures CLI's own); OUTDIR: the report, CSV and plot (default
# results/figures-STUDY-key, not the committed copies); the /usr/bin/time record (OUTDIR/STUDY_SWEEP.time) goes there.
# Each results/figures/*_192Mi_sNN/README.md names the STUDY, SWEEP, commit and folders its session ran this with.
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
[ $# -ge 2 ] || { echo "usage: $0 STUDY SWEEP [STORE [OUTDIR [CHECKPOINT]]]" >&2; exit 2; }
study=$1 sweep=$2
store=${3:-results/sweeps}
outdir=${4:-results/figures-$study-key}
py=${PY:-.venv/bin/python}
restore=()
if [ -n "${5:-}" ]; then
  [ -d "$5" ] || { echo "$0: no checkpoint folder $5" >&2; exit 2; }
  restore=(--checkpoint "$5")
fi
mkdir -p "$outdir"
echo "=== $study $sweep start $(date -u +%T) at $(git rev-parse --short HEAD)"
rc=0
nice -n 5 /usr/bin/time -v -o "$outdir/${study}_$sweep.time" $py -u sim-scripts/figures.py --study "$study" \
    --sweep "$sweep" "${restore[@]}" --jobs 1 --no-progress --store "$store" --outdir "$outdir" || rc=$?
echo "=== $study $sweep rc $rc end $(date -u +%T)"
exit $rc
