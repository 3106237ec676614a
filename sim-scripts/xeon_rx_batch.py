#!/usr/bin/env python3
"""What sets a saved one-port Xeon run's RX batch: batch sizes, the NIC's write-back groups, a core's time a batch.
See drivers/cli/xeon_rx_batch.py (`--help`).

A thin wrapper: the code is the installed kvsim package's (`make engine` installs it into .venv).
"""

from drivers.cli.xeon_rx_batch import main

if __name__ == "__main__":
    raise SystemExit(main())
