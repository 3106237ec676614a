#!/bin/bash
# The reduced points of session 22 (cap2-s22), one at a time: NAME ARGS...
cd "$(dirname "$0")/../../.."
while [ $# -gt 0 ]; do
  name=$1; shift; args=$1; shift
  nice -n 10 /usr/bin/time -v .venv/bin/python results/speed/capacity_confirmed.py 8 262144 $args \
      --json results/speed/s22_judge/$name.json > results/speed/s22_judge/$name.log 2>&1
  uptime >> results/speed/s22_judge/$name.log
done
