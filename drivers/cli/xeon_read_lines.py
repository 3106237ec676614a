#!/usr/bin/env python3
"""Where a Xeon run's DRAM reads come from, per measured request: the lines the memory channels read, the LLC's
read misses by requester, and what each requester sent, beside what MICA's design reads and the published figure.

    sim-scripts/xeon_read_lines.py DIR [DIR ...]      (each DIR a point validate_xeon.py --save kept: stats.json)

No run: the saved statistics only. Every figure is a count of the run's over its measured requests (client.requests),
summed over every socket and core. The requesters, as the model counts them:
  * software prefetches: MICA's pipeline (kvs-workload.md): a packet's two lines, a bucket's two lines, the first
    tag-matching item's two lines, all non-temporal (not allocated in the L2);
  * hardware prefetches: the L1D's next-line (DCU) and IP-stride prefetchers (their requests walk the L2, and those
    the L2 lacks go on to the LLC) and the L2's streamer and adjacent-line (spatial) prefetchers (into the L2 from
    the LLC), as configs/xeon_e5_2697v2_socket.py switches them on;
  * demand: the cores' loads, stores (RFOs), code fetches and page walks;
  * DMA: the NIC's reads of descriptors and TX buffers and its writes (DDIO: a DMA read of a line a core holds is
    forwarded; a DMA write that misses allocates without reading).
The LLC's read misses are the sum of the first three (`llc.read_misses`); the channels' reads are those misses plus
anything the memory controller reads otherwise.

"MICA's design" is what its lookups must read where neither the index nor the log fits in any cache (the paper's
192 Mi items, uniform keys): every bucket and item line its software prefetches name, less the packet lines (DDIO
has put those in the LLC). The published figure per request is validate_xeon.py's: memory read over throughput,
over 64-byte lines (derived, not published as such).
"""

from __future__ import annotations

import pathlib
import sys

from drivers.cli import xeon_lines
from drivers.cli.validate_xeon import LINE_BYTES
from drivers.cli.xeon_lines import CORE, SOCKET, channel_sum, counter_sum, ddio

PACKET_PREFETCH_LINES = 2   # the server prefetches a request packet's first two lines (workloads/kvs kvs_server.c)


def read_lines(s: dict[str, float]) -> dict[str, float]:
    """The run's DRAM reads and their requesters, per measured request (module docstring)."""
    r = s["client.requests"]
    if not r:
        raise ValueError("the run answered no request: nothing to divide by")

    def core(name: str) -> float:
        return counter_sum(s, CORE, name) / r

    def sock(name: str) -> float:
        return counter_sum(s, SOCKET, name) / r

    swpf_l1d = core("l1d.sw_prefetch_accesses")
    out = {
        "dram_reads": channel_sum(s, "reads") / r,
        "llc_read_misses": sock("llc.read_misses"),
        "llc_swpf_misses": sock("llc.sw_prefetch_misses"),
        "llc_hwpf_misses": sock("llc.hw_prefetch_misses"),
        "llc_demand_misses": sock("llc.demand_misses"),
        "llc_dma_misses": sock("llc.dma_misses"),
        "swpf_issued": swpf_l1d,
        "swpf_llc_lookups": sock("llc.sw_prefetch_accesses"),
        "l1d_pf_issued": core("l1d.prefetcher.issued"),
        "l1d_pf_useful": core("l1d.prefetcher.useful"),
        "l1d_pf_useless": core("l1d.prefetcher.useless"),
        "l1d_pf_l2_misses": core("l2.hw_prefetch_misses"),
        "l2_pf_issued": core("l2.prefetcher.issued"),
        "l2_pf_useful": core("l2.prefetcher.useful"),
        "l2_pf_useless": core("l2.prefetcher.useless"),
        "hwpf_llc_lookups": sock("llc.hw_prefetch_accesses"),
        "walks_2m": core("dtlb.2m.walks"),
        "walks_4k": core("dtlb.4k.walks") + core("itlb.4k.walks") + core("itlb.2m.walks"),
        "dma_reads_forwarded": ddio(s, "dma_read_forwards") / r,
        "dma_reads_llc_hits": ddio(s, "dma_read_hits") / r,
        "dma_reads_llc_misses": ddio(s, "dma_read_misses") / r,
        "mica_design": swpf_l1d - PACKET_PREFETCH_LINES,
    }
    out["excess_over_design"] = out["dram_reads"] - out["mica_design"]
    return out


def published_lines(cores: int) -> float | None:
    """The published memory read a request in lines (validate_xeon.py's figures), where one is published."""
    return xeon_lines.published_lines(cores, "mem_read_gbs")


ROWS = [
    ("dram_reads", "DRAM: lines the memory channels read"),
    ("llc_read_misses", "LLC read misses, all requesters"),
    ("llc_swpf_misses", "  software prefetches (MICA's pipeline)"),
    ("llc_hwpf_misses", "  hardware prefetches (L1D's and L2's)"),
    ("llc_demand_misses", "  demand (loads, RFOs, code, page walks)"),
    ("llc_dma_misses", "LLC misses of DMA (writes: allocated, no read)"),
    ("mica_design", "MICA's design: bucket + item lines prefetched"),
    ("excess_over_design", "DRAM reads beyond MICA's design"),
    ("swpf_issued", "software prefetches sent (lines; 2 packet)"),
    ("swpf_llc_lookups", "  of which looked up in the LLC"),
    ("l1d_pf_issued", "L1D hardware prefetches sent (DCU + IP)"),
    ("l1d_pf_useful", "  used by a demand access"),
    ("l1d_pf_useless", "  evicted unused"),
    ("l1d_pf_l2_misses", "  missing the L2 (on to the LLC)"),
    ("l2_pf_issued", "L2 hardware prefetches sent (streamer + pair)"),
    ("l2_pf_useful", "  used by a demand access"),
    ("l2_pf_useless", "  evicted unused"),
    ("hwpf_llc_lookups", "hardware prefetches looked up in the LLC"),
    ("walks_2m", "2 MB DTLB page walks"),
    ("walks_4k", "4 KB page walks (data and code) + 2 MB code"),
    ("dma_reads_forwarded", "DMA reads forwarded from a core's cache"),
    ("dma_reads_llc_hits", "DMA reads hitting the LLC"),
    ("dma_reads_llc_misses", "DMA reads missing the LLC (from DRAM)"),
]


def report(folder: pathlib.Path) -> str:
    s, _config = xeon_lines.load_point(folder)
    fig = read_lines(s)
    pub = published_lines(xeon_lines.cores(s))
    lines = xeon_lines.header(folder, s)
    for key, label in ROWS:
        lines.append(f"   {label:<48}{fig[key]:9.3f}{fig[key] * LINE_BYTES:9.1f}")
    if pub is not None:
        lines.append(f"   {'published memory read / throughput (derived)':<48}{pub:9.3f}{pub * LINE_BYTES:9.1f}"
                     f"   simulated {(fig['dram_reads'] - pub) / pub * 100:+.1f}%")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return xeon_lines.main(report, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
