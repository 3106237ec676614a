#!/bin/bash
# cg.sh NAME: callgrind of the target's measured phase on snapshot NAME
root="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
d=/tmp/speed-s26/$1
cd $d
uptime > $d/cg.load
PYTHONPATH=$d /usr/bin/time -v -o $d/cg.time nice -n 10 valgrind --tool=callgrind --callgrind-out-file=$d/callgrind.out --toggle-collect='*detailed_phase*' "$root"/.venv/bin/python $d/results/speed/callgrind_target.py 3000 > $d/cg.log 2>&1
uptime >> $d/cg.load
