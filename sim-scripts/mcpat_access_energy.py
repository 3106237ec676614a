#!/usr/bin/env python3
"""McPAT's energy per counted event of one unit beside the power model's (raise one statistic at a time).
See drivers/cli/mcpat_access_energy.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.mcpat_access_energy import main

if __name__ == "__main__":
    raise SystemExit(main())
