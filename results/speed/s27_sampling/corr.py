"""Over a repro.py grid (argument: its output), the correlation of each sampled run's error (sampled over its client
seed's full run: idle, throughput, p95) with its clock's CPI between windows over its windows' (warming_cpi / cpi)."""
import re
import statistics as st
import sys

full, rows = {}, []
for line in open(sys.argv[1]):
    m = re.match(r'client (\d+) FULL idle ([\d.]+) .*mrps ([\d.]+) p95 ([\d.]+)', line)
    if m:
        c = int(m[1])
        full[c] = (float(m[2]), float(m[3]), float(m[4]))
        continue
    m = re.match(r'\s+seed (\d+) idle ([\d.]+) .*mrps ([\d.]+) p95 ([\d.]+) .*warming_cpi ([\d.]+) cpi ([\d.]+)', line)
    if m:
        rows.append((c,) + tuple(float(x) for x in m.groups()))
x = [r[5] / r[6] for r in rows]
for k, name in ((2, 'idle'), (3, 'mrps'), (4, 'p95')):
    y = [r[k] / full[r[0]][k - 2] for r in rows]
    print(name, 'corr with warming/windows cpi: %.2f' % st.correlation(x, y))
