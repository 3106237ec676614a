"""The first turn whose outcome differs between two partitioned runs' turn traces (KVSIM_PART_TRACE=F, one line a
turn: window end, hart, instructions, time and pc before, then after), each hart's turns in its own order; and
the first memory access that differs per core (KVSIM_PART_TRACE2's `A` lines: core, line, kind, time, done).

    python3 results/threads24/first_divergence.py T_SOCKET T_REVERSED [M_SOCKET M_REVERSED]"""
import collections
import sys


def turns(path):
    seq, out = collections.Counter(), []
    for ln in open(path):
        if ln.startswith("CONFLICT"):
            continue
        r = ln.split()
        w, h = int(r[0]), int(r[1])
        out.append((w, h, seq[(w, h)], r))
        seq[(w, h)] += 1
    return sorted(out, key=lambda x: x[:3])


def accesses(path):
    seq, out = collections.Counter(), {}
    for ln in open(path):
        if ln.startswith("A "):
            r = ln.split()
            c = int(r[1])
            out[(c, seq[c])] = r[2:]
            seq[c] += 1
    return out, sorted(seq)


a, b = turns(sys.argv[1]), turns(sys.argv[2])
for x, y in zip(a, b):
    if x[3] != y[3]:
        print("first turn that differs (window end, hart, insts, ps, pc before; insts, ps, pc after):")
        print("  ", " ".join(x[3]), "\n  ", " ".join(y[3]))
        break
else:
    print("no turn differs")
if len(sys.argv) > 4:
    (ma, cores), (mb, _) = accesses(sys.argv[3]), accesses(sys.argv[4])
    for c in cores:
        i = 0
        while (c, i) in ma and ma.get((c, i)) == mb.get((c, i)):
            i += 1
        print(f"core {c}: access {i} differs (line, kind, time, done):", ma.get((c, i)), mb.get((c, i)))
