"""The session 22 table: each capacity_confirmed.py record in this folder (before_*: fecd595's drivers; after_*:
438a322's; final_*: the final commit's), its probes, window loads, windows, warm-ups, answer and CPU (user + system
of /usr/bin/time -v in the .log beside it). Usage: .venv/bin/python results/speed/s22_capacity/table.py [FOLDER]
(FOLDER: another folder of such records, e.g. results/speed/s22_judge: rule_* --judge-window rule, short_* the
default judge beside them)."""
import json
import pathlib
import re
import sys

here = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).parent
print("| run | probes + window loads (windows) | warm-ups | capacity (failed above) | confirmed | CPU s | peak RSS MB |")
print("|---|---|---|---|---|---|---|")
for path in sorted(here.glob("*.json")):
    if path.name.startswith("saturated"):
        continue
    r = json.loads(path.read_text())
    log = path.with_suffix(".log").read_text()
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", log))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", log).group(1)) / 1024
    probes = len(r["probes"])
    print(f"| {path.stem} | {probes} + {r['window_loads']} = {probes + r['window_loads']} ({r['windows']}) | "
          f"{r['warmups']} | {r['capacity_mpps_per_port']:.4g} ({r['upper_mpps_per_port']:.4g}) | "
          f"{'yes' if r['confirmed'] else 'NO'} | {cpu:.1f} | {rss:.0f} |")
