#!/usr/bin/env python3
"""Run a design-space sweep and write its table.
See drivers/cli/sweep.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.sweep import main

if __name__ == "__main__":
    raise SystemExit(main())
