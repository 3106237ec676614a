#!/bin/bash
# The standard runs compared before/after the packed guest pages (issue 28): run in a checkout ($1) into $2,
# with extra `--set` arguments ($3..., e.g. --set unpacked_memory=1MiB). Each run's stats.json is compared by
# results/memory/same_stats.py.
set -e
src=$1; out=$2; shift 2
cd "$src"
# PY: an interpreter with the packages (default the checkout's own .venv; the runs recorded with it used
# /work/wt/studies/.venv/bin/python, a worktree of that machine).
py=${PY:-$PWD/.venv/bin/python}
run() { name=$1; shift; nice -n 10 $py -m drivers.cli.kvsim run "$@" --outdir "$out/$name" > "$out/$name.log" 2>&1; }
mkdir -p "$out"
[ -n "$ONLY_CKPT" ] || run kvs_default kvs_default "$@"
[ -n "$ONLY_CKPT" ] || run target8 brps_target_socket --arg cores=8 --arg items=262144 --arg requests=4000 "$@"
rm -rf "$out/ck"
run save kvs_functional --set checkpoint_to="$out/ck" "$@"
run restore kvs_functional --set restore_from="$out/ck" "$@"
rm -rf "$out/ck"
