#!/bin/bash
# table.sh NAME:COMMIT ...: callgrind.txt's sections (host CPU, load, total, own cost by function a guest instruction)
root="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
echo "# callgrind, target socket's measured phase, callgrind_target.py 3000 (4,478,800 guest instructions), session 26: own cost by function (results/speed/s24/byfn.sh), host instructions and a guest instruction"
for nc in "$@"; do
  n=${nc%%:*}; c=${nc#*:}; d=/tmp/speed-s26/$n
  echo "## $n:$c"
  grep -E "User time|System time" $d/cg.time
  sed 's/^/\tload: /' $d/cg.load
  callgrind_annotate $d/callgrind.out 2>/dev/null | grep "PROGRAM TOTALS" | sed 's|^|I   refs: |'
  grep -o "'system.roi.insts': [0-9]*" $d/cg.log
  "${root}/results/speed/s24/byfn.sh" $d/callgrind.out 20
done
