#!/bin/bash
# The runs compared before/after a speed change (issue 24): run in checkout $1 (its Python packages first on the
# path, its engine) into $2, each run's stats.json compared by results/memory/same_stats.py. The target socket at
# 3,000 requests and 70 M frames/s a port; a save and a detailed restore of an 8-core target (open loop, warmed).
set -e
src=$1; out=$2
cd "$src"
# PY: an interpreter with the packages (default the checkout's own .venv; the runs recorded with it used
# /work/wt/speed15/.venv/bin/python, a worktree of that machine).
py=${PY:-$PWD/.venv/bin/python}
run() { name=$1; shift; PYTHONPATH="$src" nice -n 10 $py -m drivers.cli.kvsim run "$@" --no-power --outdir "$out/$name" > "$out/$name.log" 2>&1; }
mkdir -p "$out"
run kvs_default kvs_default
run target3000 brps_target_socket --arg requests=3000 --arg offered_mpps=70
rm -rf "$out/ck"
t8="--arg cores=8 --arg items=262144 --arg requests=4000 --arg offered_mpps=10"
run save8 brps_target_socket $t8 --set checkpoint_to="$out/ck"
run restore8 brps_target_socket $t8 --set restore_from="$out/ck" --set client.warmup_requests=20000
run restore8again brps_target_socket $t8 --set restore_from="$out/ck" --set client.warmup_requests=20000
rm -rf "$out/ck"
