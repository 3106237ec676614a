#!/bin/bash
# probe_s27.sh ENGINE_SO TAG RPP OFFERED [VAR=value ...] (session 27, dram-s27): install ENGINE_SO as the engine
# (atomic rename), run probe_s27.py (REDUCED: 60 cores, 4 Mi items, 3,000 requests a core unless overridden) into
# /tmp/dram-s27/runs/TAG; its line and host time appended to /tmp/dram-s27/probe.log.
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
so=$1 tag=$2 rpp=$3 offered=$4; shift 4
mkdir -p /tmp/dram-s27/runs
cp "$so" models/_engine.so.new && mv models/_engine.so.new models/_engine.cpython-311-x86_64-linux-gnu.so
echo "start $tag $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) engine $(sha256sum "$so" | cut -c1-12) $*" >> /tmp/dram-s27/probe.log
env RPP=$rpp "$@" nice -n 5 /usr/bin/time -v .venv/bin/python results/dram_s27/probe_s27.py "$offered" /tmp/dram-s27/runs/$tag \
    > /tmp/dram-s27/$tag.out 2> /tmp/dram-s27/$tag.time
tail -1 /tmp/dram-s27/$tag.out >> /tmp/dram-s27/probe.log
echo "done $tag $(date -u +%T) $(grep -E 'User time|System time|Maximum resident' /tmp/dram-s27/$tag.time | tr -s ' ' | tr '\n' ' ')" >> /tmp/dram-s27/probe.log
