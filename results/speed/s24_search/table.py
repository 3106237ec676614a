"""The real points' table of session 24 (reduced: 8 cores, 262,144 items) from run.sh's records: for each case,
98a3949's search (base_*) against the branch's default (new_* / final_*): the capacity (M frames/s a port) with the
lowest failed load above it, whether windows confirmed it, the runs (probes + window loads), the windows simulated
and the CPU seconds (user + system, /usr/bin/time) with the load average when the run ended.

Usage: table.py BASE_CASE:NEW_CASE ...   (e.g. base_zipf_r0.01:final_zipf_r0.01)"""
import json
import math
import pathlib
import re
import sys

D = pathlib.Path(__file__).parent
loads = {}
for line in (D / "done.txt").read_text().splitlines():
    case, _, *_, l1, l5, l15 = line.split()
    loads[case] = l1


def cell(case):
    r = json.loads((D / f"{case}.json").read_text())
    t = (D / f"{case}.time").read_text()
    cpu = sum(float(re.search(rf"{k} time \(seconds\): ([0-9.]+)", t).group(1)) for k in ("User", "System"))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024
    runs = r["search_probes"] + r["window_loads"]
    upper = r["upper_mpps_per_port"]
    return r, (f"{r['capacity_mpps_per_port']:.2f} ({upper:.2f}){'' if r['confirmed'] else ' not confirmed'}",
               f"{r['search_probes']}+{r['window_loads']}={runs}", r["windows"], f"{cpu:.1f} (load {loads[case]})",
               f"{rss:.0f}")


print("| case (reduced) | capacity (failed above), 98a3949 -> branch | runs (probes + loads) | windows | CPU s | "
      "within res. |")
print("|---|---|---|---|---|---|")
for pair in sys.argv[1:]:
    old, new = pair.split(":")
    a, ca = cell(old)
    b, cb = cell(new)
    res = a["resolution"]
    gap = abs(math.log(b["capacity_mpps_per_port"] / a["capacity_mpps_per_port"]))
    name = re.sub(r"^base_", "", old)
    print(f"| {name} | {ca[0]} -> {cb[0]} | {ca[1]} -> {cb[1]} | {ca[2]} -> {cb[2]} | {ca[3]} -> {cb[3]} | "
          f"{'yes' if gap < math.log(1 + res) else 'no'} ({100 * gap:.1f}%) |")
