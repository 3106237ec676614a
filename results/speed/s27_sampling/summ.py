"""Summary of a repro.py output: full runs, sampled runs, and each sampled run over its client seed's full run."""
import re,sys,statistics as st
full={};samp=[]
cur=None
for l in open(sys.argv[1]):
    m=re.match(r'client (\d+) FULL idle ([\d.]+) .*mrps ([\d.]+) p95 ([\d.]+) ipc ([\d.]+)',l)
    if m: cur=int(m[1]); full[cur]=tuple(map(float,m.groups()[1:])); continue
    m=re.match(r'\s+seed (\d+) idle ([\d.]+) .*mrps ([\d.]+) p95 ([\d.]+) ipc ([\d.]+)',l)
    if m: samp.append((cur,int(m[1]))+tuple(map(float,m.groups()[1:])))
for k,name in enumerate(['idle','mrps','p95','ipc']):
    f=[v[k] for v in full.values()]
    r=[s[2+k]/full[s[0]][k] for s in samp]
    print(f"{name}: full mean {st.mean(f):.3f} sd {st.stdev(f):.3f} | sampled mean {st.mean([s[2+k] for s in samp]):.3f} sd {st.stdev([s[2+k] for s in samp]):.3f} | ratio mean {st.mean(r):.3f} min {min(r):.3f} max {max(r):.3f}")
