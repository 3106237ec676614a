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
from dataclasses import dataclass
from typing import Any

from configs import brps_target_socket
from models import stats_paths as paths
from models.client import guest_memory_bytes, guest_memory_parts  # noqa: F401 (the studies' names for them)
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
PAPER_ITEMS = 192 << 20            # kvs-workload.md: the Tiny data set, 192 Mi items (MICA's)
# A restored point warms its caches over this many requests of its own mix per core (client.warmup_requests):
# measured at 4 cores by the LLC study (llc.WARMUP_REQUESTS_PER_CORE: 100k requests in all were within 1.1% of
# 800k in LLC MPKI); scaled with the cores, as the LLC is.
WARMUP_REQUESTS_PER_CORE = 25_000


@dataclass(frozen=True)
class Conditions:
    """What a study runs at. The default is the paper's: the full platform (the 60-core socket; the dual and quad
    servers), the paper's data set (PAPER_ITEMS tiny items, loaded once per sweep into a shared checkpoint that every
    point and probe restores), and the points that carry each study's conclusion (the paper's design point and its
    neighbours on each axis). `reduced` takes a 4-core share of the socket instead (per-core resources in proportion);
    `items` a smaller data set (None: the study's own choice, as before issue 28); `all_points` the whole design
    space. Each is explicit and every output says which (`text`)."""
    reduced: bool = False
    items: int | None = PAPER_ITEMS
    all_points: bool = False

    @property
    def cores(self) -> int:
        return REDUCED_CORES if self.reduced else FULL_CORES

    @property
    def full(self) -> bool:
        return not self.reduced

    def items_or(self, own: int) -> int:
        """The data set of a study whose own choice at this scale is `own`."""
        return own if self.items is None else self.items

    def tag(self) -> str:
        """For sweep names: a sweep's store holds one set of conditions."""
        items = "" if self.items is None else f"-{_items_short(self.items)}"
        return f"{self.cores}c{items}" + ("" if self.all_points or self.reduced else "-key")

    def text(self, items: int | None = None, reduced_as: str = "") -> str:
        """The conditions in words, for every output (CSV column, report, plot caption); `reduced_as` says what a
        study's reduced scale is when it is not the 4-core share of the socket."""
        n = items if items is not None else self.items
        scale = ("reduced: " + (reduced_as or f"a {REDUCED_CORES}-core share of the 60-core socket") if self.reduced
                 else "full platform")
        if n is None:
            data = "the study's own data set"
        elif n == PAPER_ITEMS:
            data = f"the paper's data set ({_items_short(n)} tiny items)"
        else:
            data = (f"reduced data set: {_items_short(n)} tiny items, {_fraction_of_paper(n)} the paper's "
                    f"{_items_short(PAPER_ITEMS)}")
        points = "every point" if self.all_points or self.reduced else "the points that carry the conclusion"
        return f"{scale}; {data}; {points}"


def _fraction_of_paper(n: int) -> str:
    """How much of the paper's data set `n` items are: "1/12 of" where it divides evenly, else a decimal."""
    return f"1/{PAPER_ITEMS // n} of" if PAPER_ITEMS % n == 0 else f"{n / PAPER_ITEMS:.3g} x"


def _items_short(n: int) -> str:
    return f"{n >> 20}Mi" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n >> 10}Ki" if n % 1024 == 0 else str(n)


def conditions_for(full: bool | None, conditions: Conditions | None) -> Conditions:
    """A study's conditions from the older `full` flag (True: the 60-core socket, every point, the study's own data
    set; False: the reduced share) or the Conditions given; neither: the paper's (Conditions())."""
    if conditions is not None:
        if full is not None:
            raise ValueError("give either full= or conditions=, not both")
        return conditions
    if full is None:
        return Conditions()
    return Conditions(reduced=not full, items=None, all_points=True)


# What packing keeps of the KVS store (isa packed.rs), measured on the page file of the 16 Mi-item load of the
# 60-core socket (results/memory/load_memory.md): a 64-byte word mask per page, 6 bytes an item of index entry
# (5.96: its byte mask and nonzero bytes) and 28 of log item (27.1 plus the other pages); and per packed page about
# 40 bytes of map entry and allocation header (assumed: hashbrown's 25-byte slot at 5/8 load, glibc's 16-byte header).
PACKED_PAGE_BYTES = 64 + 40
PACKED_INDEX_BYTES_PER_ITEM = 6
PACKED_LOG_BYTES_PER_ITEM = 28


