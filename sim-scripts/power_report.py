#!/usr/bin/env python3
"""Estimated die area, TDP-class peak power and the power at each operating point, for one socket of the
See drivers/cli/power_report.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.power_report import main

if __name__ == "__main__":
    raise SystemExit(main())
