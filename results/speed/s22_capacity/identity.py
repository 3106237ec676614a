"""The default path's records at 72f9f07 (identity_<point>_r0.02.json) against fecd595's (before_<point>_r0.02.json):
the probes, the window loads, the seeds' losses and every statistic of the point's record, compared exactly.
Usage: .venv/bin/python results/speed/s22_capacity/identity.py"""
import json
import pathlib

here = pathlib.Path(__file__).parent
for point in ("uniform", "zipf"):
    a = json.loads((here / f"before_{point}_r0.02.json").read_text())
    b = json.loads((here / f"identity_{point}_r0.02.json").read_text())
    same = {k: a[k] == b[k] for k in ("probes", "loads", "seed_losses", "capacity_mpps_per_port",
                                       "upper_mpps_per_port", "windows", "warmups", "stats")}
    moved = [k for k in a["stats"] if a["stats"][k] != b["stats"].get(k)] + \
        [k for k in b["stats"] if k not in a["stats"]]
    print(f"{point}: {len(a['stats'])} statistics, {'all identical' if all(same.values()) else same}; moved: {moved}")
