#!/usr/bin/env python3
"""One partition of MICA's log replayed: re-appends and GET misses a request. See drivers/cli/mica_log_replay.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.mica_log_replay import main

if __name__ == "__main__":
    raise SystemExit(main())
