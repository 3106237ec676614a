#!/usr/bin/env python3
"""Where a saved one-port Xeon run's cycles go: empty polls against polls with frames, and their serialising stalls.
See drivers/cli/xeon_poll_cycles.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.xeon_poll_cycles import main

if __name__ == "__main__":
    raise SystemExit(main())
