#!/bin/bash
# usage: diag3.sh NAME SEED CSEED [extra k=v]
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"   # the checkout it is kept in
n=$1; s=$2; c=$3; shift 3
for mode in full sampled shadow; do
  env KVSIM_SAMPDIAG=1 $( [ $mode = shadow ] && echo KVSIM_SHADOW=1 ) nice -n 10 /usr/bin/time -f "TIME %U %S %M" .venv/bin/python /tmp/s25/diag.py $n $mode $s $c "$@" 2>&1 | grep -E "RESULT|SAMPDIAG|TIME|Error|error" | sed "s/^/$mode /"
done
