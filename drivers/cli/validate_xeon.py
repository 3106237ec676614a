#!/usr/bin/env python3
"""The STANDARD workload on one socket of the Xeon E5-2697 v2 baseline, next to the published measurements.

    sim-scripts/validate_xeon.py [--cores 1,2,3,4,8,12,24] [--requests-per-core N] [--items N] [--search]
                                 [--no-target] [--target-cores 60] [--save DIR] [--log-mib N] [--buckets N]
                                 [--offered line|measured] [--checkpoints DIR] [--unpacked-memory SIZE]
    sim-scripts/validate_xeon.py --from DIR        (the table again from the points --save DIR kept, no run)

For each core count up to 12 it runs configs/xeon_e5_2697v2_socket.py (two cores per 10 GbE port; 1 to 3 cores
share one port, as in the measurements), and for 24 cores the dual-socket server as measured
(configs/xeon_e5_2697v2_dual.py: 2 x 12 cores, 12 x 10 GbE ports), in detailed mode, the measured phase timed, and
prints throughput, IPC, RX batch size, MPKI and miss rate per cache level, memory bandwidth, network bandwidth and
p95 latency beside the figures of ../shared/spec/validation.md, with the error of each (figures of several sockets
are summed: bandwidths; or averaged over every core or socket: IPC, MPKI, miss rates), and the run's power from the
power model (power.price_run): the CPUs as power/unmodelled.py adds a socket up beside the measurement, the NIC
cards as built (their parts in power/unmodelled.py nic_parts; the model's traffic-driven NIC chips beside), the
DRAM devices (the only priced part of the measurement's "rest": its supply losses, fans, board and disks have no
published source), and CPUs + NIC cards + DRAM against the power measured at the wall. Then the same run on one
socket of the billion-RPS target (configs/brps_target_socket.py: 60 cores, 3 x 100 GbE), which has no published
measurements to compare with.

The KVS server's log is MICA's: its netbench server's rule (1.2 x a partition's items with their headers, rounded
up to a power of two) applied to the paper's 192 Mi items, kept at the run's item count in the same proportion
(a window of the power-of-two log: mica_log_args). With 24 partitions a fifth of the items sit in the log's older
half, and a GET of one re-appends it; with 4 none do. --log-mib replaces it (a sensitivity). Its index is MICA's
too (mica_index_args: 1.2 x a partition's items over 15-item buckets, rounded up to a power of two, at 192 Mi
items, kept at the run's item count in the same proportion): 8 items a bucket at 12 and 24 partitions, 12 at 4.
--buckets replaces it (a sensitivity).

Operating point: by default the client offers each port its line rate for the smallest frames, open loop (the
measurements are at saturation: the server takes what it can and the NIC drops the rest); throughput is the
requests answered per second and the latency is that of the answered requests, queueing in a full RX FIFO
included. With --search, each point is instead the highest offered load with < 1% loss (drivers/capacity.py,
several runs per point; slow). With --offered measured, each Xeon point is offered, open loop, the load the
measured server received at that core count (its published network RX on the wire, over the point's ports; 13.8%
below line rate at 24 cores). The published numbers live only in this script, never in the models.

Where the published figure is a 2-socket measurement (4 cores on 2 ports over 2 sockets; 24 cores on 12 ports),
the 4-core row compares with it as is (same cores and ports), the 12-core row with half of the 24-core one, and
the 24-core row (both sockets) with the measurement itself.
Two rows state a Xeon point's work in x86 terms, a normalisation and not a model change: the simulated RV64
instructions a request and the simulated IPC, each times the x86-64 / RV64 instruction ratio that
sim-scripts/isa_work_per_request.py measured for the server's core and wrote to
results/validation/isa_work_per_request.json (read here, with its provenance; the published IPC is beside).
Caveats printed with the table: the data set (--items) is said against the paper's 192 Mi items in every output (a
smaller one is a reduced run), and frames are 80-byte GET / 88-byte PUT requests.

Data sets: the default is the paper's 192 Mi items (--items N for a reduced run, said so in every output). With
--checkpoints DIR (by default results/checkpoints/xeon for a data set over 16 Mi items), each point's data set is
loaded once, functionally, with the point's own server arguments (MICA's log and index), into DIR/checkpoints/<data set key>/ (drivers/sweep's shared checkpoints, the
record of the load beside it as <key>.json), and the measured run restores it; a later invocation restores what
is there. The paper's 192 Mi items took a load of 1,910 s of host CPU and a checkpoint of 12.2 GB (24 cores);
--unpacked-memory 2GiB (the default with --checkpoints for a store larger than that) keeps the load's host memory
near 9.3 GB (the load runs in a worker process; the restored run maps the checkpoint's pages from the file). A new
engine build has another data set key, so it loads again. Every point's guest memory limit is what its data set
needs (drivers/studies fit_mem_limit).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import sys
import time
import types

import configs
from configs import brps_target_socket, xeon_e5_2697v2_socket
from drivers import capacity
from drivers.cli import xeon_miss_rates
from drivers.cli.run import apply_override
from drivers.sweep import CHECKPOINTS, Base, data_set_need, load_once, packed_as_loaded
from models import stats_paths
from models.client import KVS_ITEM_HEADER
from models.sim import RunResult, simulate, sized_warmup_requests
from models.socket import core_path, socket_path
from models.system import System

ROOT = pathlib.Path(__file__).resolve().parents[2]

DUAL = "xeon_e5_2697v2_dual"   # the measured server: two sockets of 12 cores, 12 x 10 GbE

# ../shared/spec/validation.md, "Measured on the dual-socket Xeon E5-2697 v2 baseline" (comparison only).
# "Miss rates, 4-24 cores: L1D about 1.5%, L2 about 32%", compared under each definition of xeon_miss_rates.
MISS_RATES = {d.key: d.published for d in xeon_miss_rates.DEFINITIONS}
PUBLISHED: dict[int, dict[str, float]] = {
    # The IPC twice: beside the simulated (RV64) IPC, and beside that IPC in x86 instructions (ISA_NOTE).
    1: {"throughput_mrps": 5.78, "ipc": 1.91, "ipc_x86": 1.91, "rx_batch": 32.0},
    # The 2-core RX batch is not given as a number: "RX batch falls to 5.29 packets per call (6x smaller than with 2
    # cores)" gives it as about 6 x 5.29 (derived; the 6 is the publication's rounding).
    2: {"net_rx_gbps": 9.76, "rx_batch": 6 * 5.29},
    3: {"rx_batch": 5.29},
    4: {"throughput_mrps": 23.33, "net_tx_gbps": 19.31, "net_rx_gbps": 19.51, "mem_read_gbs": 6.21,
        "mem_write_gbs": 0.23, **MISS_RATES},
    8: dict(MISS_RATES),
    # Half of the 24-core, 12-port, 2-socket measurement.
    12: {"throughput_mrps": 120.5 / 2, "net_tx_gbps": 99.66 / 2, "net_rx_gbps": 105.45 / 2,
         "mem_read_gbs": 34.97 / 2, "mem_write_gbs": 2.89 / 2, **MISS_RATES},
    # The 24-core, 12-port, 2-socket measurement itself.
    24: {"throughput_mrps": 120.5, "net_tx_gbps": 99.66, "net_rx_gbps": 105.45, "mem_read_gbs": 34.97,
         "mem_write_gbs": 2.89, **MISS_RATES,
         # Measured at the wall at 120.5 M requests/s: 399.2 W in all, CPUs 255 W, four NICs 62 W, rest 82 W.
         "wall_power_w": 399.2, "cpu_power_w": 255.0, "nic_power_w": 62.0, "rest_power_w": 82.0},
}
# Derived, not published as such: the published memory write bandwidth over the published throughput of the same
# row (bytes written to memory per request), so that a run at another throughput compares what each request costs.
LINE_BYTES = 64            # the Ivy Bridge cache line (Intel's optimization reference manual)
# Likewise the memory read a request, in lines (4 cores: 6.21 GB/s at 23.33 M req/s, 266 bytes, 4.16 lines).
for _row in (4, 12, 24):
    PUBLISHED[_row]["mem_write_per_req"] = PUBLISHED[_row]["mem_write_gbs"] * 1e9 / (
        PUBLISHED[_row]["throughput_mrps"] * 1e6)
    PUBLISHED[_row]["mem_read_lines_per_req"] = PUBLISHED[_row]["mem_read_gbs"] * 1e9 / (
        PUBLISHED[_row]["throughput_mrps"] * 1e6) / LINE_BYTES
PAPER_ITEMS = 192 << 20   # the paper's Tiny data set (kvs-workload.md): 192 Mi items
# A data set larger than this is loaded once into a checkpoint folder even when --checkpoints is not given (the
# default run is the paper's 192 Mi items: loading it again for every invocation would cost 20-30 min of CPU a point).
CHECKPOINTED_ABOVE = 16 << 20
DEFAULT_CHECKPOINTS = ROOT / "results" / "checkpoints" / "xeon"
P95_ROWS = (12, 24)   # rows compared with the p95 bound measured at 120 M requests/s
P95_BOUND_US = 100.0  # "round-trip p95 below 100 us" at 120 M requests/s (24 cores)

# What the miss-rate rows count: drivers/cli/xeon_miss_rates.py (each candidate's events and kvsim counters, printed
# with the table). The "+ prefetches" rows are every lookup of the cache (the L1D's include software prefetches, which
# MICA issues several per request; the L2's also the L1D hardware prefetchers' requests), not compared.
MISS_RATES_NOTE = xeon_miss_rates.note()

METRICS = [
    ("throughput_mrps", "throughput (M req/s)"),
    ("loss", "loss (fraction of frames dropped)"),
    ("get_miss", "GETs missed (items the index dropped)"),
    ("ipc", "IPC per core"),
    ("work_insts_per_req", "insts / request (polls with frames)"),
    ("idle_insts_per_req", "insts / request (empty polls)"),
    ("x86_insts_per_req", "x86 insts / request (RV64 x ratio)"),
    ("ipc_x86", "IPC per core, x86 insts (RV64 x ratio)"),
    ("rx_batch", "RX batch (packets per non-empty poll)"),
    ("l1d_mpki", "L1D MPKI"),
    ("l2_mpki", "L2 MPKI"),
    ("llc_mpki", "LLC MPKI"),
    ("l1d_miss_rate", "L1D miss rate (demand)"),
    ("l2_miss_rate", "L2 miss rate (demand)"),
    ("l1d_fills_per_load", "L1D fills per load (perf's definition)"),
    ("l1d_load_miss_ivb", "L1D miss rate (IVB retired-load events)"),
    ("l2_rqsts_miss_rate", "L2 miss rate (IVB L2_RQSTS events)"),
    ("l1d_walk_reads_per_load", "L1D page-walk reads / retired load"),
    ("l1d_walk_misses_per_load", "L1D page-walk read misses / retired load"),
    ("l1d_miss_rate_all", "L1D miss rate (+ sw prefetches)"),
    ("l2_miss_rate_all", "L2 miss rate (+ all prefetches)"),
    ("l2_miss_rate_l1pf", "L2 miss rate (demand + L1D hw pf)"),
    ("l2_demand_per_req", "L2 demand lookups / request"),
    ("l2_demand_miss_per_req", "L2 demand misses / request"),
    ("l2_l1pf_per_req", "L2 L1D-hw-pf lookups / request"),
    ("l2_swpf_per_req", "L2 sw-prefetch lookups / request"),
    ("l2_swpf_miss_per_req", "L2 sw-prefetch misses / request"),
    ("l1d_merges_per_req", "L1D in-flight (LFB) hits / request"),
    ("llc_miss_rate", "LLC miss rate"),
    ("mem_read_gbs", "memory read (GB/s)"),
    ("mem_read_lines_per_req", "memory read per request (lines)"),
    ("mem_write_gbs", "memory write (GB/s)"),
    ("mem_write_per_req", "memory write per request (bytes)"),
    ("mem_write_lines_per_set", "memory write lines per SET"),
    ("mem_write_io_share", "memory writes of lines DMA wrote (share)"),
    ("net_rx_gbps", "network RX (Gb/s, wire)"),
    ("net_tx_gbps", "network TX (Gb/s, wire)"),
    ("p95_us", "p95 round trip (us)"),
    ("ddio_core_hit", "packet reads hitting the LLC (DDIO)"),
    ("cpu_power_w", "CPUs (W: model + parts it leaves out)"),
    ("nic_power_w", "NIC cards as built (W)"),
    ("nic_model_w", "NIC chips, traffic-driven (W, model)"),
    ("rest_power_w", "rest (W: DRAM, board, fans, disk, PSU)"),
    ("psu_loss_w", "power supply losses (W, in the rest)"),
    ("wall_power_w", "wall (W: every part through the PSU)"),
]


def ports_for(cores: int) -> int:
    return 1 if cores <= 3 else (cores + 1) // 2


def sockets_in(stats: dict[str, float]) -> int:
    """How many sockets a run's statistics describe (system.socket0., system.socket1., ...)."""
    n = 0
    while any(k.startswith(socket_path(n) + ".") for k in stats):
        n += 1
    return max(n, 1)