def load_memory_parts(items: int, partitions: int) -> dict[str, int]:
    """What the load of a data set holds at its peak, by part: the store (guest_memory_parts; packed past
    drivers/sweep's LOAD_UNPACKED, as the loader packs it), the client's state per item and the engine's fixed
    allowance (models.sim's estimate). The load is the peak of a study: every probe restores the checkpoint by
    mapping its page file (copy-on-write), so it holds only the pages it writes as its own and the pages it reads
    as the page cache's, which the kernel can drop and re-read."""
    from drivers.sweep.checkpoints import LOAD_UNPACKED
    from models.sim import HOST_BYTES_BASE, HOST_BYTES_PER_CLIENT_ITEM

    store = guest_memory_parts(items, partitions)
    if sum(store.values()) > LOAD_UNPACKED:
        pages = sum(store.values()) // 4096
        store = {"whole pages": LOAD_UNPACKED, "packed log": items * PACKED_LOG_BYTES_PER_ITEM,
                 "packed index": items * PACKED_INDEX_BYTES_PER_ITEM + pages * PACKED_PAGE_BYTES}
    return {**store, "client": items * HOST_BYTES_PER_CLIENT_ITEM, "engine": HOST_BYTES_BASE}


def check_fits(items: int, partitions: int, available: int | None = None) -> None:
    """Refuse, before any run, a data set whose load does not fit the host's available memory, naming what it
    needs part by part and how to run a smaller one explicitly."""
    from models.params import ParamError
    from models.sim import host_memory_available

    have = host_memory_available() if available is None else available
    parts = load_memory_parts(items, partitions)
    need = sum(parts.values())
    if have is not None and need > have:
        detail = ", ".join(f"{name} {size / 2**30:.1f} GiB" for name, size in parts.items())
        raise ParamError(f"{items:,} tiny items over {partitions} partitions need about {need / 2**30:.1f} GiB of "
                         f"host memory to load ({detail}; the log as written, the index sized from the items); "
                         f"the host has {have / 2**30:.1f} GiB available. Run a smaller data set explicitly "
                         "(--items N; every output then says it is reduced)")


# The guest's touch limit (System.mem_limit) of a KVS point: at least the server's own estimate of what its store
# touches (models.client kvs_server_memory) with a quarter on top for the rest (stacks, rings, the binary: assumed),
# rounded up to a power of two (assumed: as installed memory is), never below the config's.
# The paper's 192 Mi items on the 60-core socket touch about 22.5 GiB, over the config's 16 GiB: 32 GiB. The limit is
# in a checkpoint's identity, so every study (partition_load's too) and the loads made outside them
# (`load_memory.py`) share this rule.
MEM_LIMIT_HEADROOM = 1.25


def fit_mem_limit(system: System) -> System:
    """Raise `system`'s guest memory limit to what its KVS data set needs (MEM_LIMIT_HEADROOM); a config's larger
    limit stays. Returns the system."""
    from models.client import kvs_server_memory

    if system.serves_kvs():
        need = int(kvs_server_memory(system.server_argv(), system.client, system.harts) * MEM_LIMIT_HEADROOM)
        system.mem_limit = max(system.mem_limit, 1 << max(0, need - 1).bit_length())
    return system


def target(cores: int = REDUCED_CORES, items: int = 1 << 16, requests_per_core: int = REQUESTS_PER_CORE,
           buckets: int = 0, warm_last_insts: int = 0, server_args: tuple[str, ...] | list[str] = (),
           **client: Any) -> System:
    """The billion-RPS target socket with `cores` cores and per-core resources in proportion (see the module doc);
    at 60 cores it is configs/brps_target_socket.py as is. `buckets` sizes each partition's index (0: the config's);
    `warm_last_insts` > 0 warms the caches only over the last that many instructions of the bulk load (the load of
    a large data set runs purely functionally before that, which is several times faster; the LLC holds far less
    than what those instructions touch, so its contents at the ROI are the same). `server_args` are KVS server
    arguments added to the config's (`name=value`, replacing one of the same name: the LLC study's drivers)."""
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
    for arg in server_args:
        name = arg.partition("=")[0] + "="
        system.workload.argv = [a for a in system.workload.argv if not a.startswith(name)] + [arg]
    if warm_last_insts:
        # The bulk load takes about 450 instructions per PUT (measured: client.load.insts_per_put).
        system.warm_start_insts = max(0, items * 450 - warm_last_insts)
    return fit_mem_limit(system)


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
    steady = "steady.throughput" in r          # the steady-state window at the capacity (drivers/steady_state.py)
    nan = float("nan")
    return {
        # With the steady-state rule: the throughput of its last window at the capacity's offered load, with the
        # half-width of its 95% interval (batch means) and its p95; else the capacity search's best probe.
        "throughput_mrps": r["steady.throughput"] if steady else r.get("capacity.mrps",
                                                                      r.get("client.throughput_mrps", nan)),
        "throughput_ci_mrps": r["steady.half_width"] if steady else nan,
        "search_mrps": r.get("capacity.mrps", nan),
        "probes": r.get("capacity.probes", nan),                # the capacity search's probes (each a full run)
        "window_requests": r.get("steady.window", nan),
        "steady_converged": r.get("steady.converged", nan),
        "busiest_utilization": r.get("steady.busiest_utilization", nan),
        "p95_steady_us": r.get("steady.p95_ns", nan) / 1e3,
        "p95_steady_ci_us": r.get("steady.p95_half_width_ns", nan) / 1e3,
        "seeds": r.get("steady.seeds", nan),
        # Whether steady-state windows confirmed the capacity (drivers/window_capacity.py: 1, a window at it sustains
        # and one a resolution above fails; 0, not confirmed) and the windows simulated for it (nan: no windows).
        "capacity_confirmed": r.get("capacity.confirmed", nan),
        "capacity_windows": r.get("capacity.windows", nan),
        "seeds_sustained": r.get("steady.seeds_sustained", nan),   # of the seeds' windows at the capacity
        "capacity_mpps_per_port": r.get("capacity.mpps_per_port", float("nan")),
        "p95_us": r.get("client.latency.p95", float("nan")) / 1e3,
        "p50_us": r.get("client.latency.p50", float("nan")) / 1e3,
        "net_rx_gbps": sum_of(r, paths.NIC_PORT, "rx_wire_gbps"),
        "net_tx_gbps": sum_of(r, paths.NIC_PORT, "tx_wire_gbps"),
        "l1d_mpki": mean_of(r, paths.PRIVATE_CACHE, "mpki", socket=0, cache="l1d"),
        "llc_mpki": r.get(paths.LLC.stat(0, "mpki"), float("nan")),
        # The split (models/stats_paths.py LLC_METRICS): demand, software prefetch and DMA/DDIO misses (and the
        # hardware prefetchers', zero with them off) sum to llc_mpki.
        "llc_demand_mpki": r.get(paths.LLC.stat(0, "demand_mpki"), nan),
        "llc_sw_prefetch_mpki": r.get(paths.LLC.stat(0, "sw_prefetch_mpki"), nan),
        "llc_hw_prefetch_mpki": r.get(paths.LLC.stat(0, "hw_prefetch_mpki"), nan),
        "llc_dma_mpki": r.get(paths.LLC.stat(0, "dma_mpki"), nan),
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
        "host_seconds": row.get("host_seconds", nan),          # the point's host time (capacity search + windows)
        # Its worker's CPU time: on a shared host the wall time says more about the other loads than the point.
        "cpu_seconds": row.get("cpu_seconds", nan),
        "requests": row.get("cfg.client.requests", float("nan")),
    }


