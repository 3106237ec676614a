#!/usr/bin/env python3
"""What each of the Xeon model's mechanisms moves on the validation rows.
See drivers/cli/xeon_layers.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.xeon_layers import main

if __name__ == "__main__":
    raise SystemExit(main())
