#!/usr/bin/env python3
"""Run one simulation from a config in configs/ and print its summary.
See drivers/cli/run.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.run import main

if __name__ == "__main__":
    raise SystemExit(main())
