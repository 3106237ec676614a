#!/bin/bash
# table.sh NAME:COMMIT ...: for each callgrind run (cg.sh NAME) the host CPU, load, total host instructions, the
# phase's guest instructions (system.roi.insts), host instructions a guest instruction, and the own cost by
# function (summing the files its inlined code came from) a guest instruction.
# Sessions 25-27 kept a copy of each per session (results/speed/s2N/, scratch /tmp/speed-s2N); this is the one.
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
for nc in "$@"; do
  n=${nc%%:*}; c=${nc#*:}; d="${SPEED_SCRATCH:-/tmp/speed}"/$n
  g=$(grep -o "'system.roi.insts': [0-9]*" $d/cg.log | grep -o "[0-9]*$")
  t=$(callgrind_annotate $d/callgrind.out 2>/dev/null | grep "PROGRAM TOTALS" | awk '{gsub(",","",$1); print $1}')
  echo "## $n:$c"
  grep -E "User time|System time" $d/cg.time
  sed 's/^/\tload: /' $d/cg.load
  echo "host instructions $t, guest instructions $g: $(python3 -c "print(f'{$t/$g:.2f}')") a guest instruction"
  callgrind_annotate --threshold=100 --auto=no $d/callgrind.out 2>/dev/null | awk -v g=$g '/file:function/{go=1;next} go && /^ *[0-9,]+ /{
    c=$1; gsub(",","",c); line=$0; sub(/^ *[0-9,]+ +(\([ 0-9.%]+\) +)?/,"",line); n=index(line,":"); fn=substr(line,n+1); sub(/ \[.*$/,"",fn); s[fn]+=c }
    END{for(f in s) printf "%14d %7.2f %s\n", s[f], s[f]/g, f}' | sort -rn | head -${TOP:-15}
done
