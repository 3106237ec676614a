#!/usr/bin/env python3
"""Speed of the engine against qemu-riscv64 on the same binary, functional and detailed (`make bench`).
See drivers/cli/bench.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.bench import run_all

if __name__ == "__main__":
    raise SystemExit(run_all())
