#!/usr/bin/env python3
"""Which kind of memory writer the Xeon model lacks, tested against both published write points (4 and 24 cores).
See drivers/cli/xeon_write_offset.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.xeon_write_offset import main

if __name__ == "__main__":
    raise SystemExit(main())
