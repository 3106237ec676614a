#!/usr/bin/env bash
# Build the bare-metal FS test programs into workloads/fs/build/bare/: NAME.S (+ common.S) linked at DRAM's start
# (M-mode programs) or, for names ending in _s, 2 MiB above it (S-mode programs under the firmware).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${FS_OUT:-$HERE/../build}/bare
CC=${CROSS:-riscv64-linux-gnu-}gcc
mkdir -p "$OUT"
for src in "$HERE"/*.S; do
  name=$(basename "$src" .S)
  [ "$name" = common ] && continue
  case "$name" in *_s) load=0x80200000;; *) load=0x80000000;; esac
  out=$OUT/$name
  if [ ! -f "$out" ] || [ "$src" -nt "$out" ] || [ "$HERE/common.S" -nt "$out" ] || [ "$HERE/link.ld" -nt "$out" ]; then
    "$CC" -march=rv64imac_zicsr_zifencei -mabi=lp64 -mcmodel=medany -nostdlib -static -no-pie -fno-pic -Wl,--build-id=none -Wl,--defsym=LOAD_ADDR=$load \
      -T "$HERE/link.ld" -Wl,--no-warn-rwx-segments -o "$out" "$src" "$HERE/common.S"
  fi
done
