#!/usr/bin/env python3
"""The paper's sensitivity and end-to-end studies: run their sweeps and draw their figures (`make figures`).

    sim-scripts/figures.py                       # every study at the paper's conditions (issue 28): the full
                                                 # platform (the 60-core socket; the whole servers), the paper's
                                                 # data set (192 Mi tiny items, loaded once into a checkpoint that
                                                 # every point and probe restores), steady-state windows, and the
                                                 # points that carry each study's conclusion (studies that take
                                                 # Conditions; the others run their full-scale sweeps)
    sim-scripts/figures.py --full                # every point of every design space at those conditions (slow)
    sim-scripts/figures.py --items 16777216      # a smaller data set, explicitly: every output says it is reduced
    sim-scripts/figures.py --reduced             # the reduced share: 4 cores with per-core resources in proportion
                                                 # and the studies' own small data sets (every output says so)
    sim-scripts/figures.py --study llc           # one study
    sim-scripts/figures.py --study dense         # the dense 3D-stacked servers (Mercury, Iridium, KeyVault): one
                                                 # stack's capacity per point, aggregated into its 1.5U server
    sim-scripts/figures.py --draw-only           # draw from the points stored so far, running none
    sim-scripts/figures.py --study llc --only caches.llc.size=47185920   # run only the points with that value
                                                 # (the draw shows every point stored so far)
    sim-scripts/figures.py --study llc --sweep llc-60c-16Mi-key          # run only that sweep of the study (the
                                                 # others are drawn from what they have stored)
    sim-scripts/figures.py --study scaling --sweep e2e-1s-60c-192Mi-key --checkpoint DIR   # a load made
                                                 # elsewhere (load_memory.py) instead of loading the data set
                                                 # (--binary PATH: the guest binary it was taken with, if this
                                                 # checkout's build differs)
    sim-scripts/figures.py --study end_to_end --clean-journals [--dry-run]   # run nothing: remove (list) the
                                                 # journals in the studies' stores that no point of their sweeps
                                                 # needs (another engine build's or configuration's keys; points
                                                 # stored ok); give the options the sweeps run with (--binary ...)
    sim-scripts/figures.py --reduced --compare   # also three points of each study on the full socket: the error
                                                 # of the reduced share (--compare llc batching: those studies)

Each study writes its plot (PNG), CSV and Markdown report to results/figures/<study>/; the sweep stores are under
results/sweeps/ and resume, so a second run only draws (or finishes what was stopped). results/figures/summary.md
lists the sweeps with their host time and points per host hour (summary-<studies>.md for a run of some studies).
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import time

import pandas as pd
from rich.console import Console

from analysis.sweeps import load_sweep, write_parquet
from drivers import studies
from drivers import sweep as sweeps
from drivers.studies import common
from models.params import ParamError

from .names import one_of

ROOT = pathlib.Path(__file__).resolve().parents[2]


def with_binary(sw, binary: str):
    """The sweep with every point running the guest binary `binary` (its configuration's workload.binary, so the
    points' keys and records name it) instead of this checkout's build."""
    from drivers.sweep.space import List, Product

    own = pathlib.Path(sw.base.build().workload.binary).name
    if pathlib.Path(binary).name != own:
        # The configuration knows the KVS server by its file name (models.system KVS_BINARY: the log and index
        # sized from the data set): a copy under another name would run with other sizes.
        raise ParamError(f"--binary {binary}: name the file {own!r}, as the sweep's own binary is named")
    return dataclasses.replace(sw, space=Product(sw.space, List([{"workload.binary": binary}])))


def run_sweep(sw, args, console, summary: list[dict]) -> pd.DataFrame:
    if getattr(args, "binary", None) and "workload.binary" not in sw.space.paths():
        sw = with_binary(sw, args.binary)
    if args.sweep and sw.name not in args.sweep and not args.draw_only:     # not named: draw what it has stored
        return run_sweep(sw, argparse.Namespace(**{**vars(args), "draw_only": True}), console, summary)
    # The draw shows every point of the whole sweep stored so far, whatever this run (or the last) ran: a run of
    # some points (--only) lists only those in the store's manifest.
    every_key = [p.key for p in sw.resolve()]
    if args.only and not args.draw_only:
        restricted = only_points(sw, args.only)
        if restricted is None:         # none of this sweep's points is named: draw what it has stored
            return run_sweep(sw, argparse.Namespace(**{**vars(args), "draw_only": True}), console, summary)
        sw = restricted
    if args.draw_only:
        # The points stored so far (a sweep stopped part way, or run elsewhere), without running any.
        store = sweeps.store_dir(sw.name, pathlib.Path(args.store) / sw.name if args.store else None)
        table = load_sweep(store, keys=every_key) if (store / "sweep.json").exists() else pd.DataFrame()
        if table.empty:
            # No store yet, or one whose points are all another sweep's (a run stopped before its first point
            # ended, or points of another engine build): the studies draw an empty table as "(no points)".
            console.print(f"sweep [bold]{sw.name}[/]: nothing stored yet")
            return pd.DataFrame({"status": pd.Series([], dtype=str)})
        console.print(f"sweep [bold]{sw.name}[/]: drawing the {len(table)} point(s) stored")
        return table
    if getattr(args, "checkpoint", None):
        # A checkpoint made elsewhere (sweeps.check_existing refuses one of another data set before any run).
        sw = dataclasses.replace(sw, restore_from=args.checkpoint)
    elif sw.share_checkpoint and not sw.checkpoints:
        # One folder of shared checkpoints for every study: a data set loaded by one sweep is restored by the next.
        root = pathlib.Path(args.store) if args.store else sweeps.DEFAULT_STORE
        sw = dataclasses.replace(sw, checkpoints=str(root))          # root/checkpoints/<data set key>
    report = sweeps.run(sw, jobs=args.jobs, scheduler=args.scheduler, progress=not args.no_progress,
                        store=pathlib.Path(args.store) / sw.name if args.store else None)
    table = load_sweep(report.store, keys=every_key)
    write_parquet(table, report.store / "table.parquet")
    table.to_csv(report.store / "table.csv", index=False)
    point_seconds = float(table.host_seconds.sum())
    summary.append({"sweep": sw.name, "points": report.points, "run now": report.ran, "failed": report.failed,
                    "wall s (this run)": round(report.host_seconds, 1),
                    "sum of point host s": round(point_seconds, 1),
                    "points per host hour (1 worker)": round(3600 * len(table) / point_seconds, 1)
                    if point_seconds else float("nan")})
    console.print(f"sweep [bold]{sw.name}[/]: {report.points} points ({report.skipped} stored before, "
                  f"{report.ran} run, {report.failed} failed) in {report.host_seconds:.0f} s")
    return table


def study_kwargs(study, conditions: common.Conditions, reduced: bool) -> dict:
    """A study's sweeps() and make() arguments: its Conditions, or (a study without them) its full-scale sweeps
    unless --reduced."""
    return {"conditions": conditions} if studies.takes_conditions(study) else {"full": not reduced}


def parse_only(texts: list[str]) -> dict[str, tuple[str, ...]]:
    """--only PATH=VALUE options as {path: value texts}; several values of one path select the points with any of
    them (each once kept only the last, silently); a malformed one is an error before any work."""
    out: dict[str, tuple[str, ...]] = {}
    for text in texts:
        path, eq, value = text.partition("=")
        if not eq or not path or not value:
            raise ParamError(f"--only {text!r}: give PATH=VALUE (a swept parameter and one of its values)")
        out[path] = out.get(path, ()) + (value,)
    return out


def only_points(sw, only: dict[str, str | tuple[str, ...]]):
    """The sweep restricted to its points whose swept parameters have the values given, any of them where a path has
    several (compared as text, so `caches.llc.size=47185920` matches 47185920), or None when it has no such point; a
    path the sweep does not vary is an error. The points keep their keys, so a later run of the whole sweep finds
    them stored."""
    from drivers.sweep.space import List

    paths = set(sw.space.paths())
    unknown = [p for p in only if p not in paths]
    if unknown:
        raise ParamError(f"--only {', '.join(unknown)}: sweep {sw.name!r} varies {', '.join(sorted(paths))}")
    wanted = {path: (values,) if isinstance(values, str) else tuple(values) for path, values in only.items()}
    keep = [params for params in sw.space.points()
            if all(str(params.get(path)) in values for path, values in wanted.items())]
    return dataclasses.replace(sw, space=List(keep)) if keep else None


def check_only(sweeps: list, only: dict[str, str | tuple[str, ...]]) -> None:
    """Before any work: every sweep varies the paths named, and at least one point of them has the values."""
    if not any(only_points(sw, only) is not None for sw in sweeps):
        raise ParamError(f"--only {only}: no point of {', '.join(sw.name for sw in sweeps)} has those values")


def clean_journals(names: list[str], conditions, args, console) -> int:
    """--clean-journals: every sweep of the studies named, as a run with these options would plan it (its points'
    keys, with --binary's), its store as run_sweep's; the journals none of them needs are removed (listed)."""
    plan = []
    for name in names:
        study = studies.get(name)
        for sw in study.sweeps(**study_kwargs(study, conditions, args.reduced)):
            if args.binary and "workload.binary" not in sw.space.paths():
                sw = with_binary(sw, args.binary)
            plan.append((sw, sweeps.store_dir(sw.name, pathlib.Path(args.store) / sw.name if args.store else None)))
    try:
        sweeps.clean_sweep_journals(plan, dry_run=args.dry_run, say=console.print)
    except ParamError as err:
        console.print(f"[bold red]error:[/] {err}")
        return 2
    return 0


def compare(study, reduced: pd.DataFrame, full: pd.DataFrame) -> pd.DataFrame:
    """Each full-socket point beside the reduced point with the same varied parameters: per-core throughput, LLC
    MPKI, p95 latency, and the reduced scale's error."""
    # Measured requests scale with the cores (a run's length per core is what is kept), so they do not identify a point.
    params = [c for c in full.columns if c.startswith("param.") and c != "param.client.requests"]
    rows = []
    for _, frow in full[full.status == "ok"].iterrows():
        match = reduced[(reduced.status == "ok")]
        for c in params:
            match = match[match[c] == frow[c]] if c in match else match.iloc[0:0]
        if match.empty:
            continue
        f, r = common.figures_of(frow), common.figures_of(match.iloc[0])
        row = {c[6:]: frow[c] for c in params}
        for name, fv, rv in (("throughput per core (M req/s)", f["throughput_mrps"] / f["cores"],
                              r["throughput_mrps"] / r["cores"]), ("LLC MPKI", f["llc_mpki"], r["llc_mpki"]),
                             ("p95 (us)", f["p95_us"], r["p95_us"])):
            row[f"{name} full"] = fv
            row[f"{name} reduced"] = rv
            row[f"{name} error"] = f"{(rv - fv) / fv * 100:+.1f}%" if fv else "n/a"
        rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--study", action="append", type=one_of("study", studies.ALL),
                        help=f"only these studies ({', '.join(studies.ALL)})")
    parser.add_argument("--full", action="store_true", help="every point of each design space (default: the points "
                        "that carry each study's conclusion), at the paper's conditions")
    parser.add_argument("--reduced", action="store_true", help="the reduced share of the socket (4 cores) and the "
                        "studies' own small data sets, instead of the paper's conditions")
    parser.add_argument("--items", type=int, help=f"tiny items in the data set (default: the paper's "
                        f"{common.PAPER_ITEMS:,}); a smaller one is labelled reduced in every output")
    parser.add_argument("--compare", nargs="*", type=one_of("study", studies.STUDIES), metavar="STUDY",
                        help="also run 3 points of each study (or of the studies named) on the full socket and "
                        "report the reduced scale's error")
    parser.add_argument("--jobs", type=int, help="local worker processes (default: the host's CPU count)")
    parser.add_argument("--scheduler", help="a Dask scheduler address")
    parser.add_argument("--store", help="root of the sweep stores (default results/sweeps)")
    parser.add_argument("--outdir", help="where figures go (default results/figures; with --reduced "
                        "results/figures-reduced, so the two sets stand side by side)")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--only", action="append", default=[], metavar="PATH=VALUE",
                        help="run only the points whose swept parameter PATH has VALUE (repeatable: values of one "
                        "PATH add points, of several PATHs narrow them); the draw shows every point stored")
    parser.add_argument("--sweep", action="append", default=[], metavar="NAME",
                        help="run only the sweeps of that name (repeatable; the studies' other sweeps are drawn from "
                        "the points they have stored)")
    parser.add_argument("--checkpoint", metavar="DIR",
                        help="every point run restores this existing checkpoint (a load made elsewhere, e.g. by "
                        "load_memory.py) instead of loading its data set; refused before any run when it holds "
                        "another data set (use with --sweep for one data set)")
    parser.add_argument("--binary", metavar="PATH",
                        help="the guest binary every point runs (default: this checkout's build), e.g. a copy of "
                        "the one a --checkpoint was taken with (a checkpoint restores only with the same bytes)")
    parser.add_argument("--draw-only", action="store_true",
                        help="run no point: draw from the points stored so far (a sweep stopped part way)")
    parser.add_argument("--clean-journals", action="store_true",
                        help="run and draw nothing: remove the journals in the studies' stores whose key no point of "
                        "their sweeps (at these options) plans, and those of points stored ok, printing each")
    parser.add_argument("--dry-run", action="store_true", help="with --clean-journals: list, remove nothing")
    args = parser.parse_args(argv)
    if args.dry_run and not args.clean_journals:
        parser.error("--dry-run goes with --clean-journals")
    console = Console(stderr=True)
    outroot = pathlib.Path(args.outdir) if args.outdir else ROOT / "results" / ("figures-reduced" if args.reduced
                                                                                else "figures")
    summary: list[dict] = []
    started = time.time()
    try:
        args.only = parse_only(args.only)
    except ParamError as err:
        console.print(f"[bold red]error:[/] {err}")
        return 2
    if args.reduced and (args.full or args.items):
        parser.error("--reduced takes the studies' own data sets on a 4-core share: not with --full or --items")
    conditions = common.Conditions(reduced=args.reduced, items=None if args.reduced else
                                   (args.items or common.PAPER_ITEMS), all_points=args.full)
    names = args.study or studies.ALL
    if not args.reduced and not args.draw_only and not args.checkpoint and any(studies.takes_conditions(studies.get(n)) for n in names):
        try:                               # before any work: the data set must fit
            common.check_fits(conditions.items, common.FULL_CORES)
        except ParamError as err:
            console.print(f"[bold red]error:[/] {err}")
            return 2
    if args.binary and not pathlib.Path(args.binary).is_file():
        console.print(f"[bold red]error:[/] --binary {args.binary}: no such file")
        return 2
    if args.sweep:
        known = {sw.name for name in names for sw in studies.get(name).sweeps(
            **study_kwargs(studies.get(name), conditions, args.reduced))}
        if unknown := sorted(set(args.sweep) - known):
            console.print(f"[bold red]error:[/] --sweep {', '.join(unknown)}: the studies run have the sweeps "
                          f"{', '.join(sorted(known))}")
            return 2
    if args.only and not args.draw_only:
        try:                               # before any work: the sweeps have points with those values
            check_only([sw for name in names for sw in studies.get(name).sweeps(
                **study_kwargs(studies.get(name), conditions, args.reduced))], args.only)
        except ParamError as err:
            console.print(f"[bold red]error:[/] {err}")
            return 2
    if args.clean_journals:
        return clean_journals(names, conditions, args, console)
    for name in names:
        study = studies.get(name)
        kwargs = study_kwargs(study, conditions, args.reduced)
        try:
            tables = {sw.name: run_sweep(sw, args, console, summary) for sw in study.sweeps(**kwargs)}
            for table in tables.values():     # where the shared loads' records are, for the reports that cite them
                table.attrs["checkpoint_root"] = str(pathlib.Path(args.store) if args.store else sweeps.DEFAULT_STORE)
        except ParamError as err:          # a sweep refused before its points ran (e.g. --checkpoint's data set)
            console.print(f"[bold red]error:[/] {err}")
            return 2
        # A store with no point yet (a sweep stopped before its first point ended) has no status column.
        if args.draw_only and not any("status" in t and (t.status == "ok").any() for t in tables.values()):
            console.print(f"study [bold]{name}[/]: no point stored at these conditions, nothing to draw")
            continue
        outdir = outroot / name
        outdir.mkdir(parents=True, exist_ok=True)
        paths = study.make(tables, outdir, **kwargs)
        if args.compare is not None and (not args.compare or name in args.compare) and args.reduced \
                and hasattr(study, "compare_sweep"):
            sw = study.compare_sweep()
            full = run_sweep(sw, args, console, summary)
            reduced = pd.concat(list(tables.values()), ignore_index=True)
            cmp = compare(study, reduced, full)
            cmp.to_csv(outdir / f"{name}_reduced_vs_full.csv", index=False)
            with (outdir / f"{name}.md").open("a") as f:
                f.write(f"\n## Reduced ({common.REDUCED_CORES} cores) vs full ({common.FULL_CORES} cores)\n\n"
                        + common.markdown_table(cmp) + "\n")
            paths.append(outdir / f"{name}_reduced_vs_full.csv")
        console.print(f"study [bold]{name}[/]: " + ", ".join(str(p) for p in paths))
    outroot.mkdir(parents=True, exist_ok=True)
    if not args.reduced and (ROOT / "results" / "figures-reduced").is_dir():
        # The headline ratios beside the reduced run's.
        from drivers.studies import headlines

        written = headlines.write(ROOT / "results" / "figures-reduced", outroot, outroot / "reduced_vs_full.md")
        console.print(f"headline ratios: {written}")
    if not args.reduced:
        # Every headline ratio, reduced beside full, with the full points measured so far (their intervals, probes
        # and host time) and what the rest would cost.
        from drivers.studies import headline_table

        written = headline_table.write(outroot / "headline.md", figures=outroot,
                                       sweeps_root=pathlib.Path(args.store) if args.store else None)
        console.print(f"headline table: {written}")
    # A run of some studies only keeps the summary of a whole run (summary.md, curated) and writes its own.
    summary_path = outroot / ("summary.md" if not args.study else f"summary-{'-'.join(args.study)}.md")
    summary_path.write_text(
        "# Sweeps behind the figures\n\n" + common.markdown_table(pd.DataFrame(summary)) +
        f"\n\nTotal wall time of this run: {time.time() - started:.0f} s.\n")
    console.print(f"all done in {time.time() - started:.0f} s; {summary_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
