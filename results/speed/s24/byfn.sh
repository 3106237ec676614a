#!/bin/bash
# Own cost by function (summing the files its inlined code came from), per guest instruction (4,478,800).
callgrind_annotate --threshold=100 --auto=no "$1" 2>/dev/null | awk '/file:function/{go=1;next} go && /^ *[0-9,]+ /{
  c=$1; gsub(",","",c); line=$0; sub(/^ *[0-9,]+ +(\([ 0-9.%]+\) +)?/,"",line); n=index(line,":"); fn=substr(line,n+1); sub(/ \[.*$/,"",fn); s[fn]+=c }
  END{for(f in s) printf "%14d %7.2f %s\n", s[f], s[f]/4478800, f}' | sort -rn | head -${2:-25}
