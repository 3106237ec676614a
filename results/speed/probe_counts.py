"""Probes per capacity point (issue 24: at most 4 on average at 1% resolution), counted three ways:

1. The tests' synthetic servers (tests/test_capacity.py: SYNTHETIC, UNDER_STATED, SKEWED) searched from line rate at
   1% by this checkout's drivers/capacity.py and by BASE's (a checkout given as the first argument: its
   drivers/capacity.py loaded as a module of its own), and the skewed ones from a guess of half their capacity
   (the multi-socket servers' start; BASE stepped up from a guess through drivers/studies/end_to_end.py, emulated
   here as it was: a new search from 1 + 4 resolutions above while the first probe sustains).
2. The stored points' probe tables (JSON files with a "probes" list) under the folders given after BASE, as run.
3. The stored figures' probe counts (CSV files with a "probes" column) under the same folders, as run.

Usage: probe_counts.py BASE FOLDER [FOLDER ...]"""
import csv
import importlib.util
import json
import math
import pathlib
import sys

from drivers import capacity
from test_capacity import LINE, SKEWED, SYNTHETIC, UNDER_STATED

base_path = pathlib.Path(sys.argv[1]) / "drivers" / "capacity.py"
spec = importlib.util.spec_from_file_location("base_capacity", base_path)
base = importlib.util.module_from_spec(spec)
sys.modules["base_capacity"] = base           # dataclasses look their module up
spec.loader.exec_module(base)


def base_from_guess(server, guess, resolution=0.01):
    """BASE's end_to_end loop: search from the guess; while its first probe sustains, again from 4 resolutions
    higher (each search's probes counted)."""
    high, count = guess, 0
    while True:
        res = base.search(server, high, resolution=resolution)
        count += len(res.probes)
        if not (res.line_limited and high < LINE):
            return res, count
        high = min(LINE, high * (1 + 4 * resolution))


def threshold(server, max_loss=0.01):
    """The highest load with loss < max_loss, by bisection on the server's own loss (monotonic in the load)."""
    low, high = 1e-9, LINE * 8
    for _ in range(200):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if server(mid).loss < max_loss else (low, mid)
    return low


def check(res, server):
    truth = threshold(server)
    return res.offered_mpps < truth <= res.upper_mpps <= res.offered_mpps * 1.01 or \
        (res.line_limited and truth >= LINE)


rows = []
for name, servers in (("even", SYNTHETIC), ("under-stated", UNDER_STATED), ("skewed", SKEWED)):
    new = [capacity.search(s, LINE) for s in servers]
    old = [base.search(s, LINE) for s in servers]
    rows.append((f"{name}, from line rate", [len(r.probes) for r in old], [len(r.probes) for r in new],
                 all(check(r, s) for r, s in zip(new + old, servers + servers))))
guessed_new = [capacity.search(s, LINE, start=threshold(s) / 2) for s in SKEWED]
guessed_old = [base_from_guess(s, threshold(s) / 2) for s in SKEWED]
rows.append(("skewed, from half the capacity", [c for _, c in guessed_old], [len(r.probes) for r in guessed_new],
             all(check(r, s) for r, s in zip(guessed_new + [r for r, _ in guessed_old], SKEWED + SKEWED))))
print("| synthetic servers at 1% | cases | base probes | base mean | this branch | mean | answers within 1% |")
print("| --- | ---: | --- | ---: | --- | ---: | --- |")
every_old, every_new = [], []
for label, old, new, ok in rows:
    every_old += old
    every_new += new
    print(f"| {label} | {len(old)} | {old} | {sum(old) / len(old):.2f} | {new} | {sum(new) / len(new):.2f} | {ok} |")
print(f"| all | {len(every_old)} | | {sum(every_old) / len(every_old):.2f} | | {sum(every_new) / len(every_new):.2f} | |")

tables, figures = {}, {}
for folder in sys.argv[2:]:
    for path in sorted(pathlib.Path(folder).rglob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (ValueError, OSError):
            continue
        probes = data.get("probes") if isinstance(data, dict) else None
        if isinstance(probes, list) and probes and isinstance(probes[0], dict) and "offered_mpps" in probes[0]:
            key = json.dumps(probes, sort_keys=True)
            tables.setdefault(key, (path, probes))
    for path in sorted(pathlib.Path(folder).rglob("*.csv")):
        with open(path) as f:
            got = list(csv.DictReader(f))
        if got and "probes" in got[0]:
            figures.setdefault(path.read_bytes(), (path, [float(r["probes"]) for r in got if r["probes"]]))
print("\n| stored point (probe table) | probes | offered M frames/s a port, in order (* sustained) |")
print("| --- | ---: | --- |")
for path, probes in tables.values():
    seq = ", ".join(f"{p['offered_mpps']:.2f}{'*' if p['sustained'] else ''}" for p in probes)
    print(f"| {path} | {len(probes)} | {seq} |")
counts = [len(p) for _, p in tables.values()]
if counts:
    print(f"| mean of {len(counts)} | {sum(counts) / len(counts):.2f} | |")
print("\n| stored figure (CSV) | points | probes | mean |")
print("| --- | ---: | --- | ---: |")
allc = []
for path, counts in figures.values():
    allc += counts
    print(f"| {path} | {len(counts)} | {[int(c) for c in counts]} | {sum(counts) / len(counts):.2f} |")
if allc:
    print(f"| all | {len(allc)} | | {sum(allc) / len(allc):.2f} |")
assert not math.isnan(sum(every_new))
