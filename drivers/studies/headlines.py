"""One table of every headline ratio at the reduced conditions beside the paper's (issue 28 item 6): each socket
study's CSV from a reduced run (`figures --reduced`: the 4-core share with the studies' own small data sets) and from
a run at the paper's conditions (the full platform; the data set each CSV's `conditions` column names), their
headline ratios side by side, and the full run's over the reduced one. A ratio whose points one run lacks (a run of
the key points only) is n/a there, never left out silently.

Further columns (`--column LABEL=DIR[,DIR...]`) set other full-platform runs beside them, such as the key points at
the paper's 192 Mi items kept in their own folders (results/figures/<study>_192Mi_sNN/): each DIR holds
`<study>/<study>.csv` or `<study>.csv` itself; a study found in none of a column's folders is n/a there.

    python -m drivers.studies.headlines REDUCED_DIR FULL_DIR [OUT.md] [--column LABEL=DIR[,DIR...] ...]
"""

from __future__ import annotations

import argparse
import pathlib

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


def _study_csv(folders: list[pathlib.Path], study: str) -> pathlib.Path | None:
    """The first of `folders` that holds the study's CSV, as a figures folder (<study>/<study>.csv) or as the
    study's own folder (<study>.csv)."""
    for d in folders:
        for path in (d / study / f"{study}.csv", d / f"{study}.csv"):
            if path.is_file():
                return path
    return None


def table(reduced_dir: pathlib.Path, full_dir: pathlib.Path,
          columns: dict[str, list[pathlib.Path]] | None = None) -> tuple[pd.DataFrame, dict[str, tuple[str, ...]]]:
    """Rows (study, ratio, reduced, full, full / reduced, then each further column and its ratio to the reduced
    value) for every study with a CSV in both the reduced and the full folder, and each study's conditions (reduced,
    full, then each further column's, '' where that column has no run of the study)."""
    columns = columns or {}
    rows, conditions = [], {}
    for study, headline in HEADLINES.items():
        paths = [_study_csv([pathlib.Path(d)], study) for d in (reduced_dir, full_dir)]
        if not all(paths):
            continue
        reduced, full = (pd.read_csv(p) for p in paths)
        extra = {label: _study_csv([pathlib.Path(d) for d in dirs], study) for label, dirs in columns.items()}
        extra_csv = {label: pd.read_csv(p) for label, p in extra.items() if p is not None}
        conditions[study] = (_conditions(reduced), _conditions(full),
                             *(_conditions(extra_csv[label]) if label in extra_csv else "" for label in columns))
        r, f = headline(reduced), headline(full)
        e = {label: headline(df) for label, df in extra_csv.items()}
        for name in r:
            rv, fv = r[name], f.get(name, float("nan"))
            row = {"study": study, "ratio": name, "reduced": rv, "paper's conditions": fv,
                   "full / reduced": _over(fv, rv)}
            for label in columns:
                v = e.get(label, {}).get(name, float("nan"))
                row[label] = v
                row[f"{label} / reduced"] = _over(v, rv)
            rows.append(row)
    return pd.DataFrame(rows), conditions


def _over(value: float, reduced: float) -> float:
    return value / reduced if reduced == reduced and value == value and reduced else float("nan")


def write(reduced_dir: pathlib.Path, full_dir: pathlib.Path, out: pathlib.Path,
          columns: dict[str, list[pathlib.Path]] | None = None) -> pathlib.Path:
    columns = columns or {}
    df, conditions = table(reduced_dir, full_dir, columns)
    lines = ["# Headline ratios: reduced conditions beside the paper's", "", __doc__.split("\n\n")[0].replace("\n", " "),
             "", "## Conditions", ""]
    for s, (r, f, *more) in conditions.items():
        lines.append(f"- {s}: reduced = {r}; full = {f}" +
                     "".join(f"; {label} = {c or 'not run'}" for label, c in zip(columns, more)))
    lines += ["", "## Ratios", "", common.markdown_table(df) if len(df) else "(no study has both runs)", ""]
    out.write_text("\n".join(lines))
    return out


def _column(text: str) -> tuple[str, list[pathlib.Path]]:
    label, sep, dirs = text.partition("=")
    if not sep or not label or not dirs:
        raise argparse.ArgumentTypeError(f"--column {text!r}: expected LABEL=DIR[,DIR...]")
    folders = [pathlib.Path(d) for d in dirs.split(",")]
    if missing := [str(d) for d in folders if not d.is_dir()]:
        raise argparse.ArgumentTypeError(f"--column {text!r}: no such folder: {', '.join(missing)}")
    return label, folders


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m drivers.studies.headlines", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reduced", type=pathlib.Path)
    ap.add_argument("full", type=pathlib.Path)
    ap.add_argument("out", type=pathlib.Path, nargs="?")
    ap.add_argument("--column", type=_column, action="append", default=[], metavar="LABEL=DIR[,DIR...]")
    args = ap.parse_args(argv)
    columns = dict(args.column)
    if len(columns) != len(args.column):
        ap.error("--column: each label once")
    print(write(args.reduced, args.full, args.out or args.full / "reduced_vs_full.md", columns))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
