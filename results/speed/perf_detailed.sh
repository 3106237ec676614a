#!/bin/bash
# A CPU-time profile of the target socket's detailed (measured) phase: perf samples the CPU clock (a software event:
# this host exposes no hardware counters) at 4 kHz, from the detailed phase's first progress report to the run's end
# (perf_target.py enables and disables it through a control FIFO). Usage: perf_detailed.sh CHECKOUT OUT.data
# REQUESTS, CHECKOUT's Python packages first on the path and its engine; then
#   perf report -i OUT.data --sort symbol --stdio
# For per-line attribution build the engine with line tables (CARGO_PROFILE_RELEASE_DEBUG=line-tables-only).
set -e
src=$1; out=$2; n=$3
py=${PY:-$src/.venv/bin/python}
here=$(cd "$(dirname "$0")" && pwd)
fifo=$(mktemp -u /tmp/perf_ctl.XXXXXX)
mkfifo "$fifo"
exec 9<>"$fifo"
cd "$src"
PYTHONPATH="$src" nice -n 10 perf record -D -1 --control fd:9 -e cpu-clock -F 4000 -o "$out" \
    "$py" "$here/perf_target.py" "$n" "$fifo"
exec 9>&-
rm -f "$fifo"
