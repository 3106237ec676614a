#!/usr/bin/env python3
"""Sampling's validation table: full detailed runs against sampled ones. See drivers/cli/sampling_table.py.

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.sampling_table import main

if __name__ == "__main__":
    raise SystemExit(main())
