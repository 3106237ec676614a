#!/bin/bash
# hashes.sh NAME: the two standard runs' stats.json sha256 on snapshot NAME (snap.sh), as
# results/speed/s24/stats_hashes.sh runs them on the checkout (sessions 25-26 kept a copy each)
root="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
d="${SPEED_SCRATCH:-/tmp/speed}"/$1; out=$d/hashes; rm -rf $out; mkdir -p $out
cd $d
export PYTHONPATH=$d
K="$root"/.venv/bin/kvsim
/usr/bin/time -v -o $out/kvs.time nice -n 10 $K run kvs_default --no-power --outdir "$out/kvs_default" > "$out/kvs_default.log" 2>&1
/usr/bin/time -v -o $out/brps.time nice -n 10 $K run brps_target_socket --arg cores=8 --arg requests=8000 --arg items=65536 --no-power --outdir "$out/brps8" > "$out/brps8.log" 2>&1
sha256sum "$out/kvs_default/stats.json" "$out/brps8/stats.json" | tee $out/sha
