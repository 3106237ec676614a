#!/usr/bin/env python3
"""The power model against McPAT 1.3 on its sweep (../shared/data/mcpat/sweep): every point, in sample and under
See drivers/cli/mcpat_compare.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.mcpat_compare import main

if __name__ == "__main__":
    raise SystemExit(main())
