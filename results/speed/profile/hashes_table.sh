#!/bin/bash
# hashes_table.sh NAME:COMMIT ...: hashes.txt from each snapshot's two standard runs (hashes.sh); session 26 kept it in results/speed/s26/
echo "# stats.json sha256 of kvs_default --no-power and brps_target_socket --arg cores=8 --arg requests=8000 --arg items=65536 --no-power, each commit's engine"
for nc in "$@"; do
  n=${nc%%:*}; c=${nc#*:}; d="${SPEED_SCRATCH:-/tmp/speed}"/$n/hashes
  awk -v c=$c '{split($2,p,"/"); print c, $1, p[length(p)-1]}' $d/sha
done
