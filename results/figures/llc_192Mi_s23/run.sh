#!/bin/bash
# Session 23 (issue 28): the LLC study's five points (256-2048 KB per core) at 192 Mi on the 60-core socket, both drivers, merged main's engine.
cd /work/main
for sweep in llc-60c-192Mi llc-60c-192Mi-compact-driver; do
echo "=== $sweep start $(date -u +%T) at $(git rev-parse --short HEAD)"
nice -n 5 /usr/bin/time -v -o /work/wt/llc192_s23_$sweep.time .venv/bin/python -u sim-scripts/figures.py --study llc --full \
    --sweep $sweep --jobs 1 --no-progress \
    --store /work/wt/sweeps-s23 --outdir /work/wt/figs-s23
echo "=== $sweep rc $? end $(date -u +%T)"
done
