#!/usr/bin/env python3
"""Where a Xeon run's DRAM writes come from, per measured request: the lines the memory channels wrote, split by whose
data each write-back carried, beside the I/O footprint DDIO has to hold and the published figure.

    sim-scripts/xeon_write_lines.py DIR [DIR ...]     (each DIR a point validate_xeon.py --save kept: stats.json)

No run: the saved statistics only. Every figure is a count of the run's over its measured requests (client.requests),
summed over every socket. The sources, as the model counts them (models/timing/src/mem/dma.rs, count_llc_eviction;
every dirty line the LLC drops is counted once, by whose data it carries):
  * core lines: lines no I/O agent wrote (MICA's log and index, the stacks, the driver's state): the LLC's dirty
    victims, and the dirty private copies an inclusive LLC's eviction back-invalidated;
  * core data in DMA-written lines: a packet buffer or descriptor line a core wrote after the NIC (a response built
    in place, a re-posted descriptor), evicted before the NIC wrote it again;
  * DMA data: a line the NIC wrote (DDIO: allocated in its ways or updated in place) evicted dirty before any core
    wrote it (with DMA-written lines evicted before any core read them, "leaky DMA", counted beside);
  * DMA writes sent to memory: DDIO off.
The split between the LLC's own dirty victims (llc.writebacks) and dirty private copies the inclusive LLC's
evictions back-invalidated (a clean LLC copy, a dirty L1/L2 one) is the difference of the two counts.

The I/O footprint is what DDIO must keep in the LLC for the NIC's writes to hit: the distinct lines each queue's DMA
touched in the measured phase (descriptors, buffers, the head word; a measured phase that cycles every buffer at
least once holds the whole set), summed over a socket's queues, beside the lines of the DDIO ways (the LLC's bytes x
the DDIO share / 64). A footprint above them makes the NIC's writes allocate and evict its own dirty lines (leaky
DMA, Tootoonchian et al., NSDI 2018; Farshin et al., USENIX ATC 2020); below them, a write that finds its line
updates it in place (DDIO's write update) and nothing of it goes to memory.

The published figure per request is validate_xeon.py's: memory write over throughput, over 64-byte lines (derived,
not published as such).
"""

from __future__ import annotations

import pathlib
import re
import sys

from drivers.cli import xeon_lines
from drivers.cli.validate_xeon import LINE_BYTES
from drivers.cli.xeon_lines import SOCKET, channel_sum, counter_sum, ddio, sockets

QUEUE_LINES = re.compile(r"^system\.nic\d+\.queue\d+\.io_lines$")


def write_lines(s: dict[str, float], config: dict | None = None) -> dict[str, float]:
    """The run's DRAM writes and their sources, per measured request (module docstring); with the run's `config`
    (config.json), its I/O footprint against the DDIO ways too."""
    r = s["client.requests"]
    if not r:
        raise ValueError("the run answered no request: nothing to divide by")
    puts = s["client.puts"]
    dirty = {name: ddio(s, name) for name in ("writebacks_core_lines", "writebacks_core_data_in_dma_lines",
                                               "writebacks_dma_data")}
    llc_victims = counter_sum(s, SOCKET, "llc.writebacks")
    out = {
        "dram_writes": channel_sum(s, "writes") / r,
        "core_lines": dirty["writebacks_core_lines"] / r,
        "core_data_in_dma_lines": dirty["writebacks_core_data_in_dma_lines"] / r,
        "dma_data": dirty["writebacks_dma_data"] / r,
        "dma_to_memory": ddio(s, "writes_to_memory") / r,
        "llc_dirty_victims": llc_victims / r,
        "inclusion_victims": (sum(dirty.values()) - llc_victims) / r,
        "leaky_evictions": ddio(s, "leaky_evictions") / r,
        "dma_write_hits": ddio(s, "write_hits") / r,
        "dma_write_allocs": ddio(s, "write_allocs") / r,
        "dma_lines_displaced": (ddio(s, "dma_lines_displaced_by_cores") + ddio(s, "dma_lines_displaced_by_dma")) / r,
        "sets_per_request": puts / r,
        "dram_writes_per_set": channel_sum(s, "writes") / puts if puts else float("nan"),
    }
    # The check that the split is whole: channel writes no source counter claims (a private write-back that found no
    # LLC copy, a remote socket's copy written home: paths with no counter of their own). About 0 means every DRAM
    # write the run made is one of the sources above, so no writer hides in the model's own accounting. Not exactly
    # 0: the sources count a write-back when the LLC sends it, the channels when their write queue drains it (a
    # write still queued at a phase's edge, or merged into a queued write to its line, counts on one side only).
    out["unattributed"] = out["dram_writes"] - (out["core_lines"] + out["core_data_in_dma_lines"] + out["dma_data"]
                                                + out["dma_to_memory"])
    queues = [v for k, v in s.items() if QUEUE_LINES.match(k)]
    out["io_lines_per_queue"] = sum(queues) / len(queues) if queues else float("nan")
    out["io_lines_per_socket"] = sum(queues) / max(sockets(s), 1) if queues else float("nan")
    out["ddio_lines_per_socket"] = ddio_lines(config) if config else float("nan")
    return out


