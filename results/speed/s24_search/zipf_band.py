"""Every load a window judged on the reduced Zipf point (8 cores, 262,144 items, seed 0) over session 24's records,
between 10.5 and 11.1 M frames/s a port, sorted by load: its loss and verdict, and which record (judge, search)."""
import json
import pathlib

D = pathlib.Path(__file__).parent
rows = set()
for path in sorted(D.glob("*zipf*.json")):
    r = json.loads(path.read_text())
    for row in r.get("loads") or []:
        if 10.5 <= row["offered_mpps"] <= 11.1:
            rows.add((round(row["offered_mpps"], 3), round(100 * row["loss"], 2), row["sustained"], path.stem))
for load, loss, ok, name in sorted(rows):
    print(f"{load:7.3f}  {loss:5.2f}%  {'sustained' if ok else 'failed   '}  {name}")
