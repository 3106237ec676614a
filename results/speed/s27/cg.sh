#!/bin/bash
# cg.sh NAME: callgrind of the target's measured phase on snapshot NAME (session 26's cg.sh; --dump-instr=yes adds
# per-instruction counts for callgrind_annotate --auto=yes, the totals are the same).
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
root=$PWD
d=/tmp/speed-s27/$1
cd $d
uptime > $d/cg.load
PYTHONPATH=$d /usr/bin/time -v -o $d/cg.time nice -n 10 valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=$d/callgrind.out --toggle-collect='*detailed_phase*' "$root"/.venv/bin/python $d/results/speed/callgrind_target.py 3000 > $d/cg.log 2>&1
uptime >> $d/cg.load
grep -o "'system.roi.insts': [0-9]*" $d/cg.log
callgrind_annotate $d/callgrind.out 2>/dev/null | sed -n '1,40p' | grep -E "PROGRAM TOTALS|Ir" | head -3
