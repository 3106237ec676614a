#!/usr/bin/env python3
"""How much the partitioned schedule moves a server run's statistics against the global schedule.
See drivers/cli/partition_difference.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.partition_difference import main

if __name__ == "__main__":
    raise SystemExit(main())
