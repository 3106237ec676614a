#!/usr/bin/env python3
"""Measurements of checkpoints at scale (the KVS with the Tiny data set; server sized so nothing is evicted).
See drivers/cli/checkpoint_study.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.checkpoint_study import main

if __name__ == "__main__":
    raise SystemExit(main())