def figures(r: RunResult, harts: int) -> dict[str, float]:
    s = r.stats
    sockets = range(sockets_in(s))
    cores = [core_path(k, i) for k in sockets for i in range(harts)]
    # A platform without private L2s reports no L2 counters at all; one with them reports every one (a missing
    # counter of a cache that exists stays an error).
    has_l2 = any(f"{c}.l2.accesses" in s or f"{c}.l2.mpki" in s for c in cores)

    def mean(name: str) -> float:
        """Over every core of every socket (a core's number may restart on each socket or run on: both found). An
        L2 figure of a platform whose cores have no L2 (the target socket: its L2 is the shared LLC) is n/a."""
        if name.startswith("l2.") and not has_l2:
            return float("nan")
        vals = [s[f"{core_path(k, i)}.{name}"] for k in sockets for i in range(harts)
                if f"{core_path(k, i)}.{name}" in s]
        if not vals:
            raise KeyError(f"no core of the run reports {name!r}: a missing counter is an error, not a figure")
        return sum(vals) / len(vals)

    def socket_mean(name: str) -> float:
        vals = [s[f"{socket_path(k)}.{name}"] for k in sockets if f"{socket_path(k)}.{name}" in s]
        return sum(vals) / len(vals) if vals else float("nan")

    def socket_sum(name: str) -> float:
        vals = [s[f"{socket_path(k)}.{name}"] for k in sockets if f"{socket_path(k)}.{name}" in s]
        if not vals:
            raise KeyError(f"no socket of the run reports {name!r}: a missing counter is an error, not a zero")
        return sum(vals)

    # Every NIC's queues and ports (system.nic{K}.queue{Q}., system.nic{K}.port{P}.).
    queues = stats_paths.NIC_QUEUE.instances(s, "rx_batches")
    batches = sum(s[stats_paths.NIC_QUEUE.stat(*q, "rx_batches")] for q in queues)
    batch = (sum(s[stats_paths.NIC_QUEUE.stat(*q, "rx_batches")] * s[stats_paths.NIC_QUEUE.stat(*q, "rx_batch_mean")]
                 for q in queues) / batches) if batches else 0.0
    def ddio_hit_rate() -> float:
        if any(f"{socket_path(k)}.ddio.core_read_hits" in s for k in sockets):
            hits, misses = socket_sum("ddio.core_read_hits"), socket_sum("ddio.core_read_misses")
        else:                  # several sockets share one memory system: its DDIO counters are the system's
            ddio = stats_paths.SYSTEM_DDIO
            hits, misses = s[ddio.stat("core_read_hits")], s[ddio.stat("core_read_misses")]
        return hits / (hits + misses) if hits + misses else float("nan")

    def ddio_sum(name: str) -> float:
        """A DDIO counter of every socket, or of the system where several sockets share one memory system."""
        if any(f"{socket_path(k)}.ddio.{name}" in s for k in sockets):
            return socket_sum(f"ddio.{name}")
        return s[stats_paths.SYSTEM_DDIO.stat(name)]

    def write_figures() -> dict[str, float]:
        """Where the memory writes come from: bytes per request (a rate over a rate, so the measured interval's
        length cancels), lines per SET (MICA's SET is the one request that writes the store), and the share of the
        LLC's write-backs whose line a DMA wrote (packet buffers, descriptor rings: DDIO's lines) rather than lines
        only cores wrote (the log, the index, stacks, the driver's state)."""
        per_req = socket_sum("mem.write_bw") / (s["client.throughput_mrps"] * 1e6)
        set_share = s["client.puts"] / s["client.requests"] if s["client.requests"] else float("nan")
        io_wb = ddio_sum("writebacks_dma_data") + ddio_sum("writebacks_core_data_in_dma_lines")
        all_wb = io_wb + ddio_sum("writebacks_core_lines")
        return {"mem_write_per_req": per_req,
                "mem_write_lines_per_set": per_req / LINE_BYTES / set_share if set_share else float("nan"),
                "mem_write_io_share": io_wb / all_wb if all_wb else float("nan")}

    return {
        "throughput_mrps": s["client.throughput_mrps"],
        "loss": s["client.loss"],
        # MICA's index is lossy: a full bucket drops an entry, and a GET of it misses (less work than a hit).
        "get_miss": s["client.misses"] / s["client.gets"] if s["client.gets"] else float("nan"),
        "ipc": mean("ipc"),
        # MICA's polls: the instructions of those that found frames and of those that found none, per request.
        "work_insts_per_req": s["client.insts_per_request_work"],
        "idle_insts_per_req": s["client.insts_per_request_idle"],
        "rx_batch": batch,
        "l1d_mpki": mean("l1d.mpki"),
        "l2_mpki": mean("l2.mpki"),
        "llc_mpki": socket_mean("llc.mpki"),
        **xeon_miss_rates.rates(s, cores, has_l2),
        "l1d_miss_rate_all": mean("l1d.miss_rate"),
        "l2_miss_rate_all": mean("l2.miss_rate"),
        "llc_miss_rate": socket_mean("llc.miss_rate"),
        **(l2_sources(s, cores) if has_l2 else {}),
        "mem_read_gbs": socket_sum("mem.read_bw") / 1e9,
        "mem_read_lines_per_req": socket_sum("mem.read_bw") / (s["client.throughput_mrps"] * 1e6) / LINE_BYTES,
        "mem_write_gbs": socket_sum("mem.write_bw") / 1e9,
        **write_figures(),
        "net_rx_gbps": sum(stats_paths.NIC_PORT.values(s, "rx_wire_gbps")),
        "net_tx_gbps": sum(stats_paths.NIC_PORT.values(s, "tx_wire_gbps")),
        "p95_us": s["client.latency.p95"] / 1e3,
        "ddio_core_hit": ddio_hit_rate(),
    }


