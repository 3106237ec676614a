#!/usr/bin/env python3
"""Per-core DVFS and turbo on a skewed load (drivers/dvfs.py): a run with every core at 2.5 GHz, then the
See drivers/cli/dvfs_study.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.dvfs_study import main

if __name__ == "__main__":
    raise SystemExit(main())
