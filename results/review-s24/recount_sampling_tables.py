"""Session 24 (review-s24): session 23's committed sampling tables recounted under the table's rule for intervals
too wide to count (drivers/cli/sampling_table.py `verdict`, TOO_WIDE_SHARE), from the printed values and intervals
alone (no run). The recount mend-s24 reported in results/speed/README.md ("an interval too wide to count") was made
with a one-off script that was not kept; this one reproduces it.

    .venv/bin/python results/review-s24/recount_sampling_tables.py [TABLE.md ...]
"""

from __future__ import annotations

import pathlib
import re
import sys

from drivers.cli import sampling_table as table

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLES = ["sampling_table_s23_steady_seed1.md", "sampling_table_s23_steady_seed2_client2.md",
          "sampling_table_s23_seed1.md", "sampling_table_s23_seed2_client2.md"]
# One metric's cell: "full / sampled [low, high] (error)" and an optional mark (" NO").
CELL = re.compile(r"\s*(-?[\d,.]+|nan|inf) / (-?[\d,.]+|nan|inf) \[(-?[\d,.]+|-?inf|nan), (-?[\d,.]+|-?inf|nan)\]")
METRICS = [m for m, _, _ in table.METRICS]


def number(text: str) -> float:
    return float(text.replace(",", ""))


def recount(path: pathlib.Path) -> dict[str, dict[str, list[str]]]:
    """Per metric, the rows of `path` by verdict (covered, missed, too wide)."""
    out = {m: {table.COVERED: [], table.MISSED: [], table.TOO_WIDE: []} for m in METRICS}
    for line in path.read_text().splitlines():
        cells = line.split("|")
        if len(cells) < 3 + len(METRICS) or not CELL.match(cells[3]):
            continue
        name = cells[1].strip().split(":")[0]
        for metric, cell in zip(METRICS, cells[3:3 + len(METRICS)]):
            full, value, low, high = (number(g) for g in CELL.match(cell).groups())
            out[metric][table.verdict(metric, value, low, high, full)].append(name)
    return out


def main(names: list[str]) -> None:
    for name in names or TABLES:
        path = pathlib.Path(name) if names else ROOT / "results" / "speed" / name
        counts = recount(path)
        cells = []
        for metric in METRICS:
            v = counts[metric]
            wide = f"; too wide: {', '.join(v[table.TOO_WIDE])}" if v[table.TOO_WIDE] else ""
            cells.append(f"{metric} {len(v[table.COVERED])} of {len(v[table.COVERED]) + len(v[table.MISSED])}{wide}")
        print(f"{path.name}: " + " | ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
