#!/usr/bin/env python3
"""What each of the Xeon's modelled mechanisms moves: the validation rows (validate_xeon.py's figures, open loop at
line rate) with the mechanisms of issue 23 turned back one at a time, newest first.

    sim-scripts/xeon_layers.py [--cores 1,12] [--items N] [--requests-per-core N]

Layers (each row adds one to the one above it):
  pcie      the PCIe protocol model alone (the other three turned back)
  nic       + the X520-QDA1 as built (two 82599 controllers per card, each with its own PCIe 2.0 x8 link; turned
            back: one PCIe 2.0 x8 link per card)
  huge      + hugepage allocations mapped with 2 MB pages (turned back: the mmap area above 64 GiB, 'area')
  core      + Ivy Bridge's ports (stores' addresses on the load ports, one branch unit): the platform as committed

The PCIe protocol model cannot be turned back (its old one-number overhead is gone): the row before it is the
previous commit's `validate_xeon.py` output, which the report quotes with its command.
"""

from __future__ import annotations

import argparse
import sys
import time

from configs import xeon_e5_2697v2_socket as xeon
from drivers import capacity
from drivers.cli.validate_xeon import METRICS, PUBLISHED, figures, fmt, ports_for
from models.sim import simulate

# The mmap area the configuration mapped with 2 MB pages before the engine mapped the allocations themselves.
OLD_HUGE_AREA = (0x10_0000_0000, 0x20_0000_0000)
LAYERS = ("pcie", "nic", "huge", "core")
SHOWN = ("throughput_mrps", "ipc", "l1d_miss_rate", "l2_miss_rate", "net_rx_gbps", "net_tx_gbps", "p95_us")


def turn_back(s, upto: str, ports: int):
    """The system `s` with every layer after `upto` turned back."""
    later = LAYERS[LAYERS.index(upto) + 1:]
    if "nic" in later:
        cards = [ports // xeon.CARDS_PER_SOCKET + (k < ports % xeon.CARDS_PER_SOCKET)
                 for k in range(min(xeon.CARDS_PER_SOCKET, ports))]
        s.nics = [xeon.nic(n) for n in cards]
        s.noc = xeon.noc(nics=len(cards))
    if "huge" in later:
        s.core.mmu.huge_pages = "area"
        s.core.mmu.huge_start, s.core.mmu.huge_end = OLD_HUGE_AREA
    if "core" in later:
        s.core.store_address_on_load_ports = False
        s.core.branch_units = 0
    return s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", default="1,12", help="core counts of one socket (comma separated, up to 12)")
    parser.add_argument("--items", type=int, default=1 << 16, help="items in the data set")
    parser.add_argument("--requests-per-core", type=int, default=3000, help="measured requests per core")
    opts = parser.parse_args(argv)
    started = time.perf_counter()
    for cores in [int(c) for c in opts.cores.split(",") if c]:
        ports = ports_for(cores)

        def make(rate, layer, cores=cores, ports=ports):
            s = xeon.system(cores=cores, ports=ports, items=opts.items, requests=opts.requests_per_core * cores,
                            offered_mpps=rate)
            return turn_back(s, layer, ports)

        line = capacity.line_rate_mpps(make(1.0, "core"))
        pub = PUBLISHED.get(cores, {}) if cores != 12 else PUBLISHED[12]
        print(f"\n== {cores} core(s), {ports} x 10 GbE, {opts.items} items, open loop at {line:.2f} M frames/s/port")
        print(f"   {'layer':<8}" + "".join(f"{k:>16}" for k in SHOWN))
        for layer in LAYERS:
            t = time.perf_counter()
            fig = figures(simulate(make(line, layer)), cores)
            print(f"   {layer:<8}" + "".join(f"{fmt(fig[k]):>16}" for k in SHOWN)
                  + f"   ({time.perf_counter() - t:.0f} s host)", flush=True)
        print(f"   {'measured':<8}" + "".join(f"{fmt(pub.get(k)):>16}" for k in SHOWN))
    labels = dict(METRICS)
    print("\ncolumns: " + "; ".join(f"{k} = {labels[k]}" for k in SHOWN))
    print(f"total host time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
