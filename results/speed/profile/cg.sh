#!/bin/bash
# cg.sh NAME: callgrind of the target's measured phase (callgrind_target.py 3000) on snapshot NAME (snap.sh);
# --dump-instr=yes adds per-instruction counts for callgrind_annotate --auto=yes (the totals are the same).
# Sessions 25-27 kept a copy of each per session (results/speed/s2N/, scratch /tmp/speed-s2N); this is the one.
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
root=$PWD
d="${SPEED_SCRATCH:-/tmp/speed}"/$1
cd $d
uptime > $d/cg.load
PYTHONPATH=$d /usr/bin/time -v -o $d/cg.time nice -n 10 valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=$d/callgrind.out --toggle-collect='*detailed_phase*' "$root"/.venv/bin/python $d/results/speed/callgrind_target.py 3000 > $d/cg.log 2>&1
uptime >> $d/cg.load
grep -o "'system.roi.insts': [0-9]*" $d/cg.log
callgrind_annotate $d/callgrind.out 2>/dev/null | sed -n '1,40p' | grep -E "PROGRAM TOTALS|Ir" | head -3
