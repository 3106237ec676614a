#!/usr/bin/env python3
"""Compare the stats.json of the standard runs in two folders (results/memory/standard_runs.sh): every statistic
bit-identical, or the ones that differ. Usage: same_stats.py BEFORE AFTER"""
import json
import pathlib
import sys

before, after = map(pathlib.Path, sys.argv[1:3])
bad = 0
for run in sorted(p.parent.name for p in before.glob("*/stats.json")):
    a = json.loads((before / run / "stats.json").read_text())
    b = json.loads((after / run / "stats.json").read_text())
    differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    bad += len(differ)
    print(f"{run}: {len(a)} statistics, {len(differ)} differ" + (f": {differ[:8]}" if differ else ""))
sys.exit(1 if bad else 0)
