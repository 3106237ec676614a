#!/usr/bin/env python3
"""Where a saved Xeon run's DRAM writes come from, per measured request, beside the I/O footprint DDIO must hold and
the published figure. See drivers/cli/xeon_write_lines.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.xeon_write_lines import main

if __name__ == "__main__":
    raise SystemExit(main())
