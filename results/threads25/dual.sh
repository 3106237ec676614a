#!/bin/bash
# The dual server (reduced: bench_server.py --sockets 2 --sim-ms 0.1, 65,536 items) under the partitioned schedule in
# both partition orders and under the global schedule; statistics to results/threads25/{tag}_dual_{order}.json.
#   results/threads25/dual.sh TAG [global]
tag=${1:?TAG}
orders="socket reversed"; [ "$2" = global ] && orders="global"
for o in $orders; do
  if [ $o = global ]; then a="--schedule global"; else a="--schedule partitioned --partition-order $o"; fi
  /usr/bin/time -f "%U user %S system s CPU" nice -n 10 .venv/bin/python sim-scripts/bench_server.py --sockets 2 \
      --sim-ms 0.1 $a --stats-json results/threads25/${tag}_dual_$o.json > results/threads25/${tag}_dual_$o.log 2>&1
  gzip -f results/threads25/${tag}_dual_$o.json
  echo "$o: $(uptime | sed 's/.*load/load/')" >> results/threads25/${tag}_dual_$o.log
done
