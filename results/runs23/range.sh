#!/bin/sh
# Session 23 (xeon-s23): SENSITIVITY of the 1- and 3-core rows (16 Mi items, REDUCED) to the doorbell's register trip
# at the ends of the 50-300 ns UC-write spacing McCalpin's forum thread reports (the model's 100 ns is assumed inside
# it); the ordered UC doorbells on (the new Xeon default).
cd /work/wt/xeon-s23
while pgrep -f "results/runs23/run.sh" > /dev/null; do sleep 10; done
for ns in 50 300; do
  /usr/bin/time -v -o results/runs23/mmio${ns}.time nice -n 10 .venv/bin/python -u sim-scripts/validate_xeon.py \
    --no-target --cores 1,3 --items 16777216 --checkpoints /work/wt/ck16-xeon-s23 \
    --save results/runs23/mmio${ns} --set "nics[0].mmio_latency=${ns}ns" > results/runs23/mmio${ns}.log 2>&1
  uptime >> results/runs23/mmio${ns}.time
done
