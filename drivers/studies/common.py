"""What the studies share: the billion-RPS target socket at full or reduced scale, the figures every study reads
from a point, and the report writer.

Reduced scale keeps per-core resources in proportion to the 60-core socket (platforms.md §2):
- LLC: 768 KB per core, one slice per 2 cores (as the paper's clusters);
- clusters: 2 cores each, as the paper's; an odd core count (one core) cannot form them and takes clusters of one.
  The clusters sit on the smallest near-square mesh with the target's router, link and crossbar timing
  (`brps_target_socket.share_noc`);
- network: 3 NICs of one 100 GbE port over 60 cores, so one NIC per 20 cores (at least one), carrying
  300 Gb/s / 60 = 5 Gb/s per core between them; PCIe lanes 24 / 60 per core (at least 1 per NIC);
- memory: the full socket's 6 DDR4-2400 channels (configs/brps_target_socket.py) are 1.92 GB/s per core; a reduced
  socket gets the nearest whole number of 6 x cores / 60 channels, at least one: 4 cores get 1 channel
  (19.2 GB/s, 2.5x their share), 8 cores 1 channel (1.25x). This is the one resource that is not exactly in
  proportion; the reports say so.
"""

from __future__ import annotations

import pathlib
from typing import Any

from configs import brps_target_socket
from models import stats_paths as paths
from models.nic import Nic
from models.system import System

FULL_CORES = brps_target_socket.CORES
REDUCED_CORES = 4                  # `make figures` default: the reduced socket
LLC_PER_CORE = 768 * 1024          # paper
GBPS_PER_CORE = 300.0 / FULL_CORES  # 3 x 100 GbE over 60 cores
LANES_PER_CORE = 24 / FULL_CORES   # three PCIe 4.0 x8 links over 60 cores
NICS_PER_CORE = brps_target_socket.NICS / FULL_CORES
CHANNELS_PER_CORE = brps_target_socket.memory().channels / FULL_CORES
REQUESTS_PER_CORE = 500            # measured requests per core per run: enough for a stable answered rate here
CAPACITY_RESOLUTION = 0.02         # the studies' capacity search resolution (relative); the search's default is 1%


def target(cores: int = REDUCED_CORES, items: int = 1 << 16, requests_per_core: int = REQUESTS_PER_CORE,
           buckets: int = 0, warm_last_insts: int = 0, **client: Any) -> System:
    """The billion-RPS target socket with `cores` cores and per-core resources in proportion (see the module doc);
    at 60 cores it is configs/brps_target_socket.py as is. `buckets` sizes each partition's index (0: the config's);
    `warm_last_insts` > 0 warms the caches only over the last that many instructions of the bulk load (the load of
    a large data set runs purely functionally before that, which is several times faster; the LLC holds far less
    than what those instructions touch, so its contents at the ROI are the same)."""
    system = brps_target_socket.system(cores=cores, items=items, requests=requests_per_core * cores, **client)
    if cores != FULL_CORES:
        system.caches = brps_target_socket.caches(cores)          # 768 KB of LLC per core, a slice per cluster
        system.cores_per_cluster = brps_target_socket.cluster_size(cores)
        system.noc = brps_target_socket.share_noc()
        nics = max(1, round(NICS_PER_CORE * cores))
        system.nics = [_reduced_nic(GBPS_PER_CORE * cores / nics, max(1, round(LANES_PER_CORE * cores / nics)))
                       for _ in range(nics)]
        system.memory.channels = max(1, round(CHANNELS_PER_CORE * cores))
    if buckets:
        buckets = 1 << (buckets - 1).bit_length()    # the server takes a power of two (it refused 8738 at 60 cores)
        system.workload.argv = [a for a in system.workload.argv if not a.startswith("buckets=")] + \
            [f"buckets={buckets}"]
    if warm_last_insts:
        # The bulk load takes about 450 instructions per PUT (measured: client.load.insts_per_put).
        system.warm_start_insts = max(0, items * 450 - warm_last_insts)
    return system


def _reduced_nic(port_gbps: float, pcie_lanes: int) -> Nic:
    """One of the target's NICs (one port) with a reduced socket's share of the network and PCIe lanes."""
    nic = brps_target_socket.nic()
    nic.port_gbps = port_gbps
    nic.pcie_lanes = pcie_lanes
    return nic


def scale_text(cores: int) -> str:
    s = target(cores)
    nics = s.active_nics()
    return (f"{cores} cores, LLC {s.caches.llc.size // 1024} KB in {s.caches.llc_slices} slices, "
            f"{len(nics)} NIC(s) of {nics[0].ports} x {nics[0].port_gbps:g} Gb/s, PCIe 4.0 x{nics[0].pcie_lanes}, "
            f"{s.memory.channels} DDR4-2400 channel(s)")


