#!/usr/bin/env python3
"""Where the host memory of a loaded data set goes, by owner. See drivers/cli/load_memory.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.load_memory import main

if __name__ == "__main__":
    raise SystemExit(main())