def ddio_lines(config: dict) -> float:
    """Lines of one socket's DDIO ways, from a saved configuration (config.json: the LLC's size and line, a
    several-socket server's first socket's, whose top-level caches are an unused default; the NICs' DDIO share,
    the first listed NIC's where the system lists them, as every NIC must share it)."""
    caches = config["sockets"][0]["caches"] if config.get("sockets") else config["caches"]
    nic = config["nics"][0] if config.get("nics") else config.get("nic", {})
    if not nic.get("ddio", False):
        return 0.0
    return _bytes(caches["llc"]["size"]) * float(nic["ddio_ways"]) / _bytes(caches["llc"].get("line_size", "64B"))


def _bytes(size: str | int) -> float:
    """'30MiB' -> bytes (a Param.Size as config.json holds it)."""
    if isinstance(size, (int, float)):
        return float(size)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]i?B|B)\s*", str(size))
    if not m:
        raise ValueError(f"not a size: {size!r}")
    scale = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "KB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(2)]
    return float(m.group(1)) * scale


def published_lines(cores: int) -> float | None:
    """The published memory write a request in lines (validate_xeon.py's figures), where one is published."""
    return xeon_lines.published_lines(cores, "mem_write_gbs")


ROWS = [
    ("dram_writes", "DRAM: lines the memory channels wrote"),
    ("core_lines", "  core lines (log, index, stacks, driver)"),
    ("core_data_in_dma_lines", "  core data in DMA-written lines (responses)"),
    ("dma_data", "  the NIC's data (DDIO lines evicted dirty)"),
    ("dma_to_memory", "  DMA writes sent to memory (DDIO off)"),
    ("unattributed", "  none of these (the split's check: about 0)"),
    ("llc_dirty_victims", "of which the LLC's own dirty victims"),
    ("inclusion_victims", "of which dirty L1/L2 copies back-invalidated"),
    ("leaky_evictions", "DMA-written lines evicted before a core read"),
    ("dma_write_hits", "DMA line writes updating the LLC in place"),
    ("dma_write_allocs", "DMA line writes allocating in the DDIO ways"),
    ("dma_lines_displaced", "DMA-written lines the LLC evicted"),
    ("sets_per_request", "SETs a request"),
]


def report(folder: pathlib.Path) -> str:
    s, config = xeon_lines.load_point(folder)
    fig = write_lines(s, config)
    pub = published_lines(xeon_lines.cores(s))
    lines = xeon_lines.header(folder, s)
    for key, label in ROWS:
        lines.append(f"   {label:<48}{fig[key]:9.4f}{fig[key] * LINE_BYTES:9.2f}")
    lines.append(f"   {'DRAM writes a SET (lines)':<48}{fig['dram_writes_per_set']:9.3f}")
    lines.append(f"   {'I/O footprint: distinct DMA lines a queue':<48}{fig['io_lines_per_queue']:9.0f}")
    lines.append(f"   {'  a socket (its queues)':<48}{fig['io_lines_per_socket']:9.0f}"
                 + (f"   DDIO ways hold {fig['ddio_lines_per_socket']:,.0f} lines a socket "
                    f"({fig['io_lines_per_socket'] / fig['ddio_lines_per_socket'] * 100:.1f}%)"
                    if fig['ddio_lines_per_socket'] == fig['ddio_lines_per_socket'] and fig['ddio_lines_per_socket']
                    else ""))
    if pub is not None:
        lines.append(f"   {'published memory write / throughput (derived)':<48}{pub:9.4f}{pub * LINE_BYTES:9.2f}"
                     f"   simulated {(fig['dram_writes'] - pub) / pub * 100:+.1f}%")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return xeon_lines.main(report, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
