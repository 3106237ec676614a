#!/usr/bin/env python3
"""Simulator speed and memory on the whole billion-RPS server (`make bench-server`): 1 ms of simulated time of the
See drivers/cli/bench_server.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.bench_server import main

if __name__ == "__main__":
    raise SystemExit(main())
