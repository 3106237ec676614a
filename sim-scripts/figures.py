#!/usr/bin/env python3
"""The paper's sensitivity and end-to-end studies: run their sweeps and draw their figures (`make figures`).
See drivers/cli/figures.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.figures import main

if __name__ == "__main__":
    raise SystemExit(main())
