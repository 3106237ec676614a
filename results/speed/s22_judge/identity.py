"""The default judge's records on this branch (short_<point>.json, cap2-s22's drivers) against the same command's at
72f9f07 (results/speed/s22_capacity/final_<point>.json): the probes, the window loads, the seeds' losses and every
statistic of the point's record, compared exactly. Usage: .venv/bin/python results/speed/s22_judge/identity.py"""
import json
import pathlib

here = pathlib.Path(__file__).parent
for path in sorted(here.glob("short_*.json")):
    point = path.stem[len("short_"):]
    a = json.loads((here.parent / "s22_capacity" / f"final_{point}.json").read_text())
    b = json.loads(path.read_text())
    same = {k: a[k] == b[k] for k in ("probes", "loads", "seed_losses", "capacity_mpps_per_port",
                                       "upper_mpps_per_port", "windows", "warmups", "stats")}
    moved = [k for k in a["stats"] if a["stats"][k] != b["stats"].get(k)] + \
        [k for k in b["stats"] if k not in a["stats"]]
    print(f"{point}: {len(a['stats'])} statistics, {'all identical' if all(same.values()) else same}; moved: {moved}")
