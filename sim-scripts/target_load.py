#!/usr/bin/env python3
"""The billion-RPS target socket (configs/brps_target_socket.py, 60 cores) at its highest sustained load: the
See drivers/cli/target_load.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.target_load import main

if __name__ == "__main__":
    raise SystemExit(main())
