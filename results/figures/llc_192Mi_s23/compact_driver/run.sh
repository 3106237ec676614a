#!/bin/bash
# Session 23 (issue 28): the LLC study's 256 KB and 2 MB points with the compact driver at 192 Mi on the 60-core socket, the merge's engine.
cd /work/wt/llc-s23
echo "=== start $(date -u +%T) at $(git rev-parse --short HEAD)"
nice -n 5 /usr/bin/time -v -o /work/wt/llc192c_s23.time .venv/bin/python -u sim-scripts/figures.py --study llc --full \
    --sweep llc-60c-192Mi-compact-driver --only caches.llc.size=15728640 --only caches.llc.size=125829120 \
    --jobs 1 --no-progress --store /work/wt/sweeps-s23 --outdir /work/wt/figs-s23c
echo "=== rc $? end $(date -u +%T)"
