#!/usr/bin/env python3
"""The STANDARD workload on one socket of the Xeon E5-2697 v2 baseline, next to the published measurements.
See drivers/cli/validate_xeon.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.validate_xeon import main

if __name__ == "__main__":
    raise SystemExit(main())
