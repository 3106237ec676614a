#!/bin/bash
# Paired, alternated bulk loads (60-core target, load_memory --one): the base tree BASE (a git archive with its own
# engine built), then this tree; ITEMS items, PAIRS pairs. One line a run: CPU user, system (s), peak RSS (KB).
# Usage, from this tree: BASE=/path/to/base bash results/speed/load_pairs.sh ITEMS PAIRS
items=$1; pairs=$2; base=${BASE:-/tmp/fs21/basetree}; here=$(pwd)
for i in $(seq 1 $pairs); do
  for tree in $base $here; do
    rm -rf ${CK:-/tmp/ckpair}
    cd $tree
    la=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "TIME %U %S %M" nice -n 10 $here/.venv/bin/python -m drivers.cli.load_memory --one --items $items --cores 60 --checkpoints ${CK:-/tmp/ckpair} --unpacked-memory 0 > /tmp/pair.out 2> /tmp/pair.err
    t=$(grep TIME /tmp/pair.err)
    echo "$items $tree pair$i loadavg_before=$la $t $(grep -o '"insts": [0-9]*' /tmp/pair.out) loadavg_after=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
rm -rf ${CK:-/tmp/ckpair}
