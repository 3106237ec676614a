"""One table of every headline ratio at the reduced conditions beside the paper's (issue 28 item 6): each socket
study's CSV from a reduced run (`figures --reduced`: the 4-core share with the studies' own small data sets) and from
a run at the paper's conditions (the full platform; the data set each CSV's `conditions` column names), their
headline ratios side by side, and the full run's over the reduced one. A ratio whose points one run lacks (a run of
the key points only) is n/a there, never left out silently.

    python -m drivers.studies.headlines REDUCED_DIR FULL_DIR [OUT.md]
"""

from __future__ import annotations

import pathlib
import sys

import pandas as pd

from . import batching, common, core_weight, llc, prefetch

HEADLINES = {
    "core_weight": core_weight.headline,
    "llc": llc.headline,
    "batching": batching.headline,
    "prefetch": lambda df: prefetch.headline(df, by_items=False),
}


def _conditions(df: pd.DataFrame) -> str:
    if "conditions" in df and len(df):
        return str(df["conditions"].iloc[0])
    return "reduced: a 4-core share with the study's own data set (written before the conditions column)"


def table(reduced_dir: pathlib.Path, full_dir: pathlib.Path) -> tuple[pd.DataFrame, dict[str, tuple[str, str]]]:
    """Rows (study, ratio, reduced, full, full / reduced) for every study with a CSV in both folders, and each
    study's two conditions."""
    rows, conditions = [], {}
    for study, headline in HEADLINES.items():
        paths = [pathlib.Path(d) / study / f"{study}.csv" for d in (reduced_dir, full_dir)]
        if not all(p.is_file() for p in paths):
            continue
        reduced, full = (pd.read_csv(p) for p in paths)
        conditions[study] = (_conditions(reduced), _conditions(full))
        r, f = headline(reduced), headline(full)
        for name in r:
            rv, fv = r[name], f.get(name, float("nan"))
            rows.append({"study": study, "ratio": name, "reduced": rv, "paper's conditions": fv,
                         "full / reduced": fv / rv if rv == rv and fv == fv and rv else float("nan")})
    return pd.DataFrame(rows), conditions


def write(reduced_dir: pathlib.Path, full_dir: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    df, conditions = table(reduced_dir, full_dir)
    lines = ["# Headline ratios: reduced conditions beside the paper's", "", __doc__.split("\n\n")[0].replace("\n", " "),
             "", "## Conditions", ""]
    lines += [f"- {s}: reduced = {r}; full = {f}" for s, (r, f) in conditions.items()]
    lines += ["", "## Ratios", "", common.markdown_table(df) if len(df) else "(no study has both runs)", ""]
    out.write_text("\n".join(lines))
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    out = pathlib.Path(args[2]) if len(args) == 3 else pathlib.Path(args[1]) / "reduced_vs_full.md"
    print(write(pathlib.Path(args[0]), pathlib.Path(args[1]), out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
