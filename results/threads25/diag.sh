#!/bin/bash
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"   # the checkout it is kept in
R=results/threads25
for shape in 2x2 4x1; do
  KVSIM_PART_TRACE=$R/d25_${shape}_socket.turns.txt KVSIM_PART_TRACE2=$R/d25_${shape}_socket.conflicts.txt \
    nice -n 10 .venv/bin/python results/threads24/trace_run.py $shape socket $R/d25_${shape}_socket.json > $R/d25_${shape}.log 2>&1
  python3 results/threads24/classify.py $R/d25_${shape}_socket.conflicts.txt $R/d25_${shape}_socket.turns.txt > $R/classify_${shape}.txt
done
KVSIM_PART_TRACE=/tmp/d25_dual.turns.txt KVSIM_PART_TRACE2=$R/d25_dual_socket.conflicts.txt /usr/bin/time -f "%U user %S system s CPU" \
  nice -n 10 .venv/bin/python sim-scripts/bench_server.py --sockets 2 --sim-ms 0.1 --schedule partitioned \
  --stats-json $R/d25_dual_socket.json > $R/d25_dual.log 2>&1
python3 results/threads24/classify.py $R/d25_dual_socket.conflicts.txt /tmp/d25_dual.turns.txt > $R/classify_dual.txt
gzip -f $R/d25_dual_socket.json
echo finished >> $R/d25_dual.log