def _capacity_upper(r: dict[str, float]) -> float:
    from analysis.style import capacity_upper

    return float(capacity_upper(r.get("capacity.mrps", float("nan")), r.get("capacity.mpps_per_port", float("nan")),
                                r.get("capacity.upper_mpps_per_port", float("nan"))))


def write_report(path: pathlib.Path, title: str, intro: str, config_diff: list[str], table_md: str,
                 pngs: list[str], notes: list[str], metrics: list[str] | None = None) -> pathlib.Path:
    """A study's Markdown report; `metrics` names the statistics it plots (keys of
    models/stats_paths.py METRIC_DEFINITIONS), whose definitions it states."""
    lines = [f"# {title}", "", intro, "", "## Configuration (difference from configs/brps_target_socket.py)", ""]
    lines += [f"- {line}" for line in config_diff]
    if metrics:
        lines += ["", "## Definitions of what is plotted", ""]
        lines += [f"- `{m}`: {paths.METRIC_DEFINITIONS[m]}" for m in metrics]
    lines += ["", "## Results", "", table_md, ""]
    lines += [f"![{png}]({png})" for png in pngs]
    if notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    path.write_text("\n".join(lines) + "\n")
    return path


CONFIRMATION_COLUMNS = ("capacity_confirmed", "capacity_windows", "seeds_sustained")


# A steady-state window's intervals, each placed after the column it bounds (issue 28: every point with its interval).
INTERVAL_COLUMNS = {"throughput_ci_mrps": "throughput_mrps", "p95_steady_us": "p95_us",
                    "p95_steady_ci_us": "p95_steady_us"}


def with_confirmation(df: Any, cols: list[str]) -> list[str]:
    """A report table's columns with the steady-state window's intervals after what they bound, and the window
    confirmation's (figures_of), where the study's points have them."""
    out = list(cols)
    for col, after in INTERVAL_COLUMNS.items():
        if col in df and col not in out and df[col].notna().any() and after in out:
            out.insert(out.index(after) + 1, col)
    return out + [c for c in CONFIRMATION_COLUMNS if c in df and c not in out and df[c].notna().any()]


def confirmation_notes(df: Any) -> list[str]:
    """The report's note on the steady-state windows' confirmation of the points' capacities
    (drivers/window_capacity.py); none for points without windows."""
    if "capacity_confirmed" not in df or not df.capacity_confirmed.notna().any():
        return []
    judged = df[df.capacity_confirmed.notna()]
    bad = int((judged.capacity_confirmed == 0.0).sum())
    return [f"capacity confirmed by steady-state windows (drivers/window_capacity.py: a window at the load sustains, "
            f"one a resolution above fails) at {len(judged) - bad} of {len(judged)} points"
            + (f"; **{bad} not confirmed** (capacity_confirmed = 0: the highest load a window sustained, or the "
               "search's answer when none did)" if bad else "")
            + f"; {int(judged.capacity_windows.min())}-{int(judged.capacity_windows.max())} windows a point"]


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
