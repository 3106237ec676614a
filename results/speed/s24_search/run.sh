#!/bin/bash
# Session 24 (search-s24): the reduced real points (8 cores, 262,144 items), today's search (98a3949's refined
# search, run from its own Python in /tmp/search-s24-base with this worktree's engine and server binary, which the
# branch does not change) against the branch's default (the saturated search). Usage: run.sh CASE... where CASE is
# {base,new,final}_{uniform,zipf}_r{0.01,0.02}[_rule] (_rule: --judge-window rule, session 22's judge option;
# final: the branch's default at its last commit, for the runs 'new' made on an earlier commit).
# Run from a clone: the repository is the one holding this script (session 24 ran it in the worktree
# /work/wt/search-s24); BASE is a checkout of the base commit's Python (98a3949: `git archive` into /tmp).
WT=$(cd "$(dirname "$0")/../../.." && pwd)
BASE=${BASE:-/tmp/search-s24-base}
OUT=$WT/results/speed/s24_search
for case in "$@"; do
  IFS=_ read -r which keys res judge <<< "$case"
  res=${res#r}
  extra=""; [ "$judge" = rule ] && extra="--judge-window rule"
  zipf=""; [ "$keys" = zipf ] && zipf="--zipf"
  if [ "$which" = base ]; then dir=$BASE; pp=$BASE; else dir=$WT; pp=$WT; fi
  ( cd $dir && PYTHONPATH=$pp nice -n 10 /usr/bin/time -v -o $OUT/$case.time $WT/.venv/bin/python -u \
      results/speed/capacity_confirmed.py 8 262144 $zipf --resolution $res $extra --json $OUT/$case.json > $OUT/$case.log 2>&1 )
  echo "$case rc=$? $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/done.txt
done