def values_of(row: Any, group: paths.StatGroup, counter: str, **fixed: int | str) -> list[float]:
    """The (non-NaN) values of `counter` of every instance of a declared statistics group in `row` (a stats dict
    or a table row's stats), some fields fixed: every core of socket 0 is `values_of(r, CORE, "ipc", socket=0)`."""
    rx = group.regex(counter)
    out = []
    for key, value in row.items():
        m = rx.fullmatch(key) if isinstance(key, str) else None
        if m is not None and value == value and all(str(m[f]) == str(v) for f, v in fixed.items()):
            out.append(value)
    return out


def mean_of(row: Any, group: paths.StatGroup, counter: str, **fixed: int | str) -> float:
    """The mean of `values_of` (NaN when there is none)."""
    values = values_of(row, group, counter, **fixed)
    return sum(values) / len(values) if values else float("nan")


def sum_of(row: Any, group: paths.StatGroup, counter: str, **fixed: int | str) -> float:
    return sum(values_of(row, group, counter, **fixed))


def figures_of(row: Any) -> dict[str, float]:
    """The figures the studies plot, from one table row (stat.* columns) at the point's capacity."""
    r = {k[5:]: v for k, v in row.items() if isinstance(k, str) and k.startswith("stat.")}
    cores = int(row.get("cfg.harts", 1))
    batches = sum_of(r, paths.NIC_QUEUE, "rx_batches")
    cycles = sum_of(r, paths.CORE, "cycles", socket=0)
    clock_ghz = row.get("cfg.core.clock", 2.5e9) / 1e9
    return {
        "throughput_mrps": r.get("capacity.mrps", r.get("client.throughput_mrps", float("nan"))),
        "capacity_mpps_per_port": r.get("capacity.mpps_per_port", float("nan")),
        "p95_us": r.get("client.latency.p95", float("nan")) / 1e3,
        "p50_us": r.get("client.latency.p50", float("nan")) / 1e3,
        "net_rx_gbps": sum_of(r, paths.NIC_PORT, "rx_wire_gbps"),
        "net_tx_gbps": sum_of(r, paths.NIC_PORT, "tx_wire_gbps"),
        "l1d_mpki": mean_of(r, paths.PRIVATE_CACHE, "mpki", socket=0, cache="l1d"),
        "llc_mpki": r.get(paths.LLC.stat(0, "mpki"), float("nan")),
        "mem_read_gbs": r.get(paths.MEMORY.stat(0, "read_bw"), float("nan")) / 1e9,
        "mem_write_gbs": r.get(paths.MEMORY.stat(0, "write_bw"), float("nan")) / 1e9,
        "ipc": mean_of(r, paths.CORE, "ipc", socket=0),
        "rx_batch": mean_of(r, paths.NIC_QUEUE, "rx_batch_mean"),
        # Core time per RX batch: every core's cycles in the measured phase over the batches it took (at capacity
        # the cores are never idle, so this is the time to process one batch).
        "ns_per_rx_batch": cycles / clock_ghz / batches if batches else float("nan"),
        # The same per packet of those batches (batches grow with load, so time per batch alone can mislead).
        "ns_per_rx_packet": cycles / clock_ghz / batches / mean_of(r, paths.NIC_QUEUE, "rx_batch_mean")
        if batches else float("nan"),
        "cores": cores,
        # The capacity's interval: below the first failing probe's offered load, in the throughput's units (NaN:
        # not a capacity search, or limited by the line rate); and the point's conditions, for the captions.
        "throughput_upper_mrps": _capacity_upper(r),
        "items": row.get("cfg.client.items", float("nan")),
        "requests": row.get("cfg.client.requests", float("nan")),
    }


def _capacity_upper(r: dict[str, float]) -> float:
    from analysis.style import capacity_upper

    return float(capacity_upper(r.get("capacity.mrps", float("nan")), r.get("capacity.mpps_per_port", float("nan")),
                                r.get("capacity.upper_mpps_per_port", float("nan"))))


def write_report(path: pathlib.Path, title: str, intro: str, config_diff: list[str], table_md: str,
                 pngs: list[str], notes: list[str]) -> pathlib.Path:
    lines = [f"# {title}", "", intro, "", "## Configuration (difference from configs/brps_target_socket.py)", ""]
    lines += [f"- {line}" for line in config_diff]
    lines += ["", "## Results", "", table_md, ""]
    lines += [f"![{png}]({png})" for png in pngs]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    path.write_text("\n".join(lines) + "\n")
    return path


def markdown_table(df: Any) -> str:
    """A DataFrame as a Markdown table (numbers to 3 significant digits)."""
    import pandas as pd

    df = df.reset_index() if not isinstance(df.index, pd.RangeIndex) else df
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if value != value:
            return "n/a"
        if value.is_integer() and abs(value) < 1e9:
            return f"{int(value):,}"
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)
