#!/usr/bin/env python3
"""CREW against EREW on the dual- and quad-socket targets, with and without remote lines in the LLC.
See drivers/cli/remote_lines.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.remote_lines import main

if __name__ == "__main__":
    raise SystemExit(main())
