#!/usr/bin/env python3
"""Where a saved Xeon run's DRAM reads come from, per measured request, beside MICA's design and the published figure.
See drivers/cli/xeon_read_lines.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.xeon_read_lines import main

if __name__ == "__main__":
    raise SystemExit(main())
