#!/usr/bin/env python3
"""Probes per point of the capacity search on the synthetic and small real cases, with their answers.
See drivers/cli/capacity_probes.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.capacity_probes import main

if __name__ == "__main__":
    raise SystemExit(main())
