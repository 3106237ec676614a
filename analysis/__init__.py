"""Turning run outputs into pandas tables, plots and reports."""

from .results import load_run, load_runs

__all__ = ["load_run", "load_runs"]
