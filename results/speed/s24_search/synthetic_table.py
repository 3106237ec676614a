"""The synthetic table of session 24 from synthetic_base.jsonl (98a3949's search) and synthetic_branch.jsonl (the
branch's): runs a point at 1% by kind of server, and whether every answer was within the resolution."""
import json
import pathlib

D = pathlib.Path(__file__).parent
rows = {tree: [json.loads(line) for line in (D / f"synthetic_{tree}.jsonl").open()] for tree in ("base", "branch")}
kinds = list(dict.fromkeys(r["kind"] for r in rows["base"]))
print("| servers | cases | 98a3949 refined | 98a3949 saturated | branch refined | branch saturated (default) |")
print("|---|---|---|---|---|---|")


def picked(r, kind):
    return r["kind"] == kind if kind in kinds else r["kind"] != "paced" if kind == "all but paced" else True


for kind in kinds + ["all but paced", "all"]:
    def pick(r, kind=kind):
        return picked(r, kind)
    b = [r for r in rows["base"] if pick(r)]
    n = [r for r in rows["branch"] if pick(r)]
    cells = []
    for rs, name in ((b, "refined"), (b, "saturated"), (n, "refined"), (n, "saturated")):
        runs = sum(r[f"{name}_runs"] for r in rs)
        within = sum(r[f"{name}_within"] for r in rs)
        cells.append(f"{runs} ({runs / len(rs):.2f}){'' if within == len(rs) else f', {len(rs) - within} not within'}")
    print(f"| {kind} | {len(b)} | " + " | ".join(cells) + " |")
