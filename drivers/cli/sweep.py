#!/usr/bin/env python3
"""Run a design-space sweep and write its table.

    sim-scripts/sweep.py my_sweep.py                 # a Python file defining SWEEP (or SWEEPS, sweep(), sweeps())
    sim-scripts/sweep.py --study core_weight         # one of the paper's studies (drivers/studies/), reduced scale
    sim-scripts/sweep.py my_sweep.py --scheduler tcp://host:8786   # on a Dask cluster instead of local processes

Finished points are stored under results/sweeps/<name>/ (or --store) as they finish; running the same command again
resumes, skipping them. The table (one row per point: parameters, statistics, power) is written as
results/sweeps/<name>/table.parquet and table.csv.

    sim-scripts/sweep.py my_sweep.py --clean-journals [--dry-run]   # run nothing: remove (list) the journals in
                                                 # the store no point of the sweep needs (other keys: another
                                                 # engine build or configuration; points stored ok), saying each
                                                 # file, its size and why. Give the options the sweep runs with.
"""

from __future__ import annotations

import argparse

from rich.console import Console

from analysis.sweeps import load_sweep, write_parquet
from drivers import studies
from drivers import sweep as sweeps
from models.params import ParamError

from .names import one_of


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", help="a Python file defining the sweep")
    parser.add_argument("--study", type=one_of("study", studies.ALL),
                        help=f"a study of drivers/studies ({', '.join(studies.ALL)})")
    parser.add_argument("--full", action="store_true", help="with --study: the full 60-core socket")
    parser.add_argument("--store", help="the result store (default results/sweeps/<name>)")
    parser.add_argument("--jobs", type=int, help="local worker processes (default: the host's CPU count)")
    parser.add_argument("--scheduler", help="a Dask scheduler address: run the points on that cluster")
    parser.add_argument("--retry-failed", action="store_true", help="run the points that failed before again")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--clean-journals", action="store_true",
                        help="run no point: remove the store's journals of keys the sweep does not plan (and of "
                        "points stored ok), printing each")
    parser.add_argument("--dry-run", action="store_true", help="with --clean-journals: list, remove nothing")
    args = parser.parse_args(argv)
    if args.dry_run and not args.clean_journals:
        parser.error("--dry-run goes with --clean-journals")
    console = Console(stderr=True)
    try:
        if args.study:
            todo = studies.get(args.study).sweeps(full=args.full)
        elif args.file:
            todo = sweeps.load_sweep_module(args.file)
        else:
            parser.error("give a sweep file or --study")
        if args.clean_journals:
            sweeps.clean_sweep_journals([(sw, sweeps.store_dir(sw.name, args.store)) for sw in todo],
                                        dry_run=args.dry_run, say=console.print)
            return 0
        for sw in todo:
            report = sweeps.run(sw, store=args.store, jobs=args.jobs, scheduler=args.scheduler,
                                retry_failed=args.retry_failed, progress=not args.no_progress)
            table = load_sweep(report.store)
            write_parquet(table, report.store / "table.parquet")
            table.to_csv(report.store / "table.csv", index=False)
            console.print(f"sweep [bold]{sw.name}[/]: {report.points} points, {report.skipped} already stored, "
                          f"{report.ran} run, {report.failed} failed, {report.host_seconds:.1f} s"
                          + (f", {report.loads} data set(s) loaded, shared checkpoints "
                             f"{report.checkpoint_bytes / 1e9:.2f} GB on disk" if report.checkpoint_bytes else "")
                          + " -> "
                          f"{report.store / 'table.parquet'}")
    except (ParamError, ValueError, FileNotFoundError) as err:
        console.print(f"[bold red]{type(err).__name__}[/]: {err}")
        return 2
    except KeyboardInterrupt:
        console.print("[bold red]interrupted[/]: finished points are stored; run the same command to resume")
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
