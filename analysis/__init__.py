"""Turning run outputs into pandas tables, plots and reports."""

from .results import load_run, load_runs
from .sweeps import load_sweep, write_parquet

__all__ = ["load_run", "load_runs", "load_sweep", "write_parquet"]
