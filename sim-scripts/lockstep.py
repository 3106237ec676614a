#!/usr/bin/env python3
"""Lockstep comparison of the engine against qemu-riscv64, instruction by instruction (hart 0).
See drivers/cli/lockstep.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.lockstep import main

if __name__ == "__main__":
    raise SystemExit(main())
