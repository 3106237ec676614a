#!/bin/bash
# dram_by_arrival_probe_s26.sh LABEL (session 26, dram-s26): the 60-core probe of batch32_diagnosis_s25.md 3b at
# 0.852 M frames/s a port, server prefetch on and off (REDUCED: 4 Mi items, 3,000 requests a core); runs to
# /tmp/b32/dram-s26-LABEL-pf{on,off}, log in /tmp/dram-s26/probe.log. Run from the checkout whose engine is built.
mkdir -p /tmp/dram-s26
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
for pf in on off; do
  tag=dram-s26-$1-pf$pf
  extra=""; [ $pf = off ] && extra="prefetch=0"
  echo "start $tag $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/dram-s26/probe.log
  CORES=60 ITEMS=4194304 RPC=3000 nice -n 10 /usr/bin/time -v .venv/bin/python results/figures/batching_192Mi_s24/batch32_repro_s25.py 0.852 $tag $extra > /tmp/dram-s26/$tag.out 2> /tmp/dram-s26/$tag.time
  echo "done $tag $(date -u +%T) $(grep -E 'User time|System time|Maximum resident' /tmp/dram-s26/$tag.time | tr -s ' ' | tr '\n' ' ')" >> /tmp/dram-s26/probe.log
done
