#!/bin/bash
# The dual (bench_server.py --sockets 2 --sim-ms 0.1) and quad (--sockets 4 --sim-ms 0.05) servers, reduced (65,536
# items), under the partitioned schedule in both partition orders, from the checkout this runs in; statistics to
# OUTDIR/{dual,quad}_{order}.json.gz, host CPU and load in the logs (mend-s26).
#   results/mend26/servers.sh OUTDIR
out=${1:?OUTDIR}; mkdir -p "$out"
for s in "dual 2 0.1" "quad 4 0.05"; do
  set -- $s
  for o in socket reversed; do
    /usr/bin/time -f "%U user %S system s CPU" nice -n 10 .venv/bin/python sim-scripts/bench_server.py --sockets $2 \
        --sim-ms $3 --schedule partitioned --partition-order $o --stats-json "$out/$1_$o.json" > "$out/$1_$o.log" 2>&1
    gzip -f "$out/$1_$o.json"
    echo "$o: $(uptime | sed 's/.*load/load/')" >> "$out/$1_$o.log"
  done
done
