"""A run's CPI along its detailed phase from progress reports (ticks, all harts' instructions), at the test point
of tests/test_sampling.py (reduced). From the repository root: curve.py f (full) or curve.py s SEED (sampled).
ps an instruction of all harts x 4 cores / 400 ps a cycle = cycles an instruction a core."""
import sys
from drivers.cli import sampling_table as table
from models.sim import simulate
scale = {"cores": 4, "items": 1 << 16, "requests_per_core": 2000}
s = table.system("base", len(sys.argv) > 1 and sys.argv[1] == "s", seed=int(sys.argv[2]) if len(sys.argv) > 2 else 1, **scale)
reps = []
def progress(insts, ticks, phase, answered):
    reps.append((phase, insts, ticks, answered))
st = simulate(s, progress=progress, progress_every=20_000).stats
print(sorted(set(r[0] for r in reps)), s.core.clock)
m = [r for r in reps if r[0] not in ("warming", "load", "loading", "functional")]
prev = m[0]
for r in m[1:60]:
    di, dt = r[1] - prev[1], r[2] - prev[2]
    print(r[0], r[1], r[2], r[3], "ps/inst(all harts) %.1f" % (dt / max(di, 1)))
    prev = r
