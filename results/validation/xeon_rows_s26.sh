#!/bin/bash
# Session 26 (issue 23): the Xeon rows on merged code after the DRAM fix (banks served by arrival; a software prefetch
# without a free L1D MSHR waits in the core) and the L3's adaptive insertion (DIP): 1 and 4 cores at the paper's
# 192 Mi items (not reduced) restored from an existing load, and 1, 2, 3, 4 and 24 cores at 16 Mi (REDUCED) restored
# likewise, then the tables printed together.
#
# Run from a clone: bash results/validation/xeon_rows_s26.sh OUTDIR CHECKPOINTS_192Mi CHECKPOINTS_16Mi
# As run in session 26: OUTDIR=/work/wt/xeon-rows-s26, /work/wt/ck-xeon192 (session 21's loads), /work/wt/xeon-s26-ck
# (xeon-s26's loads).
set -e
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
out=${1:?OUTDIR}
ck192=${2:?CHECKPOINTS_192Mi}
ck16=${3:?CHECKPOINTS_16Mi}
py=${PY:-.venv/bin/python}
mkdir -p "$out"
run() {  # NAME ARGS...
    local name=$1; shift
    nice -n 5 /usr/bin/time -v -o "$out/$name.time" $py -u sim-scripts/validate_xeon.py --no-target \
        --save "$out/$name" "$@" > "$out/$name.txt" 2>&1
    grep -E "User time|System time|Elapsed|Maximum resident" "$out/$name.time" | sed "s/^/$name /"
}
run 192Mi_1c --cores 1 --items 201326592 --checkpoints "$ck192" --unpacked-memory 2GiB
run 192Mi_4c --cores 4 --items 201326592 --checkpoints "$ck192" --unpacked-memory 2GiB
run 16Mi_1234c --cores 1,2,3,4 --items 16777216 --checkpoints "$ck16"
run 16Mi_24c --cores 24 --items 16777216 --checkpoints "$ck16"