def l2_sources(s: dict[str, float], cores: list[str]) -> dict[str, float]:
    """What the L2 sees, per measured request, summed over the cores: lookups and misses by source (the cores' own
    demand, the L1D's hardware prefetchers, software prefetches), the L1D's in-flight hits (a demand access to a
    line already on its way, MICA's prefetched lines among them: Ivy Bridge's fill-buffer hits), and the miss rate
    of the demand and L1D-prefetch lookups together (not compared: no published definition names it)."""
    cores = [c for c in cores if f"{c}.l2.accesses" in s]     # numbered on from socket to socket, or restarted

    def per_req(name: str) -> float:
        return sum(s[f"{c}.{name}"] for c in cores) / s["client.requests"]
    demand, l1pf = per_req("l2.demand_accesses"), per_req("l2.hw_prefetch_accesses")
    return {"l2_demand_per_req": demand, "l2_demand_miss_per_req": per_req("l2.demand_misses"),
            "l2_l1pf_per_req": l1pf, "l2_swpf_per_req": per_req("l2.sw_prefetch_accesses"),
            "l2_swpf_miss_per_req": per_req("l2.sw_prefetch_misses"),
            "l2_miss_rate_l1pf": (per_req("l2.demand_misses") + per_req("l2.hw_prefetch_misses")) / (demand + l1pf),
            "l1d_merges_per_req": per_req("l1d.mshr_merges")}


def power_figures(r: RunResult, system) -> dict[str, float]:
    """The run priced by the power model (power.price_run, every socket): the CPUs as power/unmodelled.py adds up a
    socket beside the measurement (the model's die plus turbo, supply, clock grid, DDR I/O, QPI ends and regulator
    losses), the NIC cards as built (unmodelled.nic_parts: controllers, PCIe switch, regulators, QSFP+ modules; the
    model's traffic-driven NIC chips beside, a part of the controllers' figure) and the DRAM devices. The
    measurement's "rest" (82 W: the supply's losses, fans, board, disks and DRAM) is the DRAM with the server's
    chassis (power/server.py: PCH, BMC, the board's regulators, fans, disk) and the power supply's losses on the
    whole DC load; the wall is every part through the supply (server.wall_parts). A platform with no chassis
    declared (server.SERVERS: the target) has no rest or wall figure (n/a), not a partial sum."""
    import math

    import power
    from power import server, unmodelled

    priced = power.price_run(r.stats, system.to_dict())
    sockets = priced.sockets if isinstance(priced, power.report.SystemResult) else [priced]
    cpu = sum(part.watts for res in sockets for part in unmodelled.parts(res) if part.in_total)

    def off_die(cls: str) -> float:
        return sum(float(res.structures.loc[res.structures["class"] == cls, "runtime_power_W"].sum())
                   for res in sockets)

    cards = sum(unmodelled.nic_cards_W(res) for res in sockets)
    dram = off_die("dram")
    out = {"cpu_power_w": cpu, "nic_power_w": cards, "nic_model_w": off_die("nic"), "dram_power_w": dram}
    platform = sockets[0].model.platform
    chassis = server.SERVERS.get(platform.part or platform.name)
    if chassis is None:
        return out | {"rest_power_w": math.nan, "psu_loss_w": math.nan, "wall_power_w": math.nan}
    parts, point = server.wall_parts(chassis, cpu, cards, dram)
    wall = sum(p.watts for p in parts)
    return out | {"rest_power_w": wall - cpu - cards, "psu_loss_w": point.psu_loss_W, "wall_power_w": wall}


def save(folder: pathlib.Path, r: RunResult, system, load: dict | None = None) -> None:
    """The point's statistics and configuration; with `load` (the record of the data set it restored,
    drivers/sweep load_once) that record too, less its configuration, as load.json."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stats.json").write_text(json.dumps(r.stats, indent=0, sort_keys=True))
    (folder / "config.json").write_text(json.dumps(system.to_dict(), indent=0, sort_keys=True))
    if load is not None:
        (folder / "load.json").write_text(json.dumps({k: v for k, v in load.items() if k != "config"}, indent=0,
                                                     sort_keys=True))


def items_note(items: int) -> str:
    """The data set against the paper's, said in every output."""
    if items >= PAPER_ITEMS:
        return f"{items:,} items (the paper's Tiny data set)"
    return (f"{items:,} items = 1/{PAPER_ITEMS / items:.4g} of the paper's 192 Mi Tiny set (REDUCED: a smaller "
            "data set than the paper's; memory bandwidth and LLC misses are expected to be low)")


def fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if v != v:
        return "n/a"
    return f"{v:.3f}" if abs(v) < 100 else f"{v:.1f}"


def print_point(title: str, fig: dict[str, float], pub: dict[str, float], note: str) -> None:
    print(f"\n== {title}  ({note})")
    print(f"   {'metric':<40}{'simulated':>12}{'published':>12}{'error':>10}")
    for key, label in METRICS:
        sim = fig.get(key)
        ref = pub.get(key)
        err = ""
        if ref is not None and sim is not None and ref != 0 and sim == sim:     # an n/a (NaN) figure has no error
            err = f"{(sim - ref) / ref * 100:+.1f}%"
        ref_text = fmt(ref)
        if key == "p95_us" and pub.get("p95_bound"):
            ref_text = f"<{P95_BOUND_US:.0f}"
            err = "ok" if sim is not None and sim < P95_BOUND_US else "ABOVE"
        print(f"   {label:<40}{fmt(sim):>12}{ref_text:>12}{err:>10}")


def steady(system):
    """`system` measured in steady state: after the load, a warm-up of the measured mix (sized_warmup_requests: as
    many requests as items, at most 400,000), not counted. The load leaves the LLC full of the log lines it just
    wrote; a measured phase straight after it (a few thousand requests, under a millisecond) spends a third of its
    memory traffic writing them back, where the measured server had been serving its mix for much longer."""
    system.client.warmup_after_load = True
    system.client.warmup_requests = sized_warmup_requests(system)
    return system


def with_log_mib(system, log_mib: int | None, items: int):
    """`system` with the KVS server's log set to `log_mib` MiB per partition (a sensitivity: the server evicts and
    re-appends), or (None) as MICA sizes it (with_mica_log)."""
    if log_mib is None:
        return with_mica_log(system, items)
    argv = [a for a in system.workload.argv if not a.startswith(("log_mib=", "log_kib=", "log_window_kib="))]
    system.workload.argv = [*argv, f"log_mib={log_mib}"]
    return system


# MICA's log per partition, as its netbench server sizes it (MICA's public source: build/gen_confs.py gives each
# partition items / partitions items and items * (key + value) / partitions bytes; src/netbench_server.c adds the
# 24-byte item header per item and then 20% "to compensate space efficiency"; src/alloc_pool.c rounds the pool up
# to whole 2 MiB pages and then to a power of two). A GET of an item more than half the log behind the tail
# re-appends it (the server's lru=1, MICA's move-to-head threshold of 0.5). For the paper's 192 Mi Tiny items this
# is 2.13x the data at 4 partitions (4 GiB for 1.875 GiB) and 1.6x at 12 and 24 (1 GiB and 512 MiB): with 24
# partitions a fifth of the items sit in the log's older half, with 4 none.
LOG_NOTE = ("Server log: MICA's (1.2 x each partition's items with their headers, rounded up to a power of two) at "
            "the paper's 192 Mi items, scaled to the run's items by a window of that size times items / 192 Mi: "
            "2.13 x the data at 4 partitions, 1.6 x at 12 and 24; GETs re-append items in the window's older half.")
MICA_LOG_SLACK = (12, 10)          # x 1.2
MICA_SHM_PAGE = 2 << 20            # MEHCACHED_ROUNDUP2M; also the smallest pool (MEHCACHED_MINIMUM_POOL_SIZE)


