#!/bin/bash
# Issue 23, session 27 (power-s27): the Xeon's 24-core CPU power (-14% against the published 255 W) decomposed against
# McPAT 1.3. The 24-core point at 16 Mi items (REDUCED; loaded in the run, no checkpoint), then the pricing, McPAT on
# each socket's XML export, the component table and the thermal fold. As run in session 27 (the component table on 28cd9aa's tree,
# the fold on deed36e; the run itself on 30406ac's engine, which neither changes):
#   bash results/validation/power_s27.sh /tmp/power-s27 ../shared/tools/mcpat/mcpat
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
out=${1:?OUTDIR}
mcpat=${2:?MCPAT}
py=${PY:-.venv/bin/python}
mkdir -p "$out"
[ -f "$out/run24/24/stats.json" ] || nice -n 5 /usr/bin/time -v -o "$out/24c.time" $py -u sim-scripts/validate_xeon.py \
    --no-target --cores 24 --items 16777216 --save "$out/run24" > "$out/24c.txt" 2>&1
nice -n 5 $py results/validation/power_s27_mcpat.py "$out/run24/24" "$out/an24" "$mcpat"
nice -n 5 $py results/validation/power_s27_fold.py "$out/run24/24"
