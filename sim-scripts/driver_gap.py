#!/usr/bin/env python3
"""The LLC study's driver gap, one driver argument at a time (a REDUCED experiment). See drivers/cli/driver_gap.py
(`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.driver_gap import main

if __name__ == "__main__":
    raise SystemExit(main())