def mica_log_bytes(items: int, partitions: int, key: int, value: int) -> int:
    """Bytes of log per partition MICA's server gives `items` items of `key`/`value` bytes over `partitions`."""
    alloc = items * (key + value) // partitions + KVS_ITEM_HEADER * (items // partitions)
    alloc = alloc * MICA_LOG_SLACK[0] // MICA_LOG_SLACK[1]
    pages = -(-alloc // MICA_SHM_PAGE) * MICA_SHM_PAGE
    return 1 << (max(pages, MICA_SHM_PAGE) - 1).bit_length()


def mica_log_args(items: int, partitions: int, key: int = 8, value: int = 8) -> list[str]:
    """The KVS server's log arguments that keep, at `items` items, the log-to-data ratio MICA's rule gives at the
    paper's 192 Mi (the ratio, not the rule: the rule's rounding to a power of two would give 1.2x at 16 Mi items
    and 24 partitions and 1.6x at 4): a window of MICA's 192 Mi log times items / 192 Mi (whole KiB) in the power
    of two that holds it (log_window_kib= inside log_mib=/log_kib=; no window where that is a power of two)."""
    window = (mica_log_bytes(PAPER_ITEMS, partitions, key, value) * items // PAPER_ITEMS) >> 10 << 10
    if window < 4 << 10:
        raise SystemExit(f"--items {items}: MICA's log scaled to {items:,} items over {partitions} partitions is "
                         f"{window} bytes, below the server's smallest log (4 KiB)")
    log = 1 << (window - 1).bit_length()
    args = [f"log_mib={log >> 20}" if log >= 1 << 20 else f"log_kib={log >> 10}"]
    return args + ([f"log_window_kib={window >> 10}"] if window < log else [])


def with_mica_log(system, items: int):
    """`system` with its KVS server's log as MICA sizes it, scaled to `items` (mica_log_args; one partition per
    core), in place of the size that holds the data set without eviction."""
    argv = [a for a in system.workload.argv if not a.startswith(("log_mib=", "log_kib=", "log_window_kib="))]
    system.workload.argv = [*argv, *mica_log_args(items, system.harts)]
    return system


# MICA's index per partition, as its netbench server sizes it (MICA's public source: build/gen_confs.py gives each
# partition items / partitions items; src/netbench_server.c takes 20% more "to compensate space efficiency" and asks
# mehcached_table_init for (items + 14) / 15 buckets, 15 items a bucket in its cache mode (src/table.h,
# MEHCACHED_ITEMS_PER_BUCKET, 128-byte buckets); src/table.c rounds that up to a power of two). For the paper's 192
# Mi Tiny items: 2^20 buckets at 24 partitions (8 items a bucket), 2^21 at 12 (8), 2^22 at 4 (12). The run keeps
# the items per bucket at its own item count: that many buckets times items / 192 Mi (buckets_used=), in the power
# of two that holds them (buckets=), where the index that holds the data set without loss has under one item a
# bucket. A bucket of more than 15 keys drops its oldest: at 8 a bucket about 0.2% of the items, at 12 about 3%.
INDEX_NOTE = ("Server index: MICA's (1.2 x each partition's items over 15-item buckets, rounded up to a power of "
              "two) at the paper's 192 Mi items, scaled to the run's items in the same proportion: 8 items a bucket "
              "at 12 and 24 partitions, 12 at 4; a bucket of more than 15 keys drops one.")
MICA_INDEX_SLACK = (12, 10)        # x 1.2, as the log
MICA_ITEMS_PER_BUCKET = 15         # MEHCACHED_ITEMS_PER_BUCKET without MEHCACHED_NO_EVICTION


def mica_index_buckets(items: int, partitions: int) -> int:
    """Buckets per partition MICA's server gives `items` items over `partitions` (a power of two)."""
    n = (items // partitions) * MICA_INDEX_SLACK[0] // MICA_INDEX_SLACK[1]
    return 1 << (-(-n // MICA_ITEMS_PER_BUCKET) - 1).bit_length()


def mica_index_args(items: int, partitions: int) -> list[str]:
    """The KVS server's index arguments that keep, at `items` items, the items per bucket MICA's rule gives at the
    paper's 192 Mi (the ratio, not the rule: the rule's rounding to a power of two would give 10.7 a bucket at 16 Mi
    items and 24 partitions where MICA has 8): MICA's 192 Mi bucket count times items / 192 Mi buckets in use
    (buckets_used=) in the power of two that holds them (buckets=; no buckets_used= where that is a power of two)."""
    used = mica_index_buckets(PAPER_ITEMS, partitions) * items // PAPER_ITEMS
    if used < 1:
        raise SystemExit(f"--items {items}: MICA's index scaled to {items:,} items over {partitions} partitions has "
                         "no whole bucket")
    allocated = 1 << (used - 1).bit_length()
    return [f"buckets={allocated}"] + ([f"buckets_used={used}"] if used < allocated else [])


def with_index(system, buckets: int | None, items: int):
    """`system` with its KVS server's index as MICA sizes it, scaled to `items` (mica_index_args; one partition per
    core), or (a sensitivity) `buckets` buckets per partition, all of them used."""
    argv = [a for a in system.workload.argv if not a.startswith(("buckets=", "buckets_used="))]
    system.workload.argv = [*argv, *(mica_index_args(items, system.harts) if buckets is None
                                     else [f"buckets={buckets}"])]
    return system


# The chip's one clock domain: the cores, the ring with its LLC slices (Ivy Bridge-EP runs them at the core clock) and
# the network between them; a dual server has each socket's own copy.
CLOCK_PATHS = ("core.clock", "caches.uncore_clock", "noc.clock")


def clock_overrides(cores: int, clock: str | None, two_sockets: bool = False) -> tuple[str, ...]:
    """--clock's overrides of a point of `cores` cores: every clock of the chip's domain at `clock` (a sensitivity:
    a slower or faster part, not the measured one's 2.7 GHz), each socket's beyond one socket (or with
    `two_sockets`)."""
    if clock is None:
        return ()
    if cores > xeon_e5_2697v2_socket.CORES_PER_SOCKET or two_sockets:
        paths = [f"sockets[{k}].{path}" for k in range(2) for path in CLOCK_PATHS]
    else:
        paths = list(CLOCK_PATHS)
    return tuple(f"{path}={clock}" for path in ["clock", *paths])


def point_system(cores: int, items: int, requests_per_core: int, offered_mpps: float, log_mib: int | None = None,
                 buckets: int | None = None, unpacked_memory: str = "", overrides: tuple[str, ...] = (),
                 two_sockets: bool = False) -> System:
    """The Xeon system with `cores` cores offered `offered_mpps` M frames/s per port, in steady state, its server's
    log and index as MICA sizes them (or `log_mib`, `buckets`), its guest memory limit what the data set needs (the
    studies' rule, fit_mem_limit): one socket up to 12, else the dual-socket server with half the cores on each
    socket (two cores per port). `unpacked_memory`: System.unpacked_memory ('' : the config's), which changes no
    statistic, only how much host memory the guest's pages take. `overrides`: run.py's --set PATH=VALUE, each
    applied last (a sensitivity). `two_sockets`: a point of up to 12 cores on the dual-socket server too, half its
    cores and ports on each socket (the layout of the measured 4-core point: 2 sockets, 2 cores per port)."""
    from drivers.studies.common import fit_mem_limit

    per_socket = xeon_e5_2697v2_socket.CORES_PER_SOCKET
    if cores < 1:
        raise SystemExit(f"--cores {cores}: at least one core")
    if two_sockets and cores % 2:
        raise SystemExit(f"--two-sockets --cores {cores}: half the cores on each socket takes an even count")
    if cores <= per_socket and not two_sockets:
        system = xeon_e5_2697v2_socket.system(cores=cores, ports=ports_for(cores), items=items,
                                              requests=requests_per_core * cores, offered_mpps=offered_mpps)
    else:
        if cores % 2 or cores > 2 * per_socket:
            raise SystemExit(f"--cores {cores}: beyond one socket's {per_socket} the dual-socket server takes an even "
                             f"count up to {2 * per_socket}")
        if DUAL not in configs.available():
            raise SystemExit(f"--cores {cores}: configs/{DUAL}.py is not in this checkout")
        system = configs.load(DUAL).system(cores_per_socket=cores // 2, items=items,
                                           requests=requests_per_core * cores, offered_mpps=offered_mpps)
    system = steady(with_index(with_log_mib(system, log_mib, items), buckets, items))
    if unpacked_memory:
        system.unpacked_memory = unpacked_memory
    for assignment in overrides:
        apply_override(system, assignment)
    return fit_mem_limit(system)


def xeon_factory(cores: int, items: int, requests_per_core: int, log_mib: int | None = None,
                 buckets: int | None = None, unpacked_memory: str = "", overrides: tuple[str, ...] = (),
                 two_sockets: bool = False):
    """offered load -> the Xeon point's system (point_system); a bad point is refused here, before any run."""
    point_system(cores, items, requests_per_core, 1.0, log_mib, buckets, unpacked_memory, overrides, two_sockets)
    return lambda rate: point_system(cores, items, requests_per_core, rate, log_mib, buckets, unpacked_memory,
                                     overrides, two_sockets)


def target_system(cores: int, items: int, requests: int, offered_mpps: float, unpacked_memory: str = "") -> System:
    """One socket of the billion-RPS target (configs/brps_target_socket.py) with `cores` cores, its guest memory
    limit what the data set needs (fit_mem_limit), `unpacked_memory` as point_system's."""
    from drivers.studies.common import fit_mem_limit

    system = brps_target_socket.system(cores=cores, items=items, requests=requests, offered_mpps=offered_mpps)
    if unpacked_memory:
        system.unpacked_memory = unpacked_memory
    return fit_mem_limit(system)


CHECKPOINTS_NOTE = ("Data sets: each point's loaded once (functional, the point's own server arguments) into "
                    "{folder}/<data set key>/ unless there, and restored for the measured run, whose caches warm over "
                    "its warm-up requests of the mix (not over the load).")


def check_checkpoints_folder(folder: pathlib.Path) -> None:
    """--checkpoints DIR: a folder this process can write checkpoints into (made if missing), before any run."""
    for path in (folder, folder / CHECKPOINTS):
        if path.exists() and not path.is_dir():
            raise SystemExit(f"--checkpoints {folder}: {path} exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise SystemExit(f"--checkpoints {folder}: cannot make the folder ({err})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise SystemExit(f"--checkpoints {folder}: not writable by this process")


# Host CPU of one load of the paper's 192 Mi items on this project's 2-core host: 1,272 s (the Xeon's 2-core data
# set, session 21) to 1,990 s (the LLC study's 60-core data set, session 22); a smaller data set is taken to scale
# with its items (assumed: the load's work is per item).
LOAD_CPU_S_192MI = (1272.0, 1990.0)


def free_bytes(folder: pathlib.Path) -> int:
    """Free bytes on the disk under `folder`."""
    return shutil.disk_usage(folder).free


def check_loads(root: str, bases: dict[str, Base], items: int) -> None:
    """Before any load or run: the data sets of `bases` (label -> point) that `root` (--checkpoints) does not hold
    yet, their total cost printed (host CPU, scaled from LOAD_CPU_S_192MI, and disk, each checkpoint's size as
    drivers/sweep data_set_need reckons it), and a ParamError when the disk under `root` has less free than they
    need together (each load checks only its own, after the points before it ran)."""
    from models.params import ParamError

    needs: dict[str, tuple[str, int]] = {}
    sizing: dict[str, str] = {}
    for label, base in bases.items():
        point, need = data_set_need(root, base, label)
        if need:
            needs.setdefault(point.data_set, (label, need))
            sizing.setdefault(point.data_set, index_text(base.build()))
    total = sum(need for _, need in needs.values())
    free = free_bytes(pathlib.Path(root))
    minutes = [len(needs) * s * items / PAPER_ITEMS / 60 for s in LOAD_CPU_S_192MI]
    print(f"Data sets to load now: {len(needs)} (of {len(bases)} points; {len(bases) - len(needs)} in {root} "
          f"already): about {minutes[0]:.0f}-{minutes[1]:.0f} min of host CPU and {total / 1e9:.1f} GB of disk in "
          f"all before their runs; {free / 1e9:.1f} GB free under {root}", flush=True)
    # Each checkpoint's size follows its own configuration: the 60-core target keeps its config's index, sized to
    # drop no item (about 1.6 items a bucket), four times the MICA-sized index of the studies' 192 Mi loads.
    for key, (label, need) in needs.items():
        print(f"- {label}: about {need / 1e9:.1f} GB ({sizing[key]})", flush=True)
    if free < total:
        each = "; ".join(f"{label} {need / 1e9:.1f} GB" for label, need in needs.values())
        raise ParamError(f"--checkpoints {root}: the data sets to load take about {total / 1e9:.1f} GB ({each}), the "
                         f"disk under it has {free / 1e9:.1f} GB free: free space, name another folder "
                         "(--checkpoints), or run fewer points (--cores, --no-target)")


def index_text(system: System) -> str:
    """The server's log and index per partition as the loaded configuration gives them, and the index's share of
    the guest memory (what sets most of a checkpoint's size)."""
    from models.client import KVS_BUCKET_BYTES, kvs_server_capacity

    log, buckets, _ = kvs_server_capacity(system.server_argv())
    index = system.harts * buckets * KVS_BUCKET_BYTES
    return (f"{system.harts} partitions of a {log >> 20:,} MiB log and {buckets:,} index buckets, "
            f"{index / 1e9:.1f} GB of index, {system.client.items / system.harts / buckets:.1f} items a bucket")


def restoring(base: Base, root: str | None, label: str):
    """offered load (M frames/s per port) -> the system `base` builds at that load; with `root` (--checkpoints)
    restored from its data set's checkpoint there, which is loaded first if it is not there (the sweeps' shared
    checkpoints: drivers/sweep load_once), its guest memory packed as the load packed it."""
    def build(rate: float) -> System:
        return Base(base.config, **{**base.kwargs, "offered_mpps": rate}).build()
    if not root:
        return build
    folder, record = load_once(root, base, label)
    how = "loaded now" if record["loaded"] else "loaded by an earlier run, restored"
    print(f"{label}: data set {how}: {folder} ({record['bytes'] / 1e9:.2f} GB; the load took "
          f"{record['cpu_seconds']:.0f} s host CPU, {record['insts']:,} instructions)", flush=True)
    if "reused" in record:
        print(f"{label}: NOTE: {record['reused']['note']}", flush=True)

    def restored(rate: float) -> System:
        system = packed_as_loaded(build(rate))
        system.restore_from = str(folder)
        return system
    restored.load = record      # type: ignore[attr-defined]  # the load's record, kept by --save
    return restored


def host_cpu() -> float:
    """CPU seconds of this process and of its ended children (a data set's load runs in a worker process)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def host_time(cpu: float, wall: float) -> str:
    """Host time since host_cpu() = `cpu` and perf_counter() = `wall`: CPU time, wall time beside it."""
    return f"{host_cpu() - cpu:.1f} s host CPU ({time.perf_counter() - wall:.1f} s wall)"


# The STANDARD workload's request frames (kvs-workload.md, wire format): Ethernet, IPv4 and UDP headers, the batch
# header, one 24-byte request descriptor, the key and (PUT) the value padded to 8 bytes; on the wire each frame
# costs 24 bytes more (preamble, start delimiter, FCS, inter-frame gap).
FRAME_HEADERS, BATCH_HEADER, REQUEST_DESC, WIRE_EXTRA = 42, 6, 24, 24


def mean_wire_frame(system) -> float:
    """Wire bytes per request frame the client sends, GETs and PUTs in its mix (one request per frame)."""
    key, value = system.client.sizes()
    if system.client.requests_per_packet != 1:
        raise SystemExit("--offered measured: the measured runs sent one request per frame")
    get = FRAME_HEADERS + BATCH_HEADER + REQUEST_DESC + -(-key // 8) * 8 + WIRE_EXTRA
    return get + (1 - system.client.get_ratio) * (-(-value // 8) * 8)


def measured_mpps(system, cores: int) -> tuple[float, str]:
    """Frames/s per port (millions) that offer the load the measured server received at `cores` cores (the
    published network RX, wire Gb/s over every port), and how to say it."""
    gbps = PUBLISHED.get(cores, {}).get("net_rx_gbps")
    if gbps is None:
        raise SystemExit(f"--offered measured: no network RX is published for {cores} cores (published for "
                         f"{', '.join(str(c) for c, p in PUBLISHED.items() if 'net_rx_gbps' in p)})")
    ports = ports_for(cores)
    return (gbps * 1e9 / 8 / mean_wire_frame(system) / ports / 1e6,
            f"the measured {gbps:g} Gb/s received, over {ports} port(s)")


def run_point(make, harts: int, search: bool, line_mpps: float, measured: tuple[float, str] | None = None):
    """(the run, the system it simulated, how the operating point was chosen). `measured`: (frames/s per port,
    what it is), offered open loop in place of the line rate."""
    if measured is not None:
        system = make(measured[0])
        return simulate(system), system, f"open loop at {measured[0]:.3f} M frames/s per port ({measured[1]})"
    if not search:
        system = make(line_mpps)
        return simulate(system), system, f"open loop at {line_mpps:.2f} M frames/s per port (line rate)"
    res = capacity.capacity(make, high=line_mpps)
    if res.best is None:
        p = min(res.probes, key=lambda p: p.loss)
        return (p.result, make(p.offered_mpps),
                f"no probe below 1% loss; least loss at {p.offered_mpps:.2f} M frames/s per port")
    return (res.best.result, make(res.best.offered_mpps),
            f"highest offered load with < 1% loss: {res.best.offered_mpps:.2f} M frames/s per port")


# The work a request in x86 terms (rows 'x86 ...'): the simulated RV64 instructions scaled by the ratio of the
# instructions x86-64 and RV64 builds of the server's core execute a request, as sim-scripts/isa_work_per_request.py
# measured it and wrote it here (with its provenance). A normalisation by a measured ratio, not a model change.
ISA_RATIO_FILE = ROOT / "results" / "validation" / "isa_work_per_request.json"


def isa_ratio(path: pathlib.Path | None = None) -> dict:
    """The measured x86-64 / RV64 instruction ratio and where it came from (isa_work_per_request.py --write)."""
    path = ISA_RATIO_FILE if path is None else path
    try:
        rec = json.loads(path.read_text())
    except FileNotFoundError:
        raise SystemExit(f"{path}: missing; it is written by sim-scripts/isa_work_per_request.py --write {path}") from None
    except json.JSONDecodeError as e:
        raise SystemExit(f"{path}: not JSON ({e})") from None
    try:
        x86, rv, ratio = rec["x86_64"]["per_request"], rec["rv64"]["per_request"], rec["x86_over_rv64"]
        commit = rec["tree_commit"]
    except (KeyError, TypeError) as e:
        raise SystemExit(f"{path}: no {e} in it (written by sim-scripts/isa_work_per_request.py --write)") from None
    if not (x86 > 0 and rv > 0) or abs(ratio - x86 / rv) > 1e-9:
        raise SystemExit(f"{path}: x86_over_rv64 {ratio} is not x86_64.per_request / rv64.per_request ({x86} / {rv})")
    return {"ratio": ratio, "x86": x86, "rv64": rv, "commit": commit, "path": path}


def isa_note(isa: dict) -> str:
    try:
        shown = isa["path"].relative_to(ROOT)
    except ValueError:
        shown = isa["path"]
    return (f"Rows 'x86 ...' are a normalisation by a measured ratio, NOT a model change: the simulated RV64 "
            f"instructions a request (all of them, empty polls included) x {isa['ratio']:.3f}, the ratio of the "
            f"instructions the server's core (kvs_core_poll with its callees, gcc -O2) executes a request built for "
            f"x86-64 and for RV64 ({isa['x86']:.1f} / {isa['rv64']:.1f}; measured by "
            f"sim-scripts/isa_work_per_request.py at {isa['commit'][:7]}, {shown}); the IPC row is the simulated IPC "
            f"x that ratio (the same cycles, x86's count of instructions). Assumed: the driver's and the empty polls' "
            f"code, outside the measured function, scale by the same ratio.")


def x86_figures(fig: dict[str, float], isa: dict) -> dict[str, float]:
    """A Xeon point's work a request and IPC in x86 instructions (isa_note)."""
    return {"x86_insts_per_req": (fig["work_insts_per_req"] + fig["idle_insts_per_req"]) * isa["ratio"],
            "ipc_x86": fig["ipc"] * isa["ratio"]}


WHERE = {4: "published: 2 sockets, 2 cores per port", 12: "published: half of 24 cores on 2 sockets",
         24: "2 sockets of 12 cores, 6 ports each, as published"}


def print_xeon_point(cores: int, fig: dict[str, float], note: str, sockets: int = 1, isa: dict | None = None) -> None:
    """One Xeon point's table beside the published figures for its core count; `sockets`: the run's; `isa`: the
    measured x86/RV64 ratio (isa_ratio) for the rows in x86 terms."""
    fig = fig | x86_figures(fig, isa or isa_ratio())
    pub = dict(PUBLISHED.get(cores, {}))
    if cores in P95_ROWS:
        pub["p95_bound"] = 1.0
    if cores in WHERE:
        note += f"; {WHERE[cores]}"
    what = "dual-socket server" if sockets > 1 else "socket"
    print_point(f"Xeon E5-2697 v2 {what}, {cores} core(s), {ports_for(cores)} x 10 GbE", fig, pub, note)


def log_note(argv: list[str]) -> str:
    """The server's log and index sizes as the run gave them (the data set's own size where none is given)."""
    given = [a for a in argv if a.startswith(("log_mib=", "log_kib=", "log_window_kib=", "buckets=", "buckets_used="))]
    return ", ".join(given) if given else "the server's default log"

# What the power rows hold (power_figures): the published 399.2 W split is CPUs 255, four NICs 62, "rest" 82.
POWER_NOTE = ("Power rows: 'NIC cards as built' is the four X520-QDA1 cards' parts (power/unmodelled.py nic_parts: two "
              "82599s, a PCIe switch, regulators and a QSFP+ module a card; two cards a socket, whatever ports the "
              "run uses), compared with the measured four NICs; the model's traffic-driven NIC chips are a part of "
              "the controllers' figure, printed beside. 'rest' is the DRAM devices (the server's 128 GB as registered "
              "ECC DIMMs), the DIMMs' registers (assumed watts), the server's chassis (power/server.py: PCH, BMC, "
              "the board's regulators, fans, one disk) and the power supply's losses on the "
              "whole DC load, against the measured rest (supply losses, fans, board, disks and DRAM); 'wall' is every "
              "part through the supply (a redundant pair of 750 W 80 PLUS Platinum supplies sharing the load, "
              "assumed: the server is not named). Chassis figures are published or named as assumed, none fitted "
              "to the measurement; a one-socket run adds the whole chassis to its socket.")


def print_saved(folder: pathlib.Path) -> int:
    """The table of every point `--save folder` kept (folder/<cores>/stats.json and config.json), without running:
    the same figures and power the run printed, from its statistics."""
    points = sorted((int(d.name), d) for d in folder.iterdir() if d.name.isdigit() and (d / "stats.json").is_file())
    if not points:
        raise SystemExit(f"--from {folder}: no <cores>/stats.json under it (written by --save)")
    isa = isa_ratio()
    print("STANDARD workload (tiny 8/8-byte items, uniform, 95% GET), EREW, detailed timing of the measured phase.")
    print(f"Re-printed from the statistics saved under {folder} (no run; host times are the runs' own, not known here).")
    print(MISS_RATES_NOTE)
    print(POWER_NOTE)
    print(isa_note(isa))
    for cores, d in points:
        stats = json.loads((d / "stats.json").read_text())
        config = json.loads((d / "config.json").read_text())
        items = int(stats["client.items"])
        run = types.SimpleNamespace(stats=stats)
        system = types.SimpleNamespace(to_dict=lambda config=config: config)
        note = f"saved run; {items_note(items)}; {log_note(config['workload']['argv'])}"
        if config.get("restore_from"):
            note += f"; data set restored from {config['restore_from']}"
        note += f"; measured after a {config['client']['warmup_requests']:,}-request warm-up of the mix"
        print_xeon_point(cores, figures(run, cores) | power_figures(run, system), note, sockets_in(run.stats), isa)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cores", default="1,2,3,4,8,12" + (",24" if DUAL in configs.available() else ""),
                        help="Xeon core counts (comma separated; 24 = the dual-socket server)")
    parser.add_argument("--requests-per-core", type=int, default=3000, help="measured requests per core")
    parser.add_argument("--items", type=int, default=PAPER_ITEMS,
                        help="items in the data set (default: the paper's Tiny data set, 192 Mi items; a smaller one is "
                        "a reduced run and says so)")
    parser.add_argument("--search", action="store_true", help="find the highest rate with < 1%% loss per point")
    parser.add_argument("--no-target", action="store_true", help="skip the billion-RPS target socket run")
    parser.add_argument("--target-cores", type=int, default=60, help="cores of the target socket run")
    parser.add_argument("--save", metavar="DIR", help="write each point's statistics and configuration to "
                        "DIR/<cores>/stats.json and config.json (to price or inspect again without re-running)")
    parser.add_argument("--from", dest="from_dir", metavar="DIR",
                        help="print the table of the points --save DIR kept, without running")
    parser.add_argument("--log-mib", type=int, metavar="N",
                        help="SENSITIVITY, not the paper's condition: the KVS server's log is N MiB per partition "
                        "(a power of two, all of it kept) instead of MICA's log scaled to --items (mica_log_args); "
                        "a log smaller than the data evicts, and GETs re-append items from the older half of the log "
                        "(MICA's approximate LRU)")
    parser.add_argument("--buckets", type=int, metavar="N",
                        help="SENSITIVITY, not the paper's condition: the KVS server's index is N buckets per "
                        "partition (a power of two, all of them used) instead of MICA's index scaled to --items "
                        "(mica_index_args: 8 items a bucket at 12 and 24 cores, 12 at 4)")
    parser.add_argument("--offered", choices=("line", "measured"), default="line",
                        help="the load each Xeon point is offered, open loop: every port's line rate (the default), "
                        "or the load the measured server received at that core count (its published network RX, "
                        "e.g. 105.45 Gb/s over 12 ports at 24 cores; then the network RX row is the input, not a "
                        "result)")
    parser.add_argument("--checkpoints", metavar="DIR",
                        help="load each point's data set once, functionally, with the point's own server arguments, "
                        "into DIR/checkpoints/<data set key>/ (the sweeps' shared checkpoints: the key covers what a "
                        "restore may not change and the server's and engine's content), unless it is there, and "
                        "restore it for the measured run (warming over the warm-up requests of the mix)")
    parser.add_argument("--unpacked-memory", default="", metavar="SIZE",
                        help="System.unpacked_memory (e.g. 2GiB): the guest memory kept as whole pages, the rest "
                        "packed (no statistic changes; host memory does). Default: the config's (all whole); with "
                        "--checkpoints, what the load keeps (2 GiB where the KVS store is larger)")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                        help="SENSITIVITY, not the paper's condition: override a parameter of every Xeon point (as "
                        "run.py's --set, e.g. caches.l1d.prefetch.next_line=false; beyond 12 cores each socket's, "
                        "sockets[0].caches... and sockets[1].caches...), applied last")
    parser.add_argument("--clock", metavar="FREQ",
                        help="SENSITIVITY, not the paper's condition: the chip's clock domain (cores, ring and LLC, "
                        "their network; each socket's) at FREQ (e.g. 2.5GHz) instead of the part's 2.7 GHz")
    parser.add_argument("--two-sockets", action="store_true",
                        help="SENSITIVITY of layout: every point of up to 12 cores on the dual-socket server, half "
                        "its cores and ports on each socket (as the measured 4-core point: 2 sockets, 2 cores per "
                        "port), not on one socket")
    opts = parser.parse_args(argv)
    if opts.offered == "measured" and opts.search:
        raise SystemExit("--offered measured and --search: the search finds its own offered load; give one")
    if opts.from_dir:
        if opts.checkpoints:
            raise SystemExit("--from and --checkpoints: --from re-prints saved points without running any")
        return print_saved(pathlib.Path(opts.from_dir))
    if opts.log_mib is not None and (opts.log_mib < 1 or opts.log_mib & (opts.log_mib - 1)):
        raise SystemExit(f"--log-mib {opts.log_mib}: the server takes a power of two of at least 1 MiB")
    if opts.buckets is not None and (opts.buckets < 1 or opts.buckets > 1 << 32 or opts.buckets & (opts.buckets - 1)):
        raise SystemExit(f"--buckets {opts.buckets}: the server takes a power of two in [1, 2^32]")
    if opts.checkpoints is None and opts.items > CHECKPOINTED_ABOVE:
        opts.checkpoints = str(DEFAULT_CHECKPOINTS)
        print(f"Data sets of {opts.items:,} items are loaded once into {DEFAULT_CHECKPOINTS} (no --checkpoints given) "
              "and restored by later runs (the cost of this invocation's loads is printed before any starts)")
    if opts.checkpoints:
        check_checkpoints_folder(pathlib.Path(opts.checkpoints))
    isa = isa_ratio()
    started, started_cpu = time.perf_counter(), host_cpu()
    print("STANDARD workload (tiny 8/8-byte items, uniform, 95% GET), EREW, detailed timing of the measured phase.")
    print(f"Data set: {items_note(opts.items)}.")
    if opts.log_mib is not None:
        print(f"SENSITIVITY: the server's log is {opts.log_mib} MiB per partition (--log-mib), smaller than the "
              "data set: it evicts, and GETs re-append items read from the older half of the log. Not the paper's "
              "stated condition.")
    else:
        print(LOG_NOTE)
    if opts.buckets is not None:
        print(f"SENSITIVITY: the server's index is {opts.buckets:,} buckets per partition (--buckets), not MICA's "
              "scaled to the data set.")
    else:
        print(INDEX_NOTE)
    if opts.set:
        print(f"SENSITIVITY: every Xeon point with --set {' '.join(opts.set)}. Not the paper's condition.")
    if opts.clock:
        print(f"SENSITIVITY: the chip's clock domain (cores, ring and LLC, their network) at {opts.clock} (--clock), "
              "not the measured part's 2.7 GHz. Not the paper's condition.")
    if opts.two_sockets:
        print("SENSITIVITY of layout: every point on the dual-socket server, half its cores and ports on each socket "
              "(--two-sockets); the measured 4-core point's layout, not the one-socket rows' of the table.")
    print(MISS_RATES_NOTE)
    print(POWER_NOTE)
    print(isa_note(isa))
    # Every point is built (and refused, if bad) before any runs.
    cores_list = [int(c) for c in opts.cores.split(",") if c]
    points = {cores: Base(f"{__name__}:point_system", cores=cores, items=opts.items,
                          requests_per_core=opts.requests_per_core, offered_mpps=1.0, log_mib=opts.log_mib,
                          buckets=opts.buckets, unpacked_memory=opts.unpacked_memory,
                          overrides=clock_overrides(cores, opts.clock, opts.two_sockets) + tuple(opts.set),
                          two_sockets=opts.two_sockets)
              for cores in cores_list}
    target_cores = opts.target_cores
    target = Base(f"{__name__}:target_system", cores=target_cores, items=opts.items,
                  requests=opts.requests_per_core * target_cores // 6, offered_mpps=1.0,
                  unpacked_memory=opts.unpacked_memory)
    for base in [*points.values(), *([] if opts.no_target else [target])]:
        base.build()
    if opts.checkpoints:
        print(CHECKPOINTS_NOTE.format(folder=pathlib.Path(opts.checkpoints) / CHECKPOINTS))
        labels = {f"Xeon, {cores} core(s), {opts.items:,} items": base for cores, base in points.items()}
        if not opts.no_target:
            labels[f"target, {target_cores} cores, {opts.items:,} items"] = target
        check_loads(opts.checkpoints, labels, opts.items)
    for cores, base in points.items():
        make = restoring(base, opts.checkpoints, f"Xeon, {cores} core(s), {opts.items:,} items")
        line = capacity.line_rate_mpps(make(1.0))
        t, cpu = time.perf_counter(), host_cpu()
        measured = measured_mpps(make(1.0), cores) if opts.offered == "measured" else None
        r, system, how = run_point(make, cores, opts.search, line, measured)
        if opts.save:
            save(pathlib.Path(opts.save) / str(cores), r, system, getattr(make, "load", None))
        note = f"{how}; {host_time(cpu, t)}; {opts.items:,} items"
        if opts.items < PAPER_ITEMS:
            note += " (reduced data set)"
        note += f"; {log_note(system.workload.argv)}"
        if opts.set:
            note += f"; --set {' '.join(opts.set)}"
        if opts.clock:
            note += f"; --clock {opts.clock}"
        if opts.two_sockets:
            note += "; --two-sockets: half the cores and ports on each of 2 sockets"
        if (opts.log_mib is not None or opts.buckets is not None or opts.set or opts.clock or measured is not None
                or opts.two_sockets):
            note += " (sensitivity)"
        note += f"; measured after a {system.client.warmup_requests:,}-request warm-up of the mix"
        print_xeon_point(cores, figures(r, cores) | power_figures(r, system), note, sockets_in(r.stats), isa)
    if not opts.no_target:
        make_t = restoring(target, opts.checkpoints, f"target, {target_cores} cores, {opts.items:,} items")
        line = capacity.line_rate_mpps(make_t(1.0))
        t, cpu = time.perf_counter(), host_cpu()
        r, system, how = run_point(make_t, target_cores, opts.search, line)
        print_point(f"billion-RPS target socket, {target_cores} cores, 3 x 100 GbE",
                    figures(r, target_cores) | power_figures(r, system), {},
                    f"{how}; {host_time(cpu, t)}; no published measurement")
    print(f"\ntotal host time {host_time(started_cpu, started)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
