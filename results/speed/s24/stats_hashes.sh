#!/bin/bash
# The two standard runs' stats.json sha256 (session 24: statistics must stay bit-identical). Usage (from the
# checkout, after `make engine`): results/speed/s24/stats_hashes.sh OUTDIR
set -e
out=${1:?OUTDIR}
rm -rf "$out"; mkdir -p "$out"
nice -n 10 .venv/bin/kvsim run kvs_default --no-power --outdir "$out/kvs_default" > "$out/kvs_default.log" 2>&1
nice -n 10 .venv/bin/kvsim run brps_target_socket --arg cores=8 --arg requests=8000 --arg items=65536 --no-power \
    --outdir "$out/brps8" > "$out/brps8.log" 2>&1
sha256sum "$out/kvs_default/stats.json" "$out/brps8/stats.json"
