"""Classify the cross-partition touches the scratch diagnostic (conflict_trace.patch, KVSIM_PART_TRACE2=F) wrote:
per kind of shared timing state (noc, link, dram, line = a directory entry, llcset = a home LLC slice), the region
of the walk's line (page tables: lines at or above 0xf000000000, the model's tables below Mmu.table_base; code:
below 0x1000, the server's text; data: the rest), the walk's kind, whether the line is homed on the walking
partition's socket, and the message that made the touch (noc and link only).

    python3 results/threads24/classify.py M.txt [T.txt]     (T: the KVSIM_PART_TRACE file, for the window counts)"""
import collections
import sys

counts, windows, total = collections.Counter(), set(), 0
for line in open(sys.argv[1]):
    if not line.startswith("CONFLICT"):
        continue
    r = line.split()
    kind, window, actor, walk, msg = r[1], r[3][2:], int(r[4][6:]), r[6][5:], r[7][4:]
    _, addr, access, home = walk.split(":")
    addr, home = int(addr, 16), int(home[4:])
    region = "pagetable" if addr >= 0xF000000000 else ("code" if addr < 0x1000 else "data")
    where = "own home" if home == actor else "remote home"
    access = access if access in ("IFetch", "Prefetch") else "Read/Write"
    counts[(kind, region, access, where, msg if kind in ("noc", "link") else "")] += 1
    windows.add(window)
    total += 1
if len(sys.argv) > 2:
    run = {ln.split()[0] for ln in open(sys.argv[2]) if not ln.startswith("CONFLICT")}
    guest = sum(1 for ln in open(sys.argv[2]) if ln.startswith("CONFLICT"))
    print(f"windows run {len(run)}, with a timing conflict {len(windows)}; guest-memory conflicts {guest}")
print(f"cross-partition touches: {total}")
for k, v in counts.most_common():
    print(v, *k)
