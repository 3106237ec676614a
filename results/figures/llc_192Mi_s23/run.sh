#!/bin/bash
# Session 23 (issue 28): the LLC study's five points (256-2048 KB per core) at 192 Mi on the 60-core socket, both
# drivers, merged main's engine.
#
# Run from a clone (any folder): bash results/figures/llc_192Mi_s23/run.sh [STORE [OUTDIR]]
#   STORE: the sweep store, with the shared 192 Mi load (about 13 GB of disk, made on first use; default
#   results/sweeps, the figures CLI's own); OUTDIR: the report, CSV and plot (default results/figures-llc-192Mi, not
#   the committed copies here); each sweep's /usr/bin/time record goes to OUTDIR too.
# As run in session 23: in /work/main at 012f089, STORE=/work/wt/sweeps-s23, OUTDIR=/work/wt/figs-s23, the time
# records /work/wt/llc192_s23_<sweep>.time; the report, CSV and plot then copied here.
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
store=${1:-results/sweeps}
outdir=${2:-results/figures-llc-192Mi}
py=${PY:-.venv/bin/python}
mkdir -p "$outdir"
for sweep in llc-60c-192Mi llc-60c-192Mi-compact-driver; do
  echo "=== $sweep start $(date -u +%T) at $(git rev-parse --short HEAD)"
  rc=0
  nice -n 5 /usr/bin/time -v -o "$outdir/llc192_$sweep.time" $py -u sim-scripts/figures.py --study llc --full \
      --sweep $sweep --jobs 1 --no-progress --store "$store" --outdir "$outdir" || rc=$?
  echo "=== $sweep rc $rc end $(date -u +%T)"
done
