#!/usr/bin/env python3
"""One steady-state measurement on the target socket. See drivers/cli/steady_window.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.steady_window import main

if __name__ == "__main__":
    raise SystemExit(main())
